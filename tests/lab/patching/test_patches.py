"""`toklab.lab.patching.patches`: fixed and entropy patches, the threshold for a mean size, boundary kinds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab.data import corpus
from toklab.lab import patching as P

finite = st.floats(min_value=-20, max_value=20, allow_nan=False, allow_infinity=False)


@st.composite
def data_and_entropies(draw, min_size=0):
    data = draw(st.binary(min_size=min_size, max_size=200))
    ent = draw(st.lists(finite, min_size=len(data), max_size=len(data)))
    return data, np.array(ent, dtype=np.float64)


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


@given(st.binary(max_size=300))
def test_space_patches_follow_spacebytes_rule(data):
    def spacelike(b):
        return not (chr(b).isascii() and chr(b).isalnum()) and not 0x80 <= b <= 0xBF

    assert P.is_spacelike(data).tolist() == [spacelike(b) for b in data]
    starts = P.space_patch_starts(data).tolist()
    expected = [i for i in range(len(data)) if i == 0 or (spacelike(data[i]) and not spacelike(data[i - 1]))]
    assert starts == expected
    assert b"".join(P.split_at(data, starts)) == data


def test_space_patches_on_english_and_chinese():
    en = "Patches that start at spaces, like this one.".encode()
    assert [p.decode() for p in P.split_at(en, P.space_patch_starts(en))] == [
        "Patches", " that", " start", " at", " spaces", ", like", " this", " one", "."]
    zh = "中文没有空格，所以每个字".encode()
    patches = P.split_at(zh, P.space_patch_starts(zh))
    assert [p.decode() for p in patches] == list("中文没有空格，所以每个字")  # a lead byte is spacelike
