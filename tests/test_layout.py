"""The package's shape, kept by a test: layers, no private coupling, no import cycle, small files, one map.

`toklab.teaching.package_map.LAYERS` lists the package's layers, bottom to top: the
tokenizer library below, the book's tools above it. A module may import from a lower
layer or from inside its own top-level package, never upwards or sideways, lazy imports
(inside functions) included; the root package, which re-exports the public API, is
imported by nobody inside the package. Every module must import on its own, which an
import order can hide: the root ``__init__`` imports half the package before any
module a user names, so a cycle between two modules can work by luck. Two tests look
for one with the root emptied, statically (following Python's import order, the
parent package first) and by importing every module in a fresh interpreter.

An underscore means "free to change tomorrow", so no module may import another
module's underscored name, and neither may the tests, benchmarks or chapters. Files
stay under about 500 lines of code and classes under about 300 (docstrings, comments
and blank lines do not count), so each holds a handful of ideas.
"""

from __future__ import annotations

import ast
import functools
import io
import json
import re
import shutil
import subprocess
import sys
import textwrap
import tokenize
from pathlib import Path

import pytest

from toklab.teaching import package_map

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "toklab"
MAX_FILE_CODE_LINES = 500
MAX_CLASS_CODE_LINES = 300
ROOT_MODULES = ("toklab", "toklab.__main__")  # the public API and `python -m toklab`: the top, above every layer


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute module an ``import from`` names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    is_package = MODULES[module].name == "__init__.py"
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(module: str) -> list[tuple[str, str | None, int]]:
    """``(imported module, imported name or None, line)`` for every import of ``module``, top level or not."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = resolve(module, node)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in MODULES:  # "from . import special": the module itself
                    out.append((sub, None, node.lineno))
                else:
                    out.append((target, alias.name, node.lineno))
    return out


def owner(target: str) -> str:
    """The toklab module an imported name lives in (``toklab.bpe.ByteBPE`` -> ``toklab.bpe``)."""
    while target not in MODULES and "." in target:
        target = target.rsplit(".", 1)[0]
    return target


def test_no_module_imports_another_modules_private_name():
    bad = [
        f"{m}:{line} imports {name} from {target}"
        for m in MODULES
        for target, name, line in imports(m)
        if target.startswith("toklab") and name and name.startswith("_") and not name.startswith("__")
    ]
    assert not bad, "\n".join(bad)


# -------------------------------------------------------------------- layers


def test_every_top_level_name_sits_in_exactly_one_layer():
    listed = [name for _, names in package_map.LAYERS for name in names]
    assert len(listed) == len(set(listed)), f"a name is in two layers: {listed}"
    top = {p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")}
    top |= {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert top == set(listed), f"not in a layer: {sorted(top - set(listed))}; no such name: {sorted(set(listed) - top)}"


def test_imports_point_down_the_layers():
    """Every toklab import, lazy ones included, stays in its top-level package or goes to a lower layer."""
    bad = []
    for m in MODULES:
        if m in ROOT_MODULES:
            continue
        for target, name, line in imports(m):
            if target.split(".")[0] != "toklab":
                continue
            where = f"{MODULES[m].relative_to(ROOT)}:{line}"
            imported = owner(target)
            if imported == "toklab":
                bad.append(f"{where} imports the root package (which imports the whole public API); "
                           f"import {name or 'it'} from the module that defines it")
                continue
            mine, theirs = m.split(".")[1], imported.split(".")[1]
            if mine != theirs and package_map.layer_of(theirs) >= package_map.layer_of(mine):
                mine_layer, their_layer = (package_map.LAYERS[package_map.layer_of(x)][0] for x in (mine, theirs))
                bad.append(f"{where}: {m} ({mine_layer}) imports {imported} ({their_layer}), "
                           "which is not in a lower layer")
    assert not bad, "imports that point up or sideways (toklab.teaching.package_map.LAYERS):\n" + "\n".join(bad)


def test_import_graph_has_no_cycle():
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for m in MODULES:
        for target, _, _ in imports(m):
            target = owner(target)
            if target in MODULES and target != m:
                graph[m].add(target)
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                cycle = path[path.index(n):] + [n]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if n not in state:
                visit(n)
        path.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


@functools.lru_cache(maxsize=None)
def _run_at_import(module: str) -> list[tuple[str, list[str] | None]]:
    """``(module, names read from it or None)`` for each toklab import that runs when ``module`` is imported,
    in source order: module level, class bodies and ``if``/``try`` blocks, not function bodies."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found: list[ast.stmt] = []

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            elif not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                walk(child)

    walk(tree)
    out: list[tuple[str, list[str] | None]] = []
    for node in sorted(found, key=lambda n: (n.lineno, n.col_offset)):
        if isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names if a.name.split(".")[0] == "toklab"]
            continue
        target = resolve(module, node)
        if target.split(".")[0] != "toklab":
            continue
        names = [a.name for a in node.names if f"{target}.{a.name}" not in MODULES]
        out.append((target, names or None))
        out += [(f"{target}.{a.name}", None) for a in node.names if f"{target}.{a.name}" in MODULES]
    return out


