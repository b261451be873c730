"""`toklab.lab.patching.byte_model`: the ByT5-style byte vocabulary, span corruption, the next-byte n-gram model."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab.data import corpus
from toklab.lab import patching as P


# --------------------------------------------------------------------------- ByteVocab


def test_byt5_vocabulary_size_is_computed():
    v = P.ByteVocab()
    assert (len(v.specials), 256, v.sentinels) == (3, 256, 125)
    assert v.n_vocab == 3 + 256 + 125 == 384
    assert P.ByteVocab(sentinels=0).n_vocab == 259


def test_byte_vocab_ids_and_sentinels():
    v = P.ByteVocab()
    assert v.encode("A") == [ord("A") + 3, 1]
    assert v.encode("", eos=False) == []
    assert v.sentinel_id(0) == 383 and v.sentinel_id(124) == 259
    with pytest.raises(ValueError, match="out of range"):
        v.sentinel_id(125)
    # T5's own byte vocabulary has no extra IDs: sentinels take the top byte values
    t5 = P.ByteVocab(sentinels=0)
    assert t5.sentinel_id(0) == 258 and t5.decode_bytes([t5.sentinel_id(0)]) == b"\xff"


@given(st.text(max_size=100))
def test_byte_vocab_round_trip(text):
    v = P.ByteVocab()
    ids = v.encode(text)
    assert ids[-1] == 1 and all(3 <= i < 259 for i in ids[:-1])
    assert v.decode(ids) == text


def test_byte_vocab_errors():
    v = P.ByteVocab()
    with pytest.raises(ValueError, match=r"0\.\.383"):
        v.decode([384])
    with pytest.raises(ValueError, match="not in this vocabulary"):
        v.decode([-1])
    with pytest.raises(TypeError, match="str"):
        v.encode(b"bytes")
    with pytest.raises(ValueError, match="distinct"):
        P.ByteVocab(specials=("<pad>", "<pad>"))
    with pytest.raises(ValueError, match="needs '</s>'"):
        P.ByteVocab(specials=("<pad>",)).encode("x")
    assert v.decode(v.encode("\u6ce8")[:2]) == "\ufffd"  # a partial character is replaced, not raised


def test_span_corruption_lengths():
    # ByT5's pre-training: 1024 input bytes, mean span 20, 15% masked -> 189 target IDs
    assert P.span_corruption_lengths(1193, 0.15, 20) == (1024, 189, 9)
    assert P.span_corruption_lengths(1194, 0.15, 20)[0] == 1025  # one byte more no longer fits
    assert P.span_corruption_lengths(0) == (1, 1, 0)
    inputs, targets, spans = P.span_corruption_lengths(1000, 0.15, 3.0)
    assert inputs + targets == 1000 + 2 * spans + 2
    with pytest.raises(ValueError, match="raw_length"):
        P.span_corruption_lengths(-1)
    with pytest.raises(ValueError, match="noise_density"):
        P.span_corruption_lengths(10, noise_density=1.0)


# --------------------------------------------------------------------------- the n-gram model


def reference_distribution(train: bytes, order: int, discount: float, context: bytes) -> list[float]:
    """Interpolated absolute discounting, written out with dicts, for one context."""
    counts = [defaultdict(Counter) for _ in range(order)]
    for k in range(order):
        for i in range(k, len(train)):
            counts[k][train[i - k : i]][train[i]] += 1
    probs = [1 / 256] * 256
    for k in range(order):
        if k > len(context):
            break
        h = context[len(context) - k :] if k else b""
        table = counts[k].get(h)
        if not table:
            continue
        total, types = sum(table.values()), len(table)
        probs = [discount * types / total * p for p in probs]
        for b, c in table.items():
            probs[b] += (c - discount) / total
    return probs


@pytest.mark.parametrize("order", [1, 2, 3, 5])
def test_ngram_equals_plain_reference(order):
    rng = np.random.default_rng(order)
    train = bytes(rng.choice(list(b"abcab \n\xe6\xb3\xa8"), size=300))
    test = bytes(rng.choice(list(b"abcdab \n\xe6\xb3"), size=60))
    m = P.ByteNgramModel.train(train, order=order, discount=0.6)
    got = m.predict(test)
    for i in range(len(test)):
        want = reference_distribution(train, order, 0.6, test[:i])
        np.testing.assert_allclose(got[i], want, rtol=1e-12, atol=1e-15)


def test_ngram_distributions_are_proper_and_causal():
    text = corpus.load("en", max_bytes=60_000).encode()
    m = P.ByteNgramModel.train(text[:50_000], order=5)
    test = text[50_000:55_000]
    p = m.predict(test)
    assert p.shape == (len(test), 256)
    assert (p > 0).all() and np.allclose(p.sum(axis=1), 1.0)
    e = m.entropies(test)
    assert (e >= 0).all() and (e <= 8 + 1e-9).all()
    np.testing.assert_allclose(e, -(p * np.log2(p)).sum(axis=1))
    s = m.surprisals(test)
    np.testing.assert_allclose(s, -np.log2(p[np.arange(len(test)), list(test)]))
    # causal: a prefix gets the same entropies as the start of the whole text
    np.testing.assert_array_equal(m.entropies(test[:1234]), e[:1234])
    # chunking (4096 bytes) does not change anything across chunk borders
    np.testing.assert_array_equal(m.entropies(test[4000:4200]), P.ByteNgramModel.entropies(m, test[4000:4200]))
    assert 1.0 < m.bits_per_byte(test) < 4.0


@settings(max_examples=40, deadline=None)
@given(st.binary(min_size=1, max_size=300), st.binary(max_size=80), st.integers(1, 8))
def test_ngram_causal_on_arbitrary_bytes(train, test, order):
    m = P.ByteNgramModel.train(train, order=order)
    e = m.entropies(test)
    assert len(e) == len(test) and np.isfinite(e).all()
    for cut in (0, len(test) // 2):
        np.testing.assert_array_equal(m.entropies(test[:cut]), e[:cut])


def test_ngram_errors():
    with pytest.raises(ValueError, match="order"):
        P.ByteNgramModel.train(b"abc", order=0)
    with pytest.raises(ValueError, match="order"):
        P.ByteNgramModel.train(b"abc", order=9)
    with pytest.raises(ValueError, match="discount"):
        P.ByteNgramModel.train(b"abc", discount=1.0)
    with pytest.raises(ValueError, match="empty"):
        P.ByteNgramModel.train(b"")
    with pytest.raises(TypeError, match="encode"):
        P.ByteNgramModel.train("text")
    m = P.ByteNgramModel.train(b"abc")
    with pytest.raises(ValueError, match="empty"):
        m.bits_per_byte(b"")
    assert m.entropies(b"").shape == (0,) and m.predict(b"").shape == (0, 256)
