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


def _as_bool_array(got: object) -> np.ndarray:
    return np.asarray(got).astype(bool)


@exercise("ch05_4-ex1", title="The loss mask of a padded batch, PAD = EOS", function="target_mask",
          reference=reference_target_mask, against="toklab.lab.batching.loss_mask")
def check_target_mask(run: Run, fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> None:
    """Check a reader's ``target_mask(ids, lengths) -> (B, T-1) bool`` for right padding."""
    rng = random.Random(0)
    for trial in range(200):
        batch = pad(_random_docs(rng, rng.randint(1, 5)), pad_id=_EOS)
        expected = batch.loss_mask()
        case = run.case(f"random batch {trial} (PAD = EOS = {_EOS})", expected=expected.astype(int).tolist())
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
    for trial in range(100):
        docs = [d[:-1] for d in _random_docs(rng, rng.randint(1, 5))]
        packed = pack(docs, rng.randint(2, 10), eos_id=_EOS, pad_id=0)
        expected = block_diagonal_mask(packed.doc)
        case = run.case(f"random packing {trial}", expected=Shown(f"a ({', '.join(map(str, expected.shape))}) mask"),
                        input=f"packed_attention({packed.doc.tolist()})")
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