def _import_alone(start: str) -> str | None:
    """Follow Python's import of ``start`` with the root package empty; the chain that reads a name
    from a module still being imported (it fails with "partially initialized module"), or None."""
    done = {"toklab"}
    running: list[str] = []

    def load(m: str, names: list[str] | None) -> str | None:
        if m in done:
            return None
        if m in running:
            if names:
                return " -> ".join(running[running.index(m):] + [m]) + f" (reads {', '.join(names)})"
            return None
        parent = m.rsplit(".", 1)[0]
        problem = load(parent, None)  # a package's __init__ runs before any of its modules
        if problem or m in done:
            return problem
        running.append(m)
        for target, read in _run_at_import(m):
            problem = load(target, read)
            if problem:
                return problem
        running.pop()
        done.add(m)
        return None

    return load(start, None)


def test_no_module_reads_a_module_that_is_still_being_imported():
    """The cycle a package ``__init__`` on the path can close: ``a`` imports ``pkg.b``, so ``pkg/__init__``
    runs first, imports ``pkg.c``, which imports a name from ``a``, still half-run."""
    problems = {m: _import_alone(m) for m in MODULES if m not in ROOT_MODULES}
    bad = [f"import {m}: {chain}" for m, chain in problems.items() if chain]
    assert not bad, "modules that import only thanks to the root __init__'s import order:\n" + "\n".join(bad)


# Importing a module first runs its parent packages' __init__ first, so a module that the
# __init__ of one of its packages loads is imported exactly as that package is: skipped.
_FRESH_IMPORTS = textwrap.dedent("""
    import importlib, json, sys, traceback
    sys.path.insert(0, sys.argv[1])
    failures, loaded_by = {}, {}
    for name in json.loads(sys.argv[2]):
        parents = [name.rsplit(".", k)[0] for k in range(1, name.count("."))]
        if any(name in loaded_by.get(parent, ()) for parent in parents):
            continue
        for loaded in [m for m in sys.modules if m == "toklab" or m.startswith("toklab.")]:
            del sys.modules[loaded]
        try:
            module = importlib.import_module(name)
            assert module.__file__.startswith(sys.argv[1]), f"imported {module.__file__}"
        except BaseException as exc:
            failures[name] = traceback.format_exception_only(type(exc), exc)[-1].strip()
        loaded_by[name] = {m for m in sys.modules if m.startswith(name + ".")}
    print(json.dumps(failures))
""")


