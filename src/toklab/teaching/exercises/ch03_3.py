"""Checkers for the coding exercises of §3.3 (Unicode traps and reversibility).

* ``ch03_3-ex1``, `check_truncate_utf16`: the reader cuts a text to fit a limit in
  UTF-16 code units (JavaScript's ``.length``) without breaking a grapheme: the
  longest prefix of whole graphemes that fits. Compared with toklab's graphemes
  and UTF-16 lengths on emoji, ZWJ sequences, flags, combining marks, Hangul
  jamo and random texts, at every limit.
* ``ch03_3-ex2``, `check_byte_span_to_char_span`: the reader turns a span of UTF-8 bytes
  (what a byte-level token covers) into the smallest span of whole code
  points that contains it. Compared with
  `toklab.base.unicode.byte_span_to_char_span` on every span of some tricky
  strings and on random ones.

Both report in the format of `toklab.teaching.exercises.harness`.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ...base.unicode import byte_span_to_char_span, graphemes, utf16_length
from .harness import Run, Shown, exercise, show

__all__ = ["TRICKY_STRINGS", "check_truncate_utf16", "check_byte_span_to_char_span"]

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


def _reference_truncate_utf16(text: str, limit: int) -> str:
    """The longest prefix of whole graphemes of ``text`` that fits in ``limit`` UTF-16 code units."""
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise TypeError(f"limit must be an int, got {type(limit).__name__}")
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    kept, used = [], 0
    for grapheme in graphemes(text):
        used += utf16_length(grapheme)
        if used > limit:
            break
        kept.append(grapheme)
    return "".join(kept)


def _cut_by_units(text: str, limit: int, units: Callable[[str], int]) -> str:
    """The longest prefix of whole *code points* whose length in ``units`` is at most ``limit``."""
    out, used = [], 0
    for ch in text:
        used += units(ch)
        if used > limit:
            break
        out.append(ch)
    return "".join(out)


def _truncate_hint(text: str, limit: int, expected: str, got: object) -> str:
    if not isinstance(got, str):
        return "return the kept prefix of the text as a str."
    if not text.startswith(got):
        return "return a prefix of the text: cut it, do not change or reorder what you keep."
    size = utf16_length(got)
    if size > limit and got == text[:limit]:
        above = sum(1 for ch in got if ord(ch) > 0xFFFF)
        return (f"that is text[:{limit}]: {limit} code points, {above} of them above U+FFFF, and each of those "
                f"takes two UTF-16 units (a surrogate pair), so the result is {size} units, over the limit.")
    if size > limit:
        return f"the result is {size} UTF-16 units long, more than the limit of {limit}."
    if len(got) > len(expected):
        broken = graphemes(text[len(expected):])[0]
        return (f"you cut inside a grapheme: {broken!r} ({len(broken)} code points) is one user-perceived "
                "character, so keep it whole or drop it whole; cut only between graphemes (regex's \\X, "
                "or toklab.base.unicode.graphemes).")
    if got and got == _cut_by_units(text, limit, lambda ch: len(ch.encode("utf-8"))):
        return "that counts UTF-8 bytes; the limit is in UTF-16 code units (1 or 2 per code point)."
    return (f"the longest prefix of whole graphemes that fits is {utf16_length(expected)} units long "
            f"({expected!r}); yours stops earlier.")


#: Strings where graphemes, code points and UTF-16 units all differ; each is cut at every limit.
_TRUNCATE_TEXTS: tuple[tuple[str, str], ...] = (
    ("ab\U0001f642cd", "an emoji between ASCII letters"),
    ("\U0001f642\U0001f642\U0001f642", "three emoji above U+FFFF"),
    ("cafe\u0301s", "e + combining acute: one grapheme, two code points"),
    ("\U0001f468\u200d\U0001f469\u200d\U0001f467!", "a ZWJ family: one grapheme, 8 UTF-16 units"),
    ("\U0001f1ef\U0001f1f5\U0001f1eb\U0001f1f7", "two flags: four regional indicators"),
    ("I \u2764\ufe0f you", "a heart with VARIATION SELECTOR-16"),
    ("\u1100\u1161\u11a8\uac00", "Hangul: a syllable in jamo, then a precomposed one"),
    ("\r\nx", "CR LF is one grapheme"),
    ("\u6ce8\u610f \u9f98", "BMP ideographs, one unit each"),
    ("", "the empty string"),
)


def _random_grapheme_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    parts = ["a", "Z", " ", "\u00e9", "e\u0301", "\u6ce8", "\U0001f642", "\u2764\ufe0f", "\U0001f1ef\U0001f1f5",
             "\U0001f468\u200d\U0001f469", "\U0001f44d\U0001f3fd", "\u0915\u094d\u0937", "\r\n", "\U00010348"]
    return ["".join(rng.choice(parts) for _ in range(rng.randint(0, 8))) for _ in range(n)]


@exercise("ch03_3-ex1", title="Truncate to a UTF-16 limit, whole graphemes", function="truncate_utf16",
          reference=_reference_truncate_utf16, against="whole graphemes (toklab.base.unicode.graphemes) counted in "
          "UTF-16 units (toklab.base.unicode.utf16_length)")
def check_truncate_utf16(run: Run, fn: Callable[[str, int], str]) -> None:
    """Check a reader's ``truncate_utf16(text, limit) -> str``.

    The answer is the longest prefix of ``text`` made of whole graphemes
    (extended grapheme clusters, UAX #29) whose length in UTF-16 code units
    (JavaScript's ``.length``) is at most ``limit``; a negative ``limit``
    raises ValueError.
    """
    cases = list(_TRUNCATE_TEXTS)
    cases += [(t, f"random text {k}") for k, t in enumerate(_random_grapheme_texts(80, seed=2))]
    for text, what in cases:
        for limit in range(utf16_length(text) + 2):
            expected = _reference_truncate_utf16(text, limit)
            case = run.case(f"{what}, limit {limit}", expected=expected)
            got = case.call(fn, text, limit)
            if got != expected:
                case.fail(got, _truncate_hint(text, limit, expected, got))
    case = run.case("a negative limit", expected=None)
    case.expect_error(fn, "abc", -1, why="no text fits in a negative number of code units")
    text = _large_text()
    limit = utf16_length(text) - 1_001
    expected, seconds = run.timed(_reference_truncate_utf16, text, limit)
    case = run.case(LARGE, expected=expected, input=Shown(f"truncate_utf16(<{len(text):,} characters>, {limit})"),
                    seconds=seconds, slow_hint=(
                        "walk the graphemes once, adding each one's UTF-16 length to a running total; measuring "
                        "the whole prefix again (text[:i]) for each grapheme is quadratic"))
    got = case.call(fn, text, limit)
    if got != expected:
        case.fail(show(got, 80), _truncate_hint(text, limit, expected, got), expected=show(expected, 80))


LARGE = "large: 30,000 characters of emoji, accents and scripts, cut 1,001 units before the end (timed)"


def _large_text() -> str:
    return "".join(_random_grapheme_texts(8_000, seed=3))[:30_000]


LARGE_SPAN = "large: the last bytes of 30,000 characters of emoji, accents and scripts (timed)"


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
          reference=byte_span_to_char_span, against="toklab.base.unicode.byte_span_to_char_span")
def check_byte_span_to_char_span(run: Run, fn: Callable[[str, int, int], tuple[int, int]]) -> None:
    """Check a reader's ``byte_span_to_char_span(text, start, end) -> (first, last)``.

    ``start``/``end`` are UTF-8 byte offsets (``0 <= start <= end``); the
    answer is the smallest code-point span covering those bytes, and for an
    empty byte span, the empty span at the character holding byte ``start``.
    A list of two ints is accepted as well as a tuple.
    """
    texts = list(_TRICKY)
    texts += [(t, f"random string {k}") for k, t in enumerate(_random_strings(60, seed=1))]
    large = _large_text()
    size = len(large.encode("utf-8"))
    spans = [(text, what, [(a, b) for a in range(len(text.encode("utf-8")) + 1)
                           for b in range(a, len(text.encode("utf-8")) + 1)]) for text, what in texts]
    spans.append((large, LARGE_SPAN, [(size - 7, size - 2)]))
    for text, what, pairs in spans:
        for start, end in pairs:
            expected, seconds = run.timed(byte_span_to_char_span, text, start, end)
            timed = what == LARGE_SPAN
            case = run.case(what if timed else f"bytes {start}:{end} of {what}", expected=expected,
                            seconds=seconds if timed else None,
                            input=Shown(f"byte_span_to_char_span(<{len(text):,} characters>, {start}, {end})")
                            if timed else None, slow_hint=(
                                "walk the text once, adding up each character's UTF-8 length; encoding the prefix "
                                "again for each character (len(text[:i].encode())) is quadratic"))
            got = case.call(fn, text, start, end)
            if isinstance(got, list):
                got = tuple(got)
            if got != expected:
                case.fail(got, _byte_span_hint(text, start, end, expected, got))
