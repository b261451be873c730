"""The fast Unigram algorithms give what the textbook versions in `toklab.unigram.reference` give.

Three layers must agree: brute-force enumeration of segmentations
(``reference_*``), the per-word dynamic programs of `Unigram`, and the batched
numpy lattices the trainer runs on (`toklab.unigram.trainer`: `expected_counts`,
`m_step`, `prune_losses`). Each test is named after the pair it ties.
"""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import given

from toklab.pre_tokenizers.metaspace import split_words
from toklab.unigram import (
    Unigram,
    expected_counts,
    reference_expected_counts,
    reference_forward,
    reference_viterbi,
    segmentations,
    train,
)
from toklab.unigram import lattice as unigram_lattice

from .helpers import tiny_corpus, small_models


@given(small_models())
def test_expected_counts_equal_reference_expected_counts(case):
    probs, words = case
    brute = reference_expected_counts(words, probs)
    model = Unigram.from_probs(probs)
    per_word = model.expected_counts(words)
    batched = expected_counts(words, {p: math.log(v) for p, v in probs.items()})
    for piece in set(brute) | set(per_word) | set(batched):
        b = brute.get(piece, 0.0)
        assert abs(per_word.get(piece, 0.0) - b) < 1e-9 * max(1.0, b)
        assert abs(batched.get(piece, 0.0) - b) < 1e-9 * max(1.0, b)
    # each word's pieces cover its characters, whatever the segmentation
    assert abs(sum(len(p) * c for p, c in brute.items()) - sum(len(w) * c for w, c in words.items())) < 1e-9


@given(small_models())
def test_viterbi_forward_nbest_equal_reference_and_enumeration(case):
    probs, words = case
    model = Unigram.from_probs(probs)
    scores = {p: math.log(v) for p, v in probs.items()}
    for word in words:
        segs = list(segmentations(word, probs))
        best = max(model.log_prob(s) for s in segs)
        v = model.viterbi(word)
        assert v == reference_viterbi(word, scores)
        assert abs(model.log_prob(v) - best) < 1e-12
        marginal = sum(math.prod(probs[p] for p in s) for s in segs)
        assert abs(model.marginal_likelihood(word) - math.log(marginal)) < 1e-9
        assert abs(reference_forward(word, probs)[-1] - marginal) < 1e-12 * max(1.0, marginal)
        nb = model.nbest(word, len(segs) + 3)
        assert sorted(tuple(s) for s, _ in nb) == sorted(map(tuple, segs))
        assert nb[0][0] == v
        assert all(a[1] >= b[1] for a, b in zip(nb, nb[1:]))


def test_lattice_equals_per_word_algorithms():
    np = pytest.importorskip("numpy")
    lines = tiny_corpus()
    model = train(lines, 400)
    words = Counter(w for ln in lines for w in split_words(ln))
    names = list(model.pieces)
    scores = np.array([model.pieces[p] for p in names])
    ws = sorted(words)
    lattice = unigram_lattice.Lattice(ws, unigram_lattice.piece_lookup(names))
    best, seg_word, seg_piece = lattice.viterbi(scores)
    _, log_z = lattice.forward_backward(scores, np.ones(len(ws)))
    segs: dict[int, list[str]] = {}
    for w, p in zip(seg_word.tolist(), seg_piece.tolist()):
        segs.setdefault(w, []).append(names[p])
    for k, w in enumerate(ws):
        assert segs[k][::-1] == model.viterbi(w)  # backtracking collects pieces right to left
        assert abs(best[k] - model.log_prob(model.viterbi(w))) < 1e-9
        assert abs(log_z[k] - model.marginal_likelihood(w)) < 1e-9
    sample = dict(list(words.items())[:200])
    fast = expected_counts(sample, model.pieces)
    slow = model.expected_counts(sample)
    assert fast.keys() == slow.keys()
    assert all(abs(fast[p] - slow[p]) < 1e-9 * max(1.0, slow[p]) for p in fast)
