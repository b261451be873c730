"""Unicode and UTF-8 facts the tokenizers rely on.

The one piece of real machinery here is GPT-2's byte-to-character table.
Byte-level BPE works on raw bytes, but the original GPT-2 code stored its
vocabulary and merges as *text*, so every byte needed a printable stand-in.
`bytes_to_unicode` keeps the 188 bytes that already print as themselves and
shifts the other 68 (control characters, space, DEL, NBSP, soft hyphen, ...)
to U+0100 and up, in byte order. The result is a bijection of 256 bytes onto
256 printable characters; nothing about the tokenizer's behaviour depends on
it, only how its files and token strings look (``Ġ`` is the space byte).

The second half of the module (used by §3.3) is about what "a character" and
"an offset" mean: `graphemes` and `coordinates` count a string in the four
units software uses (code points, UTF-8 bytes, UTF-16 units, graphemes),
`byte_span_to_char_span` widens a token's byte span to whole characters, and
`invisible_chars` lists the characters that render as nothing but still reach
the tokenizer. (Normalization with an alignment map lives with the other
normalizers: `toklab.normalizers.normalize_with_offsets`.)
"""

from __future__ import annotations

import bisect
import unicodedata
from functools import lru_cache
from typing import NamedTuple

import regex as _regex

__all__ = [
    "bytes_to_unicode",
    "unicode_to_bytes",
    "to_proxy",
    "from_proxy",
    "utf8_length",
    "describe_char",
    "replace_surrogates",
    "utf8_sequence_length",
    "graphemes",
    "coordinates",
    "utf16_length",
    "byte_span_to_char_span",
    "InvisibleChar",
    "invisible_chars",
]

# Byte values that GPT-2 left as themselves: printable ASCII after the space
# ('!'..'~') and two printable Latin-1 ranges, skipping NBSP (0xA0) and the
# soft hyphen (0xAD), which render invisibly.
_PRINTABLE_RANGES = ((0x21, 0x7E), (0xA1, 0xAC), (0xAE, 0xFF))


@lru_cache(maxsize=None)
def bytes_to_unicode() -> dict[int, str]:
    """Map every byte value 0..255 to a printable character (GPT-2's table).

    Printable bytes map to the character with the same code point; the
    remaining 68 map to U+0100, U+0101, ... in increasing byte order.
    """
    kept = [b for lo, hi in _PRINTABLE_RANGES for b in range(lo, hi + 1)]
    table = {b: chr(b) for b in kept}
    shifted = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + shifted)
            shifted += 1
    return table


@lru_cache(maxsize=None)
def unicode_to_bytes() -> dict[str, int]:
    """The inverse of `bytes_to_unicode`."""
    return {ch: b for b, ch in bytes_to_unicode().items()}


