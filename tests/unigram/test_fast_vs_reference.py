"""The fast Unigram algorithms give what the textbook versions in `toklab.unigram.reference` give.

Three layers must agree: brute-force enumeration of segmentations
(``reference_*``), the per-word dynamic programs of `Unigram`, and the batched
numpy lattices the trainer runs on (`toklab.unigram.trainer`: `expected_counts`,
`m_step`, `prune_losses`, `seed_pieces`; `toklab.unigram.lattice.substring_edges`
against the per-text scan `text_edges`). Each test is named after the pair it ties.
"""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab.data import corpus
from toklab.pre_tokenizers.metaspace import split_words
from toklab.unigram import (
    MIN_EXPECTED_COUNT,
    Unigram,
    expected_counts,
    reference_expected_counts,
    reference_forward,
    reference_m_step,
    reference_prune_loss,
    reference_seed_pieces,
    reference_viterbi,
    seed_pieces,
    segmentations,
    train,
)
from toklab.unigram import lattice as unigram_lattice
from toklab.unigram.trainer import m_step, prune_losses

from .helpers import ALPHABET, small_models, tiny_corpus


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
def test_viterbi_and_forward_equal_reference_viterbi_and_reference_forward(case):
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


# --------------------------------------------------------------------------
# The trainer's batched M-step and pruning loss against the plain versions
# --------------------------------------------------------------------------


@st.composite
def m_step_cases(draw):
    """Expected counts around the 0.5 cut-off, which pieces are alive and which protected.

    Protected pieces are always alive: the trainer never drops them.
    """
    n = draw(st.integers(1, 12))
    count = st.one_of(
        st.just(0.0),
        st.sampled_from([MIN_EXPECTED_COUNT, 0.4999999, 0.5000001]),
        st.floats(0.0, 1.0),
        st.floats(0.5, 200.0),
    )
    expected = draw(st.lists(count, min_size=n, max_size=n))
    protected = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    alive = [a or p for a, p in zip(draw(st.lists(st.booleans(), min_size=n, max_size=n)), protected)]
    return expected, alive, protected


def _fast_m_step(expected, alive, protected, bayesian):
    """`m_step` on the trainer's arrays, back as a piece -> score dict (pieces named p0, p1, ...)."""
    logp, keep = m_step(np.array(expected, dtype=float), np.array(alive), np.array(protected), bayesian)
    assert np.isneginf(logp[~keep]).all()  # a dropped piece can never be chosen again
    return {f"p{i}": float(logp[i]) for i in np.flatnonzero(keep)}


def _assert_same_scores(fast, ref):
    assert fast.keys() == ref.keys()
    for piece, score in ref.items():
        assert math.isclose(fast[piece], score, rel_tol=1e-12, abs_tol=1e-12), (piece, fast[piece], score)


@settings(max_examples=200)
@given(case=m_step_cases(), bayesian=st.booleans())
def test_reference_m_step_equals_m_step(case, bayesian):
    expected, alive, protected = case
    ref = reference_m_step(
        {f"p{i}": c for i, (c, a) in enumerate(zip(expected, alive)) if a},
        protected={f"p{i}" for i, p in enumerate(protected) if p},
        bayesian=bayesian,
    )
    _assert_same_scores(_fast_m_step(expected, alive, protected, bayesian), ref)


@given(small_models(), st.booleans())
def test_reference_m_step_equals_m_step_after_the_e_step(case, bayesian):
    """A full EM iteration both ways, characters protected as the trainer protects them.

    A character no word uses has expected count 0: the reference E-step leaves
    it out of its result, and the M-step must still keep it (scored as 0.5).
    """
    probs, words = case
    names = list(probs)
    protected = [len(p) == 1 for p in names]
    batched = expected_counts(words, {p: math.log(v) for p, v in probs.items()})
    fast = _fast_m_step([batched.get(p, 0.0) for p in names], [True] * len(names), protected, bayesian)
    ref = reference_m_step(
        reference_expected_counts(words, probs), protected=[p for p in names if len(p) == 1], bayesian=bayesian
    )
    _assert_same_scores({names[int(k[1:])]: v for k, v in fast.items()}, ref)


def _fast_prune_losses(word_counts, scores, protected, dead=()):
    """`prune_losses` on the trainer's arrays; ``dead`` pieces were pruned before (score -inf, edges gone)."""
    names = list(scores) + list(dead)
    words = sorted(word_counts)
    lattice = unigram_lattice.Lattice(words, unigram_lattice.piece_lookup(names))
    alive = np.array([p not in dead for p in names])
    logp = np.where(alive, [scores.get(p, 0.0) for p in names], -np.inf)
    lattice.keep(alive)
    cand, loss = prune_losses(
        lattice,
        names,
        logp,
        alive,
        np.array([p in protected for p in names]),
        np.array([len(p) for p in names]),
        np.array([float(word_counts[w]) for w in words]),
    )
    assert len(set(cand.tolist())) == len(cand)
    return {names[c]: float(x) for c, x in zip(cand.tolist(), loss)}


def _assert_same_losses(fast, ref):
    assert fast.keys() == ref.keys()  # the same candidates
    for piece, loss in ref.items():
        assert math.isclose(fast[piece], loss, rel_tol=1e-9, abs_tol=1e-12), (piece, fast[piece], loss)


