"""``exercises``: every exercise of the book, with its chapter, difficulty and whether it has a checker.

What an exercise is, and how its difficulty is read, is `toklab.teaching.catalog`'s
business (the book's exercise boxes read the same); this module prints it.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from ..teaching.catalog import UNMARKED, Listed, book_dir, listing, parse_chapter
from .base import Command, CommandError

__all__ = ["COMMANDS", "UNMARKED", "Listed", "book_dir", "parse_chapter", "listing"]


def _table(items: list[Listed], book: Path | None) -> str:
    width = max((len(i.label) for i in items), default=5)
    lines, chapter = [], None
    for item in items:
        if item.chapter != chapter:
            chapter = item.chapter
            heading = item.chapter_title or ("(checkers only)" if book is None else "")
            lines.append(f"{chapter}  {heading}".rstrip())
        check = f"checker: {item.function}()" if item.checker else "no checker"
        note = "" if item.in_book or book is None else "  [not in the book sources]"
        lines.append(f"  {item.label:<{width}}  {item.difficulty:<8}  {check:<36}  {item.title}{note}".rstrip())
    n_check = sum(i.checker for i in items)
    chapters = len({i.chapter for i in items})
    lines.append("")
    lines.append(f"{len(items)} exercises in {chapters} chapters, {n_check} with a checker: "
                 "python -m toklab check LABEL FILE.py runs one")
    return "\n".join(lines)


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--book", type=Path, metavar="DIR", help="the chapter sources (default: book/ of this checkout)")
    parser.add_argument("--checkers", action="store_true", help="only the exercises that have a checker")
    parser.add_argument("--chapter", metavar="ID", help="only one chapter, e.g. ch02_1")
    parser.add_argument("--json", action="store_true", help="print one JSON object per exercise")


def _run(args: argparse.Namespace) -> int:
    if args.book is not None:
        if not args.book.is_dir() or not any(args.book.glob("ch*.md")):
            raise CommandError(f"{args.book} holds no chapter sources (ch*.md)")
        book = args.book
    else:
        book = book_dir()
    if book is None:
        print("note: the book sources (book/ch*.md) are not here (toklab is installed, not checked out): listing "
              "only the exercises that have a checker; pass --book DIR to list them all", file=sys.stderr)
    items = listing(book)
    if args.checkers:
        items = [i for i in items if i.checker]
    if args.chapter:
        items = [i for i in items if i.chapter == args.chapter]
        if not items:
            raise CommandError(f"no exercises in chapter {args.chapter!r}")
    print(json.dumps([asdict(i) for i in items], ensure_ascii=False, indent=1) if args.json else _table(items, book))
    return 0


_EXAMPLES = """examples:
  python -m toklab exercises
  python -m toklab exercises --checkers --chapter ch02_1
  python -m toklab check ch02_1-ex2 my_solution.py"""

COMMANDS = (
    Command("exercises", "list the book's exercises: chapter, difficulty, whether a checker exists",
            _configure, _run,
            "List every exercise label of the book by chapter, with its difficulty (★ to ★★★, or unmarked), "
            "its title, and the function its checker expects (python -m toklab check LABEL FILE.py).", _EXAMPLES),
)
