"""The pipeline backwards: from a model's tokens to text.

Each decoder has ``decode(tokens) -> str``, where ``tokens`` are what the
model's ``id_to_token`` returns. Decoding is not an exact inverse of encoding:
normalization cannot be undone, and the WordPiece decoder even guesses spaces.

- `ByteLevelDecoder`: byte-level BPE. Join the tokens' *bytes* first, then decode
  UTF-8: a token may hold part of a character, so decoding token by token would
  break every character split across tokens.
- `WordPieceDecoder`: ``##`` pieces glue onto the previous token, every other token
  gets a space, then HF's clean-up of spaces before punctuation and contractions.
- `SentencePieceDecoder`: byte pieces ``<0xXX>`` are reassembled, ``▁`` becomes a
  space, control pieces vanish, the unknown piece prints as a marker, and the
  space implied by the dummy prefix is dropped.
- `DecoderChain`: Hugging Face's decoder steps as a ``tokenizer.json`` lists them
  (``Metaspace``, ``ByteFallback``, ``Fuse``, ``Strip``, ``Replace``), each run on the
  list of token strings as HF runs it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .base.pieces import SPACE, UNK_SURFACE, byte_of_piece, unescape

__all__ = ["ByteLevelDecoder", "WordPieceDecoder", "SentencePieceDecoder", "DecoderChain", "decode_utf8_per_byte"]

def decode_utf8_per_byte(data: bytes) -> str:
    """UTF-8 decode where every byte outside a valid character becomes one U+FFFD.

    sentencepiece replaces byte by byte; Python's ``errors="replace"`` merges
    some invalid sequences into a single U+FFFD, so the two can differ.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    out = []
    pos = 0
    while pos < len(data):
        for length in (1, 2, 3, 4):
            try:
                out.append(data[pos : pos + length].decode("utf-8"))
            except UnicodeDecodeError:
                continue
            pos += length
            break
        else:
            out.append("\ufffd")
            pos += 1
    return "".join(out)


@dataclass(frozen=True)
class ByteLevelDecoder:
    """Join byte tokens, then decode UTF-8 (invalid bytes become U+FFFD unless ``errors="strict"``)."""

    errors: str = "replace"

    def decode(self, tokens: Sequence[bytes]) -> str:
        return b"".join(tokens).decode("utf-8", errors=self.errors)

    def to_hf(self):
        from tokenizers import decoders

        return decoders.ByteLevel()


#: HF's ``cleanup`` replacements, applied to each token after its space is added.
CLEANUPS: tuple[tuple[str, str], ...] = (
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" do not", " don't"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
)


@dataclass(frozen=True)
class WordPieceDecoder:
    """HF ``decoders.WordPiece``: ``##`` pieces glue on, others get a space; optional clean-up.

    With ``cleanup`` each token also loses the space before ``. ? ! ,`` and
    before ``n't 'm 's 've 're`` (HF applies these replacements token by token,
    so ``don ' t`` stays apart). Case, accents, the original spacing and every
    word that became [UNK] are gone for good.
    """

    prefix: str = "##"
    cleanup: bool = True

    def decode(self, tokens: Sequence[str]) -> str:
        out: list[str] = []
        for pos, token in enumerate(tokens):
            if pos:
                token = token[len(self.prefix) :] if token.startswith(self.prefix) else " " + token
            if self.cleanup:
                for old, new in CLEANUPS:
                    token = token.replace(old, new)
            out.append(token)
        return "".join(out)

    def to_hf(self):
        from tokenizers import decoders

        return decoders.WordPiece(prefix=self.prefix, cleanup=self.cleanup)


@dataclass(frozen=True)
class SentencePieceDecoder:
    """sentencepiece's decoder. ``kinds`` maps each piece to its kind (``"byte"``, ``"control"``, ...).

    Control pieces vanish; ``<unk>`` prints as ``unk_surface``; a run of byte
    pieces is reassembled and each byte that is not part of a valid UTF-8
    character becomes U+FFFD (`decode_utf8_per_byte`); ``▁`` becomes a space.
    The first piece loses one leading ``▁`` when the model adds a dummy prefix or
    removes extra whitespace; with ``remove_extra_whitespaces`` that goes on
    while nothing has been output yet (the encoder can never produce leading
    spaces then).
    """

    kinds: Mapping[str, str]
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    unk_surface: str = UNK_SURFACE

    def decode(self, tokens: Sequence[str]) -> str:
        strip = self.add_dummy_prefix or self.remove_extra_whitespaces
        out: list[str] = []
        pending = bytearray()
        at_start = True
        for piece in tokens:
            kind = self.kinds[piece]
            if kind == "byte":
                pending.append(byte_of_piece(piece))
                continue
            if pending:
                out.append(decode_utf8_per_byte(bytes(pending)))
                pending.clear()
                at_start = False
            if kind == "control":
                continue
            if kind == "unknown":
                out.append(self.unk_surface)
            else:
                if at_start and strip and piece.startswith(SPACE):
                    piece = piece[1:]
                out.append(unescape(piece))
            at_start = self.remove_extra_whitespaces and not any(out)
        if pending:
            out.append(decode_utf8_per_byte(bytes(pending)))
        return "".join(out)

    def to_hf(self):
        """sentencepiece's decoder as HF steps: ``Metaspace``, ``ByteFallback``, the unknown piece's surface.

        Equal to `decode` on what encode produces. A model that adds a dummy prefix but
        keeps extra whitespace gets ``Replace('▁', ' ')``, ``ByteFallback``, the surface,
        ``Fuse`` and ``Strip(' ', 1, 0)`` instead (see the comment).

        ``Metaspace`` runs first so that a ``▁`` spelled by byte pieces stays a
        ``▁``, as in sentencepiece; the ``Replace`` runs last so that the surface's
        leading space is not taken for the dummy prefix.
        """
        from tokenizers import decoders

        kinds, unk_surface = self.kinds, self.unk_surface
        unk = next(p for p, k in kinds.items() if k == "unknown")
        clash = next((p for p, k in kinds.items() if k == "normal" and unk in p), None)
        if clash is not None:
            raise ValueError(f"piece {clash!r} contains the unknown piece {unk!r}; HF's Replace would rewrite it too")
        byte = [decoders.ByteFallback()] if any(k == "byte" for k in kinds.values()) else []
        if self.add_dummy_prefix and not self.remove_extra_whitespaces:
            # Whitespace is kept, so the first piece may be "▁▁": sentencepiece drops one ▁ of it,
            # HF's Metaspace every ▁ of the first token. Strip after Fuse drops exactly one space.
            # Only difference left: IDs that begin with the unknown piece lose its surface's first space.
            return decoders.Sequence([decoders.Replace(SPACE, " "), *byte, decoders.Replace(unk, unk_surface),
                                      decoders.Fuse(), decoders.Strip(" ", 1, 0)])
        scheme = "always" if self.add_dummy_prefix or self.remove_extra_whitespaces else "never"
        return decoders.Sequence([decoders.Metaspace(SPACE, scheme), *byte, decoders.Replace(unk, unk_surface)])


