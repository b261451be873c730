"""Offsets: which span of the *original* text each token came from.

A token's text is not a substring of the input once a normalizer has run
(``ﬃ`` becomes ``ffi``, ``Ａ`` becomes ``A``, BERT lowercases and strips
accents), and a byte-level token may hold only part of a character. Offsets
must therefore be carried through every stage:

1. special tokens are cut out of the raw text, each with its own span;
2. the normalizer's *alignment map* gives, for each normalized character,
   the span of original characters it came from (one-to-many for ``ﬃ``,
   many-to-one for NFC's ``e`` + U+0301 -> ``é``);
3. the pre-tokenizer's chunks are located in the normalized text;
4. the model's tokens are located in their chunk (byte-level tokens in
   bytes, WordPiece tokens in characters without their ``##``);
5. a token's span in normalized characters becomes the smallest span of
   original characters covering all their sources.

`encode_with_offsets` returns, per token, the span in original code points
(``text[start:end]``) and in original UTF-8 bytes. A byte-level token that
holds part of a character gets the whole character as its code-point span
(so several tokens may share one), but its exact bytes as its byte span.
Tokens the post-processor adds (BOS, EOS, [CLS]) get the empty span
``(0, 0)``, as in Hugging Face ``tokenizers``.

`decode_with_offsets` is tiktoken's ``Encoding.decode_with_offsets``: the text,
and for each token the index of the first character holding one of its bytes.

Supported stages: no normalizer, the Unicode normal forms and BERT's
normalizer; a regex pre-tokenizer, BERT's, or none; byte-level BPE and
WordPiece and Unigram models (a Unigram by its Viterbi surfaces; wrap a bare
`toklab.Unigram` as ``Pipeline(unigram)``). Anything else raises TypeError
naming the stage.

A `toklab.SentencePieceTokenizer` has its own front end (compiled table, user
symbols, whitespace rules, ``▁``), so its offsets follow sentencepiece's own
bookkeeping instead (`toklab.sentencepiece.alignment`).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..base.special import SpecialSet
from ..base.unicode import replace_surrogates

__all__ = [
    "Encoding",
    "OffsetsMixin",
    "encode_with_offsets",
    "decode_with_offsets",
    "alignment",
    "original_span",
    "utf8_offsets",
    "utf16_offsets",
]

Span = tuple[int, int]


@dataclass(frozen=True)
class Encoding:
    """IDs with their spans in the original text: code points and UTF-8 bytes."""

    ids: tuple[int, ...]
    offsets: tuple[Span, ...]
    byte_offsets: tuple[Span, ...]

    def __len__(self) -> int:
        return len(self.ids)


def utf8_offsets(text: str) -> list[int]:
    """UTF-8 byte offset of each character of ``text``, and of its end."""
    starts = [0]
    for ch in text:
        starts.append(starts[-1] + len(ch.encode("utf-8")))
    return starts


def utf16_offsets(text: str) -> list[int]:
    """UTF-16 code-unit offset of each character of ``text``, and of its end.

    The coordinates of JavaScript strings and of many editors: a code point
    above U+FFFF is a surrogate pair, two units; every other one is one unit.
    """
    starts = [0]
    for ch in text:
        starts.append(starts[-1] + (2 if ord(ch) > 0xFFFF else 1))
    return starts


def alignment(normalizer: Any, text: str) -> tuple[str, list[Span]]:
    """The normalized text and, per normalized character, its span in ``text``."""
    if normalizer is None:
        return text, [(i, i + 1) for i in range(len(text))]
    if hasattr(normalizer, "normalize_with_offsets"):
        return normalizer.normalize_with_offsets(text)
    if hasattr(normalizer, "flags") and hasattr(normalizer, "lowercase"):  # BERT's normalizer
        return _bert_alignment(normalizer, text)
    raise TypeError(f"offsets through a {type(normalizer).__name__} normalizer are not supported")


def _bert_alignment(normalizer: Any, text: str) -> tuple[str, list[Span]]:
    """BERT's steps are per character except NFD's reordering of combining marks, which
    accent stripping removes anyway; so each character is normalized on its own, and the
    result is checked against the whole-text normalization."""
    out: list[str] = []
    spans: list[Span] = []
    for i, ch in enumerate(text):
        piece = normalizer.normalize(ch)
        out.append(piece)
        spans += [(i, i + 1)] * len(piece)
    normalized = "".join(out)
    whole = normalizer.normalize(text)
    if normalized != whole:  # a mark that NFD moved across characters and that survived
        raise ValueError(
            f"cannot align BERT normalization of {text!r}: per-character result {normalized!r} "
            f"differs from {whole!r}"
        )
    return normalized, spans


def _chunks(pipeline: Any, normalized: str) -> list[tuple[str, int, int]]:
    pre = pipeline.pre_tokenizer
    if pre is None:
        return [(normalized, 0, len(normalized))] if normalized else []
    if hasattr(pre, "pre_tokenize_with_offsets"):
        return pre.pre_tokenize_with_offsets(normalized)
    out, pos = [], 0
    for chunk in pre.pre_tokenize(normalized):  # chunks are substrings, in order (BERT's split)
        start = normalized.find(chunk, pos)
        if start < 0:
            raise TypeError(f"the {type(pre).__name__} pre-tokenizer rewrites text: its chunks cannot be located")
        out.append((chunk, start, start + len(chunk)))
        pos = start + len(chunk)
    return out


def _token_spans(model: Any, chunk: str, ids: Sequence[int]) -> list[tuple[Span, Span | None]]:
    """Each token's character span in ``chunk`` and, for byte-level tokens, its byte span."""
    token = model.id_to_token
    if ids and isinstance(token(ids[0]), bytes):  # byte-level BPE: tokens are bytes
        starts = utf8_offsets(chunk)
        out, pos = [], 0
        for i in ids:
            end = pos + len(token(i))
            first = bisect.bisect_right(starts, pos) - 1
            last = bisect.bisect_left(starts, end)
            out.append(((first, last), (pos, end)))
            pos = end
        return out
    if not ids:
        return []
    if hasattr(model, "prefix") and hasattr(model, "unk_id"):  # WordPiece: "##" marks a continuation
        if list(ids) == [model.unk_id]:
            return [((0, len(chunk)), None)]
        out, pos = [], 0
        for k, i in enumerate(ids):
            piece = token(i)
            n = len(piece) - (len(model.prefix) if k and piece.startswith(model.prefix) else 0)
            out.append(((pos, pos + n), None))
            pos += n
        return out
    if hasattr(model, "viterbi") and hasattr(model, "byte_fallback"):  # Unigram
        return _unigram_spans(model, chunk, len(ids))
    raise TypeError(f"offsets for a {type(model).__name__} model are not supported")


