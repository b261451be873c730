"""Checkers for the coding exercises of §4.3 (vocabulary extension).

* ``ch04_3-ex1``, `check_mean_init(fn)`: the reader grows an embedding matrix for a
  tokenizer extended with lexical tokens, called as ``fn(old, new, embedding)``,
  initialising each new row as the mean of the rows of the old tokens it joins.
  Compared with `toklab.lab.extension.resize_embeddings` on a small trained tokenizer
  extended with words of different lengths; the input array must not be modified.

Reports in the format of `toklab.teaching.exercises.harness`, with a hint at the usual mistake.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np

from ...bpe import ByteBPE, train
from ...data import corpus
from ...lab.extension import extend, old_segmentation, resize_embeddings
from .harness import Run, Shown, exercise

__all__ = ["check_mean_init"]


#: Lexical additions of different shapes: several words, one long word, words sharing a prefix.
_ADDITIONS = (
    (" tokenizer", " vocabulary", " extension"),
    (" internationalization",),
    (" token", " tokens", " tokenizer"),
)


@lru_cache(maxsize=None)
def _tokenizers(words: tuple[str, ...]) -> tuple[ByteBPE, ByteBPE]:
    old = _old()
    return old, extend(old, list(words), special=False)


@lru_cache(maxsize=None)
def _old() -> ByteBPE:
    return train(corpus.load("en", 80_000), 400)


def _reference_mean_init(old: ByteBPE, new: ByteBPE, embedding: np.ndarray) -> np.ndarray:
    return resize_embeddings(old, new, embedding).embedding


def _row_hint(old: ByteBPE, new: ByteBPE, emb: np.ndarray, i: int, row: np.ndarray) -> str:
    parts = old_segmentation(old, new)[i]
    if np.allclose(row, 0):
        return "new rows start as the mean of the rows of the old tokens the new token joins, not at zero."
    if np.allclose(row, emb[parts].sum(axis=0)):
        return "that is the sum of the old rows; divide by how many there are (the mean)."
    if np.allclose(row, emb[: old.n_vocab].mean(axis=0)):
        return ("that is the mean of *all* old rows (Hugging Face's mean_resizing, torchtune's "
                "resize): a sound choice with another aim, keeping the new tokens' output "
                "logits small; this exercise asks for the mean of the token's own old "
                "segmentation (toklab.lab.extension.old_segmentation).")
    bytes_mean = emb[list(new.id_to_token(i))].mean(axis=0)
    if np.allclose(row, bytes_mean):
        return ("that averages the rows of the token's single *bytes*; average its old segmentation instead "
                "(toklab.lab.extension.old_segmentation), the tokens the old tokenizer actually produced for it.")
    return "row i is the mean of embedding[old_segmentation(old, new)[i]]."


@exercise("ch04_3-ex1", title="Mean initialisation of new embedding rows", function="mean_init",
          reference=_reference_mean_init, against="toklab.lab.extension.resize_embeddings")
def check_mean_init(run: Run, fn: Callable[[ByteBPE, ByteBPE, np.ndarray], np.ndarray]) -> None:
    """Check a reader's ``mean_init(old, new, embedding) -> grown embedding``."""
    rng = np.random.default_rng(0)
    for words in _ADDITIONS:
      old, new = _tokenizers(words)
      for dim in (1, 3, 8, 16):
        emb = rng.normal(size=(old.n_vocab, dim))
        before = emb.copy()
        expected = _reference_mean_init(old, new, emb)
        case = run.case(f"added {', '.join(map(repr, words))}, width {dim}", expected=Shown(
            f"a ({new.n_vocab}, {dim}) array: the old rows, then one mean row per new token"),
            input=f"mean_init(old, new, embedding of shape {emb.shape})")
        got = case.call(fn, old, new, emb)
        if not np.array_equal(emb, before):
            case.fail(Shown("an input embedding that was changed in place"),
                      "return a new array; the caller's embedding (and any optimizer state tied to it) must stay as it was.")
        got = np.asarray(got)
        if got.shape != expected.shape:
            case.fail(Shown(f"an array of shape {got.shape}"), f"one row per ID of the new tokenizer: {new.n_vocab} rows.")
        if not np.array_equal(got[: old.n_vocab], emb):
            case.fail(Shown("an array whose old rows changed"), "copy the old rows unchanged: old IDs keep their embeddings.")
        for i in range(old.n_vocab, new.n_vocab):
            if not np.allclose(got[i], expected[i]):
                case.fail(Shown(f"row {i} ({new.id_to_token(i)!r}) = {np.round(got[i][:3], 4).tolist()}..."),
                          _row_hint(old, new, emb, i, got[i]), expected=Shown(f"{np.round(expected[i][:3], 4).tolist()}..."))
    old, new = _tokenizers(_LARGE_WORDS)
    emb = rng.normal(size=(old.n_vocab, 512))
    expected, seconds = run.timed(_reference_mean_init, old, new, emb)
    case = run.case(LARGE, expected=Shown(f"a ({new.n_vocab}, 512) array"), seconds=seconds,
                    input=f"mean_init(old, new, embedding of shape {emb.shape})", slow_hint=(
                        "segment the new tokens with the old tokenizer once (old_segmentation(old, new)) and take "
                        "one mean per new row; recomputing the segmentation for every row repeats all of it"))
    got = np.asarray(case.call(fn, old, new, emb))
    if got.shape != expected.shape or not np.allclose(got, expected):
        case.fail(Shown(f"an array of shape {got.shape} that differs"), "row i is the mean of "
                  "embedding[old_segmentation(old, new)[i]], after the old rows copied unchanged.")


#: Words the large case adds: many, of every length.
_LARGE_WORDS = tuple(f" {w}" for w in (
    "tokenizer vocabulary extension embedding initialisation segmentation normalization pretokenization "
    "byte merge rank frequency corpus language model training inference decoding encoding unicode grapheme "
    "emoji character sentence paragraph document dataset benchmark evaluation perplexity entropy compression "
    "fertility premium latency throughput").split())
LARGE = f"large: {len(_LARGE_WORDS)} words added, width 512 (timed)"
