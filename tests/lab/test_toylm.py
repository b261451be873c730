"""toklab.lab.toylm: the numpy next-token model learns, freezes what it should, and is deterministic."""

from __future__ import annotations

import numpy as np
import pytest

from toklab.bpe import train
from toklab.data import corpus
from toklab.lab import toylm
from toklab.measure import metrics


@pytest.fixture(scope="module")
def data():
    text = corpus.load("en", 60_000)
    tok = train(text, 300)
    return tok, tok.encode_ordinary(text)


def test_training_lowers_the_loss_and_is_deterministic(data):
    tok, ids = data
    a, b = toylm.TiedLM.create(tok.n_vocab, 16, seed=3), toylm.TiedLM.create(tok.n_vocab, 16, seed=3)
    before = a.nll(ids)
    la, lb = a.fit(ids, steps=150, batch_size=64, lr=0.02), b.fit(ids, steps=150, batch_size=64, lr=0.02)
    assert la == lb and np.array_equal(a.E, b.E)
    assert a.nll(ids) < 0.8 * before
    assert metrics.bits_per_byte(a.nll(ids), sum(len(tok.id_to_token(i)) for i in ids)) < 8


def test_nll_matches_prob(data):
    tok, ids = data
    m = toylm.TiedLM.create(tok.n_vocab, 8)
    ids = ids[:500]
    assert np.isclose(m.nll(ids, batch_size=37), -np.log(m.prob(ids[:-1], ids[1:]).astype(np.float64)).sum(), rtol=1e-4)


def test_rows_only_training_freezes_everything_else(data):
    tok, ids = data
    m = toylm.TiedLM.create(tok.n_vocab, 8)
    E, W = m.E.copy(), m.W.copy()
    rows = [5, 260, 299]
    m.fit(ids, steps=30, batch_size=32, rows=rows)
    changed = np.flatnonzero(np.any(m.E != E, axis=1))
    assert set(changed) <= set(rows) and len(changed) > 0
    assert np.array_equal(m.W, W)


def test_too_little_data_is_refused():
    with pytest.raises(ValueError, match="at least two"):
        toylm.TiedLM.create(10).fit([1], steps=5)
