"""Downloads and the two editions.

* Each chapter page of the full edition offers its executed notebook (``.ipynb``) and its
  MyST source (``.md``) in the download menu.
* Each chapter page of the student edition offers its notebook, and neither its pages
  nor its notebooks contain any solution text, while every exercise is still there.

What counts as solution text is read from the full edition's HTML (sphinx-exercise's
solution boxes), not from the code that strips the solutions, so the check does not
share that code's mistakes: every run of eight words of a solution that occurs nowhere
else on the full page must be absent from the student page and the student notebook.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup

from siteutil import ROOT, chapter_pages, parsed

N = 8  # words per shingle


def _soup(path: Path) -> BeautifulSoup:
    return parsed(path)


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text.lower())
    return {tuple(words[i : i + N]) for i in range(len(words) - N + 1)}


def download_links(page: Path) -> dict[str, Path]:
    """{'.ipynb': file, '.md': file} offered by a page's download menu."""
    links = {}
    for a in _soup(page).select(".dropdown-download-buttons a[href]"):
        text = a.get_text(" ", strip=True)
        if text.startswith("."):
            links[text] = (page.parent / a["href"]).resolve()
    return links


def notebook_text(nb) -> str:
    """Everything a reader of the notebook sees: cell sources and output text."""
    parts = []
    for cell in nb.cells:
        parts.append(cell.source)
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            data = out.get("data", {})
            parts.append(data.get("text/plain", ""))
            parts.append(data.get("text/markdown", ""))
            if "text/html" in data:
                parts.append(BeautifulSoup(data["text/html"], "html.parser").get_text(" "))
    return "\n".join(p if isinstance(p, str) else "".join(p) for p in parts)


def _check_executed(nb, where: str) -> list[str]:
    problems = []
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    if not code:
        problems.append(f"{where}: no code cells")
    unrun = [i for i, c in enumerate(code) if c.get("execution_count") is None]
    if unrun:
        problems.append(f"{where}: code cells {unrun[:5]} were not executed")
    if not any(c.get("outputs") for c in code):
        problems.append(f"{where}: no outputs at all")
    if "jupytext" in nb.metadata:
        problems.append(f"{where}: still carries jupytext pairing metadata")
    return problems


def test_full_edition_offers_the_executed_notebook_and_the_source(site):
    import jupytext

    problems = []
    for rel in chapter_pages(site):
        links = download_links(site / rel)
        if set(links) != {".ipynb", ".md"}:
            problems.append(f"{rel}: download menu offers {sorted(links)}, not .ipynb and .md")
            continue
        stem = Path(rel).stem
        source = ROOT / "book" / f"{stem}.md"
        if links[".md"].read_text(encoding="utf-8") != source.read_text(encoding="utf-8"):
            problems.append(f"{rel}: the .md download is not book/{stem}.md")
        nb = nbformat.read(links[".ipynb"], as_version=4)
        problems += _check_executed(nb, f"{rel} .ipynb")
        want = [(c.cell_type, c.source) for c in jupytext.read(source).cells]
        if [(c.cell_type, c.source) for c in nb.cells] != want:
            problems.append(f"{rel}: the .ipynb download's cells differ from book/{stem}.md")
    assert chapter_pages(site), "no chapter pages"
    assert not problems, "\n".join(problems)


def _solutions(full_page: BeautifulSoup):
    """From a full-edition chapter page: [(solution id, its own shingles)], {exercise id:
    its shingles}, and the number of code cells inside solutions."""
    article = full_page.find("article") or full_page
    boxes = article.select("div.solution")
    rest = copy.copy(article)
    for box in rest.select("div.solution"):
        box.decompose()
    elsewhere = _shingles(rest.get_text(" "))
    solutions = []
    for box in boxes:
        body = copy.copy(box)
        for title in body.select(".admonition-title"):
            title.decompose()
        solutions.append((box.get("id"), _shingles(body.get_text(" ")) - elsewhere))
    exercises = {e["id"]: _shingles(e.get_text(" ")) for e in article.select("div.exercise[id]")}
    code_cells = sum(len(box.select("div.cell")) for box in boxes)
    return solutions, exercises, code_cells


def _gated_solution_code_cells(nb) -> int:
    """Code cells between a ``solution-start`` and its ``solution-end`` in a notebook,
    hidden ones (``remove-cell``, which leave no trace in the HTML) included."""
    inside, count = False, 0
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for marker in re.findall(r"\{solution-(start|end)\}", cell.source):
                inside = marker == "start"  # the last marker in the cell decides
        elif cell.cell_type == "code" and inside:
            count += 1
    return count


