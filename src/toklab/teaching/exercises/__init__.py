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

    from toklab.teaching import exercises
    entry = exercises.get("ch02_1-ex2")
    entry.function                 # 'my_encode': the function the reader defines
    entry.check(my_encode)         # the checker; entry.reference passes it

A student's file is checked by `sandbox` (``python -m toklab check``/``grade``): the
checker runs in the grading process and the student's function in a process of its own
(`worker`, below a `warden`), which sends back plain values only (`plain`);
`submissions` finds which file of a student answers which exercise.
"""

import importlib
import pkgutil

from .harness import REGISTRY, CheckFailure, Exercise, checkers, count_cases, get

#: The chapter modules, ``ch00`` ... : every one is imported here, so that its checkers are registered
#: (a new chapter's module needs no line in this file).
CHAPTERS = tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("ch")))
for _chapter in CHAPTERS:
    importlib.import_module(f".{_chapter}", __name__)  # binds toklab.teaching.exercises.<chapter> as well

__all__ = ["REGISTRY", "CHAPTERS", "CheckFailure", "Exercise", "checkers", "count_cases", "get", *CHAPTERS]
