"""Finding what to grade: students' files, and which file answers which exercise.

A class hands in either one file per student in a folder (``alice.py``,
``bob.ipynb``: the student is the file's name without its suffix), or one folder per
student (``alice/``, ``bob/``: the student is the folder's name, and every ``.py`` and
``.ipynb`` file below it is looked at). In a student's folder, the file that answers an
exercise is the one that defines the function the exercise asks for, read without
running anything (Python's ``ast``, a notebook's code cells); when several do, a file
named after the exercise's label wins, then one named after its chapter, then the first
by name, and the choice is noted.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from .worker import notebook_source

__all__ = ["SUFFIXES", "Found", "defined_names", "files", "flat", "per_student", "pick"]

#: The files a submission can be.
SUFFIXES = (".py", ".ipynb")
_SKIPPED_FOLDERS = {"__pycache__", ".ipynb_checkpoints", ".git", ".venv", "venv"}


@dataclass(frozen=True)
class Found:
    """The file of ``student`` that answers an exercise (None: none does), and a note on the choice."""

    student: str
    path: Path | None
    note: str = ""


def _visible(path: Path, root: Path) -> bool:
    parts = path.relative_to(root).parts
    return not any(p.startswith(".") or p in _SKIPPED_FOLDERS for p in parts)


def files(folder: Path, *, recursive: bool) -> list[Path]:
    """The ``.py`` and ``.ipynb`` files in ``folder`` (below it too with ``recursive``), not hidden, sorted."""
    found = folder.rglob("*") if recursive else folder.glob("*")
    return sorted(p for p in found if p.suffix in SUFFIXES and p.is_file() and _visible(p, folder))


def flat(folder: Path) -> list[Found]:
    """One submission per file directly in ``folder``: the student is the file's stem."""
    return [Found(p.stem, p) for p in files(folder, recursive=False)]


def per_student(folder: Path) -> list[tuple[str, Path]]:
    """``(student, their folder)`` for each folder directly in ``folder`` (not hidden), sorted by name."""
    return sorted((p.name, p) for p in folder.iterdir() if p.is_dir() and _visible(p, folder))


def defined_names(path: Path) -> set[str]:
    """The names a file binds at its top level (functions, classes, assignments, imports), without running it.

    A notebook's code cells are read one by one (a cell that does not parse is skipped);
    an unreadable file defines nothing.
    """
    try:
        text = path.read_text(encoding="utf-8")
        sources = [s for _, s in notebook_source(text, path.name)] if path.suffix == ".ipynb" else [text]
    except (OSError, UnicodeDecodeError, ValueError):
        return set()
    names: set[str] = set()
    for source in sources:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        for node in tree.body:
            names |= _bound(node)
    return names


def _bound(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    out = set()
    for target in targets:
        out |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    if isinstance(node, (ast.If, ast.Try, ast.With)):  # definitions inside a guard still count
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                out |= _bound(child)
    return out


def pick(student: str, candidates: list[Path], label: str, names: list[str]) -> Found:
    """The file among ``candidates`` that answers exercise ``label`` by defining one of ``names``."""
    chapter = label.split("-ex")[0]
    defining = [p for p in candidates if defined_names(p) & set(names)]
    if not defining:
        if len(candidates) == 1:
            return Found(student, candidates[0], f"no file defines {names[0]}(); checked the only file")
        return Found(student, None, f"no file defines {names[0]}()" + ("" if candidates else " (no .py or .ipynb "
                                                                        "files at all)"))

    def rank(p: Path) -> tuple[int, str]:
        stem = p.stem.lower().replace("_", "-")
        if label.replace("_", "-") in stem:
            return 0, str(p)
        if re.search(rf"(?<![0-9]){re.escape(chapter.replace('_', '-'))}(?![0-9])", stem):
            return 1, str(p)
        return 2, str(p)

    best = min(defining, key=rank)
    note = "" if len(defining) == 1 else f"{len(defining)} files define {names[0]}(); took {best.name}"
    return Found(student, best, note)
