"""Checkers for the coding exercises of §4.3 (vocabulary extension).

* `check_mean_init` -- the reader grows an embedding matrix for a tokenizer extended
  with lexical tokens, initialising each new row as the mean of the rows of the old
  tokens it joins. Compared with `toklab.extension.resize_embeddings` on a small
  trained tokenizer extended with words of different lengths; the input array must
  not be modified.

The checker raises AssertionError naming the token and what differed, and returns a
one-line success message otherwise.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import corpus
from ..bpe import ByteBPE, train
from ..extension import extend, resize_embeddings

__all__ = ["check_mean_init"]


def check_mean_init(fn: Callable[[ByteBPE, ByteBPE, np.ndarray], np.ndarray]) -> str:
    """Check a reader's ``mean_init(old, new, embedding) -> grown embedding``."""
    old = train(corpus.load("en", 80_000), 400)
    new = extend(old, [" tokenizer", " vocabulary", " extension"], special=False)
    rng = np.random.default_rng(0)
    for dim in (3, 8):
        emb = rng.normal(size=(old.n_vocab, dim))
        before = emb.copy()
        expected = resize_embeddings(old, new, emb).embedding
        try:
            got = np.asarray(fn(old, new, emb))
        except Exception as exc:
            raise AssertionError(f"mean_init raised {type(exc).__name__}: {exc}") from None
        assert np.array_equal(emb, before), "mean_init modified the input embedding; return a new array"
        assert got.shape == expected.shape, f"grown embedding has shape {got.shape}, expected {expected.shape}"
        assert np.array_equal(got[: old.n_vocab], emb), "the old rows changed"
        for i in range(old.n_vocab, new.n_vocab):
            if not np.allclose(got[i], expected[i]):
                raise AssertionError(
                    f"row {i} ({new.id_to_token(i)!r}) is {got[i][:3]}..., expected the mean of its old "
                    f"segmentation's rows {expected[i][:3]}..."
                )
    return f"mean_init: OK ({new.n_vocab - old.n_vocab} new rows, two widths)"
