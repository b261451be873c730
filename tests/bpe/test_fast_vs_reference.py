"""The fast trainer and encoder give exactly what the textbook versions give.

Each test is named after the pair it ties: `toklab.bpe.train` with
`toklab.bpe.reference_train`, `ByteBPE.encode` (the engine
`toklab.bpe.encode.merge_chunk`) with `toklab.bpe.reference_encode`, and the
engine's two paths, `merge_long` (a heap, for long chunks) with `merge_short`.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab import bpe
from toklab.bpe import merge_long, merge_short, reference_train
from toklab.data import corpus
from toklab.pre_tokenizers import patterns

from .helpers import NUM_MERGES, SLICES, byte_words, reference_ids


# ---------------------------------------------------------------- training


@pytest.mark.parametrize("tie_break", ["smallest", "largest"])
@pytest.mark.parametrize("name", [s[0] for s in SLICES])
def test_train_equals_reference_train_on_corpus(name, tie_break, slices):
    pattern, text = slices[name]
    counts = bpe.pretoken_counts(text, pattern)
    ref = reference_train(byte_words(counts), NUM_MERGES, tie_break=tie_break)
    tok = bpe.train(text, 256 + NUM_MERGES, pattern=pattern, tie_break=tie_break)
    assert len(ref) == NUM_MERGES
    assert tok.merges == ref


def test_tie_breaks_really_differ_on_corpus(slices):
    # otherwise the parametrisation above would test one thing twice
    _, text = slices["en"]
    a = bpe.train(text, 256 + NUM_MERGES, tie_break="smallest").merges
    b = bpe.train(text, 256 + NUM_MERGES, tie_break="largest").merges
    assert a != b


def test_train_equals_reference_train_with_min_frequency(slices):
    _, text = slices["en"]
    text = text[:8000]
    counts = bpe.pretoken_counts(text)
    for mf in (2, 5, 20):
        ref = reference_train(byte_words(counts), 5000, min_frequency=mf)
        tok = bpe.train(text, 256 + 5000, min_frequency=mf)
        assert tok.merges == ref
        assert len(ref) < 5000
        assert len(tok.vocab) == 256 + len(ref)


small_text = st.text(alphabet="abcab \n注", min_size=1, max_size=120)


@settings(max_examples=250)
@given(
    text=small_text,
    n=st.integers(1, 40),
    tie_break=st.sampled_from(["smallest", "largest"]),
    pattern=st.sampled_from(["gpt2", "cl100k", "o200k"]),
    min_frequency=st.sampled_from([1, 1, 2, 3]),
)
def test_train_equals_reference_train_on_random_text(text, n, tie_break, pattern, min_frequency):
    words = byte_words(bpe.pretoken_counts(text, pattern))
    ref = reference_train(words, n, tie_break=tie_break, min_frequency=min_frequency)
    tok = bpe.train(text, 256 + n, pattern=pattern, tie_break=tie_break, min_frequency=min_frequency)
    assert tok.merges == ref


@settings(max_examples=100)
@given(docs=st.lists(st.text(alphabet="xyz z\n", min_size=1, max_size=40), min_size=1, max_size=6), n=st.integers(1, 25))
def test_train_equals_reference_train_on_documents(docs, n):
    counts = bpe.pretoken_counts(docs)
    ref = reference_train(byte_words(counts), n)
    assert bpe.train(docs, 256 + n).merges == ref
    # documents are separate: no pre-token spans two of them
    assert sum(counts.values()) == sum(len(patterns.split(d)) for d in docs)


# ---------------------------------------------------------------- encoding


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_encode_equals_reference_encode_on_corpus(pattern, trained):
    tok = trained[pattern]
    for name in corpus.CORPUS:
        text = corpus.load(name, 60_000)[40_000:]  # text the tokenizer was not trained on
        assert tok.encode(text) == reference_ids(tok, text), name


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
@settings(max_examples=150)
@given(
    text=st.one_of(
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=100),
        st.text(alphabet="the quick brown fox 注意力机制\n  ", max_size=200),
    )
)
def test_encode_equals_reference_encode_on_random_text(pattern, trained, text):
    tok = trained[pattern]
    assert tok.encode(text) == reference_ids(tok, text)


@settings(max_examples=200)
@given(text=small_text, n=st.integers(1, 40), probe=st.text(alphabet="abc \n注", max_size=120))
def test_train_then_encode_equals_reference_encode_on_random_text(text, n, probe):
    tok = bpe.train(text, 256 + n)
    assert tok.encode(probe) == reference_ids(tok, probe)
    assert tok.encode(text) == reference_ids(tok, text)


# ------------------------------------------------- long chunks (heap path)


@pytest.fixture(scope="module")
def rank_tables(trained, real):
    return {
        "trained-gpt2": trained["gpt2"].mergeable_ranks(),
        "trained-cl100k": trained["cl100k"].mergeable_ranks(),
        "cl100k_base": real("cl100k_base")[1].mergeable_ranks(),
    }


@pytest.mark.parametrize("table", ["trained-gpt2", "trained-cl100k", "cl100k_base"])
@settings(max_examples=120)
@given(
    data=st.one_of(
        st.text(alphabet="ab e注", min_size=17, max_size=200).map(lambda s: s.encode("utf-8")),
        st.text(alphabet="the n", min_size=49, max_size=300).map(lambda s: s.encode("utf-8")),
        st.binary(min_size=49, max_size=200),
    )
)
def test_merge_long_equals_merge_short(table, rank_tables, data):
    ranks = rank_tables[table]
    assert merge_long(data, ranks) == merge_short(data, ranks)


@pytest.mark.parametrize("table", ["trained-gpt2", "cl100k_base"])
@pytest.mark.parametrize("unit", ["a", " ", "ab", "the ", "注", "0", "ab\n"])
def test_merge_long_equals_merge_short_on_runs(table, unit, rank_tables):
    ranks = rank_tables[table]
    data = (unit * 2000).encode("utf-8")[:1500]
    assert merge_long(data, ranks) == merge_short(data, ranks)
