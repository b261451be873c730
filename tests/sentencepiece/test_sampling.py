"""n-best and sampling of a `toklab.SentencePieceTokenizer`, against the real library and against exact probabilities.

n-best must *equal* sentencepiece's ``nbest_encode_as_ids`` on models the library
trained (order included: ties come out in the order its A* search pops them), on
corpus lines and on strings built to tie. Sampling cannot equal it draw for draw
(the two libraries have different random generators), so both libraries' sample
frequencies are compared with the exact probabilities of each segmentation: for a
Unigram model ``∝ exp(alpha * score)`` over every segmentation (``nbest_size < 0``) or
over the n best (``nbest_size > 1``); for BPE-dropout the probability of every run of
the merge loop, enumerated by `toklab.sentencepiece.bpe.SentencePieceBPE.dropout_distribution`.
"""

from __future__ import annotations

import functools
import io
import math
import random
from collections import Counter

import pytest

from toklab.data import corpus
from toklab.sentencepiece import SentencePieceTokenizer
from toklab.unigram.astar import StdHeap

spm = pytest.importorskip("sentencepiece")

DRAWS = 20_000


def train(model_type: str = "unigram", **options):
    lines = [ln for ln in corpus.load("en", max_bytes=150_000).split("\n") if ln]
    lines += ["-" * 40, "=" * 30 + "--", "0000000000"] * 5  # runs whose segmentations tie
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=buf, vocab_size=2000,
                                   model_type=model_type, num_threads=1, minloglevel=2, **options)
    sp = spm.SentencePieceProcessor(model_proto=buf.getvalue())
    return sp, SentencePieceTokenizer.from_sentencepiece(sp)


@functools.cache
def model(name: str):
    return {"unigram": lambda: train(),
            "unigram-bytes-user": lambda: train(byte_fallback=True, user_defined_symbols=["<mask>", "the"]),
            "bpe": lambda: train("bpe", byte_fallback=True)}[name]()


def probe_lines() -> list[str]:
    mixed = [ln for ln in corpus.load("mixed", max_bytes=60_000).split("\n") if ln and len(ln) < 400]
    en = [ln for ln in corpus.load("en").split("\n") if ln][::40]
    ties = ["-" * n for n in range(1, 30)] + ["=" * n for n in range(1, 20)] + ["0" * n for n in (5, 11, 17)]
    return mixed[::3] + en[:150] + ties + ["龘在北京 hello <mask> x", "a" * 200, " ".join(en)[:3000], "", " "]


@pytest.mark.parametrize("name", ["unigram", "unigram-bytes-user"])
def test_nbest_equals_sentencepiece_order_included(name):
    sp, tok = model(name)
    for n in (2, 5, 20):
        for line in probe_lines():
            assert tok.nbest_encode(line, n) == sp.nbest_encode_as_ids(line, n), (n, line[:60])
    for line in probe_lines()[::10]:
        assert tok.nbest_encode_as_pieces(line, 5) == sp.nbest_encode_as_pieces(line, 5)
        assert tok.nbest_encode(line, 1) == [tok.encode(line)]
        with_bos = tok.nbest_encode(line, 3, add_bos=True, add_eos=True)
        assert with_bos == [[1, *ids, 2] for ids in tok.nbest_encode(line, 3)]
    scored = tok.nbest_encode_with_scores("hello world", 4)
    assert [ids for ids, _ in scored] == tok.nbest_encode("hello world", 4)
    assert all(a >= b for (_, a), (_, b) in zip(scored, scored[1:]))


def test_the_heap_moves_elements_as_libstdcxx_does():
    """Equal keys leave the heap in push order's libstdc++ permutation, not in Python's heapq order."""
    heap = StdHeap(lambda item: item[0])
    for item in [(1, "a"), (1, "b"), (2, "c"), (1, "d"), (2, "e"), (1, "f"), (1, "g")]:
        heap.push(item)
    assert [heap.pop()[1] for _ in range(7)] == ["c", "e", "a", "f", "g", "b", "d"]


