"""The package's map of itself (§7): where each pipeline stage lives, and every reference-fast pair.

`MAP` lists the modules in pipeline order with the stage each implements, `BEYOND` every
other module with the part of the book that uses it; `package_map`
reads each module's own docstring for its one-line summary, so the table in the book is
the package's description of itself. `PAIRS` lists every textbook function beside its
fast partner and the test that ties the two; ``tests/teaching/test_package_map.py`` checks that every
name resolves, that each fast docstring says what it must equal, that each test exists
and is named after the reference, and that no fast function declared "Must equal ..."
anywhere in the package is missing from the list.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MAP", "BEYOND", "Pair", "PAIRS", "resolve", "package_map", "source_lines"]

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

#: ``(where in the book, module)`` for every module that is not a stage: what the chapters
#: after the pipeline build on, and the tools around the package.
BEYOND: tuple[tuple[str, str], ...] = (
    ("§1 measuring: the bundled corpus", "toklab.data.corpus"),
    ("§2-§3 seeing tokens", "toklab.measure.viz"),
    ("§3.2 sentencepiece trained from raw text", "toklab.sentencepiece.trainer"),
    ("§3.2 sentencepiece in HF terms", "toklab.sentencepiece.hf"),
    ("§3.2 other libraries' files", "toklab.formats.hf_json"),
    ("§4.2 real vocabularies' facts", "toklab.measure.vocab_facts"),
    ("§4.3 vocabulary extension", "toklab.lab.extension"),
    ("§4.3 a tiny model with a tied head", "toklab.lab.tinylm"),
    ("§5.1 numbers", "toklab.lab.digits"),
    ("§5.1 code whitespace", "toklab.lab.indentation"),
    ("§5.2 glitch tokens", "toklab.lab.glitch"),
    ("§5.2 tiny models for demonstrations", "toklab.lab.toylm"),
    ("§5.3 token healing", "toklab.lab.healing"),
    ("§5.4 batches and masks", "toklab.lab.batching"),
    ("§5.5 offsets", "toklab.pipeline.offsets"),
    ("§5.7 versioning", "toklab.pipeline.versioning"),
    ("§7 this map", "toklab.teaching.package_map"),
    ("§8 drills", "toklab.teaching.drills"),
    ("appendix: the invariants", "toklab.teaching.sanity"),
    ("exercises: the checkers", "toklab.teaching.exercises"),
    ("the command line", "toklab.cli"),
    ("argument checks", "toklab.base.checks"),
    ("the chapters' helpers", "toklab.teaching.book"),
    ("the HTML pages", "toklab.teaching.sphinxext"),
    ("old name of the regex pre-tokenizer", "toklab.pre_tokenizers.patterns"),
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
    Pair("sentencepiece BPE segmentation", "toklab.sentencepiece.reference_bpe_segment",
         "toklab.sentencepiece.bpe_segment",
         "tests/sentencepiece/test_bpe.py::test_bpe_segment_equals_reference_bpe_segment",
         "a heap of candidate pairs and a linked list instead of rescanning"),
    Pair("normal forms with offsets", "unicodedata.normalize", "toklab.normalizers.offsets.normalize_with_offsets",
         "tests/normalizers/test_offsets.py::test_normalize_with_offsets_equals_unicodedata_normalize_on_corpus",
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
    """Lines of source of a module, or of every file of a package."""
    mod = importlib.import_module(module)
    path = Path(mod.__file__)
    files = sorted(path.parent.glob("*.py")) if path.name == "__init__.py" else [path]
    return sum(len(f.read_text(encoding="utf-8").splitlines()) for f in files)


def package_map(entries: tuple[tuple[str, str], ...] = MAP) -> list[tuple[str, str, str, int]]:
    """``(stage, module, first line of its docstring, lines of source)`` for every entry of
    ``entries`` (`MAP`, or `BEYOND`)."""
    rows = []
    for stage, module in entries:
        doc = (importlib.import_module(module).__doc__ or "").strip().splitlines()
        rows.append((stage, module, doc[0] if doc else "", source_lines(module)))
    return rows
