"""``check LABEL FILE.py`` and ``grade LABEL DIR --csv OUT``: exercise solutions against their checkers.

Both run each file in its own process (`toklab.teaching.exercises.sandbox`), so a submission
that loops forever, crashes, calls ``sys.exit`` or allocates without end is
reported and the next one runs. The function checked is the one the
exercise's registry entry names (``toklab.teaching.exercises.get(LABEL).function``);
``--function NAME`` checks another.
"""

from __future__ import annotations

import argparse
import csv
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..teaching.exercises.sandbox import Limits, Outcome, run, stop_all
from .base import Command, CommandError

__all__ = ["COMMANDS", "CSV_COLUMNS", "submissions", "csv_row"]

#: The columns of ``grade --csv``: result is pass or fail; status says why (`toklab.teaching.exercises.sandbox.STATUSES`);
#: failure is the first failing case (its input, expected and received values) or the error; hint is the
#: checker's hint for that case.
CSV_COLUMNS = ("file", "result", "status", "failure", "hint", "seconds")


def _entry(label: str):
    """The registry entry of exercise ``label`` (`toklab.teaching.exercises.Exercise`); CommandError naming the known ones."""
    from ..teaching.exercises import get  # loading every chapter's checkers: only when checking

    try:
        return get(label)
    except KeyError as exc:
        raise CommandError(f"{exc.args[0]} (python -m toklab exercises lists them all)", status=2) from None


def _limits(args: argparse.Namespace) -> Limits:
    if args.timeout <= 0:
        raise CommandError(f"--timeout must be positive, got {args.timeout:g}", status=2)
    if args.memory < 64:
        raise CommandError(f"--memory must be at least 64 (MB), got {args.memory}", status=2)
    return Limits(seconds=args.timeout, memory_mb=args.memory)


def _limit_options(parser: argparse.ArgumentParser, seconds: float) -> None:
    parser.add_argument("--function", metavar="NAME",
                        help="the function to check (default: the name the exercise asks for)")
    parser.add_argument("--timeout", type=float, default=seconds, metavar="SECONDS",
                        help=f"time limit per file, once the checker is loaded (default {seconds:g})")
    parser.add_argument("--memory", type=int, default=Limits().memory_mb, metavar="MB",
                        help=f"memory (address space) limit per file (default {Limits().memory_mb})")


# ---------------------------------------------------------------------------- check


