"""The package's map of itself: its layers, where each pipeline stage lives, and every reference-fast pair.

`LAYERS` is the one table of the package's layers, bottom to top. Every top-level name of
``toklab`` sits in exactly one layer, and a module may import only from a lower layer or
from inside its own top-level package (``tests/test_layout.py`` walks every import, lazy
ones included, and fails on one that points up or sideways). `layout` reads each
top-level name's own docstring for its one-line summary and lists its files; the README's
package table (`readme_table`) and the list in the package docstring (`docstring_list`) are
that layout rendered, a test fails when either differs from it, and
``python -m toklab.teaching.package_map`` writes both again.

`MAP` lists the modules in pipeline order with the stage each implements, `BEYOND` the
other top-level packages with their layer; `package_map` reads each module's docstring
for its summary. `PAIRS` lists every textbook function beside its fast partner and the
test that ties the two; ``tests/teaching/test_package_map.py`` checks that every name
resolves, that each fast docstring says what it must equal, that each test exists and
is named after the reference, and that no fast function declared "Must equal ..."
anywhere in the package is missing from the list.
"""

from __future__ import annotations

import ast
import importlib
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..base.files import atomic_write

__all__ = ["LAYERS", "layer_of", "layout", "readme_table", "docstring_list", "write", "MAP", "BEYOND", "Pair",
           "PAIRS", "resolve", "package_map", "source_lines"]

PACKAGE = Path(__file__).resolve().parents[1]

#: The layers, bottom to top: ``(what the layer is, its top-level names)``. An import
#: points down: a module may use a lower layer, never a higher one, nor a sibling of its
#: own layer. The pipeline composes stages and the algorithm packages build their presets
#: from it, so it sits between the two.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ground floor", ("base",)),
    ("real data", ("data",)),
    ("stage 1", ("normalizers",)),
    ("stage 2", ("pre_tokenizers",)),
    ("stage 5, and back", ("post_processors", "decoders")),
    ("all stages together", ("pipeline",)),
    ("stage 3: the algorithms", ("bpe", "wordpiece", "unigram")),
    ("a library rebuilt", ("sentencepiece",)),
    ("files, measures", ("formats", "measure")),
    ("the chapters' experiments", ("lab",)),
    ("the teaching tools", ("teaching",)),
    ("the command line", ("cli",)),
)


def layer_of(name: str) -> int:
    """The index in `LAYERS` of a top-level name (``"bpe"``) or of any module under it (``"toklab.bpe.model"``)."""
    top = name.removeprefix("toklab.").split(".")[0]
    for i, (_, names) in enumerate(LAYERS):
        if top in names:
            return i
    raise KeyError(f"{name!r} is in no layer of toklab.teaching.package_map.LAYERS")


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def layout() -> list[tuple[str, str, str, list[str]]]:
    """``(layer, path under src/, first line of its docstring, its files)`` per top-level name, bottom layer first.

    A package's files are its modules and sub-packages (``healing/``), ``__init__`` left out;
    a module's are none. Read from the source files, without importing them.
    """
    rows = []
    for layer, names in LAYERS:
        for name in names:
            folder = PACKAGE / name
            if folder.is_dir():
                init = folder / "__init__.py"
                files = sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__")
                files += sorted(f"{p.parent.name}/" for p in folder.glob("*/__init__.py"))
                rows.append((layer, f"toklab/{name}/", _docstring(init).splitlines()[0], files))
            else:
                rows.append((layer, f"toklab/{name}.py", _docstring(PACKAGE / f"{name}.py").splitlines()[0], []))
    return rows


def readme_table() -> str:
    """The README's table of the package, one row per top-level name (see `layout`)."""
    lines = ["| layer | `src/` | holds |", "|---|---|---|"]
    for layer, path, summary, files in layout():
        held = summary.rstrip(".") + (": " + ", ".join(f"`{f}`" for f in files) if files else "")
        lines.append(f"| {layer} | `{path}` | {held} |")
    return "\n".join(lines)


