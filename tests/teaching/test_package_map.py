"""`toklab.teaching.package_map` cannot drift from the package: names resolve, tests exist, no pair is missing."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from toklab.teaching import package_map

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "toklab"


@pytest.mark.parametrize("pair", package_map.PAIRS, ids=lambda p: p.what)
def test_each_pair_resolves_and_the_fast_docstring_names_the_reference(pair):
    reference, fast = package_map.resolve(pair.reference), package_map.resolve(pair.fast)
    assert callable(reference) and callable(fast)
    short = pair.reference.rsplit(".", 1)[-1]
    module = importlib.import_module(fast.__module__)
    docs = " ".join(" ".join((d or "").split()) for d in (fast.__doc__, module.__doc__))
    named = re.search(rf"`{{1,2}}(?:[\w.]+\.)?{short}\b", docs)
    bound = re.search(r"must equal|must return exactly|equals|is its reference", docs, re.IGNORECASE)
    assert named and bound, f"neither {pair.fast}'s docstring nor its module's says it must equal {short}"


@pytest.mark.parametrize("pair", package_map.PAIRS, ids=lambda p: p.what)
def test_each_pairs_test_exists_and_is_named_after_the_reference(pair):
    path, name = pair.test.split("::")
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    assert name in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}, pair.test
    assert pair.reference.rsplit(".", 1)[-1] in name, f"{name} is not named after {pair.reference}"


def test_every_declared_fast_function_is_in_the_tour():
    """A function whose docstring says "Must equal `reference_X`" appears in PAIRS with that reference."""
    listed = {p.reference.rsplit(".", 1)[-1] for p in package_map.PAIRS}
    declared = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                doc = ast.get_docstring(node) or ""
                declared |= set(re.findall(r"[Mm]ust equal\s+`{1,2}(?:[\w.]+\.)?(reference_\w+|encode_word)`", doc))
    assert declared and declared <= listed, f"not in toklab.teaching.package_map.PAIRS: {sorted(declared - listed)}"


def test_every_top_level_package_is_on_one_map():
    """Each top-level name is an entry of `MAP` or of `BEYOND`, or holds one (``toklab.base.special``), once."""
    on_maps = [m for _, m in package_map.MAP + package_map.BEYOND]
    assert len(on_maps) == len(set(on_maps))
    top = {f"toklab.{p.stem}" for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")}
    top |= {f"toklab.{p.parent.name}" for p in PACKAGE.glob("*/__init__.py")}
    covered = {".".join(m.split(".")[:2]) for m in on_maps}
    assert top == covered, f"missing: {sorted(top - covered)}; stale: {sorted(covered - top)}"
    assert all(package_map.resolve(m) for m in on_maps)
    assert all(summary for _, _, summary, _ in package_map.package_map(package_map.BEYOND))


def test_layers_list_every_top_level_name_once_in_the_layout():
    layout = package_map.layout()
    names = [path.removeprefix("toklab/").removesuffix("/").removesuffix(".py") for _, path, _, _ in layout]
    assert names == [n for _, group in package_map.LAYERS for n in group]
    assert [package_map.layer_of(n) for n in names] == sorted(package_map.layer_of(n) for n in names)
    assert all(summary and not summary.endswith(":") for _, _, summary, _ in layout)
    with pytest.raises(KeyError, match="no layer"):
        package_map.layer_of("toklab.nosuchpackage")


def test_the_map_covers_every_stage_in_pipeline_order():
    rows = package_map.package_map()
    assert [r[1] for r in rows] == [m for _, m in package_map.MAP]
    assert all(summary and lines > 10 for _, _, summary, lines in rows)
    stages = " ".join(r[0] for r in rows)
    for word in ("normalizer", "pre-tokenizer", "model", "post-processor", "decode"):
        assert word in stages
    with pytest.raises(ImportError):
        package_map.resolve("nosuchmodule.f")
