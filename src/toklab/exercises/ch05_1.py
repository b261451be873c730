"""Checkers for the coding exercises of §5.1 (digits and code).

* `check_group_digits` -- the reader cuts a run of decimal digits into groups of
  three from the right (thousands groups), without a regex. Compared with the
  chunks of `toklab.numbers.RIGHT_TO_LEFT_3` on every integer below 10,000,
  on long runs and on runs with leading zeros.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import regex

from ..numbers import RIGHT_TO_LEFT_3, aligned

__all__ = ["check_group_digits"]


def check_group_digits(fn: Callable[[str], Sequence[str]]) -> str:
    """Check a reader's ``group_digits(run) -> list[str]`` (groups of three from the right)."""
    rng = random.Random(0)
    cases = [str(n) for n in range(10_000)]
    cases += ["0" * k for k in range(1, 8)] + ["007", "0001234"]
    cases += ["".join(rng.choice("0123456789") for _ in range(rng.randint(5, 40))) for _ in range(300)]
    for run in cases:
        expected = regex.findall(RIGHT_TO_LEFT_3, run)
        got = fn(run)
        got = list(got) if isinstance(got, (list, tuple)) else got
        if got != expected:
            raise AssertionError(
                f"group_digits({run!r}): expected {expected}, got {got!r} (groups are counted from the "
                "right, so only the leftmost group may be shorter than three digits)"
            )
        assert aligned(expected)
    if fn("") not in ([], ()):
        raise AssertionError(f"group_digits(''): expected [], got {fn('')!r}")
    return f"group_digits: all {len(cases) + 1:,} runs grouped like toklab.numbers.RIGHT_TO_LEFT_3"