def _outside_solutions(nb) -> set[tuple[str, ...]]:
    """Shingles of a full-edition notebook's cells outside every solution, the hidden ones
    included, but not the cells that check a solution (tagged ``solution-check``, which the
    student edition drops and another test looks for): a generic line such as a loop
    header that a hidden drawing cell shares with a solution is not the solution's own."""
    keep, inside = [], False
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            markers = re.findall(r"\{solution-(start|end)\}", cell.source)
            if markers:
                inside = markers[-1] == "start"
                continue
        if inside or "solution-check" in cell.metadata.get("tags", []):
            continue
        keep.append(cell)
    return _shingles(notebook_text(nbformat.v4.new_notebook(cells=keep)))


def test_student_edition_has_every_exercise_and_no_solution(site, student_site):
    problems = []
    total_solutions = 0
    for rel in chapter_pages(site):
        full_page = _soup(site / rel)
        solutions, exercises, solution_cells = _solutions(full_page)
        total_solutions += len(solutions)
        student_page = student_site / rel
        if not student_page.is_file():
            problems.append(f"{rel}: missing from the student edition")
            continue
        soup = _soup(student_page)
        student_html = _shingles(soup.get_text(" "))
        links = download_links(student_page)
        if set(links) != {".ipynb"}:
            problems.append(f"{rel}: student download menu offers {sorted(links)}, not the notebook alone")
            continue
        nb = nbformat.read(links[".ipynb"], as_version=4)
        full_nb = nbformat.read(download_links(site / rel)[".ipynb"], as_version=4)
        problems += _check_executed(nb, f"student {rel} .ipynb")
        student_words = _shingles(notebook_text(nb))
        full_words = _shingles(notebook_text(full_nb))
        not_own = _outside_solutions(full_nb)

        for name, own in solutions:
            if not own:
                problems.append(f"{rel}: solution {name} has no text of its own to look for")
            elif not own & full_words:
                problems.append(f"{rel}: solution {name}'s text is not in the full notebook (the check is blind)")
            if own & student_html:
                problems.append(f"{rel}: student page shows solution {name}: {' '.join(sorted(own & student_html)[0])}")
            if (own - not_own) & student_words:
                leak = sorted((own - not_own) & student_words)[0]
                problems.append(f"{rel}: student notebook holds solution {name}: {' '.join(leak)}")
        if soup.select("div.solution"):
            problems.append(f"{rel}: student page has solution boxes")
        if re.search(r"\{solution(-start|-end)?\}", links[".ipynb"].read_text(encoding="utf-8")):
            problems.append(f"{rel}: student notebook still has solution directives")

        for name, own in exercises.items():
            if not soup.find(id=name):
                problems.append(f"{rel}: exercise {name} missing from the student page")
            if not own & student_words:
                problems.append(f"{rel}: the text of exercise {name} is not in the student notebook")
        hidden_ok = solution_cells <= _gated_solution_code_cells(full_nb)
        if not hidden_ok:
            problems.append(f"{rel}: the page shows {solution_cells} code cells in solutions, the notebook gates fewer")
        solution_cells = _gated_solution_code_cells(full_nb) + len(_checks_of_solutions(full_nb))
        full_code = sum(c.cell_type == "code" for c in full_nb.cells)
        student_code = sum(c.cell_type == "code" for c in nb.cells)
        if full_code - student_code != solution_cells:
            problems.append(
                f"{rel}: student notebook has {student_code} code cells; expected {full_code} - {solution_cells} "
                "in solutions or checking them"
            )
    # Every solution the sources hold, found on the built pages (a page may have none:
    # an optional deep dive).
    in_sources = sum(
        len(re.findall(r"^(?::{3,}|`{3,})\{solution(?:-start)?\}", md.read_text(encoding="utf-8"), re.M))
        for md in (ROOT / "book").glob("ch*.md")
    )
    assert total_solutions == in_sources > 50, f"{total_solutions} solutions on the pages, {in_sources} in the sources"
    assert not problems, "\n".join(problems)


CHECK_COMMENT = "# Executed check of the solution to "


def _checks_of_solutions(nb) -> list:
    """The hidden cells of a full notebook that execute a solution's check (they state its expected answer)."""
    return [c for c in nb.cells if c.cell_type == "code" and c.source.lstrip().startswith(CHECK_COMMENT)]


