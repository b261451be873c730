"""§8's twenty-five questions as the package ships them are the chapter's, word for word.

`toklab.teaching.drills.questions_source` holds a copy of the chapter's questions (each paragraph
on one line; the installed package cannot read the book), the titles of the sections
they point to and the references they cite. These tests rebuild all three from ``book/``
and compare; the values the answers glue are compared with the ones the executed
notebook recorded.

When the chapter changes, regenerate the copy:

    .venv/bin/python tests/teaching/drills/test_questions.py --write
"""

from __future__ import annotations

import difflib
import json
import math
import re
import sys
from pathlib import Path

import pytest

if __name__ != "__main__":  # --write must run before the module it writes exists
    from toklab.teaching.drills import questions, questions_source

ROOT = Path(__file__).resolve().parents[3]
BOOK = ROOT / "book"
CHAPTER = BOOK / "ch08_interview.md"
NOTEBOOK = ROOT / "notebooks" / "ch08_interview.ipynb"
START, END = "(ch08-l1)=\n", "(ch08-drills)=\n"


def chapter_region(text: str | None = None) -> str:
    """The chapter from its first level heading to the drills section: the twenty-five questions."""
    text = CHAPTER.read_text(encoding="utf-8") if text is None else text
    return text[text.index(START):text.index(END)].rstrip("\n") + "\n"


_STARTS = ("- ", "```", "(", "#", ":", "**Shown in**")


def unwrap(region: str) -> str:
    """The region with each paragraph and list item on one line (its lines joined by a space).

    The package keeps the questions this way: the same words in a third of the lines, and
    a terminal wraps them again to its own width.
    """
    out: list[str] = []
    for line in region.split("\n"):
        joins = (out and out[-1].strip() and line.strip() and not line.startswith(_STARTS)
                 and not out[-1].startswith(_STARTS[1:5]))
        if joins:
            out[-1] += " " + line.strip()
        else:
            out.append(line)
    return "\n".join(out)


def _section_number(path: Path) -> str:
    m = re.match(r"ch(\d+)(?:_(\d+))?_", path.name)
    return f"§{int(m[1])}" + (f".{int(m[2])}" if m[2] else "")


def headings(region: str) -> dict[str, str]:
    """``label -> "§2.1 “A worked example”"`` for every label the questions link to."""
    labels = sorted(set(re.findall(r"\{ref\}`(?:[^`<]*<)?([\w-]+)>?`", region)))
    out = {}
    for label in labels:
        for path in sorted(BOOK.glob("ch*.md")):
            text = path.read_text(encoding="utf-8")
            target = re.search(rf"^\({re.escape(label)}\)=\n#+ (.+)$", text, re.M)
            exercise = re.search(rf"^`+\{{exercise-start\}} [★ ]*(.+)\n:label: {re.escape(label)}$", text, re.M)
            if target:
                out[label] = f"{_section_number(path)} “{target[1].strip()}”"
            elif exercise:
                out[label] = f"{_section_number(path)} “{exercise[1].strip()}”"
        assert label in out, f"the questions link to {label!r}, which no chapter defines"
    return out


def _surname(author: str) -> str:
    author = author.strip()
    if author.startswith("{") and author.endswith("}"):
        return author[1:-1]
    name = author.split(",")[0].strip()
    return re.sub(r"\{\\.(\w)\}", r"\1", name)  # {\'c} -> c: plain letters are enough here


def citations(region: str) -> dict[str, str]:
    """``key -> "Kudo 2018"`` (first author and year, "et al." for three or more) for every key cited."""
    keys = sorted({k.strip() for group in re.findall(r"\{cite:p\}`([^`]+)`", region) for k in group.split(",")})
    bib = (BOOK / "references.bib").read_text(encoding="utf-8")
    out = {}
    for key in keys:
        entry = re.search(rf"@\w+\{{{re.escape(key)},(.*?)\n\}}", bib, re.S)
        assert entry, f"the questions cite {key!r}, which references.bib lacks"
        authors = re.search(r"author\s*=\s*\{(.*)\},?\n", entry[1])[1].split(" and ")
        year = re.search(r"year\s*=\s*\{(\d{4})\}", entry[1])[1]
        names = [_surname(a) for a in authors if a.strip() != "others"]
        who = names[0] if len(authors) == 1 else (
            f"{names[0]} and {names[1]}" if len(authors) == 2 and len(names) == 2 else f"{names[0]} et al.")
        out[key] = f"{who} {year}"
    return out