def _unigram_spans(model: Any, chunk: str, n_ids: int) -> list[tuple[Span, Span | None]]:
    """Spans of a Unigram model's IDs for ``chunk``, from its Viterbi surfaces: a run of
    unknown characters is one ID spanning the run; a byte-fallback piece spans the
    character holding its byte, and its byte span is that exact byte."""
    starts = utf8_offsets(chunk)
    out: list[tuple[Span, Span | None]] = []
    byte = 0
    prev_unk = False
    for surface in model.viterbi(chunk):
        kind = model.kind(surface) if surface in model else "unknown"
        if kind == "byte":
            first, last = bisect.bisect_right(starts, byte) - 1, bisect.bisect_left(starts, byte + 1)
            out.append(((first, last), (byte, byte + 1)))
            byte += 1
            prev_unk = False
            continue
        end = byte + len(surface.encode("utf-8"))
        span = (bisect.bisect_left(starts, byte), bisect.bisect_left(starts, end))
        unknown = kind not in ("normal", "user")
        if unknown and prev_unk:
            out[-1] = ((out[-1][0][0], span[1]), None)
        else:
            out.append((span, None))
        prev_unk = unknown
        byte = end
    if len(out) != n_ids:
        raise ValueError(f"the Viterbi surfaces of {chunk!r} do not match its {n_ids} IDs")
    return out


def original_span(align: Sequence[Span], start: int, end: int, length: int) -> Span:
    """The span of the original text that normalized characters ``start:end`` came from.

    ``align`` is the alignment map (per normalized character, its span in the
    original, as `alignment` returns it) and ``length`` the original's length.
    The answer is the smallest span covering every source: their minimum start
    and maximum end, since canonical reordering can move a combining mark, so
    sources need not come in order. An empty span stays empty, placed where the
    next character comes from (at ``length`` after the last one).
    """
    if not 0 <= start <= end <= len(align):
        raise ValueError(f"span {start}:{end} is not inside the "
                         f"{len(align)} normalized characters")
    sources = align[start:end]
    if not sources:
        where = align[start][0] if start < len(align) else length
        return where, where
    return min(s for s, _ in sources), max(e for _, e in sources)


