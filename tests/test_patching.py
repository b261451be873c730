"""toklab.patching: byte vocabulary, next-byte model, fixed and entropy patches, hash embeddings."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections import Counter, defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab import corpus
from toklab import patching as P

finite = st.floats(min_value=-20, max_value=20, allow_nan=False, allow_infinity=False)


@st.composite
def data_and_entropies(draw, min_size=0):
    data = draw(st.binary(min_size=min_size, max_size=200))
    ent = draw(st.lists(finite, min_size=len(data), max_size=len(data)))
    return data, np.array(ent, dtype=np.float64)


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


# --------------------------------------------------------------------------- patches


@given(st.binary(max_size=300), st.integers(1, 40))
def test_fixed_patches_concatenate(data, size):
    patches = P.fixed_patches(data, size)
    assert b"".join(patches) == data
    assert all(len(p) == size for p in patches[:-1])
    assert all(0 < len(p) <= size for p in patches)
    assert len(patches) == math.ceil(len(data) / size)


@given(data_and_entropies(), finite, st.sampled_from(P.RULES))
def test_entropy_patches_concatenate(pair, threshold, rule):
    data, ent = pair
    patches = P.entropy_patches(data, ent, threshold=threshold, rule=rule)
    assert b"".join(patches) == data
    assert all(patches)  # no empty patch
    starts = P.patch_starts(ent, threshold, rule)
    assert len(starts) == len(patches)
    assert P.split_at(data, starts) == patches


@given(data_and_entropies(min_size=1), finite, finite, st.sampled_from(P.RULES))
def test_patch_count_is_monotone_in_threshold(pair, t1, t2, rule):
    _, ent = pair
    lo, hi = sorted((t1, t2))
    n_lo = len(P.patch_starts(ent, lo, rule))
    n_hi = len(P.patch_starts(ent, hi, rule))
    assert n_lo >= n_hi >= 1
    # the boundaries at the higher threshold are a subset of those at the lower one
    assert set(P.patch_starts(ent, hi, rule)) <= set(P.patch_starts(ent, lo, rule))


def test_global_rule_by_hand():
    ent = [0.5, 3.0, 1.0, 2.5, 2.5, 2.0]
    assert P.patch_starts(ent, 2.0, "global").tolist() == [0, 1, 3, 4]  # 2.0 is not > 2.0
    assert P.entropy_patches(b"abcdef", ent, 2.0) == [b"a", b"bc", b"d", b"ef"]
    assert P.patch_starts(ent, 10.0).tolist() == [0]  # nothing is above: one patch
    assert P.patch_starts(ent, -1.0).tolist() == list(range(6))  # everything: one byte each


def test_monotonic_rule_by_hand():
    ent = [0.5, 3.0, 1.0, 2.5, 2.5, 2.0]  # rises: 2.5, -2.0, 1.5, 0.0, -0.5
    assert P.patch_starts(ent, 1.0, "monotonic").tolist() == [0, 1, 3]
    assert P.patch_starts(ent, 1.5, "monotonic").tolist() == [0, 1]  # 1.5 is not > 1.5
    # a high plateau: the global rule cuts every byte, the monotonic rule only where it rises
    plateau = [0.1, 4.0, 4.0, 4.0, 0.2, 4.1]
    assert P.patch_starts(plateau, 1.0, "global").tolist() == [0, 1, 2, 3, 5]
    assert P.patch_starts(plateau, 1.0, "monotonic").tolist() == [0, 1, 5]
    # a slow climb never triggers the monotonic rule, though the level ends high
    climb = [0.0, 0.9, 1.8, 2.7, 3.6]
    assert P.patch_starts(climb, 1.0, "monotonic").tolist() == [0]
    assert P.patch_starts(climb, 1.0, "global").tolist() == [0, 2, 3, 4]


def test_patching_errors():
    for size in (0, -3, 2.5, True, None):
        with pytest.raises(ValueError, match="positive int"):
            P.fixed_patches(b"abc", size)
    with pytest.raises(ValueError, match="3 bytes"):
        P.entropy_patches(b"abc", [1.0, 2.0], threshold=1.0)
    with pytest.raises(ValueError, match="unknown rule 'local'"):
        P.entropy_patches(b"ab", [1.0, 2.0], threshold=1.0, rule="local")
    with pytest.raises(ValueError, match="finite"):
        P.patch_starts([1.0, float("nan")], 1.0)
    with pytest.raises(ValueError, match="one-dimensional"):
        P.patch_starts([[1.0, 2.0]], 1.0)
    with pytest.raises(ValueError, match="NaN"):
        P.patch_starts([1.0], float("nan"))
    with pytest.raises(TypeError, match="encode"):
        P.fixed_patches("abc", 2)
    with pytest.raises(TypeError, match="bytes-like"):
        P.entropy_patches([1, 2], [1.0, 2.0], 1.0)
    with pytest.raises(ValueError, match="start at 0"):
        P.split_at(b"abc", [1])
    with pytest.raises(ValueError, match="strictly increasing"):
        P.split_at(b"abc", [0, 2, 2])
    with pytest.raises(ValueError, match="strictly increasing"):
        P.split_at(b"abc", [0, 3])
    assert P.entropy_patches(b"", [], 1.0) == [] and P.fixed_patches(b"", 4) == []


@settings(max_examples=60, deadline=None)
@given(data_and_entropies(min_size=1), st.floats(1.0, 50.0), st.sampled_from(P.RULES))
def test_threshold_for_mean_size_is_the_best_reachable(pair, target, rule):
    _, ent = pair
    n = len(ent)
    t = P.threshold_for_mean_size(ent, target, rule)
    got = n / len(P.patch_starts(ent, t, rule))
    # brute force over every threshold that changes the patch count
    scores = ent[1:] if rule == "global" else np.diff(ent)
    candidates = list(scores) + [min(scores, default=0.0) - 1.0, max(scores, default=0.0) + 1.0]
    best = min(abs(n / len(P.patch_starts(ent, c, rule)) - target) for c in candidates)
    assert abs(got - target) == pytest.approx(best)


def test_threshold_for_mean_size_on_real_entropies():
    text = corpus.load("en", max_bytes=80_000).encode()
    m = P.ByteNgramModel.train(text[:60_000], order=4)
    e = m.entropies(text[60_000:])
    for rule in P.RULES:
        for target in (2.0, 4.5, 8.0):
            t = P.threshold_for_mean_size(e, target, rule)
            mean = len(e) / len(P.patch_starts(e, t, rule))
            assert abs(mean - target) < 0.05
    with pytest.raises(ValueError, match=">= 1"):
        P.threshold_for_mean_size(e, 0.5)
    with pytest.raises(ValueError, match="empty"):
        P.threshold_for_mean_size([], 4.0)
    with pytest.raises(ValueError, match="unknown rule"):
        P.threshold_for_mean_size(e, 4.0, rule="max")


def test_boundary_kinds():
    data = "Go 42x, caf\u00e9!\n".encode()
    kinds = [P.byte_kind(data, i) for i in range(len(data))]
    assert kinds == [
        "word start", "mid-word", "space", "digit", "digit", "mid-word", "punctuation", "space",
        "word start", "mid-word", "mid-word", "non-ASCII start", "inside a character", "punctuation", "space",
    ]
    counts = P.boundary_kinds(data, [0, 3, 12])
    assert counts["word start"] == counts["digit"] == counts["inside a character"] == 1
    assert sum(counts.values()) == 3 and list(counts) == list(P.BOUNDARY_KINDS)
    assert P.byte_kind(b"\x00", 0) == "control"
    with pytest.raises(ValueError, match="outside"):
        P.boundary_kinds(b"ab", [2])


# --------------------------------------------------------------------------- CANINE-style input


def test_hash_buckets_shape_range_and_independence():
    cps = np.arange(0, 0x110000, 97)
    buckets = P.hash_buckets(cps, num_hashes=8, num_buckets=16384)
    assert buckets.shape == (len(cps), 8) and buckets.min() >= 0 and buckets.max() < 16384
    # roughly uniform: every bucket of every hash function is used by these 11,486 code points
    for k in range(8):
        assert len(np.unique(buckets[:, k])) > 16384 * 0.45
    # all eight at once never collide here
    assert len({tuple(row) for row in buckets}) == len(cps)
    # the functions differ from each other, and the seed changes them
    assert not (buckets[:, 0] == buckets[:, 1]).all()
    assert not (P.hash_buckets(cps, 2, 1000, seed=1) == P.hash_buckets(cps, 2, 1000, seed=0)).all()


def test_hash_buckets_errors():
    with pytest.raises(ValueError, match="0x10FFFF"):
        P.hash_buckets([0x110000])
    with pytest.raises(ValueError, match="0x10FFFF"):
        P.hash_buckets([-1])
    with pytest.raises(ValueError, match="0x10FFFF"):
        P.hash_buckets(np.array([1.5]))
    with pytest.raises(ValueError, match="one-dimensional"):
        P.hash_buckets([[1, 2]])
    with pytest.raises(ValueError, match="num_hashes"):
        P.hash_buckets([1], num_hashes=0)
    with pytest.raises(ValueError, match="num_buckets"):
        P.hash_buckets([1], num_buckets=0)
    with pytest.raises(ValueError, match="multiple"):
        P.embedding_tables(num_hashes=5, dim=768)


def test_hash_embed_and_downsample():
    tables = P.embedding_tables(num_hashes=4, num_buckets=64, dim=16, seed=3)
    assert tables.shape == (4, 64, 4)
    x = P.hash_embed("abca\U0001f642", tables)
    assert x.shape == (5, 16)
    np.testing.assert_array_equal(x[0], x[3])  # same code point, same embedding
    b = P.hash_buckets(np.array([ord("b")]), 4, 64)[0]
    np.testing.assert_array_equal(x[1], np.concatenate([tables[k, b[k]] for k in range(4)]))
    assert P.hash_embed("", tables).shape == (0, 16)
    with pytest.raises(TypeError, match="str"):
        P.hash_embed(b"ab", tables)
    with pytest.raises(ValueError, match="shape"):
        P.hash_embed("ab", tables[0])
    y = P.downsample(x, rate=2)
    assert y.shape == (3, 16)
    np.testing.assert_allclose(y[0], (x[0] + x[1]) / 2, rtol=1e-6)
    np.testing.assert_allclose(y[2], x[4])
    assert P.downsample(x, 4).shape == (2, 16)
    with pytest.raises(ValueError, match="rate"):
        P.downsample(x, 0)
    with pytest.raises(ValueError, match="shape"):
        P.downsample(np.zeros(3), 2)


# --------------------------------------------------------------------------- determinism

_SNIPPET = (
    "import hashlib, numpy as np; from toklab import corpus, patching as P; "
    "t = corpus.load('mixed', max_bytes=30_000).encode(); "
    "m = P.ByteNgramModel.train(t[:20_000], order=5); e = m.entropies(t[20_000:]); "
    "s = P.patch_starts(e, P.threshold_for_mean_size(e, 4.5, 'monotonic'), 'monotonic'); "
    "h = P.hash_buckets(np.arange(0, 0x110000, 1009)); "
    "print(hashlib.sha256(e.tobytes() + s.tobytes() + h.tobytes()).hexdigest())"
)


def test_deterministic_across_processes_and_hash_seeds():
    outputs = set()
    for seed in ("0", "1", "random"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", _SNIPPET], env=env, capture_output=True, text=True, check=True)
        outputs.add(out.stdout.strip())
    assert len(outputs) == 1
