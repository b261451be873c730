"""Checkers for the coding exercises of §3.3 (Unicode traps and reversibility).

* ``ch03_3-ex1``, `check_utf16_length`: the reader computes a string's length in UTF-16
  code units (JavaScript's ``.length``) without encoding it. Compared with
  `toklab.unicode.utf16_length` and with Python's own UTF-16 codec.
* ``ch03_3-ex2``, `check_byte_span_to_char_span`: the reader turns a span of UTF-8 bytes
  (what a byte-level token covers) into the smallest span of whole code
  points that contains it. Compared with
  `toklab.unicode.byte_span_to_char_span` on every span of some tricky
  strings and on random ones.

Both report in the format of `toklab.exercises.harness`.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ..unicode import byte_span_to_char_span, utf16_length
from .harness import Run, exercise

__all__ = ["TRICKY_STRINGS", "check_utf16_length", "check_byte_span_to_char_span"]

_TRICKY: tuple[tuple[str, str], ...] = (
    ("", "the empty string"),
    ("plain ASCII", "plain ASCII"),
    ("caf\u00e9", "é composed: 1 code point, 2 bytes"),
    ("cafe\u0301", "é decomposed: 2 code points, 3 bytes"),
    ("\u6ce8\u610f", "注意: BMP ideographs, 3 bytes each"),
    ("\U0001f642", "🙂: one code point, 4 bytes, 2 UTF-16 units"),
    ("\U0001f468\u200d\U0001f469\u200d\U0001f467", "a ZWJ family: 5 code points, 18 bytes"),
    ("\u2764\ufe0f", "❤️ with a variation selector"),
    ("\U0001f1ef\U0001f1f5", "a flag: two regional indicators"),
    ("\uffff\U00010000\U0010ffff", "the last BMP code point and the ends of the supplementary planes"),
    ("a\u200bb\r\n\u9f98", "ZWSP, CRLF, 龘"),
    ("\u00a0\u3000\u0430pple", "NBSP, ideographic space, Cyrillic а"),
)

#: Strings where code points, UTF-8 bytes and UTF-16 units disagree in every way.
TRICKY_STRINGS: tuple[str, ...] = tuple(text for text, _ in _TRICKY)


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


def _utf16_hint(text: str, got: object) -> str:
    above = sum(1 for ch in text if ord(ch) > 0xFFFF)
    if got == len(text):
        return (f"that is len(text), the number of code points: the text has {len(text)}, {above} of them "
                "above U+FFFF, and each of those takes two UTF-16 units (a surrogate pair).")
    if got == len(text.encode("utf-16-le")):
        return "that is the number of UTF-16 *bytes*; a code unit is two bytes."
    if got == len(text.encode("utf-8")):
        return "that is the number of UTF-8 bytes; UTF-16 counts 16-bit units."
    return (f"count 1 unit for each code point up to U+FFFF and 2 (a surrogate pair) for each one above; "
            f"this text has {len(text)} code points, {above} of them above U+FFFF.")


@exercise("ch03_3-ex1", title="Length in UTF-16 code units, without encoding", function="utf16_length",
          reference=utf16_length, against="toklab.unicode.utf16_length and the UTF-16 codec")
def check_utf16_length(run: Run, fn: Callable[[str], int]) -> None:
    """Check a reader's ``utf16_length(text) -> int`` (UTF-16 code units of ``text``)."""
    cases = list(_TRICKY)
    cases += [(t, f"random string {k} ({len(t)} code points)") for k, t in enumerate(_random_strings(300))]
    for text, what in cases:
        expected = utf16_length(text)
        if expected != len(text.encode("utf-16-le")) // 2:  # toklab must agree with the codec
            raise RuntimeError(f"toklab.unicode.utf16_length disagrees with the UTF-16 codec on {text!r}")
        case = run.case(what, expected=expected)
        got = case.call(fn, text)
        if got != expected:
            case.fail(got, _utf16_hint(text, got))


def _byte_span_hint(text: str, start: int, end: int, expected: tuple[int, int], got: object) -> str:
    data = text.encode("utf-8")
    covered = data[start:end].hex(" ") or "none"
    if got == (start, end) and got != expected:
        return ("start and end are UTF-8 *byte* offsets; convert them to character offsets (a character "
                "takes 1 to 4 bytes).")
    if isinstance(got, tuple) and len(got) == 2 and got[0] == expected[0] and start != end:
        if isinstance(got[1], int) and got[1] == expected[1] - 1:
            return ("the last character is only partly covered by the bytes, and it counts: round the end "
                    "up to the next character boundary, not down.")
    if start == end:
        return (f"an empty byte span gives the empty span (k, k) at the character k that holds byte {start} "
                "(len(text) at the end).")
    return (f"the bytes are {covered}; the answer must cover every character any of them belongs to, "
            f"and no more: text[{expected[0]}:{expected[1]}] = {text[expected[0]:expected[1]]!r}.")


@exercise("ch03_3-ex2", title="Byte span to character span", function="byte_span_to_char_span",
          reference=byte_span_to_char_span, against="toklab.unicode.byte_span_to_char_span")
def check_byte_span_to_char_span(run: Run, fn: Callable[[str, int, int], tuple[int, int]]) -> None:
    """Check a reader's ``byte_span_to_char_span(text, start, end) -> (first, last)``.

    ``start``/``end`` are UTF-8 byte offsets (``0 <= start <= end``); the
    answer is the smallest code-point span covering those bytes, and for an
    empty byte span, the empty span at the character holding byte ``start``.
    A list of two ints is accepted as well as a tuple.
    """
    texts = list(_TRICKY)
    texts += [(t, f"random string {k}") for k, t in enumerate(_random_strings(60, seed=1))]
    for text, what in texts:
        size = len(text.encode("utf-8"))
        for start in range(size + 1):
            for end in range(start, size + 1):
                expected = byte_span_to_char_span(text, start, end)
                case = run.case(f"bytes {start}:{end} of {what}", expected=expected)
                got = case.call(fn, text, start, end)
                if isinstance(got, list):
                    got = tuple(got)
                if got != expected:
                    case.fail(got, _byte_span_hint(text, start, end, expected, got))
