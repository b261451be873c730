"""Unicode and UTF-8 facts the tokenizers rely on.

The one piece of real machinery here is GPT-2's byte-to-character table.
Byte-level BPE works on raw bytes, but the original GPT-2 code stored its
vocabulary and merges as *text*, so every byte needed a printable stand-in.
`bytes_to_unicode` keeps the 188 bytes that already print as themselves and
shifts the other 68 (control characters, space, DEL, NBSP, soft hyphen, ...)
to U+0100 and up, in byte order. The result is a bijection of 256 bytes onto
256 printable characters; nothing about the tokenizer's behaviour depends on
it, only how its files and token strings look (``Ġ`` is the space byte).
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

__all__ = [
    "bytes_to_unicode",
    "unicode_to_bytes",
    "to_proxy",
    "from_proxy",
    "utf8_length",
    "describe_char",
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
    table = bytes_to_unicode()
    return "".join(table[b] for b in data)


def from_proxy(text: str) -> bytes:
    """Turn a proxy-alphabet string back into bytes.

    Raises ValueError naming the first character that is not in the alphabet,
    because a silently dropped character would corrupt a vocabulary file.
    """
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