@st.composite
def prune_cases(draw):
    """Small corpora over "abc", pieces with continuous random scores (no exact Viterbi ties)."""
    extra = draw(st.lists(st.text(ALPHABET, min_size=2, max_size=4), max_size=10, unique=True))
    pieces = sorted(set(ALPHABET) | set(extra))
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    scores = {p: rng.uniform(-9.0, -0.5) for p in pieces}
    words = draw(st.dictionaries(st.text(ALPHABET, min_size=1, max_size=8), st.integers(1, 6), min_size=1, max_size=6))
    protected = set(ALPHABET) | set(draw(st.lists(st.sampled_from(pieces), max_size=3)))
    dead = draw(st.lists(st.text(ALPHABET, min_size=2, max_size=3).filter(lambda p: p not in scores), max_size=3, unique=True))
    return words, scores, protected, dead


@settings(max_examples=150)
@given(prune_cases())
def test_reference_prune_loss_equals_prune_losses(case):
    words, scores, protected, dead = case
    ref = reference_prune_loss(words, scores, protected=protected)
    _assert_same_losses(_fast_prune_losses(words, scores, protected, dead), ref)


def test_reference_prune_loss_equals_prune_losses_on_a_corpus_slice():
    """Every word of a 20 KB slice, scores of a trained model, characters protected."""
    lines = tiny_corpus()
    model = train(lines, 400)
    words = Counter(w for ln in lines for w in split_words(ln))
    scores = model.pieces
    protected = {p for p in scores if len(p) == 1}
    ref = reference_prune_loss(words, scores, protected=protected)
    fast = _fast_prune_losses(words, scores, protected)
    assert len(ref) > 150  # most multi-character pieces are candidates
    assert min(ref.values()) != max(ref.values())
    _assert_same_losses(fast, ref)


# --------------------------------------------------------------------------
# The trainer's numpy seed vocabulary and the batched lattice's edges
# --------------------------------------------------------------------------

SEED_ALPHABET = "ab\u2581\U0001f600中"  # a space mark, a character outside the BMP, a Han character


@settings(max_examples=150)
@given(
    st.dictionaries(st.text(SEED_ALPHABET, min_size=1, max_size=9), st.integers(0, 4), max_size=10),
    st.integers(1, 7),
    st.integers(1, 30),
)
def test_seed_pieces_equals_reference_seed_pieces(words, max_len, seed_size):
    fast = seed_pieces(words, max_piece_length=max_len, seed_size=seed_size)
    ref = reference_seed_pieces(words, max_piece_length=max_len, seed_size=seed_size)
    assert list(fast.items()) == list(ref.items())  # same pieces, same scores, same order


def test_seed_pieces_equals_reference_seed_pieces_on_corpus_slices():
    """English, Chinese and emoji words, a lone surrogate, and a seed size that cuts the candidates."""
    text = "".join(corpus.load(name, max_bytes=15_000) for name in ("en", "zh", "mixed"))
    words = Counter(w for ln in text.split("\n") for w in split_words(ln.replace(" ", "\u2581")) if w)
    words["x\ud800y"] += 2
    for options in ({}, {"max_piece_length": 4}, {"seed_size": 500}):
        fast = seed_pieces(words, **options)
        assert list(fast.items()) == list(reference_seed_pieces(words, **options).items())
    assert len(seed_pieces(words, seed_size=500)) < len(seed_pieces(words))


def _scanned_edges(words, pieces, whole):
    """`text_edges` word by word, on the lattice's node numbering (a separator node between words)."""
    table = unigram_lattice.PieceTable(unigram_lattice.piece_lookup(pieces), [0.0] * len(pieces), -2, 0.0)
    out, base = [], 0
    for word in words:
        for i, here in enumerate(unigram_lattice.text_edges(table, word)):
            out += [(base + i, base + j, pid) for j, pid, _ in here if pid >= 0 and (whole or j - i < len(word))]
        base += len(word) + 1
    return out


@settings(max_examples=150)
@given(
    st.lists(st.text(SEED_ALPHABET, min_size=1, max_size=8), max_size=8),
    st.lists(st.text(SEED_ALPHABET, min_size=1, max_size=4), min_size=1, max_size=12, unique=True),
    st.booleans(),
)
def test_substring_edges_and_lattice_equal_text_edges(words, pieces, whole):
    scanned = _scanned_edges(words, pieces, whole)
    codes, starts, lens = unigram_lattice.code_points(words)
    lookup = {p: i for i, p in enumerate(pieces)}
    src, dst, pid = unigram_lattice.substring_edges(codes, starts, starts + lens, lookup, whole=whole)
    assert list(zip(src.tolist(), dst.tolist(), pid.tolist())) == scanned  # same edges, same order
    for table in (lookup, unigram_lattice.piece_lookup(pieces)):  # a plain dict or a prefix dict
        lattice = unigram_lattice.Lattice(words, table, whole=whole)
        f, b = lattice.fwd, lattice.bwd
        assert sorted(zip(f.other.tolist(), f.node.tolist(), f.pid.tolist())) == sorted(scanned)
        assert sorted(zip(b.node.tolist(), b.other.tolist(), b.pid.tolist())) == sorted(scanned)
