"""toklab.lab.glitch and toklab.lab.toylm: vocabulary analysis and the untouched-row mechanism."""

from __future__ import annotations

import numpy as np
import pytest

import toklab
from toklab.lab import glitch
from toklab.lab.toylm import BigramLM, EmbeddingLM

REAL_NAMES = ("r50k_base", "cl100k_base", "o200k_base")


@pytest.mark.parametrize("name", REAL_NAMES)
def test_partial_and_not_self_encoding_tokens(real, name):
    _, tok, enc = real(name)
    partial = glitch.partial_utf8_tokens(tok)
    alone = glitch.not_self_encoding(tok)
    for i in partial:
        with pytest.raises(UnicodeDecodeError):
            tok.vocab[i].decode("utf-8")
    # tiktoken agrees on every one: its own encoding of the text is not [i]
    for i in alone:
        assert enc.encode_ordinary(tok.vocab[i].decode("utf-8")) != [i]
    assert set(partial).isdisjoint(alone)
    # every single byte >= 0x80 is a partial character
    assert {tok.token_to_id(bytes([b])) for b in range(0x80, 0x100)} <= set(partial)
    # and each token unreachable alone occurs inside a slightly longer text
    for i in alone:
        witness = glitch.find_context(tok, i)
        assert witness is not None and i in enc.encode_ordinary(witness)


def test_find_context_errors_and_misses():
    tok = toklab.ByteBPE.from_tiktoken("cl100k_base")
    with pytest.raises(ValueError, match="not valid UTF-8"):
        glitch.find_context(tok, tok.token_to_id(b"\xe6"))
    hello = tok.token_to_id(b"hello")
    assert glitch.find_context(tok, tok.token_to_id(b" I"), chars="", width=2) is None  # nothing tried
    assert glitch.find_context(tok, hello, chars=" ") == "hello "


def test_norm_helpers():
    m = np.array([[3.0, 4.0], [0.0, 0.0], [1.0, 0.0]])
    assert glitch.embedding_norms(m).tolist() == [5.0, 0.0, 1.0]
    assert glitch.lowest(np.array([2.0, 1.0, 1.0, 0.0]), 3).tolist() == [3, 1, 2]
    with pytest.raises(ValueError):
        glitch.lowest(np.zeros(2), 3)
    with pytest.raises(ValueError):
        glitch.embedding_norms(np.zeros(3))
    assert glitch.token_counts([1, 1, 3], 5).tolist() == [0, 2, 0, 1, 0]
    with pytest.raises(ValueError):
        glitch.token_counts([5], 5)


def test_untouched_rows_keep_their_initial_values_and_have_the_lowest_norms():
    rng = np.random.default_rng(0)
    used = np.arange(0, 60)  # tokens 60..99 never occur
    ids = rng.choice(used, 5000)
    model = EmbeddingLM(100, 8, seed=1)
    losses = model.fit(ids, steps=200, batch_size=64, lr=3e-2)
    assert losses[-1] < losses[0]
    unchanged = (model.E == model.E0).all(axis=1)
    assert np.array_equal(unchanged, model.input_counts == 0)
    assert unchanged[60:].all() and not unchanged[:60].any()
    low = glitch.lowest(glitch.embedding_norms(model.E), 40)
    assert set(low.tolist()) == set(range(60, 100))
    # never-target tokens: their unembedding columns all moved the same way
    moved = (model.U - model.U0)[:, 60:]
    moved /= np.linalg.norm(moved, axis=0)
    assert (moved.T @ moved).min() > 0.9
    assert model.nll(ids[:1000]) < 999 * np.log(100)


def test_bigram_lm():
    ids = [1, 2, 1, 2, 1, 3]
    lm = BigramLM(ids, 5)
    assert lm.pair_count(1, 2) == 2 and lm.pair_count(1, 3) == 1 and lm.pair_count(2, 3) == 0
    lp = lm.next_log_probs([0, 1])
    assert np.isclose(np.exp(lp).sum(), 1.0) and lp.argmax() == 2
    assert np.isclose(np.exp(lm.next_log_probs([])).sum(), 1.0)
    assert np.isclose(np.exp(lm.next_log_probs([4])).sum(), 1.0)  # never a previous token
    with pytest.raises(ValueError):
        BigramLM([1], 5)
    with pytest.raises(ValueError, match="outside"):
        BigramLM([1, 7], 5)
    with pytest.raises(ValueError, match="outside"):
        lm.next_log_probs([9])
    seq = [1, 2, 4, 1, 3, 0]
    slow = -sum(lm.next_log_probs(seq[:k])[seq[k]] for k in range(1, len(seq)))
    assert np.isclose(lm.nll(seq), slow)
