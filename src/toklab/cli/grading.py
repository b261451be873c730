"""``check LABEL FILE`` and ``grade LABEL... DIR``: exercise solutions against their checkers.

Both check each file with `toklab.teaching.exercises.sandbox`: the student's code runs in
a process of its own, which only computes the function's values, and the checker
compares them here, so a submission can neither loop forever, crash the grader nor
make itself pass. A file is a ``.py`` file or a notebook (the code cells the function
needs are run in order: the chapter's own cells that it does not use are not). The function checked is the one the exercise's registry entry names
(``toklab.teaching.exercises.get(LABEL).function``); ``--function NAME`` checks another.

``grade`` takes one or more labels (or a chapter, for all its graded exercises) and a
folder: one file per student, or with ``--recursive`` one folder per student
(`toklab.teaching.exercises.submissions` says which file answers which exercise).
``--csv`` writes one row per student and exercise; ``--gradebook`` one row per student,
a score column per exercise.
"""

from __future__ import annotations

import argparse
import csv
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..teaching.exercises.sandbox import Limits, Outcome, run, stop_all
from .base import Command, CommandError

__all__ = ["COMMANDS", "CSV_COLUMNS", "Row", "csv_row", "gradebook_rows", "labels_of", "score"]

#: The columns of ``grade --csv``, one row per student and exercise. ``score`` is 100 x cases_passed /
#: cases_total (a checker stops at its first failing case, so cases_passed counts the cases before it);
#: ``result`` is pass or fail; ``status`` says why (`toklab.teaching.exercises.sandbox.STATUSES`, or ``missing``:
#: no file of the student defines the function); ``failure`` is the first failing case (its input, expected
#: and received values) or the error; ``hint`` the checker's hint for that case; ``seconds`` the submission's
#: own time.
CSV_COLUMNS = ("student", "label", "score", "cases_passed", "cases_total", "result", "status", "file", "failure",
               "hint", "seconds", "note")


def _registry():
    from ..teaching import exercises  # loading every chapter's checkers: only when checking

    return exercises


def _entry(label: str):
    """The registry entry of exercise ``label``; CommandError naming the known ones."""
    try:
        return _registry().get(label)
    except KeyError as exc:
        raise CommandError(f"{exc.args[0]} (python -m toklab exercises lists them all)", status=2) from None


def labels_of(names: list[str]) -> list[str]:
    """The exercise labels ``names`` stand for, in the order given: a label, or a chapter (its graded exercises)."""
    exercises = _registry()
    out: list[str] = []
    for name in names:
        if "-ex" not in name:
            chapter = [e.label for e in exercises.checkers() if e.chapter == name and e.graded]
            if not chapter:
                raise CommandError(f"chapter {name!r} has no graded exercise (python -m toklab exercises "
                                   "--checkers lists them)", status=2)
            out += [label for label in chapter if label not in out]
            continue
        entry = _entry(name)
        if not entry.graded:
            raise CommandError(f"{name} is not graded: its checker is meant to fail on the function the exercise "
                               "asks for (the failure is the lesson), so it is answered in words", status=2)
        if name not in out:
            out.append(name)
    return out


def _limits(args: argparse.Namespace) -> Limits:
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise CommandError(f"--timeout must be a positive number of seconds, got {args.timeout:g}", status=2)
    if args.memory < 64:
        raise CommandError(f"--memory must be at least 64 (MB), got {args.memory}", status=2)
    return Limits(seconds=args.timeout, memory_mb=args.memory)


def _limit_options(parser: argparse.ArgumentParser, seconds: float) -> None:
    parser.add_argument("--function", metavar="NAME",
                        help="the function to check (default: the name the exercise asks for)")
    parser.add_argument("--timeout", type=float, default=seconds, metavar="SECONDS",
                        help=f"time limit per file, the submission's own time (default {seconds:g})")
    parser.add_argument("--memory", type=int, default=Limits().memory_mb, metavar="MB",
                        help=f"memory (address space) limit per file (default {Limits().memory_mb})")


# ---------------------------------------------------------------------------- check