def test_every_module_imports_on_its_own_with_an_empty_root_package(tmp_path):
    """Each module imported first, in a fresh state, from a copy of the package whose ``__init__`` is empty."""
    shutil.copytree(PACKAGE, tmp_path / "toklab", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "toklab" / "__init__.py").write_text('"""Emptied: every module must import without it."""\n')
    names = [m for m in sorted(MODULES) if m not in ROOT_MODULES]
    run = subprocess.run([sys.executable, "-c", _FRESH_IMPORTS, str(tmp_path), json.dumps(names)],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    failures = json.loads(run.stdout.splitlines()[-1])
    assert not failures, "\n".join(f"import {m}: {err}" for m, err in failures.items())


# -------------------------------------------------------------------- public names outside the package


def _outside_sources() -> list[Path]:
    files = [p for p in (ROOT / "tests").rglob("*.py")]
    files += [p for p in (ROOT / "benchmarks").rglob("*.py")]
    files += sorted((ROOT / "book").glob("*.md"))
    return files


# toklab's own private names, used from outside: `obj._name` where obj came from
# toklab, or `from toklab... import _name`. Other libraries' private names
# (tiktoken's `_encode_single_piece`) are theirs to change, not ours.
_PRIVATE_IMPORT = re.compile(r"from\s+toklab[\w.]*\s+import\s+[^\n#]*\b_[a-z]\w*")
_PRIVATE_ATTR = re.compile(
    r"\b(toklab|bpe|wordpiece|wp|unigram|sentencepiece|tsp|pipeline|normalizers|pre_tokenizers|decoders|"
    r"post_processors|special|unicode|tu|pieces|metrics|vocabs|corpus|viz|book|edition|tok|model|model_file|sp_model|"
    r"pipe|toylm|formats|cl100k|r50k|o200k)"
    r"\._[a-z]\w*"
)


@pytest.mark.parametrize("path", _outside_sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_tests_benchmarks_and_chapters_use_public_names(path):
    text = path.read_text(encoding="utf-8")
    if path == Path(__file__):
        return
    hits = [m.group() for m in _PRIVATE_IMPORT.finditer(text)] + [m.group() for m in _PRIVATE_ATTR.finditer(text)]
    assert not hits, f"{path.relative_to(ROOT)} uses private toklab names: {sorted(set(hits))}"


# -------------------------------------------------------------------- size


def code_lines(source: str) -> set[int]:
    """The lines that hold code: not blank, not only a comment, not part of a docstring."""
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                docstrings.update(range(first.lineno, first.end_lineno + 1))
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
            tokenize.ENDMARKER}
    lines: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in skip:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return lines - docstrings


def test_code_lines_count_code_only():
    source = '"""Doc.\n\nMore doc.\n"""\n\n# a comment\nx = 1  # why\n\n\ndef f():\n    """Doc."""\n    return (1,\n            2)\n'
    assert sorted(code_lines(source)) == [7, 10, 12, 13]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_files_and_classes_are_small(module):
    path = MODULES[module]
    source = path.read_text(encoding="utf-8")
    lines = code_lines(source)
    assert len(lines) <= MAX_FILE_CODE_LINES, (
        f"{path.relative_to(ROOT)} has {len(lines)} lines of code (> {MAX_FILE_CODE_LINES}): split it by meaning")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            size = len([n for n in lines if node.lineno <= n <= node.end_lineno])
            assert size <= MAX_CLASS_CODE_LINES, (
                f"{module}.{node.name} has {size} lines of code (> {MAX_CLASS_CODE_LINES})")


# -------------------------------------------------------------------- one map


def test_readme_and_package_docstring_show_the_package_map():
    """Both are `toklab.teaching.package_map.layout` rendered; ``python -m toklab.teaching.package_map`` rewrites them."""
    import toklab

    fix = "out of date: run python -m toklab.teaching.package_map"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split(package_map.README_START, 1)[1].split(package_map.README_END, 1)[0]
    assert section.strip() == package_map.readme_table(), f"README.md's package table is {fix}"
    assert f"{package_map.DOCSTRING_START}\n\n{package_map.docstring_list()}\n\n" in toklab.__doc__, (
        f"the package docstring's list is {fix}")


def test_stage_modules_exist_under_their_hf_names():
    import toklab

    for name in ("normalizers", "pre_tokenizers", "post_processors", "decoders", "pipeline"):
        assert (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").is_file(), name
    for algo in ("bpe", "wordpiece", "unigram"):
        files = {p.name for p in (PACKAGE / algo).glob("*.py")}
        assert {"__init__.py", "reference.py", "trainer.py", "model.py"} <= files, (algo, files)
        assert len(files - {"__init__.py", "reference.py", "trainer.py", "model.py"}) <= 2, (algo, files)
    for name in ("ByteBPE", "WordPiece", "Unigram", "SentencePieceTokenizer", "Pipeline", "trace"):
        assert hasattr(toklab, name), name


# -------------------------------------------------------------------- package maps and their tests

PACKAGES = sorted(str(p.parent.relative_to(PACKAGE)) for p in PACKAGE.rglob("*/__init__.py"))
ALGORITHMS = ("bpe", "wordpiece", "unigram")
TESTS = ROOT / "tests"


# teaching/exercises/ holds one checker module per chapter file stem: its map is the book itself.
@pytest.mark.parametrize("package", [p for p in PACKAGES if p != "teaching/exercises"])
def test_each_package_docstring_names_each_of_its_files(package):
    """A package's ``__init__`` says which file adds what, so a reader can find anything from there."""
    folder = PACKAGE / package
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))) or ""
    files = sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__")
    files += sorted(p.parent.name for p in folder.glob("*/__init__.py"))
    missing = [stem for stem in files if f"`{stem}`" not in doc and f"``{stem}``" not in doc]
    assert not missing, f"toklab/{package}/__init__.py's docstring does not mention {missing}"


