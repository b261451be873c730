"""How a chapter reads, measured from its source: skim time, visible checks, wide code.

    python tests/reading.py          a table, one row per chapter

Skim time is prose at 220 words a minute plus shown code at 40 lines a minute. Shown
means what a reader sees without opening anything: prose and code outside solutions,
code cells not tagged ``remove-cell``, ``remove-input``, ``hide-input`` or ``hide-cell``,
and the lines a ``literalinclude`` pulls in. Solutions (collapsed dropdowns) are counted
apart. A visible check is an ``assert`` line or a ``glue(`` call in a shown code cell.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS_PER_MINUTE = 220
CODE_LINES_PER_MINUTE = 40
MAX_MINUTES = 25
MAX_CODE_WIDTH = 88
HIDDEN_TAGS = frozenset({"remove-cell", "remove-input", "hide-input", "hide-cell"})

_FENCE = re.compile(r"^(`{3,}|:{3,})\{([\w-]+)\}(.*)$")
_OPTION = re.compile(r"^:[\w-]+:")
_ROLE = re.compile(r"\{[\w:-]+\}`[^`]*`")


@dataclass
class Reading:
    words: int = 0
    code_lines: int = 0
    solution_words: int = 0
    solution_code_lines: int = 0
    visible_asserts: int = 0
    visible_glue: int = 0
    wide_code_lines: int = 0

    @property
    def minutes(self) -> float:
        return self.words / WORDS_PER_MINUTE + self.code_lines / CODE_LINES_PER_MINUTE


def _included_lines(argument: str, options: dict[str, str], folder: Path) -> list[str]:
    path = (folder / argument.strip()).resolve()
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    if "pyobject" in options:
        name = options["pyobject"].split(".")[-1]
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
                return lines[node.lineno - 1 - len(node.decorator_list) : node.end_lineno]
        return []
    if "lines" in options:
        out = []
        for part in options["lines"].split(","):
            start, _, end = part.strip().partition("-")
            out += lines[int(start) - 1 : int(end or start)]
        return out
    for key, keep in (("start-after", False), ("start-at", True)):
        if key in options:
            found = next((i for i, ln in enumerate(lines) if options[key] in ln), None)
            lines = lines[found + (0 if keep else 1) :] if found is not None else []
    for key, keep in (("end-before", False), ("end-at", True)):
        if key in options:
            found = next((i for i, ln in enumerate(lines) if options[key] in ln), None)
            lines = lines[: found + (1 if keep else 0)] if found is not None else lines
    return lines


def _count_code(reading: Reading, lines: list[str], in_solution: bool) -> None:
    shown = [ln for ln in lines if ln.strip()]
    if in_solution:
        reading.solution_code_lines += len(shown)
        return
    reading.code_lines += len(shown)
    reading.wide_code_lines += sum(len(ln) > MAX_CODE_WIDTH for ln in shown)


def read(md: Path) -> Reading:
    """The reading of chapter ``md`` (a MyST notebook)."""
    import jupytext

    reading = Reading()
    in_solution = False
    for cell in jupytext.read(md).cells:
        if cell.cell_type == "code":
            if HIDDEN_TAGS & set(cell.metadata.get("tags", [])):
                continue
            lines = cell.source.splitlines()
            _count_code(reading, lines, in_solution)
            if not in_solution:
                reading.visible_asserts += sum(ln.strip().startswith("assert ") for ln in lines)
                reading.visible_glue += cell.source.count("glue(")
            continue
        lines = cell.source.splitlines()
        i = 0
        while i < len(lines):
            match = _FENCE.match(lines[i].strip())
            name = match.group(2) if match else ""
            if name == "solution-start":
                in_solution = True
            elif name == "solution-end":
                in_solution = False
            if name == "literalinclude":
                options, j = {}, i + 1
                while j < len(lines) and _OPTION.match(lines[j]):
                    key, _, value = lines[j][1:].partition(":")
                    options[key.strip()] = value.strip()
                    j += 1
                _count_code(reading, _included_lines(match.group(3), options, md.parent), in_solution)
                i = j
                continue
            if not (match or lines[i].strip().startswith(("```", ":::")) or _OPTION.match(lines[i])):
                words = len(re.findall(r"\w+", _ROLE.sub("x", lines[i])))
                if in_solution:
                    reading.solution_words += words
                else:
                    reading.words += words
            i += 1
    return reading


def chapters(root: Path = ROOT) -> list[Path]:
    return sorted((root / "book").glob("ch*.md"))


def main() -> int:
    total = Reading()
    print(f"{'chapter':28} {'min':>5} {'words':>6} {'code':>5} {'assert':>6} {'glue':>5} {'wide':>5}")
    for md in chapters():
        r = read(md)
        for field in ("visible_asserts", "visible_glue", "wide_code_lines"):
            setattr(total, field, getattr(total, field) + getattr(r, field))
        print(f"{md.stem:28} {r.minutes:5.1f} {r.words:6d} {r.code_lines:5d} {r.visible_asserts:6d} "
              f"{r.visible_glue:5d} {r.wide_code_lines:5d}")
    print(f"{'whole book':28} {'':5} {'':6} {'':5} {total.visible_asserts:6d} {total.visible_glue:5d} "
          f"{total.wide_code_lines:5d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