def _answer_lines(check, full_nb) -> set[str]:
    """The lines of a check cell that state an answer: long enough to be telling, and nowhere else in the notebook."""
    elsewhere = "\n".join(c.source for c in full_nb.cells if c is not check)
    lines = {" ".join(line.split()) for line in check.source.splitlines()[1:]}
    return {line for line in lines if len(line) >= 24 and not line.startswith("#") and line not in
            " ".join(elsewhere.split())}


def test_student_notebooks_and_pages_hold_no_check_of_a_solution(site, student_site):
    """Read the student notebooks themselves (and pages): no cell that checks a solution, none of its answers.

    The checks are found in the full edition's notebooks by what they say, not by the tag the staging code
    removes, so a check that lost its tag is caught here too."""
    problems, checks = [], 0
    for rel in chapter_pages(site):
        full_nb = nbformat.read(download_links(site / rel)[".ipynb"], as_version=4)
        student_page = student_site / rel
        links = download_links(student_page)
        if ".ipynb" not in links:
            problems.append(f"{rel}: the student page offers no notebook")
            continue
        nb = nbformat.read(links[".ipynb"], as_version=4)
        text = " ".join(notebook_text(nb).split())
        page = " ".join(_soup(student_page).get_text(" ").split())
        for cell in nb.cells:
            if CHECK_COMMENT.strip() in cell.source or "solution-check" in cell.metadata.get("tags", []):
                problems.append(f"{rel}: the student notebook checks a solution: {cell.source[:80]!r}")
        for check in _checks_of_solutions(full_nb):
            checks += 1
            for line in _answer_lines(check, full_nb):
                if line in text:
                    problems.append(f"{rel}: the student notebook states an answer: {line[:80]!r}")
                if line in page:
                    problems.append(f"{rel}: the student page states an answer: {line[:80]!r}")
    import jupytext

    in_sources = sum(c.cell_type == "code" and c.source.lstrip().startswith(CHECK_COMMENT)
                     for path in (ROOT / "book").glob("ch*.md") for c in jupytext.read(path).cells)
    assert checks == in_sources > 0, f"{checks} checks of solutions in the full notebooks, {in_sources} in the sources"
    assert not problems, "\n".join(problems)


def test_each_exercise_box_says_its_label_difficulty_and_how_it_is_checked(site, student_site):
    from toklab.teaching.exercises import REGISTRY

    problems, seen = [], set()
    for root in (site, student_site):
        for rel in chapter_pages(site):
            page = root / rel
            for box in _soup(page).select("div.exercise[id]"):
                label = box["id"]
                if not re.fullmatch(r"ch\d\d(?:_\d+)?-ex\d+", label):
                    continue
                seen.add(label)
                info = box.select_one(".toklab-exercise-info")
                text = " ".join(info.get_text(" ").split()) if info else ""
                entry = REGISTRY.get(label)
                if not text.startswith(label) or not re.search(r"★|difficulty not marked", text):
                    problems.append(f"{root.name}/{rel}: {label}'s box lacks its label or difficulty: {text!r}")
                elif entry is None and "answer in words (no checker)" not in text:
                    problems.append(f"{root.name}/{rel}: {label} has no checker, its box says {text!r}")
                elif entry is not None and not entry.graded and "not graded" not in text:
                    problems.append(f"{root.name}/{rel}: {label} is meant to fail, its box says {text!r}")
                elif entry is not None and entry.graded:
                    if f"{entry.signature}" not in text or f"python -m toklab check {label}" not in text:
                        problems.append(f"{root.name}/{rel}: {label}'s box lacks its call or command: {text!r}")
                    link = info.select_one("a[href$='_answers.py']")
                    if link is None or not (page.parent / link["href"]).resolve().is_file():
                        problems.append(f"{root.name}/{rel}: {label}'s box does not link its answer template")
    assert set(REGISTRY) <= seen, f"exercises with a checker not found on any page: {sorted(set(REGISTRY) - seen)}"
    assert not problems, "\n".join(problems[:20])


def test_landing_pages_name_their_edition(site, student_site):
    full = _soup(site / "book" / "index.html").get_text(" ")
    student = _soup(student_site / "book" / "index.html").get_text(" ")
    assert "You are reading the full edition" in " ".join(full.split())
    assert "You are reading the student edition" in " ".join(student.split())
    for text in (full, student):
        flat = " ".join(text.split())
        assert "The full edition" in flat and "The student edition" in flat
