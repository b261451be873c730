"""The book's exercises: what each one is, read from the chapters and the checkers' registry.

One source of truth for ``python -m toklab exercises``, the box the book's Sphinx
extension writes inside each exercise (`toklab.teaching.sphinxext`) and the answer
templates it offers. Labels, titles and difficulties come from the chapter sources
(``book/ch*.md``, or a chapter's notebook): an exercise is a ``{exercise}`` or
``{exercise-start}`` directive with a ``:label:`` option, its title the directive's
argument (or, when there is none, the bold words its text starts with, else its checker's
title, else the start of its first sentence), and its difficulty the stars the title
starts with (``★``, ``★★`` or ``★★★``; a title without them is "unmarked"). Which
exercises have a checker, the function it calls and whether it is graded come from the
registry (`toklab.teaching.exercises`). Installed from a wheel, toklab has no book
sources: then only the registry's exercises are listed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["UNMARKED", "Listed", "book_dir", "difficulty", "parse_chapter", "parse_text", "notebook_markdown",
           "listing", "Box", "box", "template", "template_name"]

_DIRECTIVE = re.compile(r"(?P<fence>`{3,}|:{3,})\{exercise(?:-start)?\}[ \t]*(?P<title>.*?)\s*")
_OPTION = re.compile(r":(?P<key>[\w-]+):[ \t]*(?P<value>.*?)\s*")
_BOLD_LEAD = re.compile(r"\*\*(?P<title>[^*]+?)\*\*")
_STARS = re.compile(r"(?P<stars>★+)\s*")
_CHAPTER_ID = re.compile(r"ch\d\d(?:_\d+)?")
_HEADING = re.compile(r"# (?P<title>.+?)\s*")

#: The difficulty of an exercise whose title has no stars.
UNMARKED = "unmarked"


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


def difficulty(title: str) -> tuple[str, str]:
    """``(difficulty, title without its stars)``."""
    match = _STARS.match(title)
    if not match:
        return UNMARKED, title
    stars = match["stars"]
    return (stars if len(stars) <= 3 else UNMARKED), title[match.end():].strip()


def parse_chapter(path: Path) -> tuple[str, list[dict]]:
    """``(chapter title, exercises)`` of one chapter source; each exercise a dict of label, title, difficulty, line."""
    return parse_text(path.read_text(encoding="utf-8"))


def parse_text(text: str) -> tuple[str, list[dict]]:
    """`parse_chapter` of MyST text (a chapter's ``.md``, or its notebook's markdown cells, `notebook_markdown`)."""
    lines = text.splitlines()
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
    difficulty_, title = difficulty(title)
    return {"label": options.get("label", ""), "title": title, "difficulty": difficulty_, "line": start + 1,
            "opening": _shorten(opening)}


def _shorten(text: str, width: int = 60) -> str:
    """The first sentence of ``text``, cut at a word to about ``width`` characters."""
    sentence = re.split(r"(?<=[.?!])\s", text, maxsplit=1)[0]
    if len(sentence) <= width:
        return sentence
    return sentence[:width].rsplit(" ", 1)[0] + " …"


def listing(book: Path | None) -> list[Listed]:
    """Every exercise of the chapters in ``book`` (None: the registry's only), with its checker status."""
    from .exercises import REGISTRY  # loading every chapter's checkers: only when listing them

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


def notebook_markdown(notebook: str | dict[str, Any]) -> str:
    """The markdown cells of a notebook (JSON text or parsed), joined as one MyST text."""
    nb = json.loads(notebook) if isinstance(notebook, str) else notebook
    parts = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            source = cell.get("source", "")
            parts.append("".join(source) if isinstance(source, list) else str(source))
    return "\n\n".join(parts)


# ---------------------------------------------------------------------------- what each exercise box says


@dataclass(frozen=True)
class Box:
    """What the book shows inside an exercise: its label and difficulty, and how (or whether) it is checked.

    ``call`` is the signature the checker calls (None: no checker); ``command`` the
    ``python -m toklab check`` line; ``template`` the answer file offered for its chapter;
    ``graded`` is False for an exercise answered in words (no checker, or a checker meant
    to fail).
    """

    label: str
    difficulty: str
    call: str | None
    command: str | None
    template: str | None
    graded: bool


def template_name(chapter: str) -> str:
    """The answer template of chapter ``chapter`` (``ch02_1`` -> ``ch02_1_answers.py``)."""
    return f"{chapter}_answers.py"


def box(label: str, difficulty_: str) -> Box:
    """The box of exercise ``label`` (its difficulty as `parse_chapter` read it)."""
    from .exercises import REGISTRY

    entry = REGISTRY.get(label)
    if entry is None:
        return Box(label, difficulty_, None, None, None, False)
    name = template_name(entry.chapter)
    return Box(label, difficulty_, entry.signature, f"python -m toklab check {label} {name}", name, entry.graded)


def template(chapter: str, chapter_title: str, found: list[dict]) -> str | None:
    """The answer template of a chapter: one function per exercise its checkers grade (None if there is none).

    ``found`` is the chapter's exercises as `parse_text` returns them (their titles and
    difficulties). Each function raises NotImplementedError until it is written, so a
    check of an unwritten one fails on its first case with that message.
    """
    from .exercises import REGISTRY

    entries = [e for e in REGISTRY.values() if e.chapter == chapter and e.graded]
    if not entries:
        return None
    titles = {ex["label"]: ex for ex in found}
    name = template_name(chapter)
    lines = [f'"""{chapter_title or chapter}: answers to the exercises that have a checker.', "",
             "Write each function, then check it (with toklab installed, see the book's landing page):", ""]
    lines += [f"    python -m toklab check {e.label} {name}" for e in entries]
    lines += ["", "A notebook works too: python -m toklab check LABEL YOUR_NOTEBOOK.ipynb", '"""']
    for e in entries:
        ex = titles.get(e.label, {})
        stars = ex.get("difficulty", UNMARKED)
        title = ex.get("title") or e.title
        lines += ["", "", f"def {e.signature}:", f'    """{e.label} ({stars}): {title}."""',
                  f'    raise NotImplementedError("{e.label}: write {e.function}")']
    return "\n".join(lines) + "\n"
