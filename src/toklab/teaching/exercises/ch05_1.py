"""Checkers for the coding exercises of §5.1 (digits and code).

* ``ch05_1-ex1``, `check_aligned`: the reader decides whether a cut of a digit
  string is the number's ``group``-digit groups counted from the right (every
  piece ``group`` digits long, only the leftmost possibly shorter). Compared
  with `toklab.lab.digits.aligned` on the cuts the chapter meets (GPT-2's,
  cl100k's, per digit, thousands groups), each against the group sizes that
  tell a right answer from a slip, on random cuts, and on two large cuts (timed).

Reported in the format of `toklab.teaching.exercises.harness`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from ...lab.digits import aligned, groups_from_right
from .harness import Run, exercise

__all__ = ["check_aligned"]

_CASES: tuple[tuple[tuple[str, ...], int, str], ...] = (
    (("12345",), 5, "a single token, group of five"),
    (("12345",), 3, "a single token is not thousands groups"),
    (("123",), 3, "a single group"),
    (("12",), 3, "a single short group"),
    (("1", "2", "3", "4", "5"), 1, "one digit per token"),
    (("1", "2", "3", "4", "5"), 3, "single digits are not thousands groups"),
    (("12", "345"), 3, "thousands groups from the right"),
    (("1", "234", "567"), 3, "two thousands groups after a short head"),
    (("123", "45"), 3, "cl100k's left-to-right groups, 5 digits"),
    (("123", "4"), 3, "cl100k's left-to-right groups, 4 digits"),
    (("123", "456"), 3, "left-to-right and right-to-left agree at 6 digits"),
    (("1", "2345"), 4, "one of GPT-2's cuts, as groups of four"),
    (("1", "2345"), 3, "one of GPT-2's cuts, as thousands groups"),
    (("12", "34"), 3, "pairs are not thousands groups"),
    (("12", "34"), 2, "pairs"),
    (("12", "34", "5"), 2, "pairs from the left"),
    (("1", "23", "45"), 2, "pairs from the right"),
    (("1", "23", "45"), 3, "pairs from the right are not thousands groups"),
    (("12", "3", "45"), 2, "a short group in the middle"),
)


def _random_cuts(n: int, seed: int = 0) -> list[tuple[tuple[str, ...], int]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 9)))
        group = rng.randint(1, 4)
        if rng.random() < 0.3:  # a right answer is not rare among the random cases
            sizes = groups_from_right(len(digits), group)
        else:
            k = rng.randint(0, len(digits) - 1)
            cuts = sorted(rng.sample(range(1, len(digits)), k))
            bounds = [0, *cuts, len(digits)]
            sizes = tuple(b - a for a, b in zip(bounds, bounds[1:]))
        pieces, start = [], 0
        for size in sizes:
            pieces.append(digits[start : start + size])
            start += size
        out.append((tuple(pieces), group))
    return out


LARGE = "large: a 300,000-digit number in 100,000 groups of 3 (timed)"
LARGE_LAST = "large: a 300,000-digit number in groups of 3, the last one digit short (timed)"


def _large(aligned_cut: bool) -> tuple[str, ...]:
    pieces = ("123",) * 100_000
    return pieces if aligned_cut else pieces[:-1] + ("12",)


def _hint(pieces: Sequence[str], group: int, expected: bool) -> str:
    sizes = [len(p) for p in pieces]
    right = list(groups_from_right(sum(sizes), group))
    if expected:
        return (f"the sizes {sizes}, read from the right, are exactly the {group}-digit "
                f"groups of a {sum(sizes)}-digit number (only the leftmost may be short): "
                "every digit's place decides its token and its position in it.")
    if len(set(sizes[:-1])) == 1 and sizes[0] == group and sizes[-1] < group:
        return (f"the sizes {sizes} are groups of {group} read from the left, with the short "
                "piece last: the units digit then sits in a different place than in a "
                f"longer number. Groups are read from the right: {right}.")
    if len(set(sizes[1:])) <= 1 and sizes[0] <= sizes[-1] and sizes[-1] != group:
        return (f"the sizes {sizes} are groups of {sizes[-1]} from the right, but the rule "
                f"asked about groups of {group}, which would give {right}: one group size "
                "for every number, not whichever size this cut happens to use.")
    return (f"the {group}-digit groups of a {sum(sizes)}-digit number, from the right, are "
            f"{right}; these pieces have sizes {sizes}.")


@exercise("ch05_1-ex1", title="Is a cut of a number aligned with place value?",
          function="aligned", reference=aligned, against="toklab.lab.digits.aligned")
def check_aligned(run: Run, fn: Callable[[Sequence[str], int], bool]) -> None:
    """Check a reader's ``aligned(pieces, group) -> bool`` on fixed and random cuts."""
    cases = list(_CASES) + [
        (pieces, group, f"random cut {k}")
        for k, (pieces, group) in enumerate(_random_cuts(300))
    ]
    cases += [(_large(aligned_cut), 3, what) for aligned_cut, what in ((True, LARGE), (False, LARGE_LAST))]
    for pieces, group, what in cases:
        expected, seconds = run.timed(aligned, pieces, group)
        large = what in (LARGE, LARGE_LAST)
        case = run.case(what if large else f"{what}: {'|'.join(pieces)}, group {group}", expected=expected,
                        input=f"aligned(<{len(pieces):,} pieces>, {group})" if large else None,
                        seconds=seconds if large else None, slow_hint=(
                            "one pass over the piece sizes is enough; joining or re-reading the pieces before "
                            "each one makes it quadratic"))
        got = case.call(fn, list(pieces), group)
        if got is not expected and got != expected:
            case.fail(got, _hint(pieces, group, expected))
