"""Checkers for the coding exercises of §5.1 (digits and code).

* ``ch05_1-ex1``, `check_aligned`: the reader decides whether a cut of a digit
  string is aligned with place value: read from the right, the pieces are groups
  of one size, and only the leftmost may be shorter. Compared with
  `toklab.lab.digits.aligned` on the cuts the chapter meets (GPT-2's, cl100k's,
  per digit, thousands groups) and on random cuts.

Reported in the format of `toklab.teaching.exercises.harness`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from ...lab.digits import aligned
from .harness import Run, exercise

__all__ = ["check_aligned"]

_CASES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("12345",), "a single token"),
    (("1", "2", "3", "4", "5"), "one digit per token"),
    (("12", "345"), "thousands groups from the right"),
    (("1", "234", "567"), "two thousands groups after a short head"),
    (("123", "45"), "cl100k's left-to-right groups, 5 digits"),
    (("123", "4"), "cl100k's left-to-right groups, 4 digits"),
    (("123", "456"), "left-to-right and right-to-left agree at 6 digits"),
    (("1", "2345"), "one of GPT-2's cuts"),
    (("12", "34", "5"), "pairs from the left"),
    (("1", "23", "45"), "pairs from the right"),
    (("12", "3", "45"), "a short group in the middle"),
)


def _random_cuts(n: int, seed: int = 0) -> list[tuple[str, ...]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 9)))
        cuts = sorted(rng.sample(range(1, len(digits)), rng.randint(0, len(digits) - 1))) if len(digits) > 1 else []
        bounds = [0, *cuts, len(digits)]
        out.append(tuple(digits[a:b] for a, b in zip(bounds, bounds[1:])))
    return out


LARGE = "large: a 300,000-digit number in 100,000 pieces, aligned (timed)"
LARGE_LAST = "large: a 300,000-digit number in 100,000 pieces, the last piece one digit short (timed)"


def _large(aligned_cut: bool) -> tuple[str, ...]:
    pieces = ("123",) * 100_000
    return pieces if aligned_cut else pieces[:-1] + ("12",)


def _hint(pieces: Sequence[str], expected: bool) -> str:
    sizes = [len(p) for p in pieces]
    if expected:
        return (f"the sizes {sizes}, read from the right, are one group size, with a shorter (or equal) group "
                "first: that is aligned, because every digit's place decides its position in its token.")
    if len(set(sizes[:-1])) == 1 and sizes[-1] < sizes[0]:
        return (f"the sizes {sizes} are equal from the left, and the short piece is the last one: the units digit "
                "then sits in a different place than in a longer number. Read from the right: the short piece "
                "may only be the first.")
    return (f"the sizes {sizes}, read from the right, are not all one group size (only the first may be "
            "shorter).")


@exercise("ch05_1-ex1", title="Is a cut of a number aligned with place value?", function="aligned",
          reference=aligned, against="toklab.lab.digits.aligned")
def check_aligned(run: Run, fn: Callable[[Sequence[str]], bool]) -> None:
    """Check a reader's ``aligned(pieces) -> bool`` on fixed and random cuts of digit strings."""
    cases = list(_CASES) + [(c, f"random cut {k}") for k, c in enumerate(_random_cuts(300))]
    cases += [(_large(aligned_cut), what) for aligned_cut, what in ((True, LARGE), (False, LARGE_LAST))]
    for pieces, what in cases:
        expected, seconds = run.timed(aligned, pieces)
        large = what in (LARGE, LARGE_LAST)
        case = run.case(what if large else f"{what}: {'|'.join(pieces)}", expected=expected,
                        input=f"aligned(<{len(pieces):,} pieces>)" if large else None,
                        seconds=seconds if large else None, slow_hint=(
                            "one pass over the piece sizes is enough; joining or re-reading the pieces before "
                            "each one makes it quadratic"))
        got = case.call(fn, list(pieces))
        if got is not expected and got != expected:
            case.fail(got, _hint(pieces, expected))