@dataclass(frozen=True)
class DecoderChain:
    """Hugging Face decoder steps, each a dict as ``tokenizer.json`` writes it, run in order.

    Every step maps the list of token strings to a new list, as HF's ``decode_chain``
    does, and the result is joined:

    - ``Metaspace``: ``▁`` (its replacement) becomes a space, except that in the
      *first* token every ``▁`` is dropped unless the prepend scheme is ``never``;
    - ``ByteFallback``: a run of ``<0xXX>`` tokens becomes the text of its bytes, or one
      U+FFFD per token if they are not valid UTF-8;
    - ``Fuse``: all tokens become one;
    - ``Strip``: each token loses up to ``start`` leading and ``stop`` trailing ``content``;
    - ``Replace``: each token has a string replaced (HF's decoders take a string).
    """

    steps: tuple[dict, ...] = field(default_factory=tuple)

    #: The step types it runs.
    KINDS = ("Metaspace", "ByteFallback", "Fuse", "Strip", "Replace")

    def __post_init__(self) -> None:
        for step in self.steps:
            kind = step.get("type")
            if kind not in self.KINDS:
                raise ValueError(f"decoder {kind} is not implemented (toklab runs {', '.join(self.KINDS)})")
            if kind == "Replace" and list(step["pattern"]) != ["String"]:
                raise ValueError(f"decoder Replace({step['pattern']!r}): toklab replaces strings, not regexes")

    def decode(self, tokens: Sequence[str]) -> str:
        tokens = list(tokens)
        for step in self.steps:
            tokens = _decode_step(step, tokens)
        return "".join(tokens)

    def to_hf(self):
        """The chain as ``tokenizers.decoders`` objects (one, or a ``Sequence``)."""
        from tokenizers import decoders

        out = []
        for step in self.steps:
            kind = step["type"]
            if kind == "Metaspace":
                out.append(decoders.Metaspace(replacement=step.get("replacement", SPACE),
                                              prepend_scheme=_scheme(step), split=step.get("split", True)))
            elif kind == "Strip":
                out.append(decoders.Strip(step["content"], step.get("start", 0), step.get("stop", 0)))
            elif kind == "Replace":
                out.append(decoders.Replace(step["pattern"]["String"], step["content"]))
            else:
                out.append(getattr(decoders, kind)())
        return out[0] if len(out) == 1 else decoders.Sequence(out)


def _scheme(step: Mapping) -> str:
    if step.get("add_prefix_space") is False:
        return "never"
    return step.get("prepend_scheme", "always")


def _decode_step(step: Mapping, tokens: list[str]) -> list[str]:
    kind = step["type"]
    if kind == "Metaspace":
        rep, keep_first = step.get("replacement", SPACE), _scheme(step) == "never"
        return [t.replace(rep, " ") if i or keep_first else t.replace(rep, "") for i, t in enumerate(tokens)]
    if kind == "Fuse":
        return ["".join(tokens)]
    if kind == "Replace":
        old, new = step["pattern"]["String"], step["content"]
        return [t.replace(old, new) for t in tokens] if old else tokens
    if kind == "Strip":
        content, start, stop = step["content"], step.get("start", 0), step.get("stop", 0)
        out = []
        for t in tokens:
            a = 0
            while a < min(start, len(t)) and t[a] == content:
                a += 1
            b = len(t)
            while len(t) - b < stop and b > a and t[b - 1] == content:
                b -= 1
            out.append(t[a:b])
        return out
    out, pending = [], bytearray()
    for t in tokens + [None]:
        value = byte_value(t) if t is not None else None
        if value is not None:
            pending.append(value)
            continue
        if pending:
            try:
                out.append(bytes(pending).decode("utf-8"))
            except UnicodeDecodeError:
                out.extend("\ufffd" for _ in pending)
            pending.clear()
        if t is not None:
            out.append(t)
    return out


def byte_value(token: str) -> int | None:
    """The byte a ``<0xXX>`` token stands for, as HF's ``ByteFallback`` reads it (hex of either case); None otherwise."""
    if len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
        digits = token[3:5]
        if all(c in "0123456789abcdefABCDEF" for c in digits):
            return int(digits, 16)
    return None
