"""A SentencePiece-style front end: normalization, ``▁`` escaping, byte fallback, two models.

SentencePiece (Kudo & Richardson, 2018) is a framework, not an algorithm: the
same front end feeds a Unigram or a BPE model. This module reimplements that
front end and checks it, ID for ID, against the real ``sentencepiece``
library (see ``tests/test_sentencepiece.py``). The stages, in order:

1. **Normalization** (`SPConfig.normalization`): ``"identity"``, ``"nfkc"``
   (Python's `unicodedata` NFKC) or ``"nmt_nfkc"`` (sentencepiece's default:
   NFKC plus the rules in `NMT_DELETE`, `NMT_TO_SPACE` and `NMT_KEEP`, measured
   by decompiling sentencepiece's rule table). Sentencepiece itself does not run
   an NFKC algorithm: it replaces the longest matching entry of a table compiled
   into the model (`Charsmap`). Give the tokenizer that table (`SPConfig.charsmap`,
   read by `from_sentencepiece` and `load`) and normalization is byte-exact;
   without it, the rule versions differ from sentencepiece in rare combining
   sequences (see `nmt_nfkc`). User-defined symbols are never normalized.
2. **Whitespace** (`normalize`): with ``remove_extra_whitespaces`` leading and
   trailing spaces go and runs of spaces collapse to one; with
   ``add_dummy_prefix`` a space is put in front of non-empty input, so that
   ``"world"`` alone and in ``"hello world"`` both start with ``▁``; then every
   space becomes ``▁`` (U+2581). A literal ``▁`` in the input survives
   identity normalization as an ordinary character, and decodes as a space:
   the escaping is not injective. (``nmt_nfkc`` maps it to a space up front.)
3. **Model**: Unigram (Viterbi over piece scores, done by `toklab.unigram.Unigram`)
   or BPE (`bpe_segment`: merge the adjacent pair whose concatenation is the
   highest-scoring piece, leftmost on ties). User-defined symbols are cut out
   greedily first and never split or merged away; control symbols (``<s>``,
   ``</s>``) never come from text.
4. **Unknowns**: a run of characters no piece covers becomes one ``<unk>``; with
   ``byte_fallback`` it becomes the UTF-8 bytes of the run as ``<0xXX>`` pieces.

`SentencePieceTokenizer.decode` runs backwards: byte pieces are reassembled
(each byte that does not belong to a valid UTF-8 character becomes U+FFFD, as
in sentencepiece), ``▁`` becomes a space, control pieces vanish, ``<unk>``
prints as `UNK_SURFACE`, and the leading space that the dummy prefix (or
whitespace removal) implies is dropped.

Two flags only shape *training* in sentencepiece: ``split_by_whitespace`` and
``split_digits`` keep the trainer from learning pieces across word or digit
boundaries (`split_words`). Encoding ignores them, in sentencepiece and here:
a model trained with them has no piece that crosses those boundaries.
"""

from __future__ import annotations

import heapq
import os
import struct
import unicodedata
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from toklab.unigram import Unigram

__all__ = [
    "SPACE",
    "UNK_SURFACE",
    "NORMALIZATIONS",
    "NMT_DELETE",
    "NMT_TO_SPACE",
    "NMT_KEEP",
    "nmt_nfkc",
    "normalize_rule",
    "Charsmap",
    "SPConfig",
    "SPPiece",
    "KINDS",
    "parse_model_proto",
    "reference_bpe_segment",
    "bpe_segment",
    "split_words",
    "SentencePieceTokenizer",
    "load",
]

#: sentencepiece's meta symbol for a space (U+2581 LOWER ONE EIGHTH BLOCK).
SPACE = "\u2581"

#: What ``decode`` prints for ``<unk>``: sentencepiece's default ``unk_surface``
#: (U+2047 DOUBLE QUESTION MARK with a space on each side).
UNK_SURFACE = " \u2047 "

#: The normalization rules implemented by name (without a compiled table).
NORMALIZATIONS = ("identity", "nfkc", "nmt_nfkc")

# --------------------------------------------------------------------------
# Normalization rules
# --------------------------------------------------------------------------

#: Characters ``nmt_nfkc`` deletes: C0 controls except TAB, LF, FF, CR (and
#: except NUL, which no rule touches), DEL, and two C1 controls. Measured by
#: comparing sentencepiece's decompiled ``nmt_nfkc`` and ``nfkc`` tables.
NMT_DELETE = frozenset(
    [chr(c) for c in range(0x01, 0x09)]
    + ["\x0b"]
    + [chr(c) for c in range(0x0E, 0x20)]
    + ["\x7f", "\x8f", "\x9f"]
)

#: Characters ``nmt_nfkc`` turns into a plain space (on top of the spaces NFKC
#: already maps, such as U+00A0 and U+3000): TAB, LF, FF, CR, ARABIC LETTER
#: MARK, OGHAM SPACE MARK, ZERO WIDTH SPACE, ZWNJ, LRM, RLM, LINE and PARAGRAPH
#: SEPARATOR, the meta symbol ``▁`` itself, BOM/ZWNBSP and REPLACEMENT CHARACTER.
#: ZERO WIDTH JOINER (U+200D) is *not* in the list: emoji sequences survive.
NMT_TO_SPACE = frozenset(
    "\t\n\x0c\r\u061c\u1680\u200b\u200c\u200e\u200f\u2028\u2029\u2581\ufeff\ufffd"
)

