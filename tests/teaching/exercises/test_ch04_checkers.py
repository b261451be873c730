"""§4's checkers reject the other typical mistakes (the registry test covers one slip each)."""

from __future__ import annotations

import numpy as np
import pytest

from toklab.bpe import ByteBPE
from toklab.lab import extension as ext
from toklab.teaching.exercises import CheckFailure, ch04_1, ch04_3


def test_truncate_one_merge_per_token_is_rejected():
    with pytest.raises(CheckFailure, match="keep vocab_size - 256 merges"):
        ch04_1.check_truncate(lambda tok, size: ByteBPE(tok.merges[:size], pattern=tok.pattern))


def _mean_init(old, new, emb):
    out = np.zeros((new.n_vocab, emb.shape[1]))
    out[: emb.shape[0]] = emb
    for i, parts in ext.old_segmentation(old, new).items():
        out[i] = emb[parts].mean(axis=0)
    return out


def test_mean_of_all_rows_and_in_place_edits_are_rejected():
    def mean_of_all(old, new, emb):
        out = _mean_init(old, new, emb)
        out[emb.shape[0]:] = emb.mean(axis=0)
        return out

    with pytest.raises(CheckFailure, match="old_segmentation") as failure:
        ch04_3.check_mean_init(mean_of_all)
    assert "mean of *all* old rows" in str(failure.value)  # named as a choice, with its aim

    def in_place(old, new, emb):
        grown = _mean_init(old, new, emb)
        emb[0] = 0.0
        return grown

    with pytest.raises(CheckFailure, match="return a new array"):
        ch04_3.check_mean_init(in_place)