def _test_functions(folder: Path) -> list[str]:
    names = []
    for path in folder.rglob("test_*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names += [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
    return names


@pytest.mark.parametrize("package", PACKAGES)
def test_tests_mirror_the_packages(package):
    folder = TESTS / package
    assert folder.is_dir() and (folder / "__init__.py").is_file(), f"no test folder tests/{package}/"
    files = {p.name for p in folder.glob("test_*.py")}
    assert files, f"tests/{package}/ holds no test file"
    if package in ALGORITHMS:
        assert {"test_reference.py", "test_fast_vs_reference.py", "test_model.py", "test_trainer.py"} <= files, files


def _reference_names() -> dict[str, set[str]]:
    """Package (bpe, unigram, sentencepiece, ...) -> the textbook functions it defines."""
    out: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        parts = module.split(".")
        package = parts[1] if len(parts) > 1 else ""
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and (parts[-1] == "reference" or node.name.startswith("reference_")):
                out.setdefault(package, set()).add(node.name)
    return out


_MUST_EQUAL = re.compile(r"must (?:equal|return exactly what)\s+`{1,2}(?:[\w.]+\.)?(\w+)`", re.IGNORECASE)


def test_every_reference_fast_pair_has_a_test_named_after_the_reference():
    """LAYOUT.md: a fast function's docstring says "Must equal `reference_X`", and a test named after both ties them."""
    references = _reference_names()
    pairs = set()
    for module, path in MODULES.items():
        parts = module.split(".")
        package = parts[1] if len(parts) > 1 else ""
        for name in _MUST_EQUAL.findall(path.read_text(encoding="utf-8")):
            if name in references.get(package, ()):
                pairs.add((package, name))
    assert {("bpe", "reference_train"), ("wordpiece", "reference_train"), ("unigram", "reference_m_step"),
            ("unigram", "reference_prune_loss"), ("sentencepiece", "reference_bpe_segment")} <= pairs
    missing = [
        f"tests/{package}/ has no test named after {name}"
        for package, name in sorted(pairs)
        if not any(name in test for test in _test_functions(TESTS / package))
    ]
    assert not missing, "\n".join(missing)


def test_users_import_paths_keep_working():
    """The paths users and the chapters rely on lead to the same objects."""
    import toklab
    from toklab import bpe, sentencepiece, unigram, wordpiece
    from toklab.data import vocabs

    assert bpe.ByteBPE is toklab.ByteBPE and callable(bpe.train)
    assert callable(bpe.reference_train) and callable(bpe.reference_encode)
    assert wordpiece.WordPiece is toklab.WordPiece and callable(wordpiece.train)
    assert unigram.Unigram is toklab.Unigram and callable(unigram.train)
    assert sentencepiece.SentencePieceTokenizer is toklab.SentencePieceTokenizer
    assert callable(sentencepiece.SentencePieceTokenizer.from_model_proto)
    assert callable(sentencepiece.SentencePieceTokenizer.from_sentencepiece)
    assert callable(sentencepiece.load) and callable(sentencepiece.load_unigram)
    assert callable(vocabs.load) and callable(vocabs.load_ranks)
    tok = toklab.ByteBPE([(b"a", b"b")])
    assert tok.vocab[256] == b"ab" and all(type(i) is int and type(t) is bytes for i, t in tok.vocab.items())