#: Characters that NFKC changes but ``nmt_nfkc`` keeps: FULLWIDTH TILDE (U+FF5E;
#: NFKC makes it ``~``).
NMT_KEEP = frozenset("\uff5e")


def nmt_nfkc(text: str) -> str:
    """sentencepiece's default normalization, as rules: NFKC, then the NMT extras.

    NFKC runs first (on the pieces between `NMT_KEEP` characters, which stay
    as they are), then `NMT_DELETE` characters are removed and `NMT_TO_SPACE`
    characters become ``" "``. NFKC first matters: a deleted control between
    a letter and a combining mark still blocks their composition, as it does
    in sentencepiece (``"e\\x01\\u0301"`` -> ``"e\\u0301"``, not ``"é"``).

    Known differences from sentencepiece's compiled table (`Charsmap`), all
    measured in the tests: the table does not reorder combining marks or
    compose every sequence (``"ă\\u0301"`` stays two characters there, NFKC
    makes ``"ắ"``), and it was built from a newer Unicode version than
    Python 3.11's `unicodedata` (14.0), so it also maps a few code points that
    are unassigned here.
    """
    if any(ch in NMT_KEEP for ch in text):
        parts = []
        start = 0
        for i, ch in enumerate(text):
            if ch in NMT_KEEP:
                parts.append(unicodedata.normalize("NFKC", text[start:i]))
                parts.append(ch)
                start = i + 1
        parts.append(unicodedata.normalize("NFKC", text[start:]))
        text = "".join(parts)
    else:
        text = unicodedata.normalize("NFKC", text)
    if text.isascii() and text.isprintable():
        return text
    return "".join("" if ch in NMT_DELETE else " " if ch in NMT_TO_SPACE else ch for ch in text)


def normalize_rule(text: str, name: str) -> str:
    """Apply a named normalization (one of `NORMALIZATIONS`); no whitespace handling."""
    if name == "identity":
        return text
    if name == "nfkc":
        return unicodedata.normalize("NFKC", text)
    if name == "nmt_nfkc":
        return nmt_nfkc(text)
    raise ValueError(f"unknown normalization {name!r}; known: {', '.join(NORMALIZATIONS)}")


class Charsmap:
    """sentencepiece's compiled normalization table (``precompiled_charsmap`` in a model).

    The blob is a little-endian ``uint32`` size, a double-array trie of that
    many bytes (darts-clone layout: 32-bit units) whose keys are UTF-8 byte
    strings, then a pool of NUL-terminated replacement strings that the
    trie's values point into. Normalizing means: at each position take the
    *longest* key that matches, emit its replacement, skip the key; where no
    key matches, copy one character. That greedy rewrite is why the table can
    only approximate NFKC (no reordering of combining marks).
    """

    def __init__(self, blob: bytes) -> None:
        if len(blob) < 4:
            raise ValueError(f"compiled charsmap too short ({len(blob)} bytes)")
        (trie_size,) = struct.unpack_from("<I", blob, 0)
        if trie_size % 4 or 4 + trie_size > len(blob) or trie_size == 0:
            raise ValueError(f"corrupt compiled charsmap: trie size {trie_size} in a {len(blob)}-byte blob")
        units = array("I")
        units.frombytes(blob[4 : 4 + trie_size])
        if struct.pack("=I", 1) != struct.pack("<I", 1):
            units.byteswap()
        self._units = units.tolist()
        self._pool = blob[4 + trie_size :]
        self._cache: dict[int, str] = {}
        # Fast path for ASCII: for each ASCII byte, its own replacement (if it
        # is a key) and whether any longer key continues it with an ASCII
        # byte. An ASCII byte followed by an ASCII byte it has no path to
        # needs no trie walk.
        self._ascii_single: list[str | None] = []
        self._ascii_cont: list[bool] = []
        for b in range(128):
            length, out = self.longest_match(bytes([b]), 0)
            self._ascii_single.append(out if length else None)
            self._ascii_cont.append(any(self._has_path(bytes([b, c])) for c in range(128)))

    def _has_path(self, key: bytes) -> bool:
        """Whether ``key`` is a prefix of some key in the trie."""
        units = self._units
        node = 0
        for c in key:
            unit = units[node]
            child = node ^ ((unit >> 10) << ((unit & 0x200) >> 6)) ^ c
            if child >= len(units) or units[child] & 0x800000FF != c:
                return False
            node = child
        return True

    def longest_match(self, data: bytes, pos: int) -> tuple[int, str]:
        """``(length in bytes, replacement)`` of the longest key at ``data[pos:]``; ``(0, "")`` if none.

        A double-array trie walk: from node ``n``, byte ``c`` leads to
        ``n ^ offset ^ c`` if that unit's label is ``c``; a unit flagged
        "has leaf" has the value of the key that ends there one step below.
        """
        units = self._units
        size = len(units)
        unit = units[0]
        node = (unit >> 10) << ((unit & 0x200) >> 6)
        best_len = 0
        best_value = -1
        end = len(data)
        i = pos
        while i < end:
            c = data[i]
            node ^= c
            if node >= size:
                break
            unit = units[node]
            if unit & 0x800000FF != c:  # label mismatch (leaf units have bit 31 set)
                break
            node ^= (unit >> 10) << ((unit & 0x200) >> 6)
            i += 1
            if unit & 0x100 and node < size:
                best_len = i - pos
                best_value = units[node] & 0x7FFFFFFF
        if best_len == 0:
            return 0, ""
        return best_len, self._replacement(best_value)

    def _replacement(self, value: int) -> str:
        out = self._cache.get(value)
        if out is None:
            end = self._pool.find(b"\0", value)
            out = self._pool[value : end if end >= 0 else len(self._pool)].decode("utf-8")
            self._cache[value] = out
        return out

    def normalize(self, text: str) -> str:
        """Rewrite ``text`` with the table (no user-defined symbols, no whitespace handling)."""
        return "".join(self.chunks(text.encode("utf-8")))

    def chunks(self, data: bytes, user_match: Any = None) -> Iterator[str]:
        """sentencepiece's normalization loop over UTF-8 ``data``, one output chunk per step.

        At each position: a user-defined symbol (``user_match(data, pos)``
        returns its length, or 0) is copied as it is; else the longest table
        key is replaced; else one character is copied.
        """
        single, cont = self._ascii_single, self._ascii_cont
        end = len(data)
        pos = 0
        while pos < end:
            if user_match is not None:
                length = user_match(data, pos)
                if length:
                    yield data[pos : pos + length].decode("utf-8")
                    pos += length
                    continue
            b = data[pos]
            if b < 0x80 and not cont[b] and (pos + 1 == end or data[pos + 1] < 0x80):
                out = single[b]
                yield chr(b) if out is None else out
                pos += 1
                continue
            length, out = self.longest_match(data, pos)
            if length == 0:
                length = _utf8_len(b)
                out = data[pos : pos + length].decode("utf-8")
            yield out
            pos += length


