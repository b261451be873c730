"""`toklab.bpe.encode.Cuts`: no token spans a cut, and cutting never changes the IDs."""

from __future__ import annotations

import pickle
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab.bpe import ByteBPE, merge_chunk
from toklab.bpe import model as bpe_model
from toklab.bpe.encode import Cuts, boundary_pairs
from toklab.data import corpus
from toklab.pre_tokenizers import patterns

NAMES = ("r50k_base", "cl100k_base", "o200k_base")

# Scripts with and without spaces, partial-byte tokens, emoji and combining marks.
ALPHABET = (
    "注意力机制是深度学习中的一种方法我们今天学习分词。，"
    "日本語のテキストカタカナ한국어문장입니다привет мирcafé naïve"
    "😀👍🏽‍️🇯🇵 \u0301\u00a0\u3000abc123.,'"
)


def mixed_text(n: int, seed: int) -> str:
    rng = random.Random(seed)
    zh = corpus.load("zh", 60_000)
    mixed = corpus.load("mixed", 60_000)
    noise = "".join(rng.choice(ALPHABET) for _ in range(n // 4))
    return zh[: n // 2] + mixed[: n // 4] + noise


_RANKS: dict[int, dict[bytes, int]] = {}


def ranks_of(tok: ByteBPE) -> dict[bytes, int]:
    """The tokens merging can make, with their ranks (built once per tokenizer)."""
    if id(tok) not in _RANKS:
        _RANKS[id(tok)] = {t: r for t, r in tok.mergeable_ranks().items() if len(t) > 1}
    return _RANKS[id(tok)]


@pytest.fixture(scope="module")
def tokenizers(real, trained):
    toks = {name: real(name)[1] for name in NAMES}
    toks["trained-cl100k"] = trained["cl100k"]
    return toks


def test_boundary_pairs_name_whole_characters_or_the_bytes_held():
    assert list(boundary_pairs(" “".encode())) == [(" ", "“")]
    assert list(boundary_pairs("中文".encode())) == [("中", "文")]
    # a token that starts inside one character and ends inside the next
    assert list(boundary_pairs(b"\x84\xe7")) == [(b"\x84", b"\xe7")]
    assert list(boundary_pairs("’s".encode())) == [("’", "s")]
    # bytes valid text never holds: a lead byte cut short, or an overlong form
    assert list(boundary_pairs(b"\xe4\xb8a")) == []
    assert list(boundary_pairs(b"a\xc0\xaf")) == []
    assert list(boundary_pairs(b"abc")) == [("a", "b"), ("b", "c")]


def test_a_line_of_chinese_falls_apart_into_short_pieces(real):
    tok = real("cl100k_base")[1]
    line = "我们今天学习分词这是一个很长的中文句子没有空格"
    pieces = tok.cuts.pieces(line)
    assert "".join(pieces) == line
    assert len(pieces) > len(line) // 2
    assert max(map(len, pieces)) <= 3


def cut_positions(pieces: list[str]) -> list[int]:
    """Byte offsets of the cuts between pieces."""
    out, pos = [], 0
    for piece in pieces[:-1]:
        pos += len(piece.encode("utf-8"))
        out.append(pos)
    return out


@pytest.mark.parametrize("name", [*NAMES, "trained-cl100k"])
def test_no_token_spans_a_cut(name, tokenizers):
    """Brute force: mark every byte position inside any occurrence of any token, then check the cuts."""
    tok = tokenizers[name]
    text = mixed_text(12_000, seed=3)
    data = text.encode("utf-8")
    spanned = bytearray(len(data) + 1)
    for token in ranks_of(tok):
        if token.isascii():
            continue  # it can only span boundaries between two ASCII characters, never cut
        start = data.find(token)
        while start >= 0:
            spanned[start + 1 : start + len(token)] = b"\x01" * (len(token) - 1)
            start = data.find(token, start + 1)
    cuts = Cuts(ranks_of(tok))
    offset, checked = 0, 0
    for chunk in patterns.split(text, tok.pattern):
        pieces = cuts.pieces(chunk)
        assert "".join(pieces) == chunk
        for pos in cut_positions(pieces):
            left, right = data[offset + pos - 1], data[offset + pos]
            assert not (left < 0x80 and right < 0x80), (chunk, pos)
            assert not spanned[offset + pos], f"a token spans the cut at byte {pos} of {chunk!r}"
            checked += 1
        offset += len(chunk.encode("utf-8"))
    assert checked > 1000


@pytest.mark.parametrize("name", [*NAMES, "trained-cl100k"])
def test_segment_equals_merge_chunk_on_corpus(name, tokenizers):
    tok = tokenizers[name]
    ranks, vocab = ranks_of(tok), tok.get_vocab()
    text = mixed_text(30_000, seed=5)
    for chunk in set(patterns.split(text, tok.pattern)):
        data = chunk.encode("utf-8")
        expected = [vocab[data]] if data in vocab else [vocab[p] for p in merge_chunk(data, ranks)]
        assert tok.segment(chunk) == expected, chunk


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=150, deadline=None)
@given(chunk=st.text(alphabet=ALPHABET, min_size=2, max_size=80))
def test_cut_pieces_merge_to_the_whole_chunk_on_random_text(name, tokenizers, chunk):
    """Any string, pre-tokenized or not: merging the pieces apart equals merging it whole."""
    tok = tokenizers[name]
    ranks, vocab = ranks_of(tok), tok.get_vocab()
    whole = merge_chunk(chunk.encode("utf-8"), ranks)
    apart = [part for piece in tok.cuts.pieces(chunk) for part in merge_chunk(piece.encode("utf-8"), ranks)]
    assert apart == whole
    if patterns.split(chunk, tok.pattern) == [chunk] and chunk.encode("utf-8") not in vocab:
        assert tok.encode_ordinary(chunk) == [vocab[p] for p in whole]


def test_caches_survive_pickling_and_clearing(real, monkeypatch):
    tok = real("cl100k_base")[1]
    text = corpus.load("zh", 5_000) + corpus.load("mixed", 5_000)
    ids = tok.encode(text)
    again = pickle.loads(pickle.dumps(tok))
    assert again.encode(text) == ids
    fresh = ByteBPE.from_tiktoken("cl100k_base")
    # a tiny limit empties both caches at the start of every call
    monkeypatch.setattr(bpe_model, "CACHE_LIMIT", 10)
    assert fresh.encode(text) == ids and fresh.encode(text) == ids
    assert fresh.encode(text[:100]) == tok.encode(text[:100])


@pytest.mark.parametrize("name", NAMES)
def test_pieces_cut_exactly_where_spanned_says_no(name, tokenizers):
    cuts = tokenizers[name].cuts
    line = mixed_text(6_000, seed=13)
    cut_after = set()
    pos = 0
    for piece in cuts.pieces(line)[:-1]:
        pos += len(piece)
        cut_after.add(pos)
    assert cut_after == {i for i in range(1, len(line)) if not cuts.spanned(line[i - 1], line[i])}
