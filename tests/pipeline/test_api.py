"""One API across the tokenizers: ByteBPE, WordPiece, Unigram, SentencePieceTokenizer, Pipeline.

``encode``, ``decode``, ``token_to_id``, ``id_to_token``, ``len()``, ``vocab``
(ID -> token) and ``get_vocab()`` (token -> ID), with one error rule: an
unknown ID raises ValueError naming it and the valid range, an unknown token
string raises KeyError naming it. ``piece_to_id`` is the one lookup that
returns the unknown ID instead, because sentencepiece's does.
"""

from __future__ import annotations

import re
from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toklab
from toklab import unigram as ug
from toklab.base.pieces import SPACE, escape
from toklab.data import corpus
from toklab.pipeline import Pipeline
from toklab.sentencepiece import train_sentencepiece

from ..helpers import small_wordpiece
from .helpers import trained

NAMES = ["bytebpe", "cl100k_base", "wordpiece", "unigram", "unigram-bytes", "sentencepiece", "pipeline"]
# a token of each kind that no vocabulary here holds
NOT_A_TOKEN = {bytes: b"\xff\xfe not a token", str: "zz-not-a-token-zz"}


@lru_cache(maxsize=None)
def _unigram_lines() -> tuple[str, ...]:
    return tuple(escape(ln) for ln in corpus.load("en", 20_000).splitlines() if ln.strip())


@lru_cache(maxsize=None)
def _built(name: str):
    if name == "bytebpe":
        return trained()
    if name == "wordpiece":
        return small_wordpiece()
    if name == "unigram":
        return ug.train(list(_unigram_lines()), 600, special_tokens=["<s>", "</s>"])
    if name == "unigram-bytes":
        return ug.train(list(_unigram_lines()), 800, byte_fallback=True)
    if name == "sentencepiece":
        lines = [ln for n in ("en", "zh") for ln in corpus.load(n, 30_000).splitlines() if ln.strip()]
        return toklab.SentencePieceTokenizer.from_sentencepiece(
            train_sentencepiece(lines, vocab_size=1500, model_type="unigram")
        )
    if name == "pipeline":
        return Pipeline(trained(), normalizer="NFKC", bos="<|bos|>", eos="<|eos|>")
    raise KeyError(name)


@pytest.fixture(scope="module")
def tokenizer(real):
    return lambda name: real(name)[1] if name.endswith("_base") else _built(name)


def _all_ids(tok) -> set[int]:
    """Every assigned ID: the vocabulary, plus ByteBPE's special tokens (which it keeps apart)."""
    return set(tok.vocab) | set(getattr(tok, "special_tokens", {}).values())


def test_the_public_api_is_re_exported():
    for cls in (toklab.ByteBPE, toklab.WordPiece, toklab.Unigram, toklab.SentencePieceTokenizer, toklab.Pipeline):
        for method in ("encode", "decode", "token_to_id", "id_to_token", "__len__", "get_vocab"):
            assert callable(getattr(cls, method, None)), (cls.__name__, method)
    assert toklab.trace is toklab.pipeline.trace


@pytest.mark.parametrize("name", NAMES)
def test_vocab_get_vocab_len_and_lookups_agree(name, tokenizer):
    tok = tokenizer(name)
    vocab = tok.vocab
    assert isinstance(vocab, dict) and vocab
    kind = type(next(iter(vocab.values())))
    assert kind in (bytes, str)
    assert all(type(i) is int and type(t) is kind for i, t in vocab.items())
    assert tok.get_vocab() == {t: i for i, t in vocab.items()}  # token -> ID, the inverse of vocab
    assert len(tok) == len(_all_ids(tok))
    for i, token in vocab.items():
        assert tok.id_to_token(i) == token
        assert tok.token_to_id(token) == i
    for special, i in getattr(tok, "special_tokens", {}).items():
        assert tok.token_to_id(tok.id_to_token(i)) == i, special


@pytest.mark.parametrize("name", NAMES)
def test_encode_decode_and_ids_in_range(name, tokenizer):
    tok = tokenizer(name)
    text = "the cat sat on the mat."
    if name.startswith("unigram"):
        text = escape(text)  # a Unigram model sees sentencepiece's escaped text
    ids = tok.encode(text)
    assert ids and all(type(i) is int for i in ids)
    assert set(ids) <= _all_ids(tok)
    assert isinstance(tok.decode(ids), str)
    assert tok.decode(ids) == text


@pytest.mark.parametrize("name", NAMES)
def test_unknown_id_is_a_value_error_naming_it_and_the_range(name, tokenizer):
    tok = tokenizer(name)
    top = max(_all_ids(tok))
    gaps = sorted(set(range(top)) - _all_ids(tok))[:2]  # cl100k_base leaves IDs unassigned
    for bad in [top + 1, top + 1000, -1, 10**9, *gaps]:
        for call in (lambda: tok.id_to_token(bad), lambda: tok.decode([bad])):
            with pytest.raises(ValueError) as exc:
                call()
            message = str(exc.value)
            assert re.search(rf"(?<![\d-]){bad}\b", message), message
            assert f"0..{top}" in message, message