def _configure_check(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("label", metavar="LABEL", help="the exercise, e.g. ch02_1-ex2 (python -m toklab exercises)")
    parser.add_argument("file", metavar="FILE.py", type=Path, help="the Python file that defines the function")
    _limit_options(parser, Limits().seconds)


def _run_check(args: argparse.Namespace) -> int:
    entry = _entry(args.label)
    limits = _limits(args)
    if not args.file.is_file():
        raise CommandError(f"{args.file}: no such file" if not args.file.exists() else f"{args.file} is not a file")
    print(f"checking {args.file} against {entry.label} ({entry.title})", flush=True)
    outcome = run(entry.label, args.file, function=args.function, limits=limits, show_output=True)
    if outcome.function and outcome.function != entry.function and not args.function:
        print(f"(checking {outcome.function}(), which {entry.label} accepts for {entry.function}())")
    if outcome.passed:
        print(outcome.summary)
        return 0
    if outcome.status == "failed":
        print(outcome.report.rstrip())
    else:
        print(f"{args.file}: {outcome.summary}")
        if outcome.report:
            print(outcome.report.rstrip())
    return 1


# ---------------------------------------------------------------------------- grade


def submissions(folder: Path) -> list[Path]:
    """The ``.py`` files directly in ``folder`` (not hidden), sorted by name."""
    return sorted(p for p in folder.glob("*.py") if p.is_file() and not p.name.startswith("."))


def csv_row(outcome: Outcome) -> dict[str, str]:
    """One row of the grade table."""
    failure = "" if outcome.passed else outcome.summary
    hint = (outcome.failure or {}).get("hint", "") if not outcome.passed else ""
    return {"file": outcome.file, "result": "pass" if outcome.passed else "fail", "status": outcome.status,
            "failure": " ".join(failure.split()), "hint": " ".join(str(hint).split()), "seconds": f"{outcome.seconds:.3f}"}


def _configure_grade(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("label", metavar="LABEL", help="the exercise, e.g. ch02_1-ex2")
    parser.add_argument("folder", metavar="DIR", type=Path, help="a folder of submissions, one .py file each")
    parser.add_argument("--csv", type=Path, metavar="OUT", help="write one row per file to OUT: " + ", ".join(CSV_COLUMNS))
    _limit_options(parser, Limits().seconds)
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="check N files at a time (default 1: timings are then not disturbed)")


def _run_grade(args: argparse.Namespace) -> int:
    entry = _entry(args.label)
    limits = _limits(args)
    if not args.folder.is_dir():
        raise CommandError(f"{args.folder} is not a folder")
    files = submissions(args.folder)
    if not files:
        raise CommandError(f"{args.folder} holds no .py files to grade")
    if args.jobs < 1:
        raise CommandError(f"--jobs must be at least 1, got {args.jobs}", status=2)
    out = None
    if args.csv is not None:
        try:
            out = open(args.csv, "w", newline="", encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot write {args.csv}: {exc.strerror or exc}") from None
    width = max(len(p.name) for p in files)
    print(f"grading {len(files)} file{'s' * (len(files) != 1)} in {args.folder} against {entry.label} "
          f"({entry.function}; limits {limits.seconds:g} s, {limits.memory_mb} MB each)", flush=True)
    outcomes: list[Outcome] = []
    try:
        writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS) if out else None
        if writer:
            writer.writeheader()

        def grade_one(path: Path) -> Outcome:
            return run(entry.label, path, function=args.function, limits=limits)

        pool = ThreadPoolExecutor(max_workers=args.jobs)
        try:
            for outcome in pool.map(grade_one, files):  # in file order, whatever finishes first
                outcomes.append(outcome)
                mark = "PASS" if outcome.passed else "FAIL"
                detail = "" if outcome.passed else f"  {outcome.status}: {outcome.summary}"
                print(f"{mark}  {outcome.file:<{width}}  {outcome.seconds:7.2f} s{detail}"[:400], flush=True)
                if writer:
                    writer.writerow(csv_row(outcome))
                    out.flush()
        except BaseException:  # Ctrl-C: run no more files, stop the running ones now
            pool.shutdown(wait=False, cancel_futures=True)
            stop_all()
            raise
        pool.shutdown()
    finally:
        if out:
            out.close()
    passed = sum(o.passed for o in outcomes)
    statuses = {}
    for o in outcomes:
        statuses[o.status] = statuses.get(o.status, 0) + 1
    counts = ", ".join(f"{n} {s}" for s, n in statuses.items() if s != "passed")
    print(f"{passed} of {len(outcomes)} passed" + (f" ({counts})" if counts else "")
          + (f"; table in {args.csv}" if args.csv else ""))
    return 0


_EXAMPLES_CHECK = """examples:
  python -m toklab check ch02_1-ex2 my_solution.py
  python -m toklab check ch03_3-ex1 hw3.py --function js_length --timeout 10

exit status: 0 if every case passed, 1 otherwise."""

_EXAMPLES_GRADE = """examples:
  python -m toklab grade ch02_1-ex2 submissions/ --csv grades.csv
  python -m toklab grade ch02_3-ex2 submissions/ --csv grades.csv --timeout 20 --memory 1024 --jobs 2

exit status: 0 once every file is graded (whatever the grades), 1 for a bad folder or label."""

COMMANDS = (
    Command("check", "check your solution of an exercise: python -m toklab check LABEL FILE.py",
            _configure_check, _run_check,
            "Import FILE.py in a separate process (its `if __name__ == \"__main__\":` part does not run), take "
            "the function the exercise asks for, and run the exercise's checker on it: print the checker's "
            "feedback (the first failing case, what was expected, what came back, and a hint) or its pass line.",
            _EXAMPLES_CHECK),
    Command("grade", "check every .py file in a folder, one process each, into a CSV table",
            _configure_grade, _run_grade,
            "Run the check of exercise LABEL on every .py file in DIR, each in its own process with a time "
            "and a memory limit, so an endless loop, a crash or a syntax error in one file only fails that "
            "file; print one line per file and write one CSV row per file with --csv.", _EXAMPLES_GRADE),
)