def docstring_list() -> str:
    """The list of top-level names in the package docstring, bottom layer first (see `layout`)."""
    out = []
    for layer, path, summary, _ in layout():
        name = path.removeprefix("toklab/").removesuffix("/").removesuffix(".py")
        out.append(textwrap.fill(f"- `{name}` ({layer}): {summary}", 88, subsequent_indent="  "))
    return "\n".join(out)


README_START = "<!-- package table: python -m toklab.teaching.package_map writes it -->"
README_END = "<!-- end of package table -->"
DOCSTRING_START = "The package, in layers from the bottom (`toklab.teaching.package_map.LAYERS`):"


def _replace(text: str, start: str, end: str, body: str, where: str) -> str:
    """``text`` with what lies between ``start`` and the next ``end`` replaced by ``body``."""
    a = text.find(start)
    b = text.find(end, a + len(start) - 1) if a >= 0 else -1
    if a < 0 or b < 0:
        raise ValueError(f"{where} has no {start!r} ... {end!r} section to write the package map into")
    return text[: a + len(start)] + body + text[b:]


def write(root: Path) -> list[Path]:
    """Write `readme_table` into ``root/README.md`` and `docstring_list` into the package docstring; return what changed."""
    changed = []
    readme, init = root / "README.md", PACKAGE / "__init__.py"
    for path, start, end, body in ((readme, README_START + "\n", "\n" + README_END, readme_table()),
                                   (init, DOCSTRING_START + "\n\n", "\n\n", docstring_list())):
        text = path.read_text(encoding="utf-8")
        new = _replace(text, start, end, body, str(path))
        if new != text:
            atomic_write(path, new)
            changed.append(path)
    return changed


#: ``(stage, module)`` in pipeline order; the model stage has one package per algorithm.
MAP: tuple[tuple[str, str], ...] = (
    ("upstream: specials, chat templates", "toklab.base.special"),
    ("1 normalizer", "toklab.normalizers"),
    ("2 pre-tokenizer", "toklab.pre_tokenizers"),
    ("3 model: BPE", "toklab.bpe"),
    ("3 model: WordPiece", "toklab.wordpiece"),
    ("3 model: Unigram", "toklab.unigram"),
    ("5 post-processor", "toklab.post_processors"),
    ("decode", "toklab.decoders"),
    ("all stages together", "toklab.pipeline"),
    ("a sentencepiece model", "toklab.sentencepiece"),
    ("its file format", "toklab.sentencepiece.model_file"),
    ("byte-level alphabet, UTF-8", "toklab.base.unicode"),
    ("measuring", "toklab.measure.metrics"),
    ("real vocabularies", "toklab.data.vocabs"),
    ("tokenizer-free input", "toklab.lab.patching"),
)

#: ``(layer, package)`` for every top-level package that is not itself on `MAP`: what the
#: chapters after the pipeline build on, and the tools around the package.
BEYOND: tuple[tuple[str, str], ...] = tuple(
    (layer, f"toklab.{name}") for layer, names in LAYERS for name in names
    if f"toklab.{name}" not in {module for _, module in MAP}
)


@dataclass(frozen=True)
class Pair:
    """A textbook function, its fast partner (dotted names), the test that ties them, and what is faster."""

    what: str
    reference: str
    fast: str
    test: str  # "tests/<folder>/<file>.py::<test function>"
    idea: str


