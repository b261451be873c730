"""Checkers for the coding exercises of §3.3 (Unicode traps and reversibility).

* `check_utf16_length` -- the reader computes a string's length in UTF-16
  code units (JavaScript's ``.length``) without encoding it. Compared with
  `toklab.unicode.utf16_length` and with Python's own UTF-16 codec.
* `check_byte_span_to_char_span` -- the reader turns a span of UTF-8 bytes
  (what a byte-level token covers) into the smallest span of whole code
  points that contains it. Compared with
  `toklab.unicode.byte_span_to_char_span` on every span of some tricky
  strings and on random ones.

Each checker raises AssertionError naming the input, the expected value and
what the reader's function returned, and returns a one-line success message
otherwise.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ..unicode import byte_span_to_char_span, utf16_length

__all__ = ["TRICKY_STRINGS", "check_utf16_length", "check_byte_span_to_char_span"]

#: Strings where code points, UTF-8 bytes and UTF-16 units disagree in every way.
TRICKY_STRINGS: tuple[str, ...] = (
    "",
    "plain ASCII",
    "caf\u00e9",  # é composed: 1 code point, 2 bytes
    "cafe\u0301",  # é decomposed: 2 code points, 3 bytes
    "\u6ce8\u610f",  # 注意: BMP ideographs, 3 bytes each
    "\U0001f642",  # 🙂: one code point, 4 bytes, 2 UTF-16 units
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",  # family: 5 code points, 18 bytes
    "\u2764\ufe0f",  # ❤️ with a variation selector
    "\U0001f1ef\U0001f1f5",  # a flag: two regional indicators
    "\uffff\U00010000\U0010ffff",  # the last BMP code point and the ends of the supplementary planes
    "a\u200bb\r\n\u9f98",  # ZWSP, CRLF, 龘
    "\u00a0\u3000\u0430pple",  # NBSP, ideographic space, Cyrillic а
)


def _random_strings(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    pools = [(0x20, 0x7E), (0xA0, 0x7FF), (0x800, 0xD7FF), (0xE000, 0xFFFF), (0x10000, 0x10FFFF)]
    out = []
    for _ in range(n):
        chars = []
        for _ in range(rng.randint(0, 12)):
            lo, hi = rng.choice(pools)
            chars.append(chr(rng.randint(lo, hi)))
        out.append("".join(chars))
    return out


def check_utf16_length(fn: Callable[[str], int]) -> str:
    """Check a reader's ``utf16_length(text) -> int`` (UTF-16 code units of ``text``)."""
    cases = list(TRICKY_STRINGS) + _random_strings(300)
    for text in cases:
        expected = utf16_length(text)
        assert expected == len(text.encode("utf-16-le")) // 2  # toklab agrees with the codec
        got = fn(text)
        if got != expected:
            above = sum(1 for ch in text if ord(ch) > 0xFFFF)
            hint = (
                f"; it has {len(text)} code points, {above} of them above U+FFFF, "
                "and each of those takes two UTF-16 units (a surrogate pair)"
            )
            raise AssertionError(f"utf16_length({text!r}): expected {expected}, got {got!r}{hint}")
    return f"utf16_length: all {len(cases)} cases agree with toklab and with the UTF-16 codec"


def check_byte_span_to_char_span(fn: Callable[[str, int, int], tuple[int, int]]) -> str:
    """Check a reader's ``byte_span_to_char_span(text, start, end) -> (first, last)``.

    ``start``/``end`` are UTF-8 byte offsets (``0 <= start <= end``); the
    answer is the smallest code-point span covering those bytes, and for an
    empty byte span, the empty span at the character holding byte ``start``.
    """
    n = 0
    for text in list(TRICKY_STRINGS) + _random_strings(60, seed=1):
        size = len(text.encode("utf-8"))
        for start in range(size + 1):
            for end in range(start, size + 1):
                expected = byte_span_to_char_span(text, start, end)
                got = fn(text, start, end)
                if got is not None and not isinstance(got, tuple):
                    got = tuple(got) if isinstance(got, list) else got
                if got != expected:
                    data = text.encode("utf-8")
                    raise AssertionError(
                        f"byte_span_to_char_span({text!r}, {start}, {end}): expected {expected}, got {got!r} "
                        f"(the bytes are {data[start:end].hex(' ') or 'empty'}; the answer must cover every "
                        f"character any of them belongs to, and no more: text[{expected[0]}:{expected[1]}] = "
                        f"{text[expected[0]:expected[1]]!r})"
                    )
                n += 1
    return f"byte_span_to_char_span: all {n:,} spans agree with toklab"
