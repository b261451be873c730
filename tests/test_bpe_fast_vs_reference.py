"""The fast trainer and encoder give exactly what the textbook versions give."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab import bpe, corpus, pretokenize
from toklab.bpe import ByteBPE, merge_long, merge_short, reference_encode, reference_train

SLICES = [("en", "gpt2", 40_000), ("zh", "cl100k", 20_000), ("code", "o200k", 40_000), ("mixed", "gpt2", 40_000)]
NUM_MERGES = 250
EOT = "<|endoftext|>"


def byte_words(counts) -> dict[tuple[bytes, ...], int]:
    """Pre-token counts as words of single-byte symbols, for the reference trainer."""
    return {tuple(bytes([b]) for b in piece.encode("utf-8")): c for piece, c in counts.items()}


def reference_ids(tok: ByteBPE, text: str) -> list[int]:
    """Encode with the textbook encoder: split, then apply merges in learned order."""
    encoder = {t: i for i, t in tok.vocab.items()}
    merges = tok.merges
    memo: dict[str, list[int]] = {}
    out: list[int] = []
    for piece in pretokenize.split(text, tok.pattern):
        if piece not in memo:
            syms = reference_encode([bytes([b]) for b in piece.encode("utf-8")], merges)
            memo[piece] = [encoder[s] for s in syms]
        out.extend(memo[piece])
    return out


@pytest.fixture(scope="module")
def slices():
    return {name: (pattern, corpus.load(name, size)) for name, pattern, size in SLICES}


@pytest.mark.parametrize("tie_break", ["smallest", "largest"])
@pytest.mark.parametrize("name", [s[0] for s in SLICES])
def test_fast_train_equals_reference_on_corpus(name, tie_break, slices):
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


def test_min_frequency_fast_equals_reference(slices):
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
def test_fast_train_equals_reference_on_random_text(text, n, tie_break, pattern, min_frequency):
    words = byte_words(bpe.pretoken_counts(text, pattern))
    ref = reference_train(words, n, tie_break=tie_break, min_frequency=min_frequency)
    tok = bpe.train(text, 256 + n, pattern=pattern, tie_break=tie_break, min_frequency=min_frequency)
    assert tok.merges == ref


@settings(max_examples=100)
@given(docs=st.lists(st.text(alphabet="xyz z\n", min_size=1, max_size=40), min_size=1, max_size=6), n=st.integers(1, 25))
def test_fast_train_equals_reference_on_documents(docs, n):
    counts = bpe.pretoken_counts(docs)
    ref = reference_train(byte_words(counts), n)
    assert bpe.train(docs, 256 + n).merges == ref
    # documents are separate: no pre-token spans two of them
    assert sum(counts.values()) == sum(len(pretokenize.split(d)) for d in docs)


# ---------------------------------------------------------------- encoding


@pytest.fixture(scope="module")
def trained(slices):
    _, en = slices["en"]
    _, zh = slices["zh"]
    return {
        "gpt2": bpe.train(en, 256 + 500, pattern="gpt2"),
        "cl100k": bpe.train(zh + en[:10_000], 256 + 500, pattern="cl100k"),
        "o200k": bpe.train(en, 256 + 400, pattern="o200k", tie_break="largest"),
    }


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_fast_encode_equals_reference_on_corpus(pattern, trained):
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
def test_fast_encode_equals_reference_on_random_text(pattern, trained, text):
    tok = trained[pattern]
    assert tok.encode(text) == reference_ids(tok, text)


@settings(max_examples=200)
@given(text=small_text, n=st.integers(1, 40), probe=st.text(alphabet="abc \n注", max_size=120))
def test_trained_then_encoded_equals_reference_random(text, n, probe):
    tok = bpe.train(text, 256 + n)
    assert tok.encode(probe) == reference_ids(tok, probe)
    assert tok.encode(text) == reference_ids(tok, text)


# ------------------------------------------------------- long chunks (heap path)


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


@pytest.mark.parametrize("unit", ["a", " ", "ab", "the ", "注", "7", "=-"])
def test_merge_long_equals_tiktoken_on_100kb_runs(unit, trained, real):
    """100 KB single chunks: the heap merge against tiktoken's own BPE on the same ranks."""
    data = (unit * 100_000).encode("utf-8")[:100_000]
    for tok, enc in ((trained["gpt2"], trained["gpt2"].to_tiktoken()), (real("cl100k_base")[1], real("cl100k_base")[2])):
        ranks = tok.mergeable_ranks()
        ids = [ranks[p] for p in merge_long(data, ranks)]
        assert ids == enc._encode_single_piece(data)
        assert b"".join(tok.tokens(ids)) == data


# -------------------------------------------------- special tokens and layout


def test_special_tokens_are_never_merged_into(slices):
    _, en = slices["en"]
    docs = [en[i : i + 400] for i in range(0, 30_000, 400)]
    assert not any(s in en for s in ("<|", "|>", "endoftext"))
    text = EOT.join(docs)
    counts = bpe.pretoken_counts(text, special_tokens=[EOT])
    assert not any(("<|" in p or "|>" in p or "endoftext" in p) for p in counts)
    tok = bpe.train(text, 256 + 300 + 1, special_tokens=[EOT])
    for token in tok.vocab.values():
        assert b"<|" not in token and b"|>" not in token and b"endof" not in token and b"oftext" not in token
    # the special itself is one ID, the last one
    eot_id = tok.special_tokens[EOT]
    assert eot_id == 256 + 300
    ids = tok.encode(text, allowed_special="all")
    assert ids.count(eot_id) == len(docs) - 1
    assert tok.decode(ids) == text
    # without the special registered, "<|" is the most frequent pair around it and gets merged
    plain = bpe.train(text, 256 + 300)
    assert any(b"endof" in t or b"<|" in t or b"|>" in t for t in plain.vocab.values())


def test_vocab_layout(slices):
    _, text = slices["mixed"]
    specials = ["<|endoftext|>", "<|pad|>", "<|im_start|>"]
    vocab_size = 256 + 321 + len(specials)
    tok = bpe.train(text, vocab_size, special_tokens=specials)
    merges = tok.merges
    assert len(merges) == 321
    assert len(tok.vocab) + len(tok.special_tokens) == vocab_size
    assert len(tok) == vocab_size == tok.n_vocab
    assert all(tok.vocab[b] == bytes([b]) for b in range(256))
    assert all(tok.vocab[256 + k] == a + b for k, (a, b) in enumerate(merges))
    assert tok.special_tokens == {s: 256 + 321 + i for i, s in enumerate(specials)}
    assert sorted(tok.vocab) == list(range(256 + 321))
    # each merge joins two tokens that already existed
    for k, (a, b) in enumerate(merges):
        enc = {t: i for i, t in tok.vocab.items()}
        assert enc[a] < 256 + k and enc[b] < 256 + k
