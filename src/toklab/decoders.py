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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .pre_tokenizers.metaspace import SPACE, unescape
from .sentencepiece.hf import hf_decoder
from .sentencepiece.model_file import UNK_SURFACE, byte_of_piece

__all__ = ["ByteLevelDecoder", "WordPieceDecoder", "SentencePieceDecoder", "decode_utf8_per_byte"]

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
        """The same decoder as HF steps (`toklab.sentencepiece.hf.hf_decoder`); equal on what encode produces."""
        return hf_decoder(self.kinds, self.add_dummy_prefix, self.remove_extra_whitespaces, self.unk_surface)
