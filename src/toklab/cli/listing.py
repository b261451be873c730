"""``exercises``: every exercise of the book, with its chapter, difficulty and whether it has a checker.

Labels, titles and difficulties come from the chapter sources (``book/ch*.md``):
an exercise is a ``{exercise}`` or ``{exercise-start}`` directive with a
``:label:`` option, its title the directive's argument (or, when there is
none, the bold words its text starts with, else its checker's title, else
the start of its first sentence), and its difficulty the stars the
title starts with (``★``, ``★★`` or ``★★★``; a title without them is
"unmarked"). Which exercises have a checker comes from the registry
(`toklab.teaching.exercises`). Installed from a wheel, toklab has no book sources: then
only the registry's exercises are listed, and the command says so.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from .base import Command, CommandError

__all__ = ["COMMANDS", "UNMARKED", "Listed", "book_dir", "parse_chapter", "listing"]

UNMARKED = "unmarked"
_DIRECTIVE = re.compile(r"(?P<fence>`{3,}|:{3,})\{exercise(?:-start)?\}[ \t]*(?P<title>.*?)\s*")
_OPTION = re.compile(r":(?P<key>[\w-]+):[ \t]*(?P<value>.*?)\s*")
_BOLD_LEAD = re.compile(r"\*\*(?P<title>[^*]+?)\*\*")
_STARS = re.compile(r"(?P<stars>★+)\s*")
_CHAPTER_ID = re.compile(r"ch\d\d(?:_\d+)?")
_HEADING = re.compile(r"# (?P<title>.+?)\s*")


@dataclass(frozen=True)
class Listed:
    """One exercise: label, chapter id and title, its own title, difficulty, and whether a checker exists."""

    label: str
    chapter: str
    chapter_title: str
    title: str
    difficulty: str
    checker: bool
    function: str | None = None
    in_book: bool = True


def book_dir() -> Path | None:
    """The chapter sources next to this package in a source checkout (``<repo>/book``), or None when installed."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "book"
        if (parent / "_toc.yml").is_file() and candidate.is_dir() and any(candidate.glob("ch*.md")):
            return candidate
        if parent.name in ("site-packages", "dist-packages"):
            return None
    return None


def _difficulty(title: str) -> tuple[str, str]:
    """``(difficulty, title without its stars)``."""
    match = _STARS.match(title)
    if not match:
        return UNMARKED, title
    stars = match["stars"]
    return (stars if len(stars) <= 3 else UNMARKED), title[match.end():].strip()


def parse_chapter(path: Path) -> tuple[str, list[dict]]:
    """``(chapter title, exercises)`` of one chapter source; each exercise a dict of label, title, difficulty, line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    chapter_title = ""
    found = []
    fence: str | None = None  # inside a fenced block other than an exercise, headings are code comments
    for i, line in enumerate(lines):
        directive = _DIRECTIVE.fullmatch(line)
        if directive:
            found.append(_exercise(lines, i, directive["title"]))
            continue
        stripped = line.strip()
        if fence is None and (stripped.startswith("```") or stripped.startswith(":::")):
            fence = stripped[:3]
            if stripped.rstrip("`:") == "":  # a bare closing fence of a directive: nothing opened
                fence = None
            continue
        if fence is not None and stripped.rstrip("`:") == "" and stripped.startswith(fence):
            fence = None
            continue
        if fence is None and not chapter_title and (heading := _HEADING.fullmatch(line)):
            chapter_title = heading["title"]
    return chapter_title, found


def _exercise(lines: list[str], start: int, title: str) -> dict:
    options, j = {}, start + 1
    while j < len(lines) and (option := _OPTION.fullmatch(lines[j])):
        options[option["key"]] = option["value"]
        j += 1
    paragraph: list[str] = []  # the statement's first paragraph
    for line in lines[j:]:
        text = line.strip()
        if text.strip("`:") == "" and not paragraph:
            continue  # blank lines and the closing fence of {exercise-start}
        if not text or text.startswith(("```", ":::")):
            break
        paragraph.append(text)
    opening = " ".join(paragraph)
    lead = _BOLD_LEAD.match(opening)
    if not title and lead:  # no argument: the bold words the statement opens with are the title
        title = lead["title"].strip().rstrip(".:")
    difficulty, title = _difficulty(title)
    return {"label": options.get("label", ""), "title": title, "difficulty": difficulty, "line": start + 1,
            "opening": _shorten(opening)}


def _shorten(text: str, width: int = 60) -> str:
    """The first sentence of ``text``, cut at a word to about ``width`` characters."""
    sentence = re.split(r"(?<=[.?!])\s", text, maxsplit=1)[0]
    if len(sentence) <= width:
        return sentence
    return sentence[:width].rsplit(" ", 1)[0] + " …"


def listing(book: Path | None) -> list[Listed]:
    """Every exercise of the chapters in ``book`` (None: the registry's only), with its checker status."""
    from ..teaching.exercises import REGISTRY  # loading every chapter's checkers: only when listing them

    checkers = dict(REGISTRY)
    out: list[Listed] = []
    if book is not None:
        for path in sorted(book.glob("ch*.md")):
            chapter_title, found = parse_chapter(path)
            file_chapter = _CHAPTER_ID.match(path.stem)
            for ex in found:
                label = ex["label"] or f"{path.name}:{ex['line']} (no label)"
                chapter = label.split("-ex")[0] if ex["label"] else (file_chapter[0] if file_chapter else path.stem)
                entry = checkers.pop(ex["label"], None)
                # An untitled exercise is shown by its checker's title, or by how its statement opens.
                title = ex["title"] or (entry.title if entry else ex["opening"])
                out.append(Listed(label, chapter, chapter_title, title, ex["difficulty"], entry is not None,
                                  entry.function if entry else None))
    for entry in checkers.values():  # registered but not (or no longer) in the book sources
        out.append(Listed(entry.label, entry.chapter, "", entry.title, UNMARKED if book else "unknown", True,
                          entry.function, in_book=False))
    return out


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