def to_proxy(data: bytes) -> str:
    """Render raw bytes in GPT-2's printable proxy alphabet (one char per byte)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"to_proxy takes bytes, got {type(data).__name__} (for text: to_proxy(text.encode('utf-8')))")
    table = bytes_to_unicode()
    return "".join(table[b] for b in data)


def from_proxy(text: str) -> bytes:
    """Turn a proxy-alphabet string back into bytes.

    Raises ValueError naming the first character that is not in the alphabet,
    because a silently dropped character would corrupt a vocabulary file.
    """
    if not isinstance(text, str):
        raise TypeError(f"from_proxy takes a proxy-alphabet str, got {type(text).__name__}")
    inverse = unicode_to_bytes()
    out = bytearray()
    for i, ch in enumerate(text):
        try:
            out.append(inverse[ch])
        except KeyError:
            raise ValueError(
                f"character {ch!r} (U+{ord(ch):04X}) at position {i} is not in the "
                "GPT-2 byte proxy alphabet"
            ) from None
    return bytes(out)


def utf8_length(ch: str) -> int:
    """Number of UTF-8 bytes of one code point: 1 (ASCII) to 4 (supplementary planes)."""
    if len(ch) != 1:
        raise ValueError(f"expected one code point, got {len(ch)}: {ch!r}")
    cp = ord(ch)
    if 0xD800 <= cp <= 0xDFFF:
        raise ValueError(f"U+{cp:04X} is a surrogate and has no UTF-8 encoding")
    return 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4


def describe_char(ch: str) -> dict[str, object]:
    """Code point, name, category and UTF-8 bytes of one character (for tables)."""
    data = ch.encode("utf-8")
    return {
        "char": ch,
        "code point": f"U+{ord(ch):04X}",
        "name": unicodedata.name(ch, "<unnamed>"),
        "category": unicodedata.category(ch),
        "utf8": " ".join(f"{b:02X}" for b in data),
        "bytes": len(data),
        "proxy": to_proxy(data),
    }


def replace_surrogates(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (others untouched).

    A lone surrogate (``"\\ud800"``) is a valid Python string but has no UTF-8
    form; tiktoken, HF ``tokenizers`` and every byte-level tokenizer here
    replace it rather than fail. For valid text this returns ``text`` itself.
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def utf8_sequence_length(lead: int) -> int:
    """Bytes in the UTF-8 sequence that starts with byte ``lead`` (1-4; valid UTF-8 assumed)."""
    return 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


_GRAPHEME = _regex.compile(r"\X")


def graphemes(text: str) -> list[str]:
    """Split ``text`` into extended grapheme clusters (UAX #29), what a reader calls characters.

    A grapheme can be many code points: ``e`` + U+0301, a flag (two regional
    indicators), an emoji ZWJ sequence such as a family. Cursor movement,
    "maximum 280 characters" and truncation that must not cut a character in
    half all want this unit. Uses the ``regex`` module's ``\\X``, which tracks
    a recent Unicode version; the standard library has no grapheme support.
    """
    if not isinstance(text, str):
        raise TypeError(f"graphemes takes a str, got {type(text).__name__}")
    return _GRAPHEME.findall(text)


def utf16_length(text: str) -> int:
    """Length in UTF-16 code units: what JavaScript's ``.length`` and Java's ``length()`` report.

    A code point above U+FFFF takes two units (a surrogate pair), every
    other one takes one. An editor or browser that reports offsets in this
    unit disagrees with Python's ``len`` on every emoji and rare CJK ideograph.
    """
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _utf8_encoded(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"position {exc.start} holds a lone surrogate (U+{ord(text[exc.start]):04X}), "
            "which has no UTF-8 form; replace it (e.g. with U+FFFD) first"
        ) from None


def coordinates(text: str) -> dict[str, int]:
    """The length of ``text`` in each unit that software means by "length".

    Keys: ``code_points`` (Python's ``len``), ``utf8_bytes`` (what a
    byte-level tokenizer sees and what byte offsets count), ``utf16_units``
    (JavaScript, Java, many editors' column numbers), ``graphemes`` (what a
    person counts). Offsets handed between two systems must say which one
    they are in. Raises ValueError for a lone surrogate, which has no UTF-8 form.
    """
    return {
        "code_points": len(text),
        "utf8_bytes": len(_utf8_encoded(text)),
        "utf16_units": utf16_length(text),
        "graphemes": len(graphemes(text)),
    }


def byte_span_to_char_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The smallest span of whole code points covering UTF-8 bytes ``[start, end)`` of ``text``.

    Byte-level tokens report (or imply) byte offsets, and a token may start
    or end in the middle of a character (the first byte of an emoji, say);
    a span of characters must then widen to the whole character, since
    half a character cannot be highlighted or sliced. An empty byte span
    gives an empty character span at the character holding byte ``start``
    (or at ``len(text)`` when ``start`` is the end of the text). Raises
    ValueError when the span is not ``0 <= start <= end <= len(UTF-8 bytes)``.
    """
    starts = [0]
    for ch in text:
        starts.append(starts[-1] + (utf8_length(ch) if not 0xD800 <= ord(ch) <= 0xDFFF else 0))
    if starts[-1] != len(_utf8_encoded(text)):  # pragma: no cover - _utf8_encoded raises first
        raise ValueError("text is not valid Unicode")
    total = starts[-1]
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= total):
        raise ValueError(f"byte span ({start!r}, {end!r}) is not within 0..{total} with start <= end")
    first = bisect.bisect_right(starts, start) - 1  # the character holding byte `start`
    if start == end:
        return first, first
    last = bisect.bisect_left(starts, end)  # first character starting at or after `end`
    return first, last


class InvisibleChar(NamedTuple):
    """One invisible character found by `invisible_chars`."""

    index: int  #: position in the text, in code points
    char: str
    code_point: str  #: e.g. ``"U+200B"``
    name: str  #: the Unicode name, e.g. ``"ZERO WIDTH SPACE"``
    kind: str  #: ``"zero-width"``, ``"variation selector"``, ``"bidi control"``, ``"tag"``, ``"filler"`` or ``"format"``


_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff\u034f")
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")


def _invisible_kind(ch: str) -> str | None:
    cp = ord(ch)
    if ch in _BIDI_CONTROLS:
        return "bidi control"
    if ch in _ZERO_WIDTH:
        return "zero-width"
    if 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF or 0x180B <= cp <= 0x180D or cp == 0x180F:
        return "variation selector"
    if cp == 0xE0001 or 0xE0020 <= cp <= 0xE007F:
        return "tag"
    if ch in _FILLERS:
        return "filler"
    if unicodedata.category(ch) == "Cf":
        return "format"
    return None


def invisible_chars(text: str) -> list[InvisibleChar]:
    """Every character in ``text`` that renders as nothing but is still there for a tokenizer.

    Zero-width characters (ZWSP, ZWNJ, ZWJ, word joiner, BOM, combining
    grapheme joiner), variation selectors (U+FE00-FE0F and the supplement;
    U+FE0F asks for emoji presentation), bidirectional controls (LRM, RLM,
    embeddings, overrides, isolates: the "Trojan Source" characters), tag
    characters, Hangul fillers, and any other format character (category
    ``Cf``, e.g. the soft hyphen). They change token IDs, defeat exact-match
    deduplication and can hide text from a reviewer, so audits list them
    before and after normalization. Whitespace and control characters that
    *do* move the cursor (space, tab, newline) are not listed.
    """
    found = []
    for i, ch in enumerate(text):
        kind = _invisible_kind(ch)
        if kind is not None:
            found.append(
                InvisibleChar(i, ch, f"U+{ord(ch):04X}", unicodedata.name(ch, "<unnamed>"), kind)
            )
    return found
