"""Unigram the textbook way (`toklab.unigram.reference`): the book's worked examples, EM, digamma.

Worked examples from CONTENT.md §2 and seeds 000, 001, 004, with the model's
answers checked against enumeration of every segmentation.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given

from toklab.unigram import Unigram, digamma, reference_em_step, reference_forward, reference_viterbi, segmentations
from toklab.unigram import trainer as unigram_trainer

from .helpers import ABAB, small_models


def test_abab_forward_table_and_viterbi():
    expected = [1.0, 0.15, 0.4225, 0.263375, 0.22350625]
    f = reference_forward("abab", ABAB)
    assert all(abs(a - b) < 1e-12 for a, b in zip(f, expected))
    model = Unigram.from_probs(ABAB)
    g = model.forward("abab", log=False)
    assert all(abs(a - b) < 1e-12 for a, b in zip(g, expected))
    # f4 = f1 p(bab) + f2 p(ab) + f3 p(b)
    assert abs(0.15 * 0.10 + 0.4225 * 0.40 + 0.263375 * 0.15 - 0.22350625) < 1e-15
    assert abs(model.marginal_likelihood("abab", log=False) - 0.22350625) < 1e-12
    # the marginal is the sum over all six segmentations
    segs = list(segmentations("abab", ABAB))
    assert len(segs) == 6
    assert abs(sum(math.prod(ABAB[p] for p in s) for s in segs) - 0.22350625) < 1e-15

    best = model.viterbi("abab")
    assert best == reference_viterbi("abab", {p: math.log(v) for p, v in ABAB.items()}) == ["ab", "ab"]
    assert abs(math.exp(model.log_prob(best)) - 0.16) < 1e-12
    assert 0.16 <= 0.22350625  # one path never beats the sum over all paths


def test_seed_000_beijing_university():
    costs = {"北": 3.0, "北京": 1.0, "大学": 1.0, "大": 2.0, "学": 2.0}
    scores = {p: -c for p, c in costs.items()}  # cost = negative log-probability
    model = Unigram(scores)
    assert model.viterbi("北京大学") == reference_viterbi("北京大学", scores) == ["北京", "大学"]
    assert model.log_prob(["北京", "大学"]) == -2.0
    # An unknown character costs min_score - 10 (sentencepiece), here 3 + 10 = 13,
    # so the third-best path treats 京 (not a piece on its own) as unknown.
    assert model.unk_score == -13.0
    assert model.nbest("北京大学", 4) == [
        (["北京", "大学"], -2.0),
        (["北京", "大", "学"], -5.0),
        (["北", "京", "大学"], -17.0),
        (["北", "京", "大", "学"], -20.0),
    ]
    assert model.viterbi("北京大学生") == ["北京", "大学", "生"]
    assert model.encode("北京大学生")[-1] == model.unk_id
    with pytest.raises(ValueError, match="cannot be segmented"):
        reference_viterbi("北京大学生", scores)


HUG = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}
HUG_VOCAB = ["h", "u", "g", "hu", "ug", "p", "pu", "n", "un", "b", "bu", "s", "hug", "gs", "ugs"]


def _hug_probs(vocab):
    freq = {v: sum(c * sum(w.startswith(v, i) for i in range(len(w))) for w, c in HUG.items()) for v in vocab}
    total = sum(freq.values())
    return freq, {v: f / total for v, f in freq.items()}


def test_seed_001_hug_pug_pun_bun_hugs():
    freq, probs = _hug_probs(HUG_VOCAB)
    # The seed's numbers: "ug" occurs 20 times (hug, pug, hugs); all substring counts sum to 210.
    assert freq["ug"] == 20 and sum(freq.values()) == 210
    assert probs["ug"] == 20 / 210
    model = Unigram.from_probs(probs)
    # "pug": p+ug and pu+g tie (17*20 each); the tie goes to the earliest start
    # of the last piece, so "ug" (starting at 1) beats "g" (starting at 2).
    assert model.viterbi("pug") == ["p", "ug"]
    assert model.viterbi("hug") == ["hug"]
    # "hugs": hug+s, hu+gs and h+ugs all have probability 15*5/210**2.
    ties = [s for s in segmentations("hugs", probs) if len(s) == 2 and s != ["hu", "gs"]] + [["hu", "gs"]]
    assert len({round(model.log_prob(s), 12) for s in ties}) == 1
    assert model.viterbi("hugs") == ["h", "ugs"]

    # The seed's pruning question: which piece costs least to delete? Exact
    # drop in corpus log-likelihood with the other probabilities left as they
    # are: "ugs", as the seed says; "hug" costs the most.
    def log_likelihood(pr):
        m = Unigram.from_probs(pr)
        return sum(c * m.marginal_likelihood(w) for w, c in HUG.items())

    base = log_likelihood(probs)
    multi = [v for v in HUG_VOCAB if len(v) > 1]
    fixed = {v: base - log_likelihood({k: p for k, p in probs.items() if k != v}) for v in multi}
    assert min(fixed, key=fixed.get) == "ugs" and max(fixed, key=fixed.get) == "hug"
    assert all(x > 0 for x in fixed.values())
    # But substring frequencies are not an EM optimum: renormalise the rest and
    # deleting "ug" or "hu" *raises* the likelihood. Pruning only makes sense
    # after EM has fitted the probabilities.
    renorm = {v: base - log_likelihood({k: p / (1 - probs[v]) for k, p in probs.items() if k != v}) for v in multi}
    assert {v for v, x in renorm.items() if x < 0} == {"ug", "hu"}


@given(small_models())
def test_em_step_does_not_decrease_likelihood(case):
    probs, words = case

    def log_likelihood(pr):
        m = Unigram.from_probs({p: v for p, v in pr.items() if v > 0})
        return sum(c * m.marginal_likelihood(w) for w, c in words.items())

    new = reference_em_step(words, probs)
    assert abs(sum(new.values()) - 1.0) < 1e-12
    assert log_likelihood(new) >= log_likelihood(probs) - 1e-9


def test_digamma():
    euler = 0.5772156649015329
    assert abs(digamma(1.0) + euler) < 1e-12
    assert abs(digamma(0.5) - (-euler - 2 * math.log(2))) < 1e-12
    for x in (0.3, 1.7, 6.5, 12.0, 1e3, 1e7):
        assert abs(digamma(x + 1) - digamma(x) - 1 / x) < 1e-12
    assert abs(digamma(1e7) - math.log(1e7)) < 1e-6
    np = pytest.importorskip("numpy")
    xs = [0.5, 1.0, 3.3, 7.0, 250.0]
    assert all(abs(a - digamma(x)) < 1e-13 for a, x in zip(unigram_trainer.digamma_array(np.array(xs)), xs))