def encode_with_offsets(
    tokenizer: Any,
    text: str,
    *,
    allowed_special: SpecialSet = frozenset(),
    disallowed_special: SpecialSet = "all",
    add_special_tokens: bool = True,
) -> Encoding:
    """Encode ``text`` and give every token its span in ``text``.

    Spans are in code points (``offsets``) and in UTF-8 bytes (``byte_offsets``).
    The IDs equal ``tokenizer.encode(text, ...)``. ``tokenizer`` is a
    `toklab.Pipeline` (`toklab.WordPiece` is one) or a `toklab.ByteBPE`.
    """
    pipe = tokenizer.as_pipeline() if hasattr(tokenizer, "as_pipeline") else tokenizer
    if not hasattr(pipe, "split_specials"):
        raise TypeError("encode_with_offsets needs a toklab Pipeline or ByteBPE, "
                        f"got {type(tokenizer).__name__}")
    text = replace_surrogates(text)  # one U+FFFD per lone surrogate: positions kept
    at_byte = utf8_offsets(text)
    ids: list[int] = []
    spans: list[Span] = []
    byte_spans: list[Span] = []
    pos = 0  # where the current piece starts in text
    pieces = pipe.split_specials(text, allowed_special, disallowed_special)
    for piece, is_special in pieces:  # 1. specials, with their own spans
        if is_special:
            ids.append(pipe.special_tokens[piece])
            spans.append((pos, pos + len(piece)))
            byte_spans.append((at_byte[pos], at_byte[pos + len(piece)]))
            pos += len(piece)
            continue
        normalized, align = alignment(pipe.normalizer, piece)  # 2. the map
        identity = normalized == piece and all(
            s == (k, k + 1) for k, s in enumerate(align))
        # without normalization, byte-level tokens keep their exact bytes
        piece_bytes = utf8_offsets(normalized) if identity else None
        for chunk, start, _ in _chunks(pipe, normalized):  # 3. chunks
            chunk_ids = pipe.model.segment(chunk)
            located = _token_spans(pipe.model, chunk, chunk_ids)  # 4. tokens
            for i, ((a, b), exact) in zip(chunk_ids, located):
                # 5. normalized characters -> original characters
                first, last = original_span(align, start + a, start + b, len(piece))
                first, last = first + pos, last + pos
                if identity and exact is not None:
                    base = at_byte[pos] + piece_bytes[start]
                    byte_span = (base + exact[0], base + exact[1])
                else:
                    byte_span = (at_byte[first], at_byte[last])
                ids.append(i)
                spans.append((first, last))
                byte_spans.append(byte_span)
        pos += len(piece)
    if add_special_tokens and pipe.post_processor is not None:
        processed = pipe.post_process(ids)
        # The template only adds tokens around the sequence: find where the IDs sit.
        lead = next(k for k in range(len(processed) - len(ids) + 1)
                    if processed[k : k + len(ids)] == ids)
        tail = len(processed) - len(ids) - lead
        ids = processed
        spans = [(0, 0)] * lead + spans + [(0, 0)] * tail
        byte_spans = [(0, 0)] * lead + byte_spans + [(0, 0)] * tail
    return Encoding(tuple(ids), tuple(spans), tuple(byte_spans))


def decode_with_offsets(tokenizer: Any, ids: Iterable[int]) -> tuple[str, list[int]]:
    """tiktoken's ``decode_with_offsets``: the text, and per token the index of the first
    character that holds a byte of it. IDs that do not decode to valid UTF-8 raise
    ValueError naming the first bad byte (tiktoken raises UnicodeDecodeError, a ValueError)."""
    ids = list(ids)
    pieces = [tokenizer.id_to_token(i) for i in ids]
    if not all(isinstance(p, bytes) for p in pieces):
        raise TypeError("decode_with_offsets is defined for byte-level tokenizers (tokens that are bytes)")
    data = b"".join(pieces)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        pos = 0
        for k, p in enumerate(pieces):
            if pos + len(p) > exc.start:
                break
            pos += len(p)
        raise ValueError(
            f"the IDs do not decode to valid UTF-8: byte {exc.start} ({data[exc.start:exc.start + 1].hex()}), "
            f"in token {ids[k]} at position {k}; decode with errors='replace' to see the text"
        ) from None
    starts = utf8_offsets(text)
    offsets, pos = [], 0
    for p in pieces:
        offsets.append(bisect.bisect_right(starts, pos) - 1 if p else bisect.bisect_left(starts, pos))
        pos += len(p)
    return text, offsets


class OffsetsMixin:
    """`encode_with_offsets` and `decode_with_offsets` as methods; `toklab.ByteBPE` and
    `toklab.Pipeline` inherit them."""

    def encode_with_offsets(self, text: str, **options: Any) -> Encoding:
        """IDs and each token's span in ``text``, code points and UTF-8 bytes (`toklab.pipeline.offsets`)."""
        return encode_with_offsets(self, text, **options)

    def decode_with_offsets(self, ids: Iterable[int]) -> tuple[str, list[int]]:
        """tiktoken's ``decode_with_offsets``: the text and each token's first character (`toklab.pipeline.offsets`)."""
        return decode_with_offsets(self, ids)