def _configure_check(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("label", metavar="LABEL", help="the exercise, e.g. ch02_1-ex2 (python -m toklab exercises)")
    parser.add_argument("file", metavar="FILE", type=Path,
                        help="the .py file or notebook (.ipynb) that defines the function")
    _limit_options(parser, Limits().seconds)


def _run_check(args: argparse.Namespace) -> int:
    entry = _entry(args.label)
    limits = _limits(args)
    if not args.file.is_file():
        raise CommandError(f"{args.file}: no such file" if not args.file.exists() else f"{args.file} is not a file")
    print(f"checking {args.file} against {entry.label} ({entry.title}): {entry.signature}", flush=True)
    outcome = run(entry.label, args.file, function=args.function, limits=limits, show_output=True)
    if outcome.function and outcome.function != entry.function and not args.function:
        print(f"(checking {outcome.function}(), which {entry.label} accepts for {entry.function}())")
    if outcome.passed:
        print(outcome.summary)
        return 0
    if outcome.status in ("failed", "slow"):
        print(outcome.report.rstrip())
    else:
        print(f"{args.file}: {outcome.summary}")
        if outcome.report:
            print(outcome.report.rstrip())
    if not entry.graded:
        print(f"({entry.label} is meant to fail on the function its text asks for: read the case above and explain "
              "in words why it cannot pass; it is not graded as code)")
    return 1


# ---------------------------------------------------------------------------- grade


@dataclass(frozen=True)
class Row:
    """One student's result on one exercise."""

    student: str
    label: str
    outcome: Outcome | None  # None: no file of the student defines the function
    total: int
    path: Path | None
    note: str = ""


def score(row: Row) -> float:
    """100 x the cases passed over the checker's cases (0 for a missing or flagged file)."""
    if row.outcome is None or not row.total:
        return 0.0
    return round(100 * min(row.outcome.cases_passed, row.total) / row.total, 1)


def csv_row(row: Row, folder: Path) -> dict[str, str]:
    """One row of ``grade --csv``."""
    o = row.outcome
    file = "" if row.path is None else (row.path.relative_to(folder).as_posix() if row.path.is_relative_to(folder)
                                        else row.path.name)
    if o is None:
        return {"student": row.student, "label": row.label, "score": "0", "cases_passed": "0",
                "cases_total": str(row.total), "result": "fail", "status": "missing", "file": "",
                "failure": row.note, "hint": "", "seconds": "0.000", "note": ""}
    hint = (o.failure or {}).get("hint", "") if not o.passed else ""
    return {"student": row.student, "label": row.label, "score": f"{score(row):g}", "cases_passed": str(o.cases_passed),
            "cases_total": str(row.total), "result": "pass" if o.passed else "fail", "status": o.status,
            "file": file, "failure": "" if o.passed else " ".join(o.summary.split()),
            "hint": " ".join(str(hint).split()), "seconds": f"{o.seconds:.3f}", "note": row.note}


def gradebook_rows(rows: list[Row], labels: list[str]) -> list[dict[str, str]]:
    """One row per student: the mean score, how many exercises passed, and each exercise's score."""
    students: dict[str, dict[str, Row]] = {}
    for row in rows:
        students.setdefault(row.student, {})[row.label] = row
    out = []
    for student, by_label in students.items():
        scores = [score(by_label[label]) if label in by_label else 0.0 for label in labels]
        passed = sum(1 for label in labels if label in by_label and by_label[label].outcome is not None
                     and by_label[label].outcome.passed)
        out.append({"student": student, "score": f"{sum(scores) / len(labels):.1f}", "passed": str(passed),
                    "exercises": str(len(labels)), **{label: f"{s:g}" for label, s in zip(labels, scores)}})
    return out


def _configure_grade(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("labels", metavar="LABEL", nargs="+",
                        help="the exercises, e.g. ch02_1-ex2, or a chapter (ch02_1) for all its graded exercises")
    parser.add_argument("folder", metavar="DIR", type=Path,
                        help="a folder of submissions: one .py or .ipynb file per student (the student is the "
                             "file's name), or with --recursive one folder per student")
    parser.add_argument("--recursive", action="store_true",
                        help="one folder per student in DIR (the student is the folder's name); the file that "
                             "defines an exercise's function answers it")
    parser.add_argument("--csv", type=Path, metavar="OUT",
                        help="write one row per student and exercise to OUT: " + ", ".join(CSV_COLUMNS))
    parser.add_argument("--gradebook", type=Path, metavar="OUT",
                        help="write one row per student to OUT: student, score (mean), passed, exercises, then "
                             "one score column (0-100) per exercise")
    parser.add_argument("--bom", action="store_true",
                        help="start the CSV files with a UTF-8 byte-order mark, so that a spreadsheet reads "
                             "names such as 北京大学 correctly")
    _limit_options(parser, Limits().seconds)
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="check N files at a time (default 1: timings are then not disturbed)")


def _plan(args: argparse.Namespace, labels: list[str]) -> list[tuple[str, str, Path | None, str]]:
    """(student, label, file or None, note) for every pair to grade."""
    from ..teaching.exercises.sandbox import ALIASES
    from ..teaching.exercises.submissions import files, flat, per_student, pick

    plan = []
    if args.recursive:
        students = per_student(args.folder)
        if not students:
            raise CommandError(f"{args.folder} holds no student folders (--recursive grades one folder per student)")
        for student, folder in students:
            candidates = files(folder, recursive=True)
            for label in labels:
                entry = _entry(label)
                names = [args.function] if args.function else [entry.function, *ALIASES.get(label, ())]
                found = pick(student, candidates, label, names)
                plan.append((student, label, found.path, found.note))
        return plan
    found = flat(args.folder)
    if not found:
        raise CommandError(f"{args.folder} holds no .py or .ipynb files to grade"
                           + (" (it has folders: --recursive grades one folder per student)"
                              if any(p.is_dir() for p in args.folder.iterdir()) else ""))
    return [(f.student, label, f.path, "") for f in found for label in labels]


def _open(path: Path | None, bom: bool):
    if path is None:
        return None
    try:
        return open(path, "w", newline="", encoding="utf-8-sig" if bom else "utf-8")
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from None


def _run_grade(args: argparse.Namespace) -> int:
    limits = _limits(args)
    if not args.folder.is_dir():
        raise CommandError(f"{args.folder} is not a folder")
    if args.jobs < 1:
        raise CommandError(f"--jobs must be at least 1, got {args.jobs}", status=2)
    labels = labels_of(args.labels)
    plan = _plan(args, labels)
    totals = {label: _registry().count_cases(label) for label in labels}
    out, book = _open(args.csv, args.bom), _open(args.gradebook, args.bom)
    students = len({s for s, *_ in plan})
    print(f"grading {students} student{'s' * (students != 1)} in {args.folder} on {', '.join(labels)} "
          f"(limits {limits.seconds:g} s, {limits.memory_mb} MB each)", flush=True)
    width = max(len(s) for s, *_ in plan)
    rows: list[Row] = []
    try:
        writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS) if out else None
        if writer:
            writer.writeheader()

        def grade_one(item: tuple[str, str, Path | None, str]) -> Row:
            student, label, path, note = item
            outcome = None if path is None else run(label, path, function=args.function, limits=limits)
            return Row(student, label, outcome, totals[label], path, note)

        pool = ThreadPoolExecutor(max_workers=args.jobs)
        try:
            for row in pool.map(grade_one, plan):  # in plan order, whatever finishes first
                rows.append(row)
                _print_row(row, width)
                if writer:
                    writer.writerow(csv_row(row, args.folder))
                    out.flush()
        except BaseException:  # Ctrl-C: run no more files, stop the running ones now
            pool.shutdown(wait=False, cancel_futures=True)
            stop_all()
            raise
        pool.shutdown()
        if book:
            table = csv.DictWriter(book, fieldnames=["student", "score", "passed", "exercises", *labels])
            table.writeheader()
            table.writerows(gradebook_rows(rows, labels))
    finally:
        for fh in (out, book):
            if fh:
                fh.close()
    _print_summary(rows, args)
    return 0


