"""The two editions of the book, staged for Jupyter Book from the executed notebooks.

``python -m toklab.teaching.edition stage full|student DIR`` (used by ``make book`` and
``make student``) stages an edition's sources in DIR: each chapter as its executed
notebook (``notebooks/*.ipynb``, checked against ``book/*.md``), which the build renders
without executing it. ``make test`` runs nbval first, so the pages show outputs that were
just re-executed and compared, and no chapter runs twice. The student edition also takes
the solutions' prose and code cells out (`strip_notebook_solutions`), so each page's
download is that same notebook: exercise text kept, no solution. It also drops every code
cell tagged `SOLUTION_CHECK` (``solution-check``): a hidden cell after a solution that
executes it (``# Executed check of the solution to chXX-exY``), which would state the
expected answer in the student's notebook. A chapter tags each such cell
``[remove-cell, solution-check]``; ``remove-cell`` alone only hides a cell from the page. Removing the solutions
from the sources, rather than relying on sphinx-exercise's ``hide_solutions``, is needed
twice over: with gated solutions (``solution-start``/``solution-end``, sphinx-exercise
1.2.1) ``hide_solutions`` drops the start marker only, leaving the solution's cells in the
page and an end marker no HTML writer knows, so the build crashes; and it never touches
the notebook a student downloads.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from .sphinxext import downloadable_notebook

__all__ = ["RENDER_ONLY", "SOLUTION_CHECK", "strip_solutions", "strip_notebook_solutions", "stage_edition"]

#: The tag of a code cell that checks a solution (asserts its expected answer): the student edition drops it.
SOLUTION_CHECK = "solution-check"

_FENCE_OPEN = re.compile(r"^(?P<fence>`{3,}|~{3,}|:{3,})\{(?P<name>[\w-]+)\}")


def _closes(line: str, fence: str) -> bool:
    """Whether ``line`` closes a directive opened with ``fence`` (same character, as long or longer)."""
    stripped = line.strip()
    return len(stripped) >= len(fence) and stripped == fence[0] * len(stripped)


def _strip_lines(lines: list[str], inside: bool, where: str) -> tuple[list[str], bool]:
    """Drop solutions from MyST lines. ``inside``: the lines start inside a gated solution.

    Returns the kept lines and whether they end inside a gated solution (between a
    ``solution-start`` and its ``solution-end``, which may lie in a later notebook cell).
    A plain ``{solution}`` directive is dropped whole; so is each gated marker and
    everything between the two.
    """
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        name = m["name"] if m else None
        if inside:
            if name == "solution-end":
                inside = False
            if m:
                i = _skip_directive(lines, i, m["fence"], where)
            else:
                i += 1
        elif name in ("solution", "solution-start"):
            i = _skip_directive(lines, i, m["fence"], where)
            inside = name == "solution-start"
        elif name == "solution-end":
            raise ValueError(f"{where}: solution-end without a solution-start (line {i + 1})")
        else:
            out.append(lines[i])
            i += 1
    return out, inside


def _skip_directive(lines: list[str], start: int, fence: str, where: str) -> int:
    """Index just past the directive opened at ``lines[start]`` (its closing fence)."""
    for j in range(start + 1, len(lines)):
        if _closes(lines[j], fence):
            return j + 1
    raise ValueError(f"{where}: unclosed {fence} directive opened at line {start + 1}")


def strip_solutions(text: str, where: str = "<text>") -> str:
    """MyST text with every solution removed: plain ``{solution}`` directives and gated
    ``solution-start`` … ``solution-end`` blocks, with the code cells inside them.

    Everything outside solutions, exercises included, is returned unchanged. Raises
    ``ValueError`` (naming ``where``) on a solution-start without its solution-end or an
    unclosed directive, rather than guessing where a solution ends.
    """
    kept, inside = _strip_lines(text.splitlines(keepends=True), False, where)
    if inside:
        raise ValueError(f"{where}: solution-start without a matching solution-end")
    return "".join(kept)


def strip_notebook_solutions(nb: dict[str, Any], where: str = "<notebook>") -> dict[str, Any]:
    """A copy of notebook ``nb`` (nbformat 4, as a dict) with every solution removed.

    Markdown cells lose their solution directives (see ``strip_solutions``); a gated
    solution's markers usually sit in markdown cells around the solution's code cells,
    and every cell between ``solution-start`` and ``solution-end`` is removed, outputs and
    all. A markdown cell left empty is dropped, and so is every cell tagged
    `SOLUTION_CHECK`. Exercise cells, set-up cells and the notebook's metadata are kept,
    except the ``jupytext`` pairing metadata (it names this repository's folders).
    """
    cells = []
    inside = False
    for k, cell in enumerate(nb["cells"]):
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            kept, inside = _strip_lines(source.splitlines(keepends=True), inside, f"{where}, cell {k}")
            text = "".join(kept)
            if text.strip():
                cells.append({**cell, "source": text.strip("\n")})
        elif not inside and SOLUTION_CHECK not in cell.get("metadata", {}).get("tags", []):
            cells.append(cell)
    if inside:
        raise ValueError(f"{where}: solution-start without a matching solution-end")
    return {**downloadable_notebook(nb), "cells": cells}


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _is_notebook(text: str) -> bool:
    """Whether MyST text is a jupytext notebook (front matter naming a kernel)."""
    if not text.startswith("---"):
        return False
    front, _, _ = text[3:].partition("\n---")
    return "kernelspec:" in front


def _check_paired(md: Path, nb: dict[str, Any]) -> None:
    """Fail unless notebook ``nb`` has the same cells (type, source, tags) as chapter ``md``."""
    import jupytext

    def cells(notebook) -> list[tuple[str, str, list[str]]]:
        return [
            (c["cell_type"], c["source"] if isinstance(c["source"], str) else "".join(c["source"]),
             list(c.get("metadata", {}).get("tags", [])))
            for c in notebook["cells"]
        ]

    if cells(jupytext.read(md)) != cells(nb):
        raise ValueError(
            f"notebooks/{md.stem}.ipynb does not match {md} (edited without re-executing?): "
            "run `make notebooks`, then build the student edition again"
        )


#: What both staged editions change in ``_config.yml``: render the committed outputs,
#: execute nothing (nbval has just re-executed every notebook and compared its outputs).
RENDER_ONLY: dict[str, Any] = {"execute": {"execute_notebooks": "off"}}


def stage_edition(
    dest: str | os.PathLike[str], root: str | os.PathLike[str] = ".", *, student: bool = False
) -> Path:
    """Write an edition's book sources to ``dest`` and return it.

    Each chapter ``book/chNN….md`` is staged as its executed notebook
    ``notebooks/chNN….ipynb``, which must exist and have the same cells (type, source,
    tags) as the chapter (else ``ValueError``: run ``make notebooks``); the build renders
    those outputs without executing anything. The full edition keeps every cell and
    drops only the ``jupytext`` pairing metadata (it names this repository's folders),
    and tells `toklab.teaching.sphinxext` where the ``.md`` sources are, so each page still
    offers both downloads. The student edition (``student=True``) merges
    ``_config_student.yml`` on top and removes every solution from the notebooks
    (`strip_notebook_solutions`) and from the other Markdown pages (`strip_solutions`).

    ``dest`` gets ``_config.yml``, ``_toc.yml`` and ``book/``. The top-level folders a
    chapter may ``literalinclude`` (``src``, ``data``, ``tests``, ``benchmarks``) are
    symlinked, so ``../src/…`` paths resolve as in a build from the repository root.
    """
    import yaml

    root, dest = Path(root).resolve(), Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    config = _merge(yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8")), RENDER_ONLY)
    if student:
        config = _merge(config, yaml.safe_load((root / "_config_student.yml").read_text(encoding="utf-8")))
    else:
        config = _merge(config, {"sphinx": {"config": {"toklab_markdown_root": str(root)}}})
    (dest / "_config.yml").write_text(
        yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8"
    )
    shutil.copy2(root / "_toc.yml", dest / "_toc.yml")
    shutil.copytree(root / "book", dest / "book", ignore=shutil.ignore_patterns("*.md"))
    for md in sorted((root / "book").rglob("*.md")):
        rel = md.relative_to(root / "book")
        target = dest / "book" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        paired = root / "notebooks" / rel.with_suffix(".ipynb")
        if paired.is_file():
            nb = json.loads(paired.read_text(encoding="utf-8"))
            _check_paired(md, nb)
            where = str(paired.relative_to(root))
            staged = strip_notebook_solutions(nb, where=where) if student else downloadable_notebook(nb)
            target.with_suffix(".ipynb").write_text(
                json.dumps(staged, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
            )
        else:
            text = md.read_text(encoding="utf-8")
            if _is_notebook(text):
                raise ValueError(
                    f"{md.relative_to(root)} is a notebook without notebooks/{rel.with_suffix('.ipynb')}: "
                    "run `make notebooks` (the book renders the executed notebooks)"
                )
            if student:
                text = strip_solutions(text, where=str(md.relative_to(root)))
            target.write_text(text, encoding="utf-8")
    for name in ("src", "data", "tests", "benchmarks"):
        if (root / name).exists():
            (dest / name).symlink_to(root / name, target_is_directory=True)
    return dest


def _main(argv: list[str]) -> int:
    editions = {"full": False, "student": True}
    if len(argv) == 3 and argv[0] == "stage" and argv[1] in editions:
        try:
            staged = stage_edition(argv[2], student=editions[argv[1]])
        except ValueError as exc:
            print(f"{argv[1]} edition: {exc}", file=sys.stderr)
            return 1
        print(f"{argv[1]} edition sources staged in {staged}")
        return 0
    print("usage: python -m toklab.teaching.edition stage full|student DIR", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
