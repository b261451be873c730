"""The package's shape, kept by a test: no private coupling, no import cycle, small files.

An underscore means "free to change tomorrow", so no module may import
another module's underscored name, and neither may the tests, benchmarks or
chapters. The import graph between toklab's modules must have no cycle (a
cycle is how a package stops having layers). Files stay under about 500
lines and classes under about 300, so each holds a handful of ideas.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "toklab"
MAX_FILE_LINES = 500
MAX_CLASS_LINES = 330


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


def test_no_module_imports_another_modules_private_name():
    bad = [
        f"{m}:{line} imports {name} from {target}"
        for m in MODULES
        for target, name, line in imports(m)
        if target.startswith("toklab") and name and name.startswith("_") and not name.startswith("__")
    ]
    assert not bad, "\n".join(bad)


def test_import_graph_has_no_cycle():
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for m in MODULES:
        for target, _, _ in imports(m):
            # An import of a package runs its __init__, which is an edge too.
            while target and target not in MODULES and "." in target:
                target = target.rsplit(".", 1)[0]
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
    r"post_processors|special|unicode|tu|metrics|vocabs|corpus|viz|book|tok|model|sp_model|pipe|cl100k|r50k|o200k)"
    r"\._[a-z]\w*"
)


@pytest.mark.parametrize("path", _outside_sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_tests_benchmarks_and_chapters_use_public_names(path):
    text = path.read_text(encoding="utf-8")
    if path == Path(__file__):
        return
    hits = [m.group() for m in _PRIVATE_IMPORT.finditer(text)] + [m.group() for m in _PRIVATE_ATTR.finditer(text)]
    assert not hits, f"{path.relative_to(ROOT)} uses private toklab names: {sorted(set(hits))}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_files_and_classes_are_small(module):
    path = MODULES[module]
    source = path.read_text(encoding="utf-8")
    n = len(source.splitlines())
    assert n <= MAX_FILE_LINES, f"{path.relative_to(ROOT)} has {n} lines (> {MAX_FILE_LINES}): split it"
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            size = node.end_lineno - node.lineno + 1
            assert size <= MAX_CLASS_LINES, f"{module}.{node.name} has {size} lines (> {MAX_CLASS_LINES})"


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

SUBPACKAGES = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))
ALGORITHMS = ("bpe", "wordpiece", "unigram")
TESTS = ROOT / "tests"


# exercises/ holds one checker module per chapter file stem: its map is the book itself.
@pytest.mark.parametrize("package", [p for p in SUBPACKAGES if p != "exercises"])
def test_each_package_docstring_names_each_of_its_files(package):
    """A package's ``__init__`` says which file adds what, so a reader can find anything from there."""
    doc = ast.get_docstring(ast.parse((PACKAGE / package / "__init__.py").read_text(encoding="utf-8"))) or ""
    files = sorted(p.stem for p in (PACKAGE / package).glob("*.py") if p.stem != "__init__")
    missing = [stem for stem in files if f"`{stem}`" not in doc and f"``{stem}``" not in doc]
    assert not missing, f"toklab/{package}/__init__.py's docstring does not mention {missing}"


def _test_functions(folder: Path) -> list[str]:
    names = []
    for path in folder.rglob("test_*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names += [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
    return names


@pytest.mark.parametrize("package", [*SUBPACKAGES, "sentencepiece", "pipeline"])
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
    """The paths users and the chapters already rely on (issue 6) still lead to the same objects."""
    import toklab
    from toklab import bpe, sentencepiece, unigram, wordpiece
    from toklab.pre_tokenizers import patterns
    from toklab.data import vocabs
    from toklab.pre_tokenizers import patterns

    assert bpe.ByteBPE is toklab.ByteBPE and callable(bpe.train)
    assert callable(bpe.reference_train) and callable(bpe.reference_encode)
    assert wordpiece.WordPiece is toklab.WordPiece and callable(wordpiece.train)
    assert unigram.Unigram is toklab.Unigram and callable(unigram.train)
    assert sentencepiece.SentencePieceTokenizer is toklab.SentencePieceTokenizer
    assert callable(sentencepiece.SentencePieceTokenizer.from_model_proto)
    assert callable(sentencepiece.SentencePieceTokenizer.from_sentencepiece)
    assert callable(vocabs.load) and callable(vocabs.load_ranks)
    assert patterns.split is patterns.split and patterns.PATTERNS is patterns.PATTERNS  # kept for one release
    tok = toklab.ByteBPE([(b"a", b"b")])
    assert tok.vocab[256] == b"ab" and all(type(i) is int and type(t) is bytes for i, t in tok.vocab.items())