def source_module() -> str:
    """The text of ``questions_source.py`` as the chapter and the book make it now."""
    region = chapter_region()
    assert "'''" not in region and not region.endswith("\\\n"), "the region cannot be a raw string"
    text = unwrap(region)

    def mapping(d: dict[str, str]) -> str:
        return "{\n" + "".join(f"    {k!r}: {v!r},\n" for k, v in d.items()) + "}"

    return (
        '"""§8\'s twenty-five questions, copied from ``book/ch08_interview.md`` (generated: do not edit).\n\n'
        "`SOURCE` is the chapter's text from the first level heading to the drills, as MyST with\n"
        "each paragraph and list item on one line;\n"
        "`HEADINGS` the section each ``{ref}`` points to; `CITATIONS` who each ``{cite:p}`` is.\n"
        "``tests/teaching/drills/test_questions.py`` checks all three against the book and rewrites this\n"
        "file with ``--write``; `toklab.teaching.drills.questions` reads it.\n"
        '"""\n\n'
        "# ruff: noqa: E501\n\n"
        f"SOURCE = r'''{text}'''\n\n"
        f"HEADINGS = {mapping(headings(region))}\n\n"
        f"CITATIONS = {mapping(citations(region))}\n"
    )


MODULE = ROOT / "src" / "toklab" / "teaching" / "drills" / "questions_source.py"


def test_the_packages_questions_are_the_chapters():
    here, there = questions_source.SOURCE, unwrap(chapter_region())
    if here != there:
        diff = "".join(difflib.unified_diff(here.splitlines(True), there.splitlines(True), "package", "chapter", n=1))
        pytest.fail("toklab.teaching.drills.questions_source differs from book/ch08_interview.md; run "
                    f"`.venv/bin/python tests/teaching/drills/test_questions.py --write`:\n{diff[:4000]}")


def test_headings_and_citations_are_the_books():
    region = chapter_region()
    assert questions_source.HEADINGS == headings(region)
    assert questions_source.CITATIONS == citations(region)
    assert MODULE.read_text(encoding="utf-8") == source_module()


def _notebook_glue() -> dict[str, str]:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    return {out["metadata"]["scrapbook"]["name"]: out["data"]["application/papermill.record/text/plain"]
            for cell in nb["cells"] for out in cell.get("outputs", [])
            if "scrapbook" in out.get("metadata", {})}


def test_glued_values_are_computed_as_the_chapter_computes_them():
    recorded = _notebook_glue()
    used = sorted(set(re.findall(r"\{glue:text\}`([\w-]+)", questions_source.SOURCE)))
    assert used and set(used) <= set(recorded)
    assert sorted(questions.GLUE) == used
    for name in used:
        value = questions.glued(name)
        assert math.isclose(float(value), float(recorded[name]), rel_tol=1e-12), (name, value, recorded[name])


def test_twenty_five_questions_in_three_levels():
    qs = questions.QUESTIONS
    assert [q.number for q in qs] == list(range(1, 26))
    assert [q.level for q in qs] == ["L1"] * 8 + ["L2"] * 10 + ["L3"] * 7
    assert questions.question("Q12") is questions.question("q12") is questions.question(12) is qs[11]
    for q in qs:
        assert q.title.endswith("?") and q.answer and q.mistake and q.shown_in
        for text in (q.title, q.answer, q.mistake, q.shown_in):
            assert not re.search(r"\{[a-z:]+\}`", text) and "**" not in text, (q.name, text)
            assert not re.search(r"\bch\d\d", text), (q.name, text)
    q12 = questions.question(12).answer
    assert "100,277 IDs" in q12 and "411 million" in q12
    assert "§4.1" in questions.question(12).shown_in
    assert "(Kudo 2018)" in questions.question(14).answer
    with pytest.raises(ValueError, match="no question 'Q26'"):
        questions.question("Q26")


def test_rendering_roles():
    assert questions.render("see {ref}`ch02_1-worked` and {doc}`§5.4 <ch05_4_special_tokens>`") == (
        f"see {questions_source.HEADINGS['ch02_1-worked']} and §5.4")
    assert questions.render("**Words** x {cite:p}`leviathan2023fast,chen2023accelerating`") == (
        "Words x (Leviathan et al. 2023; Chen et al. 2023)")
    assert questions.render("{glue:text}`q24-byt5` IDs") == "384 IDs"


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        MODULE.write_text(source_module(), encoding="utf-8")
        print(f"wrote {MODULE.relative_to(ROOT)}")
    else:
        sys.exit("usage: python tests/teaching/drills/test_questions.py --write")
