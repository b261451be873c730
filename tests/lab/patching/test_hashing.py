"""`toklab.lab.patching.hashing`: a CANINE-style input layer (hash buckets, embeddings, downsampling)."""

from __future__ import annotations

import numpy as np
import pytest

from toklab.lab import patching as P


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


def test_ngram_buckets_read_only_the_bytes_up_to_each_position():
    data = b"the cat sat on the mat; the cat"
    b3 = P.ngram_buckets(data, 3, 1 << 20)
    assert b3.shape == (len(data),) and b3.min() >= 0 and b3.max() < 1 << 20
    assert b3[2] == b3[len("the cat sat on the mat; ") + 2]  # "the" twice: one bucket
    assert b3[6] == b3[len(data) - 1]  # "cat" twice
    changed = bytearray(data)
    changed[10] ^= 1
    after = P.ngram_buckets(bytes(changed), 3, 1 << 20)
    assert (after[:10] == b3[:10]).all() and (after[10:13] != b3[10:13]).all() and (after[13:] == b3[13:]).all()
    # padding: the first byte's 3-gram is (0, 0, 't')
    assert P.ngram_buckets(b"t", 3, 1 << 20)[0] == P.ngram_buckets(b"\x00\x00t", 3, 1 << 20)[2]
    # sizes and seeds give different functions
    assert not (P.ngram_buckets(data, 4, 1 << 20) == b3).all()
    assert not (P.ngram_buckets(data, 3, 1 << 20, seed=1) == b3).all()
    assert P.ngram_buckets(b"", 3, 10).shape == (0,)


def test_ngram_embed_adds_one_row_per_size():
    rng = np.random.default_rng(0)
    byte_table, t3, t5 = rng.normal(size=(256, 4)), rng.normal(size=(11, 4)), rng.normal(size=(13, 4))
    x = P.ngram_embed(b"hello", byte_table, [t3, t5], (3, 5))
    i = 4
    expect = byte_table[ord("o")] + t3[P.ngram_buckets(b"hello", 3, 11)[i]] + t5[P.ngram_buckets(b"hello", 5, 13)[i]]
    np.testing.assert_allclose(x[i], expect)
    with pytest.raises(ValueError, match="one table per size"):
        P.ngram_embed(b"a", byte_table, [t3], (3, 5))
    with pytest.raises(ValueError, match="256"):
        P.ngram_embed(b"a", byte_table[:10], [], ())
    with pytest.raises(ValueError, match="n must be"):
        P.ngram_buckets(b"a", 0, 10)
    with pytest.raises(TypeError, match="bytes"):
        P.ngram_buckets("a", 3, 10)


@pytest.mark.parametrize("n, buckets", [(1, 7), (3, 50), (4, 1000), (8, 30)])
def test_ngram_sharing_counts_like_brute_force(n, buckets):
    data = b"abracadabra, the cat and the hat sat on a mat; abracadabra again" * 2
    ids = P.ngram_buckets(data, n, buckets)
    bucket_of = {data[i - n + 1 : i + 1]: int(ids[i]) for i in range(n - 1, len(data))}
    members = {}
    for gram, b in bucket_of.items():
        members.setdefault(b, set()).add(gram)
    shared = sum(1 for b in bucket_of.values() if len(members[b]) > 1)
    assert P.ngram_sharing(data, n, buckets) == (len(bucket_of), shared)


def test_ngram_sharing_edges():
    assert P.ngram_sharing(b"ab", 3, 10) == (0, 0)
    assert P.ngram_sharing(b"aaaa", 2, 10) == (1, 0)
    with pytest.raises(ValueError, match="1 to 8"):
        P.ngram_sharing(b"abc", 9, 10)