def _utf8_len(lead: int) -> int:
    return 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


# --------------------------------------------------------------------------
# Configuration and pieces
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class SPConfig:
    """The front-end settings of a sentencepiece model (its ``NormalizerSpec`` and trainer flags).

    ``normalization`` is one of `NORMALIZATIONS`. ``charsmap`` is the model's
    compiled normalization table; when present it is used instead of the
    named rule (that is what sentencepiece does, and what makes the output
    identical to sentencepiece's). `SentencePieceTokenizer.from_sentencepiece`
    and `load` fill it in from the model; leave it ``None`` to run the rule.

    ``split_by_whitespace`` and ``split_digits`` are trainer flags: they are
    recorded because they explain the vocabulary (`split_words`), but
    encoding ignores them, as sentencepiece's encoder does.
    """

    model_type: str = "unigram"
    normalization: str = "nmt_nfkc"
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True
    byte_fallback: bool = False
    split_digits: bool = False
    split_by_whitespace: bool = True
    unk_surface: str = UNK_SURFACE
    charsmap: bytes | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.model_type not in ("unigram", "bpe"):
            raise ValueError(f"model_type must be 'unigram' or 'bpe', got {self.model_type!r}")
        if self.normalization not in NORMALIZATIONS and self.charsmap is None:
            raise ValueError(
                f"normalization {self.normalization!r} is not implemented by rule "
                f"(known: {', '.join(NORMALIZATIONS)}); pass the model's compiled charsmap"
            )


#: Piece kinds, named like sentencepiece's piece types (and `toklab.unigram.KINDS`).
KINDS = ("normal", "unknown", "control", "user", "byte", "unused")


class SPPiece(NamedTuple):
    """One vocabulary entry: its string, score, and kind (one of ``KINDS``)."""

    piece: str
    score: float
    kind: str = "normal"


def _byte_piece(b: int) -> str:
    return f"<0x{b:02X}>"


# --------------------------------------------------------------------------
# BPE segmentation (sentencepiece's rule)
# --------------------------------------------------------------------------


def reference_bpe_segment(symbols: Sequence[str], scores: Mapping[str, float]) -> list[str]:
    """sentencepiece's BPE encoding, written plainly (quadratic; for reading and testing).

    Start from ``symbols`` (characters, and user-defined symbols kept whole).
    Repeatedly look at every adjacent pair whose concatenation is in
    ``scores``; merge the one with the highest score, the leftmost one if
    several tie. Stop when no adjacent pair forms a piece. Unlike GPT-2's
    BPE there is no merge list: a piece's score plays the role of its rank
    (sentencepiece's BPE trainer stores ``-i`` for the i-th merge).
    """
    seq = list(symbols)
    while True:
        best = None
        for i in range(len(seq) - 1):
            merged = seq[i] + seq[i + 1]
            if merged in scores and (best is None or scores[merged] > scores[seq[best] + seq[best + 1]]):
                best = i
        if best is None:
            return seq
        seq[best : best + 2] = [seq[best] + seq[best + 1]]