PAIRS: tuple[Pair, ...] = (
    Pair("BPE training", "toklab.bpe.reference.reference_train", "toklab.bpe.trainer.train",
         "tests/bpe/test_fast_vs_reference.py::test_train_equals_reference_train_on_corpus",
         "counts pre-tokens once, updates pair counts only in words holding the merged pair, lazy max-heap"),
    Pair("BPE encoding of a chunk", "toklab.bpe.reference.reference_encode", "toklab.bpe.encode.merge_short",
         "tests/bpe/test_fast_vs_reference.py::test_encode_equals_reference_encode_on_corpus",
         "looks up ranks of concatenations (no merge list needed); a heap for long chunks (merge_long)"),
    Pair("WordPiece training", "toklab.wordpiece.reference.reference_train", "toklab.wordpiece.trainer.train_vocab",
         "tests/wordpiece/test_fast_vs_reference.py::test_train_vocab_equals_reference_train_on_corpus",
         "incremental symbol and pair counts, lazy heap of scores"),
    Pair("WordPiece longest match", "toklab.wordpiece.reference.encode_word",
         "toklab.wordpiece.model.WordPieceModel.encode_word",
         "tests/wordpiece/test_fast_vs_reference.py::test_model_encode_word_equals_encode_word",
         "skips candidates longer than the longest entry; caches words"),
    Pair("BERT normalizer + pre-tokenizer", "toklab.pre_tokenizers.bert.pre_tokenize",
         "toklab.pre_tokenizers.bert.bert_words",
         "tests/pre_tokenizers/test_bert.py::test_bert_words_equals_pre_tokenize_of_normalize_on_the_whole_corpus",
         "one pass with translate tables instead of two stages"),
    Pair("Unigram Viterbi", "toklab.unigram.reference.reference_viterbi", "toklab.unigram.lattice.best_path",
         "tests/unigram/test_fast_vs_reference.py::"
         "test_viterbi_and_forward_equal_reference_viterbi_and_reference_forward",
         "a prefix table bounds the pieces tried at each position"),
    Pair("Unigram forward", "toklab.unigram.reference.reference_forward", "toklab.unigram.lattice.forward_log",
         "tests/unigram/test_fast_vs_reference.py::"
         "test_viterbi_and_forward_equal_reference_viterbi_and_reference_forward",
         "log space (log-sum-exp): no underflow on long texts"),
    Pair("Unigram E-step", "toklab.unigram.reference.reference_expected_counts",
         "toklab.unigram.trainer.expected_counts",
         "tests/unigram/test_fast_vs_reference.py::test_expected_counts_equal_reference_expected_counts",
         "forward-backward on a numpy lattice of every word, instead of enumerating segmentations"),
    Pair("Unigram M-step", "toklab.unigram.reference.reference_m_step", "toklab.unigram.trainer.m_step",
         "tests/unigram/test_fast_vs_reference.py::test_reference_m_step_equals_m_step",
         "numpy arrays over every piece at once"),
    Pair("Unigram pruning loss", "toklab.unigram.reference.reference_prune_loss",
         "toklab.unigram.trainer.prune_losses",
         "tests/unigram/test_fast_vs_reference.py::test_reference_prune_loss_equals_prune_losses",
         "one batched Viterbi for the corpus and one for every candidate's alternative"),
    Pair("sentencepiece BPE segmentation", "toklab.sentencepiece.bpe.reference_bpe_segment",
         "toklab.sentencepiece.bpe.bpe_segment",
         "tests/sentencepiece/test_bpe.py::test_bpe_segment_equals_reference_bpe_segment",
         "a heap of candidate pairs and a linked list instead of rescanning"),
    Pair("normal forms with offsets", "unicodedata.normalize", "toklab.normalizers.forms.normalize_with_offsets",
         "tests/normalizers/test_forms.py::test_normalize_with_offsets_equals_unicodedata_normalize_on_corpus",
         "not faster: the same normal form, plus a map from every output character to its source span"),
)


def resolve(dotted: str) -> Callable:
    """The object a dotted name names: ``"toklab.bpe.trainer.train"``, ``"pkg.mod.Class.method"``."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(f"no module in {dotted!r}")


def source_lines(module: str) -> int:
    """Lines of source of a module, or of every file of a package (its sub-packages included)."""
    mod = importlib.import_module(module)
    path = Path(mod.__file__)
    files = sorted(path.parent.rglob("*.py")) if path.name == "__init__.py" else [path]
    return sum(len(f.read_text(encoding="utf-8").splitlines()) for f in files)


def package_map(entries: tuple[tuple[str, str], ...] = MAP) -> list[tuple[str, str, str, int]]:
    """``(stage, module, first line of its docstring, lines of source)`` for every entry of
    ``entries`` (`MAP`, or `BEYOND`)."""
    rows = []
    for stage, module in entries:
        doc = (importlib.import_module(module).__doc__ or "").strip().splitlines()
        rows.append((stage, module, doc[0] if doc else "", source_lines(module)))
    return rows


if __name__ == "__main__":
    for changed in write(PACKAGE.parents[1]):
        print(f"wrote the package map into {changed}")
    sys.exit(0)
