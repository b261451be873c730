"""Checkers for the coding exercises of §5.4 (special tokens in training).

* `check_target_mask` -- the reader builds the loss mask of a right-padded
  batch from the rows' lengths. Compared with `toklab.batching.loss_mask` on
  random batches where PAD equals EOS and every row ends in a real EOS, so a
  mask built by comparing IDs is caught.
* `check_packed_attention` -- the reader builds the block-diagonal causal mask
  of a packed batch from its document indices. Compared with
  `toklab.batching.block_diagonal_mask` on random packings.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np

from ..batching import block_diagonal_mask, pack, pad

__all__ = ["check_target_mask", "check_packed_attention"]

_EOS = 2


def _random_docs(rng: random.Random, n: int) -> list[list[int]]:
    return [[rng.randint(3, 40) for _ in range(rng.randint(0, 9))] + [_EOS] for _ in range(n)]


def check_target_mask(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> str:
    """Check a reader's ``target_mask(ids, lengths) -> (B, T-1) bool`` for right padding."""
    rng = random.Random(0)
    for trial in range(200):
        batch = pad(_random_docs(rng, rng.randint(1, 5)), pad_id=_EOS, length=None)
        expected = batch.loss_mask()
        got = np.asarray(fn(batch.ids.copy(), batch.lengths.copy()))
        if got.shape != expected.shape or not np.array_equal(got.astype(bool), expected):
            where = np.argwhere(got.astype(bool) != expected) if got.shape == expected.shape else None
            detail = (f"first difference at (row, target) {where[0].tolist()}" if where is not None and len(where)
                      else f"shape {got.shape}, expected {expected.shape}")
            raise AssertionError(
                f"target_mask on ids={batch.ids.tolist()}, lengths={batch.lengths.tolist()} (PAD = EOS = {_EOS}): "
                f"{detail}. Every real token after the first is a target, the final EOS included; "
                "build the mask from the lengths, not by comparing IDs with the pad ID"
            )
    return "target_mask: all 200 random batches agree with toklab.batching.loss_mask"


def check_packed_attention(fn: Callable[[np.ndarray], np.ndarray]) -> str:
    """Check a reader's ``packed_attention(doc) -> (N, T, T) bool``."""
    rng = random.Random(1)
    for trial in range(100):
        docs = [d[:-1] for d in _random_docs(rng, rng.randint(1, 5))]
        packed = pack(docs, rng.randint(2, 10), eos_id=_EOS, pad_id=0)
        expected = block_diagonal_mask(packed.doc)
        got = np.asarray(fn(packed.doc.copy()))
        if got.shape != expected.shape or not np.array_equal(got.astype(bool), expected):
            detail = f"shape {got.shape}, expected {expected.shape}"
            if got.shape == expected.shape:
                r, i, j = np.argwhere(got.astype(bool) != expected)[0].tolist()
                detail = (f"row {r}: query {i} (document {packed.doc[r, i]}) and key {j} (document "
                          f"{packed.doc[r, j]}) should be {'allowed' if expected[r, i, j] else 'masked'}")
            raise AssertionError(f"packed_attention on doc={packed.doc.tolist()}: {detail}")
    return "packed_attention: all 100 random packings agree with toklab.batching.block_diagonal_mask"