def bpe_segment(symbols: Sequence[str], scores: Mapping[str, float]) -> list[str]:
    """The same result as `reference_bpe_segment`, with a heap of candidate pairs.

    Symbols sit in a linked list; the heap holds ``(-score, left position,
    merged length)`` for every adjacent pair that forms a piece, so the top
    is the best pair and, among equals, the leftmost. A popped entry whose
    two symbols have changed since it was pushed is stale (the stored
    length no longer matches) and is skipped; after a merge only the two new
    neighbouring pairs are pushed. Must equal `reference_bpe_segment`.
    """
    return _bpe_merge(symbols, scores)[0]


def _bpe_merge(
    symbols: Sequence[str], scores: Mapping[str, float], unused: frozenset[str] | set[str] = frozenset()
) -> tuple[list[str], dict[str, tuple[str, str]]]:
    """`bpe_segment`, plus the halves of each pushed pair that forms an ``unused`` piece.

    sentencepiece records ``rev_merge[piece] = (left, right)`` whenever it
    *pushes* a candidate pair whose concatenation is an unused piece (a later
    push of the same string overwrites it), and splits unused pieces back
    with that record after merging. Kept separate so the public function
    stays the plain algorithm.
    """
    sym = list(symbols)
    n = len(sym)
    rev: dict[str, tuple[str, str]] = {}
    if n < 2:
        return sym, rev
    nxt = list(range(1, n + 1))
    nxt[-1] = -1
    prv = list(range(-1, n - 1))
    heap: list[tuple[float, int, int]] = []

    def push(left: int, right: int) -> None:
        merged = sym[left] + sym[right]
        score = scores.get(merged)
        if score is not None:
            heapq.heappush(heap, (-score, left, len(merged)))
            if merged in unused:
                rev[merged] = (sym[left], sym[right])

    for i in range(n - 1):
        push(i, i + 1)
    while heap:
        _, left, size = heapq.heappop(heap)
        right = nxt[left] if sym[left] else -1
        if right < 0 or len(sym[left]) + len(sym[right]) != size:
            continue
        sym[left] += sym[right]
        sym[right] = ""
        nxt[left] = nxt[right]
        if nxt[right] >= 0:
            prv[nxt[right]] = left
        if prv[left] >= 0:
            push(prv[left], left)
        if nxt[left] >= 0:
            push(left, nxt[left])
    return [x for x in sym if x], rev


# --------------------------------------------------------------------------
# The trainer's word split (what split_by_whitespace / split_digits mean)
# --------------------------------------------------------------------------


def _is_split_digit(ch: str) -> bool:
    """A digit for ``split_digits``: ASCII 0-9 and fullwidth ０-９ (measured: Arabic-Indic ٣ is not)."""
    return "0" <= ch <= "9" or "\uff10" <= ch <= "\uff19"


def split_words(normalized: str, config: SPConfig) -> list[str]:
    """Cut escaped text where sentencepiece's *trainer* forbids a piece to cross.

    With ``split_by_whitespace`` a new word starts at every ``▁`` (so a piece
    holds ``▁`` only as its first character); with ``split_digits`` every
    digit is a word of its own, without even a ``▁`` in front. Encoding never
    calls this: it describes the vocabulary a trainer with these flags
    produces, which is why sentencepiece's encoder can ignore the flags. (The
    trainer also splits at changes of Unicode script and around numbers by
    default; those rules are not reproduced here.)
    """
    words: list[str] = []
    prev_digit = False
    for ch in normalized:
        digit = config.split_digits and _is_split_digit(ch)
        if not words or digit or prev_digit or (config.split_by_whitespace and ch == SPACE):
            words.append(ch)
        else:
            words[-1] += ch
        prev_digit = digit
    return words


# --------------------------------------------------------------------------
# Reading a serialized model (a minimal protobuf reader: no protobuf needed)
# --------------------------------------------------------------------------

