"""Checkers for the coding exercises of §5.4 (special tokens in training).

* ``ch05_4-ex1``, `check_target_mask`: the reader builds the loss mask of a
  right-padded batch from the rows' lengths. Compared with
  `toklab.lab.batching.loss_mask` on random batches where PAD equals EOS and every
  row ends in a real EOS, so a mask built by comparing IDs is caught.
* ``ch05_4-ex2``, `check_packed_attention`: the reader builds the
  block-diagonal causal mask of a packed batch from its document indices.
  Compared with `toklab.lab.batching.block_diagonal_mask` on random packings.

Reported in the format of `toklab.teaching.exercises.harness`.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np

from ...lab.batching import block_diagonal_mask, loss_mask, pack, pad
from .harness import Run, Shown, exercise

__all__ = ["check_target_mask", "check_packed_attention", "reference_target_mask"]

_EOS = 2


def reference_target_mask(ids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """toklab's answer: `toklab.lab.batching.loss_mask` from the lengths."""
    return loss_mask(lengths, np.asarray(ids).shape[1])


def _random_docs(rng: random.Random, n: int) -> list[list[int]]:
    return [[rng.randint(3, 40) for _ in range(rng.randint(0, 9))] + [_EOS] for _ in range(n)]


LARGE_MASK = "large: 256 rows of up to 401 tokens (timed)"
LARGE_ATTENTION = "large: 16 documents packed into rows of 256 (timed)"


def _as_bool_array(got: object) -> np.ndarray:
    return np.asarray(got).astype(bool)


@exercise("ch05_4-ex1", title="The loss mask of a padded batch, PAD = EOS", function="target_mask",
          reference=reference_target_mask, against="toklab.lab.batching.loss_mask")
def check_target_mask(run: Run, fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> None:
    """Check a reader's ``target_mask(ids, lengths) -> (B, T-1) bool`` for right padding."""
    rng = random.Random(0)
    batches = [(f"random batch {trial} (PAD = EOS = {_EOS})", pad(_random_docs(rng, rng.randint(1, 5)), pad_id=_EOS))
               for trial in range(200)]
    long_docs = [[rng.randint(3, 40) for _ in range(rng.randint(0, 400))] + [_EOS] for _ in range(256)]
    batches.append((LARGE_MASK, pad(long_docs, pad_id=_EOS)))
    for what, batch in batches:
        expected, seconds = run.timed(reference_target_mask, batch.ids, batch.lengths)
        large = what == LARGE_MASK
        case = run.case(what, expected=expected.astype(int).tolist(), seconds=seconds if large else None,
                        input=f"target_mask(<ids of shape {batch.ids.shape}>, <{len(batch.lengths)} lengths>)"
                        if large else None, slow_hint=(
                            "compare a row of positions with the lengths once (broadcasting), or fill each row in "
                            "one slice; work per pair of positions grows with the square of the length"))
        got = _as_bool_array(case.call(fn, batch.ids.copy(), batch.lengths.copy()))
        if got.shape != expected.shape:
            case.fail(Shown(f"an array of shape {got.shape}"), f"one entry per target: shape {expected.shape}.")
        if not np.array_equal(got, expected):
            r, t = np.argwhere(got != expected)[0].tolist()
            target = int(batch.ids[r, t + 1])
            hint = (f"row {r}, target {t} (token {target}) differs. "
                    + ("It is the row's real EOS, which must stay in the loss: a mask built by comparing IDs with "
                       "the pad ID removes it, because PAD = EOS. Build the mask from the lengths."
                       if target == _EOS and expected[r, t] else
                       "Target t is token t + 1; it counts when t + 1 < the row's length."))
            case.fail(got.astype(int).tolist(), hint)


@exercise("ch05_4-ex2", title="The attention mask of packed documents", function="packed_attention",
          reference=block_diagonal_mask, against="toklab.lab.batching.block_diagonal_mask")
def check_packed_attention(run: Run, fn: Callable[[np.ndarray], np.ndarray]) -> None:
    """Check a reader's ``packed_attention(doc) -> (N, T, T) bool``."""
    rng = random.Random(1)
    packings = []
    for trial in range(100):
        docs = [d[:-1] for d in _random_docs(rng, rng.randint(1, 5))]
        packings.append((f"random packing {trial}", pack(docs, rng.randint(2, 10), eos_id=_EOS, pad_id=0)))
    long_docs = [[rng.randint(3, 40) for _ in range(rng.randint(1, 120))] for _ in range(16)]
    packings.append((LARGE_ATTENTION, pack(long_docs, 256, eos_id=_EOS, pad_id=0)))
    for what, packed in packings:
        expected, seconds = run.timed(block_diagonal_mask, packed.doc)
        large = what == LARGE_ATTENTION
        case = run.case(what, expected=Shown(f"a ({', '.join(map(str, expected.shape))}) mask"),
                        input=f"packed_attention(<doc of shape {packed.doc.shape}>)" if large else
                        f"packed_attention({packed.doc.tolist()})", seconds=seconds if large else None, slow_hint=(
                            "compare the document index of every query with every key at once (broadcasting "
                            "doc[:, :, None] == doc[:, None, :]) and keep the lower triangle; a loop over documents "
                            "inside the loops over queries and keys multiplies the work"))
        got = _as_bool_array(case.call(fn, packed.doc.copy()))
        if got.shape != expected.shape:
            case.fail(Shown(f"an array of shape {got.shape}"), f"one (T, T) mask per row: shape {expected.shape}.")
        if not np.array_equal(got, expected):
            r, i, j = np.argwhere(got != expected)[0].tolist()
            di, dj = int(packed.doc[r, i]), int(packed.doc[r, j])
            why = ("a query may not attend to another document, even an earlier one"
                   if di != dj and j <= i else
                   "a query may not attend to a later key" if j > i else
                   "padding (document -1) attends to nothing" if di < 0 else
                   "a query attends to every earlier key of its own document, itself included")
            case.fail(Shown(f"{bool(got[r, i, j])} at row {r}, query {i}, key {j}"),
                      f"query {i} is in document {di}, key {j} in document {dj}: {why}.")