@pytest.mark.parametrize("name", NAMES)
def test_unknown_token_is_a_key_error_naming_it(name, tokenizer):
    tok = tokenizer(name)
    kind = type(next(iter(tok.vocab.values())))
    token = NOT_A_TOKEN[kind]
    with pytest.raises(KeyError) as exc:
        tok.token_to_id(token)
    assert repr(token) in exc.value.args[0]


@pytest.mark.parametrize("name", ["unigram", "unigram-bytes", "sentencepiece"])
def test_piece_to_id_returns_the_unknown_id_as_sentencepiece_does(name, tokenizer):
    tok = tokenizer(name)
    assert tok.piece_to_id(NOT_A_TOKEN[str]) == tok.unk_id
    assert tok.piece_to_id("") == tok.unk_id
    for i, piece in list(tok.vocab.items())[:300]:
        assert tok.piece_to_id(piece) == i == tok.token_to_id(piece)


def test_piece_to_id_equals_the_real_library(sp_model):
    sp = sp_model(model_type="unigram", byte_fallback=True)
    tok = toklab.SentencePieceTokenizer.from_sentencepiece(sp)
    model = toklab.sentencepiece.load_unigram(sp)
    for piece in ["<unk>", "<s>", "</s>", "<0x41>", SPACE + "the", "the", NOT_A_TOKEN[str], "", "\u2581\u2581"]:
        assert tok.piece_to_id(piece) == model.piece_to_id(piece) == sp.piece_to_id(piece), piece


@settings(max_examples=200)
@given(data=st.data())
def test_unigram_decode_inverts_encode_on_covered_text(data):
    """Every character a piece: decode(encode(x)) == x (unknown characters print as " ⁇ ")."""
    model = _built("unigram")
    chars = sorted(p for p in model.pieces if len(p) == 1)
    text = data.draw(st.text(alphabet=chars, max_size=60))
    assert model.decode(model.encode(text)) == text
    assert "".join(model.viterbi(text)) == text


@settings(max_examples=200)
@given(text=st.text(st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_unigram_with_byte_fallback_decode_inverts_encode_on_any_text(text):
    model = _built("unigram-bytes")
    ids = model.encode(text)
    assert model.unk_id not in ids
    assert model.decode(ids) == text


def test_unigram_decode_of_unknowns_and_control_pieces():
    model = _built("unigram")
    ids = model.encode("\u2581the龘\u2581cat")
    assert model.unk_id in ids
    assert model.decode(ids) == "\u2581the \u2047 \u2581cat"  # sentencepiece's surface for <unk>
    bos, eos = model.token_to_id("<s>"), model.token_to_id("</s>")
    assert model.decode([bos, *model.encode("\u2581cat"), eos]) == "\u2581cat"  # control pieces vanish


def test_lone_surrogates_follow_one_rule_and_bool_ids_get_clear_errors():
    """A lone surrogate is U+FFFD in a sentencepiece model too (toklab's one rule; the library refuses the str)."""
    from toklab import ByteBPE, SentencePieceTokenizer
    from toklab.sentencepiece.model_file import SPConfig

    tok = SentencePieceTokenizer([("<unk>", 0.0, "unknown"), ("a", -1.0), ("b", -2.0)], SPConfig(normalization="identity"))
    assert tok.encode("a\ud800b") == tok.encode("a\ufffdb") == [0, 1, 0, 2]  # ▁ and U+FFFD unknown
    cl100k = ByteBPE.from_tiktoken("cl100k_base")
    with pytest.raises(ValueError, match="not a bool"):
        cl100k.id_to_token(True)


def test_every_tokenizer_reads_a_lone_surrogate_as_u_fffd():
    """One rule (tiktoken's): a lone surrogate has no UTF-8 form and encodes as U+FFFD, in every family."""
    import warnings

    from toklab import ByteBPE, SentencePieceTokenizer, WordPiece, train_wordpiece
    from toklab.sentencepiece.model_file import SPConfig

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wp = train_wordpiece("hello world the quick brown fox " * 30, 120, allow_smaller=True)
    tokenizers = {
        "ByteBPE": ByteBPE.from_tiktoken("cl100k_base"),
        "WordPiece": wp,
        "WordPiece without clean_text": WordPiece([*sorted(wp.get_vocab(), key=wp.get_vocab().get), "\ufffd"],
                                                  clean_text=False),  # U+FFFD a token: a surrogate is it
        "SentencePieceTokenizer": SentencePieceTokenizer([("<unk>", 0.0, "unknown"), ("a", -1.0), ("b", -2.0)],
                                                         SPConfig(normalization="identity")),
        "Unigram": _built("unigram"),
        "Pipeline": _built("pipeline"),
    }
    for name, tok in tokenizers.items():
        for text, same in (("he\ud800llo", "he\ufffdllo"), ("a\udfffb \ud83d", "a\ufffdb \ufffd")):
            assert tok.encode(text) == tok.encode(same), name
            if hasattr(tok, "encode_with_offsets"):
                got, want = tok.encode_with_offsets(text), tok.encode_with_offsets(same)
                assert list(got.ids) == list(want.ids) and got.offsets == want.offsets, name