_TYPE_NAMES = {1: "normal", 2: "unknown", 3: "control", 4: "user", 5: "unused", 6: "byte"}
_MODEL_TYPES = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _fields(buf: bytes) -> Iterator[tuple[int, int, Any]]:
    """``(field number, wire type, value)`` of one protobuf message (wire format only)."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos : pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(buf, pos)
            value, pos = buf[pos : pos + length], pos + length
        elif wire == 5:
            value, pos = buf[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        if pos > len(buf) or number == 0:
            raise ValueError("truncated protobuf message")
        yield number, wire, value


def parse_model_proto(blob: bytes) -> tuple[list[SPPiece], SPConfig]:
    """Pieces and front-end settings of a serialized sentencepiece ``ModelProto``.

    Field numbers from ``sentencepiece_model.proto``: ModelProto.pieces = 1
    (piece = 1, score = 2, type = 3), trainer_spec = 2 (model_type = 3,
    split_by_whitespace = 22, treat_whitespace_as_suffix = 24, split_digits = 25,
    byte_fallback = 35, unk_surface = 44), normalizer_spec = 3 (name = 1,
    precompiled_charsmap = 2, add_dummy_prefix = 3, remove_extra_whitespaces = 4,
    escape_whitespaces = 5), denormalizer_spec = 5. Absent fields take the
    proto's defaults. Raises ValueError when the bytes are not such a model.
    """
    pieces: list[SPPiece] = []
    trainer: dict[int, Any] | None = None
    norm: dict[int, Any] | None = None
    has_denormalizer = False
    try:
        for number, wire, value in _fields(blob):
            if number == 1 and wire == 2:
                piece, score, kind = None, 0.0, 1
                for n2, w2, v2 in _fields(value):
                    if n2 == 1 and w2 == 2:
                        piece = v2.decode("utf-8")
                    elif n2 == 2 and w2 == 5:
                        score = struct.unpack("<f", v2)[0]
                    elif n2 == 3 and w2 == 0:
                        kind = v2
                if piece is None or kind not in _TYPE_NAMES:
                    raise ValueError(f"piece {len(pieces)} has no string or an unknown type {kind}")
                pieces.append(SPPiece(piece, score, _TYPE_NAMES[kind]))
            elif number == 2 and wire == 2:
                trainer = {n2: v2 for n2, _w, v2 in _fields(value)}
            elif number == 3 and wire == 2:
                norm = {n2: v2 for n2, _w, v2 in _fields(value)}
            elif number == 5 and wire == 2:
                spec = {n2: v2 for n2, _w, v2 in _fields(value)}
                has_denormalizer = bool(spec.get(2) or spec.get(6))
    except (IndexError, UnicodeDecodeError, struct.error) as exc:
        raise ValueError(f"not a sentencepiece model: {exc}") from None
    if not pieces:
        raise ValueError("not a sentencepiece model: no pieces found")
    # sentencepiece always writes both specs after the pieces; a file cut
    # short at a field boundary would otherwise parse as a smaller model.
    if trainer is None or norm is None:
        raise ValueError("incomplete sentencepiece model: no trainer or normalizer spec (truncated file?)")
    if has_denormalizer:
        raise ValueError("models with a denormalization rule are not supported")
    model_type = _MODEL_TYPES.get(trainer.get(3, 1), str(trainer.get(3)))
    if model_type not in ("unigram", "bpe"):
        raise ValueError(f"model_type {model_type!r} is not supported (only unigram and bpe)")
    if trainer.get(24, 0):
        raise ValueError("treat_whitespace_as_suffix models are not supported")
    name = norm.get(1, b"nmt_nfkc").decode("utf-8")
    charsmap = norm.get(2) or None
    if name not in NORMALIZATIONS and charsmap is None:
        raise ValueError(f"normalization {name!r} has no compiled table in the model")
    config = SPConfig(
        model_type=model_type,
        normalization=name,
        add_dummy_prefix=bool(norm.get(3, 1)),
        remove_extra_whitespaces=bool(norm.get(4, 1)),
        escape_whitespaces=bool(norm.get(5, 1)),
        byte_fallback=bool(trainer.get(35, 0)),
        split_digits=bool(trainer.get(25, 0)),
        split_by_whitespace=bool(trainer.get(22, 1)),
        unk_surface=trainer[44].decode("utf-8") if 44 in trainer else UNK_SURFACE,
        charsmap=charsmap,
    )
    return pieces, config


# --------------------------------------------------------------------------
# The tokenizer
# --------------------------------------------------------------------------


class SentencePieceTokenizer:
    """A sentencepiece model reimplemented: normalize, escape, segment, map to IDs, and back.

    ``model_pieces`` lists the vocabulary in ID order, each entry a
    `SPPiece` or a ``(piece, score, kind)`` triple (a ``(piece, score)`` pair
    means an ordinary piece). Exactly one entry must be ``"unknown"``;
    ``"control"`` entries (``<s>``, ``</s>``) get IDs but never come from
    text; ``"user"`` entries are user-defined symbols, cut out of the input
    before normalization and kept whole; ``"byte"`` entries are the 256
    ``<0xXX>`` pieces byte fallback needs. ``config`` holds the front-end
    settings (`SPConfig`).

    ``encode`` returns IDs, ``encode_as_pieces`` the piece strings
    (sentencepiece's ``out_type=str``: an unknown run shows its own text),
    ``decode`` turns IDs back into text. Build one from the real library
    with `from_sentencepiece`, or from a ``.model`` file with `load`.
    """

    def __init__(self, model_pieces: Sequence[SPPiece | tuple], config: SPConfig | None = None) -> None:
        self.config = config if config is not None else SPConfig()
        entries: list[SPPiece] = []
        for i, item in enumerate(model_pieces):
            if isinstance(item, tuple) and len(item) == 2:
                item = SPPiece(item[0], item[1], "normal")
            elif isinstance(item, tuple) and len(item) == 3:
                item = SPPiece(*item)
            else:
                raise TypeError(f"entry {i}: expected (piece, score[, kind]), got {item!r}")
            if not isinstance(item.piece, str) or not item.piece:
                raise ValueError(f"entry {i}: a piece must be a non-empty string, got {item.piece!r}")
            if item.kind not in KINDS:
                raise ValueError(f"entry {i} ({item.piece!r}): unknown kind {item.kind!r}; known: {', '.join(KINDS)}")
            entries.append(SPPiece(item.piece, float(item.score), item.kind))
        self._entries = entries
        self._ids: dict[str, int] = {}
        for i, e in enumerate(entries):
            if e.piece in self._ids:
                raise ValueError(f"piece {e.piece!r} appears twice (IDs {self._ids[e.piece]} and {i})")
            self._ids[e.piece] = i
        unks = [i for i, e in enumerate(entries) if e.kind == "unknown"]
        if len(unks) != 1:
            raise ValueError(f"the vocabulary needs exactly one unknown piece, found {len(unks)}")
        self.unk_id = unks[0]
        byte_ids = [self._ids.get(_byte_piece(b), -1) for b in range(256)]
        if self.config.byte_fallback and any(i < 0 or entries[i].kind != "byte" for i in byte_ids):
            raise ValueError("byte_fallback needs the 256 byte pieces <0x00>..<0xFF> (kind 'byte') in the vocabulary")
        self._user = sorted({e.piece for e in entries if e.kind == "user"}, key=len, reverse=True)
        self._user_bytes = [u.encode("utf-8") for u in self._user]
        self._byte_ids = byte_ids
        self._charsmap = Charsmap(self.config.charsmap) if self.config.charsmap else None
        if self.config.model_type == "unigram":
            # Unigram's lattice knows the piece kinds (user-defined pieces get
            # sentencepiece's bonus score; control, byte and unused pieces
            # never match text) and adds path scores in float32 like the C++.
            # Byte fallback is left to `_expand`, so the lattice reports unknown runs.
            self._unigram = Unigram._from_entries([tuple(e) for e in entries], byte_fallback=False, float32=True)
            self._bpe_scores: dict[str, float] = {}
        else:
            self._unigram = None
            # sentencepiece merges into ordinary, user-defined and unused pieces.
            self._bpe_scores = {e.piece: e.score for e in entries if e.kind in ("normal", "user", "unused")}
            self._unused = frozenset(e.piece for e in entries if e.kind == "unused")

    # ---- construction from the real library ---------------------------------

    @classmethod
    def from_sentencepiece(cls, processor: Any, config: SPConfig | None = None) -> "SentencePieceTokenizer":
        """Build from a ``sentencepiece.SentencePieceProcessor``.

        Pieces, scores and the unknown/control/unused/byte types are read with
        the processor's plain API (``id_to_piece``, ``get_score``,
        ``is_unknown``, ...). That API cannot tell a user-defined symbol from an
        ordinary piece, so the types are checked against the serialized model,
        which is also where the settings come from when ``config`` is None
        (including the compiled normalization table). Pass ``config`` to run
        the model under settings of your own (for instance a rule-based
        normalizer, to measure it against sentencepiece's table).
        """
        blob = processor.serialized_model_proto()
        proto_pieces, proto_config = parse_model_proto(blob)
        pieces = []
        for i in range(processor.get_piece_size()):
            piece = processor.id_to_piece(i)
            if processor.is_unknown(i):
                kind = "unknown"
            elif processor.is_control(i):
                kind = "control"
            elif processor.is_unused(i):
                kind = "unused"
            elif processor.is_byte(i):
                kind = "byte"
            else:
                kind = "user" if proto_pieces[i].kind == "user" else "normal"
            if proto_pieces[i].piece != piece or proto_pieces[i].kind != kind:
                raise ValueError(f"piece {i}: the API says {piece!r}/{kind}, the model file {proto_pieces[i]}")
            pieces.append(SPPiece(piece, processor.get_score(i), kind))
        return cls(pieces, config if config is not None else proto_config)

    @classmethod
    def from_model_proto(cls, blob: bytes, config: SPConfig | None = None) -> "SentencePieceTokenizer":
        """Build from the bytes of a ``.model`` file (no sentencepiece library needed)."""
        pieces, proto_config = parse_model_proto(bytes(blob))
        return cls(pieces, config if config is not None else proto_config)

    # ---- vocabulary ---------------------------------------------------------

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        c = self.config
        return (
            f"SentencePieceTokenizer({c.model_type}, {len(self)} pieces, normalization={c.normalization!r}"
            f"{' (compiled table)' if c.charsmap else ''}, add_dummy_prefix={c.add_dummy_prefix}, "
            f"remove_extra_whitespaces={c.remove_extra_whitespaces}, byte_fallback={c.byte_fallback})"
        )

    @property
    def pieces(self) -> list[SPPiece]:
        """All vocabulary entries, index = ID."""
        return list(self._entries)

    def id_to_piece(self, i: int) -> str:
        return self._entries[self._check_id(i)].piece

    def piece_to_id(self, piece: str) -> int:
        """The ID of ``piece``. Raises KeyError for a string that is not in the vocabulary.

        (sentencepiece's ``piece_to_id`` silently returns the unknown ID
        instead; here a typo is an error.)
        """
        try:
            return self._ids[piece]
        except KeyError:
            raise KeyError(f"{piece!r} is not a piece of this vocabulary ({len(self)} entries)") from None

    def kind(self, i: int) -> str:
        """``"normal"``, ``"unknown"``, ``"control"``, ``"user"``, ``"byte"`` or ``"unused"``."""
        return self._entries[self._check_id(i)].kind

    def _check_id(self, i: int) -> int:
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(self._entries):
            raise IndexError(f"ID {i!r} is out of range: valid IDs are 0..{len(self._entries) - 1}")
        return i

    # ---- normalization ------------------------------------------------------

    def _user_match(self, data: bytes, pos: int) -> int:
        for u in self._user_bytes:  # longest first
            if data.startswith(u, pos):
                return len(u)
        return 0

    def _chunks(self, text: str) -> Iterator[str]:
        """Normalized chunks; user-defined symbols pass through untouched.

        With a compiled table this is sentencepiece's loop exactly: at each
        position a user-defined symbol (longest) wins, else the longest table
        entry, else one character. With a named rule, the text between
        user-defined symbols is normalized as a whole (NFKC composes across
        characters), one chunk per output character.
        """
        data = text.encode("utf-8")
        if self._charsmap is not None:
            yield from self._charsmap.chunks(data, self._user_match if self._user_bytes else None)
            return
        name = self.config.normalization
        if not self._user_bytes:
            yield from normalize_rule(text, name)
            return
        pos = start = 0
        while pos < len(data):
            length = self._user_match(data, pos)
            if length:
                yield from normalize_rule(data[start:pos].decode("utf-8"), name)
                yield data[pos : pos + length].decode("utf-8")
                pos += length
                start = pos
            else:
                pos += _utf8_len(data[pos])
        yield from normalize_rule(data[start:].decode("utf-8"), name)

    def normalize(self, text: str) -> str:
        """``text`` as the model sees it: normalized, whitespace handled, spaces escaped to ``▁``.

        Equals sentencepiece's ``SentencePieceProcessor.normalize``. The
        whitespace rules, in sentencepiece's order: with
        ``remove_extra_whitespaces`` a chunk's leading spaces are dropped while
        the previous output ended in a space (at the start of text, too), so
        runs collapse and leading spaces vanish; the dummy prefix is one
        space before non-empty input; at the end trailing ``▁`` are removed
        (literal ones included).
        """
        if not isinstance(text, str):
            raise TypeError(f"expected str, got {type(text).__name__}")
        if not text:
            return ""
        cfg = self.config
        rew, escape = cfg.remove_extra_whitespaces, cfg.escape_whitespaces
        chunks = self._chunks(text)
        out: list[str] = []
        pending = None
        if rew:  # drop leading chunks that are a single space
            for chunk in chunks:
                if chunk != " ":
                    pending = chunk
                    break
            else:
                return ""
        if cfg.add_dummy_prefix:
            out.append(SPACE if escape else " ")
        prev_space = rew
        for chunk in _prepend(pending, chunks):
            if prev_space and rew:
                chunk = chunk.lstrip(" ")
            if chunk:
                out.append(chunk.replace(" ", SPACE) if escape else chunk)
                prev_space = chunk.endswith(" ")
            if not rew:
                prev_space = False
        result = "".join(out)
        if rew:
            result = result.rstrip(SPACE if escape else " ")
        return result

    # ---- encoding -------------------------------------------------------------

    def _segment(self, normalized: str) -> list[tuple[str, int]]:
        """``(surface, id)`` of each piece, unknown runs merged, before byte fallback."""
        if self._unigram is not None:
            # Viterbi surfaces; an unknown run is never itself an ordinary or
            # user-defined piece (that piece would have scored better).
            pieces = [(surface, self._matchable_id(surface)) for surface in self._unigram.viterbi(normalized)]
        else:
            pieces = self._bpe(normalized)
        out: list[tuple[str, int]] = []
        for surface, pid in pieces:
            if pid == self.unk_id and out and out[-1][1] == self.unk_id:
                out[-1] = (out[-1][0] + surface, pid)
            else:
                out.append((surface, pid))
        return out

    def _matchable_id(self, piece: str) -> int:
        pid = self._ids.get(piece, -1)
        return pid if pid >= 0 and self._entries[pid].kind in ("normal", "user") else self.unk_id

    def _bpe(self, normalized: str) -> list[tuple[str, int]]:
        """sentencepiece's BPE model: symbols (user-defined ones whole), merges, unused pieces undone."""
        if self._user_bytes:
            data = normalized.encode("utf-8")
            symbols = []
            pos = 0
            while pos < len(data):
                length = self._user_match(data, pos) or _utf8_len(data[pos])
                symbols.append(data[pos : pos + length].decode("utf-8"))
                pos += length
        else:
            symbols = list(normalized)
        merged, rev = _bpe_merge(symbols, self._bpe_scores, self._unused)
        out: list[tuple[str, int]] = []
        for piece in merged:
            self._resegment(piece, rev, out)
        return out

    def _resegment(self, piece: str, rev: dict[str, tuple[str, str]], out: list[tuple[str, int]]) -> None:
        """Emit ``piece``; an unused piece is split back into the pair it was merged from (recursively).

        An unused piece with no recorded pair (a single character marked
        unused) counts as unknown, as does anything that is not an ordinary
        or user-defined piece: both measured against sentencepiece.
        """
        pid = self._ids.get(piece, -1)
        kind = self._entries[pid].kind if pid >= 0 else None
        if kind == "unused" and piece in rev:
            left, right = rev[piece]
            self._resegment(left, rev, out)
            self._resegment(right, rev, out)
        elif kind in ("normal", "user"):
            out.append((piece, pid))
        else:
            out.append((piece, self.unk_id))

    def _expand(self, pieces: list[tuple[str, int]]) -> list[tuple[str, int]]:
        if not self.config.byte_fallback:
            return pieces
        out = []
        for surface, pid in pieces:
            if pid == self.unk_id:
                out.extend((_byte_piece(b), self._byte_ids[b]) for b in surface.encode("utf-8"))
            else:
                out.append((surface, pid))
        return out

    def encode(self, text: str, *, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """IDs of ``text`` (sentencepiece's ``encode(text, out_type=int)``).

        ``add_bos``/``add_eos`` put the ``<s>``/``</s>`` control IDs around the
        result: control symbols only ever come from the caller, never from
        text (``"<s>"`` typed in the input is three ordinary characters).
        """
        ids = [pid for _, pid in self._expand(self._segment(self.normalize(text)))]
        if add_bos:
            ids.insert(0, self._control_id("<s>"))
        if add_eos:
            ids.append(self._control_id("</s>"))
        return ids

    def _control_id(self, piece: str) -> int:
        pid = self._ids.get(piece)
        if pid is None or self._entries[pid].kind != "control":
            raise ValueError(f"this vocabulary has no control piece {piece!r}")
        return pid

    def encode_as_pieces(self, text: str) -> list[str]:
        """Piece strings of ``text`` (``out_type=str``); an unknown run shows its own text."""
        return [surface for surface, _ in self._expand(self._segment(self.normalize(text)))]

    # ---- decoding -------------------------------------------------------------

    def decode(self, ids: Iterable[int]) -> str:
        """Text of ``ids``, following sentencepiece's decoder.

        Control pieces vanish; ``<unk>`` prints as ``config.unk_surface``; a
        run of byte pieces is reassembled and each byte that is not part of a
        valid UTF-8 character becomes U+FFFD (one per byte, as sentencepiece
        does; Python's ``errors="replace"`` would merge some of them); ``▁``
        becomes a space. The first piece loses one leading ``▁`` when the
        model adds a dummy prefix or removes extra whitespace; with
        ``remove_extra_whitespaces`` that goes on while nothing has been
        output yet (the encoder can never produce leading spaces then).
        """
        cfg = self.config
        strip = cfg.add_dummy_prefix or cfg.remove_extra_whitespaces
        out: list[str] = []
        pending = bytearray()
        at_start = True
        for i in ids:
            e = self._entries[self._check_id(i)]
            if e.kind == "byte":
                pending.append(int(e.piece[3:5], 16))
                continue
            if pending:
                out.append(_decode_bytes(bytes(pending)))
                pending.clear()
                at_start = False
            if e.kind == "control":
                continue
            if e.kind == "unknown":
                out.append(cfg.unk_surface)
            else:
                piece = e.piece
                if at_start and strip and piece.startswith(SPACE):
                    piece = piece[1:]
                out.append(piece.replace(SPACE, " "))
            at_start = cfg.remove_extra_whitespaces and not any(out)
        if pending:
            out.append(_decode_bytes(bytes(pending)))
        return "".join(out)

    def decode_pieces(self, pieces: Iterable[str]) -> str:
        """`decode` for piece strings; KeyError for a string that is not a piece."""
        return self.decode([self.piece_to_id(p) for p in pieces])


def _prepend(first: str | None, rest: Iterator[str]) -> Iterator[str]:
    if first is not None:
        yield first
    yield from rest


def _decode_bytes(data: bytes) -> str:
    """UTF-8 decode where every byte outside a valid character becomes one U+FFFD."""
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


def load(path: str | os.PathLike) -> SentencePieceTokenizer:
    """Read a sentencepiece ``.model`` file. Raises ValueError naming the file if it does not parse."""
    path = os.fspath(path)
    with open(path, "rb") as fh:
        blob = fh.read()
    try:
        return SentencePieceTokenizer.from_model_proto(blob)
    except ValueError as exc:
        raise ValueError(f"{path}: not a usable sentencepiece model ({exc})") from None
