"""What `make check` runs: the tests and notebooks a change can affect, for the edit loop.

    python tests/changed.py [BASE]     (BASE: a git revision, default HEAD)

prints two lines: the test files to run, then the notebooks to check with nbval. A changed
file counts whether it is committed after BASE, modified, staged or new. What is selected:

- a changed test file, and every test file of a folder whose ``helpers.py`` or
  ``conftest.py`` changed;
- for a changed module: the mirror folder of its innermost package (``src/toklab/lab/healing/
  unstable.py`` → ``tests/lab/healing/``, or the nearest folder above that exists), every test
  file that names that package (``toklab.lab.healing``) or imports it from its parent; a
  top-level module (``src/toklab/decoders.py``) counts as a package of its own; plus
  ``tests/test_layout.py``;
- a changed chapter (``book/chNN….md`` or its notebook): that chapter's notebook.

It is a shortcut, not a guarantee: ``make test`` runs everything. The site tests need a
built book and are never selected.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"


def changed_files(base: str) -> list[str]:
    def git(*args: str) -> list[str]:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        return [line for line in out.splitlines() if line]

    return sorted(set(git("diff", "--name-only", base)) | set(git("ls-files", "--others", "--exclude-standard")))


def _test_files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("test_*.py") if "site" not in p.relative_to(TESTS).parts}


def _importers(dotted: str) -> set[Path]:
    """Test files that import ``dotted`` (``toklab.lab.healing``) or its last part from its parent."""
    parent, _, name = dotted.rpartition(".")
    named = re.compile(rf"\b{re.escape(dotted)}\b")
    from_parent = re.compile(rf"^\s*from {re.escape(parent)} import [^\n]*\b{re.escape(name)}\b", re.M)
    return {p for p in _test_files(TESTS) if named.search(t := p.read_text(encoding="utf-8")) or from_parent.search(t)}


def _module_tests(parts: tuple[str, ...]) -> set[Path]:
    """For ``src/toklab/<package…>/<file>.py``: the innermost package's mirror folder and importers."""
    package = [Path(part).stem for part in parts[2:]]
    if package[-1] in ("__init__", "__main__") or len(package) > 1:
        package = package[:-1]
    if not package:
        return set()
    tests: set[Path] = set()
    for depth in range(len(package), 0, -1):
        mirror = TESTS.joinpath(*package[:depth])
        if mirror.is_dir():
            tests |= _test_files(mirror)
            break
    return tests | _importers(".".join(["toklab", *package]))


def select(paths: list[str]) -> tuple[list[str], list[str]]:
    tests: set[Path] = set()
    notebooks: set[str] = set()
    for rel in paths:
        path = ROOT / rel
        parts = Path(rel).parts
        if parts[0] == "tests" and "site" not in parts:
            if path.name.startswith("test_") and path.suffix == ".py" and path.exists():
                tests.add(path)
            elif path.name in ("helpers.py", "conftest.py"):
                tests |= _test_files(path.parent)
        elif parts[:2] == ("src", "toklab") and path.suffix == ".py" and len(parts) > 2:
            tests |= _module_tests(parts)
            tests.add(TESTS / "test_layout.py")
        elif parts[0] in ("book", "notebooks") and Path(rel).name.startswith("ch") and len(parts) == 2:
            notebook = Path("notebooks") / (Path(rel).stem + ".ipynb")
            if (ROOT / notebook).exists():
                notebooks.add(notebook.as_posix())
    return sorted(str(p.relative_to(ROOT)) for p in tests if p.exists()), sorted(notebooks)


def main(argv: list[str]) -> int:
    base = argv[0] if argv else "HEAD"
    tests, notebooks = select(changed_files(base))
    print(" ".join(tests))
    print(" ".join(notebooks))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
