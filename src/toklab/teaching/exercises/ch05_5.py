"""Checkers for the coding exercises of §5.5 (offsets back to the original text).

* ``ch05_5-ex2``, `check_utf16_spans`: the reader converts code-point spans (what
  ``encode_with_offsets`` and Hugging Face report) into UTF-16 code-unit spans (what
  a browser's JavaScript counts). Compared with
  `toklab.pipeline.offsets.utf16_offsets` on emoji, ZWJ sequences, astral
  letters, the empty text, empty spans, random texts with random spans, and the
  token spans of a whole corpus file (timed against toklab's answer).

Reported in the format of `toklab.teaching.exercises.harness`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from ...pipeline.offsets import utf16_offsets
from .harness import Run, Shown, exercise

__all__ = ["check_utf16_spans", "reference_utf16_spans"]

Span = tuple[int, int]


def reference_utf16_spans(text: str, spans: Sequence[Span]) -> list[Span]:
    """toklab's answer: look each end up in `toklab.pipeline.offsets.utf16_offsets`."""
    at = utf16_offsets(text)
    return [(at[a], at[b]) for a, b in spans]


_WORKED: tuple[tuple[str, list[Span], str], ...] = (
    ("", [], "the empty text, no spans"),
    ("", [(0, 0)], "the empty text, one empty span"),
    ("plain ASCII", [(0, 5), (5, 11)], "ASCII: both coordinates agree"),
    ("caf\u00e9 \u9f98", [(0, 4), (4, 6)], "BMP characters, one unit each"),
    ("a\U0001f642b", [(0, 1), (1, 2), (2, 3)], "🙂 between letters: a surrogate pair"),
    ("\U0001f642\U0001f642", [(0, 1), (0, 1), (1, 2)], "two tokens share one emoji's span"),
    ("\U0001f468\u200d\U0001f469\u200d\U0001f467!", [(0, 5), (5, 6)], "a ZWJ family, then !"),
    ("\U0001d518\U0001d52b\U0001d526", [(1, 3), (3, 3)], "astral math letters, an empty span at the end"),
    ("x \U00010348 y", [(2, 2), (1, 3), (3, 5)], "an empty span before a Gothic letter"),
)


def _random_case(rng: random.Random) -> tuple[str, list[Span]]:
    pools = ["a", " ", "\u00e9", "e\u0301", "\u6ce8", "\U0001f642", "\U0001f1ef\U0001f1f5", "\U00010348",
             "\u200d", "\uffff", "\U0010ffff"]
    text = "".join(rng.choice(pools) for _ in range(rng.randint(0, 10)))
    spans = []
    for _ in range(rng.randint(0, 5)):
        a = rng.randint(0, len(text))
        spans.append((a, rng.randint(a, len(text))))
    return text, spans


def _large_case() -> tuple[str, list[Span]]:
    """The mixed corpus file (emoji names and many scripts), cut into cl100k_base's tokens."""
    from ...bpe import ByteBPE
    from ...data import corpus

    text = corpus.load("mixed", 40_000)
    tokenizer = ByteBPE.from_tiktoken("cl100k_base")
    return text, list(tokenizer.encode_with_offsets(text, disallowed_special=()).offsets)


def _hint(text: str, spans: Sequence[Span], expected: list[Span], got: object) -> str:
    if not isinstance(got, (list, tuple)) or len(got) != len(expected):
        return f"return one (start, end) pair per input span: {len(expected)} of them, in order."
    pairs = [tuple(g) if isinstance(g, (list, tuple)) else g for g in got]
    if pairs == [tuple(s) for s in spans]:
        return ("those are the code-point spans unchanged: every code point above U+FFFF before a "
                "position takes two UTF-16 units (a surrogate pair), so it moves the position by one more.")
    if pairs == [(2 * a, 2 * b) for a, b in expected]:
        return "those are UTF-16 bytes; count code units (two bytes each), not bytes."
    if pairs == [(a + 1, b + 1) for a, b in expected]:
        return ("the positions are off: text.encode('utf-16') starts with a byte-order mark; count with "
                "'utf-16-le' (or count the code points above U+FFFF) instead.")
    k = next(k for k, (p, e) in enumerate(zip(pairs, expected)) if p != e)
    a, b = spans[k]
    return (f"span {k}, code points {a}:{b} ({text[a:b]!r}): the start is the number of UTF-16 units in "
            f"text[:{a}] and the end the number in text[:{b}].")


@exercise("ch05_5-ex2", title="From code points to UTF-16 units", function="utf16_spans",
          reference=reference_utf16_spans, against="toklab.pipeline.offsets.utf16_offsets")
def check_utf16_spans(run: Run, fn: Callable[[str, list[Span]], list[Span]]) -> None:
    """Check a reader's ``utf16_spans(text, spans) -> list of (start, end)``.

    ``spans`` are code-point spans of ``text`` (``0 <= start <= end <= len(text)``);
    the answer is the same spans in UTF-16 code units, in the same order.
    """
    rng = random.Random(5)
    cases = list(_WORKED) + [(*_random_case(rng), f"random text {k}") for k in range(150)]
    for text, spans, what in cases:
        expected = reference_utf16_spans(text, spans)
        case = run.case(what, expected=expected)
        got = case.call(fn, text, list(spans))
        if _as_pairs(got) != expected:
            case.fail(got, _hint(text, spans, expected, got))
    text, spans = _large_case()
    expected, seconds = run.timed(reference_utf16_spans, text, spans)
    case = run.case(f"large: {len(spans):,} token spans of the mixed corpus (timed)",
                    expected=Shown(f"{len(expected):,} spans ending at unit {expected[-1][1]:,}"),
                    input=f"utf16_spans(<{len(text):,} characters of the mixed corpus>, <its tokens' spans>)",
                    seconds=seconds, slow_hint=(
                        "count the UTF-16 units of every prefix once, in one pass over the text, then look "
                        "each end up; measuring text[:a] again for every span is quadratic"))
    got = case.call(fn, text, list(spans))
    if _as_pairs(got) != expected:
        pairs = _as_pairs(got)
        if isinstance(pairs, list) and len(pairs) == len(expected):
            k = next(k for k, (p, e) in enumerate(zip(pairs, expected)) if p != e)
            case.fail(Shown(f"span {k} as {pairs[k]}"), _hint(text, spans, expected, got),
                      expected=Shown(f"span {k} as {expected[k]}"))
        case.fail(Shown(f"{type(got).__name__} of length {len(got) if hasattr(got, '__len__') else '?'}"),
                  _hint(text, spans, expected, got))


def _as_pairs(got: object) -> object:
    """A list of (int, int) tuples when ``got`` is a sequence of pairs, else ``got`` itself."""
    if isinstance(got, (list, tuple)) and all(isinstance(g, (list, tuple)) and len(g) == 2 for g in got):
        return [tuple(g) for g in got]
    return got