def test_a_bpe_model_has_no_nbest_and_sampling_arguments_follow_sentencepiece():
    sp, tok = model("bpe")
    with pytest.raises(RuntimeError, match="NBestEncode is not available"):
        sp.nbest_encode_as_ids("hello", 3)
    with pytest.raises(ValueError, match="only defined for a Unigram model"):
        tok.nbest_encode("hello", 3)
    _, uni = model("unigram")
    for bad, phrase in ((0, "nbest_size > 1"), (1, "nbest_size > 1"), (513, "at most 512")):
        with pytest.raises(ValueError, match=phrase):
            uni.encode("hello", enable_sampling=True, nbest_size=bad)
        with pytest.raises((ValueError, RuntimeError)):
            sp.encode("hello", enable_sampling=True, nbest_size=bad, alpha=0.1)
    with pytest.raises(ValueError, match="alpha"):
        uni.encode("hello", enable_sampling=True, alpha=float("nan"))
    with pytest.raises(TypeError, match="nbest_size"):
        uni.nbest_encode("hello", 2.5)
    assert uni.encode("hello", enable_sampling=True, seed=3) == uni.encode("hello", enable_sampling=True, seed=3)
    assert uni.encode("", enable_sampling=True) == [] and uni.nbest_encode("", 3) == [[]]


def frequencies(draw) -> dict[tuple, float]:
    counts = Counter(tuple(draw()) for _ in range(DRAWS))
    return {k: c / DRAWS for k, c in counts.items()}


def assert_matches(freq: dict[tuple, float], exact: dict[tuple, float]) -> None:
    """Every outcome within five standard errors of its exact probability; nothing outside the support."""
    assert set(freq) <= set(exact), set(freq) - set(exact)
    for outcome, p in exact.items():
        f = freq.get(outcome, 0.0)
        assert abs(f - p) <= 5 * math.sqrt(p * (1 - p) / DRAWS) + 1e-3, (outcome, f, p)


def sp_draws(sp, text: str, **options):
    spm.set_random_generator_seed(7)
    return lambda: sp.encode(text, enable_sampling=True, **options)


@pytest.mark.parametrize("nbest_size", [-1, 4])
def test_unigram_samples_follow_the_exact_path_probabilities(nbest_size):
    sp, tok = model("unigram")
    text, alpha = "unbelievable", 0.1
    pool = tok.nbest_encode_with_scores(text, 1024 if nbest_size < 0 else nbest_size)
    assert len(pool) < 1024  # every segmentation, for nbest_size < 0
    z = sum(math.exp(alpha * s) for _, s in pool)
    exact = {tuple(ids): math.exp(alpha * s) / z for ids, s in pool}
    assert sum(p > 0.05 for p in exact.values()) >= 3  # a distribution worth testing
    rng = random.Random(11)
    assert_matches(frequencies(lambda: tok.encode(text, enable_sampling=True, alpha=alpha, nbest_size=nbest_size,
                                                  seed=rng)), exact)
    assert_matches(frequencies(sp_draws(sp, text, alpha=alpha, nbest_size=nbest_size)), exact)


def test_bpe_dropout_samples_follow_the_exact_probabilities():
    sp, tok = model("bpe")
    text, alpha = "lowering", 0.25
    exact = {tuple(pid for _, pid in seg): p
             for seg, p in tok.model.dropout_distribution(tok.normalize(text), alpha).items()}
    assert abs(sum(exact.values()) - 1) < 1e-9 and sum(p > 0.05 for p in exact.values()) >= 3
    rng = random.Random(5)
    assert_matches(frequencies(lambda: tok.encode(text, enable_sampling=True, alpha=alpha, seed=rng)), exact)
    assert_matches(frequencies(sp_draws(sp, text, alpha=alpha, nbest_size=-1)), exact)
    assert tok.encode(text, enable_sampling=True, alpha=0.0) == tok.encode(text) == sp.encode(text)
    assert tok.encode_as_pieces(text, enable_sampling=True, alpha=1.0) == sp.encode(
        text, out_type=str, enable_sampling=True, alpha=1.0, nbest_size=-1)