def _print_row(row: Row, width: int) -> None:
    o = row.outcome
    mark = "PASS" if o is not None and o.passed else "FAIL"
    cases = f"{0 if o is None else min(o.cases_passed, row.total)}/{row.total}"
    seconds = 0.0 if o is None else o.seconds
    detail = "" if o is not None and o.passed else f"  {'missing' if o is None else o.status}: " + (
        row.note if o is None else o.summary)
    print(f"{mark}  {row.student:<{width}}  {row.label}  {cases:>9}  {seconds:7.2f} s{detail}"[:400], flush=True)


def _print_summary(rows: list[Row], args: argparse.Namespace) -> None:
    passed = sum(r.outcome is not None and r.outcome.passed for r in rows)
    statuses: dict[str, int] = {}
    for r in rows:
        status = "missing" if r.outcome is None else r.outcome.status
        statuses[status] = statuses.get(status, 0) + 1
    counts = ", ".join(f"{n} {s}" for s, n in statuses.items() if s != "passed")
    written = [str(p) for p in (args.csv, args.gradebook) if p is not None]
    print(f"{passed} of {len(rows)} passed" + (f" ({counts})" if counts else "")
          + (f"; written: {', '.join(written)}" if written else ""))


_EXAMPLES_CHECK = """examples:
  python -m toklab check ch02_1-ex2 my_solution.py
  python -m toklab check ch02_1-ex2 ch02_1_bpe.ipynb
  python -m toklab check ch03_3-ex1 hw3.py --function js_length --timeout 10

exit status: 0 if every case passed, 1 otherwise."""

_EXAMPLES_GRADE = """examples:
  python -m toklab grade ch02_1-ex2 submissions/ --csv grades.csv
  python -m toklab grade ch02_1 submissions/ --recursive --gradebook gradebook.csv --bom
  python -m toklab grade ch02_3-ex1 ch02_3-ex2 submissions/ --recursive --csv details.csv --jobs 2

exit status: 0 once every file is graded (whatever the grades), 1 for a bad folder, 2 for a bad label."""

COMMANDS = (
    Command("check", "check your solution of an exercise: python -m toklab check LABEL FILE",
            _configure_check, _run_check,
            "Load FILE (a .py file, whose `if __name__ == \"__main__\":` part does not run, or a notebook, whose code "
            "cells that the function needs run in order) in a separate process, take the function the exercise asks for, and run the "
            "exercise's checker on it: print the checker's feedback (the first failing case, what was expected, "
            "what came back, and a hint) or its pass line.",
            _EXAMPLES_CHECK),
    Command("grade", "grade a class: every student's file against one or more exercises, into CSV tables",
            _configure_grade, _run_grade,
            "Check every student's submission for each exercise LABEL (or every graded exercise of a chapter), "
            "each in its own process with a time and a memory limit, so an endless loop, a crash or a syntax error "
            "fails only that file; print one line per student and exercise, and write the tables asked for "
            "(--csv: one row per student and exercise; --gradebook: one row per student).", _EXAMPLES_GRADE),
)
