"""Checkers for the book's coding exercises, one module per chapter file stem.

Each ``check_*`` function takes the reader's own implementation, runs it on
cases with known answers (worked examples and seeded random ones compared with
toklab's tested implementation), raises `CheckFailure` (an AssertionError) at
the first disagreement, with the case, the input, the expected answer, the
answer received and a hint naming the likely mistake, and returns one line
``"<label>: all N cases passed (...)"`` otherwise. `harness` defines that
format.

Every checker is registered under its exercise label (``<file stem>-exN``,
as in the chapters): `REGISTRY` maps labels to `Exercise` entries, in book
order, and `get` finds one::

    from toklab import exercises
    entry = exercises.get("ch02_1-ex2")
    entry.function                 # 'my_encode': the function the reader defines
    entry.check(my_encode)         # the checker; entry.reference passes it
"""

from . import ch00, ch01, ch02_1, ch02_2, ch02_3, ch03_1, ch03_2, ch03_3
from .harness import REGISTRY, CheckFailure, Exercise, checkers, get

__all__ = [
    "REGISTRY",
    "CheckFailure",
    "Exercise",
    "checkers",
    "get",
    "ch00",
    "ch01",
    "ch02_1",
    "ch02_2",
    "ch02_3",
    "ch03_1",
    "ch03_2",
    "ch03_3",
]
