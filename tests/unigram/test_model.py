"""The Unigram object: n-best and sampling, IDs and lookups, unknown runs, byte fallback, precision."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from toklab.unigram import Unigram, segmentations

from .helpers import ABAB


# ----------------------------------------------------- sampling and n-best


def test_nbest_order_and_first_is_viterbi():
    model = Unigram.from_probs(ABAB)
    results = model.nbest("abab", 10)
    assert len(results) == 6  # all of them
    scores = [s for _, s in results]
    assert scores == sorted(scores, reverse=True)
    assert results[0][0] == model.viterbi("abab")
    assert sorted(map(tuple, (r[0] for r in results))) == sorted(map(tuple, segmentations("abab", ABAB)))
    for pieces, score in results:
        assert abs(score - model.log_prob(pieces)) < 1e-12
    assert [r[0] for r in model.nbest("abab", 2)] == [["ab", "ab"], ["aba", "b"]]
    with pytest.raises(ValueError):
        model.nbest("abab", 0)


def test_sample_distribution_matches_posterior():
    model = Unigram.from_probs(ABAB)
    probs = {tuple(s): math.prod(ABAB[p] for p in s) / 0.22350625 for s in segmentations("abab", ABAB)}
    n = 20_000
    draws = Counter(map(tuple, model.samples("abab", n, alpha=1.0, seed=1234)))
    assert set(draws) <= set(probs)
    chi2 = sum((draws[s] - n * p) ** 2 / (n * p) for s, p in probs.items())
    assert chi2 < 20.5  # chi-square, 5 degrees of freedom, p = 0.001

    # alpha is an inverse temperature: q(z) ∝ P(z)**alpha. With alpha = 0.5:
    q = {s: p**0.5 for s, p in probs.items()}
    z = sum(q.values())
    draws = Counter(map(tuple, model.samples("abab", n, alpha=0.5, seed=99)))
    chi2 = sum((draws[s] - n * v / z) ** 2 / (n * v / z) for s, v in q.items())
    assert chi2 < 20.5


def test_sample_large_alpha_converges_to_viterbi():
    model = Unigram.from_probs(ABAB)
    rng = random.Random(7)
    assert all(model.sample("abab", alpha=60.0, seed=rng) == ["ab", "ab"] for _ in range(200))
    text = "abbabaababbab"
    draws = model.samples(text, 100, alpha=200.0, seed=3)
    assert all(d == model.viterbi(text) for d in draws)
    # small alpha spreads the mass out
    assert len({tuple(d) for d in model.samples(text, 200, alpha=0.2, seed=3)}) > 20


def test_sample_is_deterministic_with_seed_and_respects_nbest_size():
    model = Unigram.from_probs(ABAB)
    assert model.sample("abababab", seed=5) == model.sample("abababab", seed=5)
    assert model.samples("abababab", 50, seed=5) == model.samples("abababab", 50, seed=5)
    assert model.sample("abab", nbest_size=1, seed=1) == ["ab", "ab"]
    assert model.sample("abab", nbest_size=0, seed=1) == ["ab", "ab"]
    top2 = {("ab", "ab"), ("aba", "b")}
    draws = model.samples("abab", 400, nbest_size=2, seed=11)
    assert {tuple(d) for d in draws} == top2
    # among the two best, P ∝ exp(alpha * score): 0.16 vs 0.03
    share = sum(d == ["ab", "ab"] for d in draws) / len(draws)
    assert abs(share - 0.16 / 0.19) < 0.06
    for d in model.samples("abbaab", 100, seed=2):
        assert "".join(d) == "abbaab"
    with pytest.raises(ValueError):
        model.sample("abab", alpha=-1.0)


# ---------------------------------------------------- IDs, unknowns, bytes


def test_ids_lookups_and_errors():
    model = Unigram({"a": -1.0, "b": -2.0, "ab": -1.5}, special_tokens=["<s>", "</s>"])
    assert list(model.vocab.values()) == ["<unk>", "<s>", "</s>", "a", "b", "ab"]
    assert len(model) == 6 and "ab" in model and "ba" not in model
    assert model.piece_to_id("ab") == 5
    assert model.piece_to_id("zz") == model.unk_id == 0  # sentencepiece's convention
    assert model.id_to_piece(1) == "<s>" and model.kind("<s>") == "control" and model.kind(0) == "unknown"
    with pytest.raises(KeyError, match="not in the vocabulary"):
        model.score("zz")
    with pytest.raises(ValueError, match="unknown token ID 6: valid IDs are 0..5"):
        model.id_to_piece(6)
    with pytest.raises(KeyError, match="'zz' is not in the vocabulary"):
        model.token_to_id("zz")
    assert model.pieces == {"a": -1.0, "b": -2.0, "ab": -1.5}
    # control pieces never match text: "<s>" here is three unknown characters, merged
    assert model.viterbi("<s>ab") == ["<s>", "ab"] and model.encode("<s>ab") == [0, 5]
    with pytest.raises(ValueError, match="twice"):
        Unigram([("a", -1.0), ("a", -2.0)])
    with pytest.raises(ValueError, match="non-empty"):
        Unigram({"": -1.0})
    with pytest.raises(ValueError, match="non-finite"):
        Unigram({"a": float("nan")})
    with pytest.raises(ValueError, match="at least one"):
        Unigram({})
    with pytest.raises(ValueError, match="twice"):
        Unigram({"<unk>": -1.0})
    with pytest.raises(ValueError, match="> 0"):
        Unigram.from_probs({"a": 0.0})


def test_unknown_runs_and_byte_fallback():
    model = Unigram({"a": -1.0, "b": -1.0})
    assert model.viterbi("") == [] and model.encode("") == []
    assert model.viterbi("axyb") == ["a", "xy", "b"]  # adjacent unknowns merged, as sentencepiece does
    assert model.encode("axyb") == [1, 0, 2]
    assert model.viterbi("xy") == ["xy"] and model.nbest("xy", 3) == [(["xy"], 2 * model.unk_score)]
    assert model.sample("axyb", seed=0) == ["a", "xy", "b"]
    assert model.expected_counts("ax") == {"a": 1.0, "<unk>": 1.0}
    bf = Unigram({"a": -1.0, "b": -1.0}, byte_fallback=True)
    assert bf.viterbi("a中b") == ["a", "<0xE4>", "<0xB8>", "<0xAD>", "b"]
    assert bf.encode("a中") == [bf.piece_to_id("a"), 1 + 0xE4, 1 + 0xB8, 1 + 0xAD]
    assert len(bf) == 1 + 256 + 2


def test_single_precision_mode_only_changes_ties():
    scores = {"0": -3.1, "00": -6.2, "1": -2.0}
    text = "1" + "0" * 9
    exact = Unigram(scores).viterbi(text)
    single = Unigram(scores, float32=True).viterbi(text)
    assert "".join(single) == text
    model = Unigram(scores)
    assert abs(model.log_prob(exact) - model.log_prob(single)) < 1e-5
