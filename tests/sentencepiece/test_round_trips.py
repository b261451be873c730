"""Where decode(encode(x)) == x holds for a sentencepiece model, and exactly where and why it does not."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toklab.base.pieces import SPACE
from toklab.sentencepiece import SentencePieceTokenizer

from .helpers import TRICKY, tiny_tokenizer

NO_META = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters=SPACE), max_size=40)


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
@pytest.mark.parametrize("dummy", [True, False])
def test_lossless_configuration_round_trips(sp_model, model_type, dummy):
    """identity + whitespace kept + byte fallback: decode(encode(x)) == x for any text without a literal ▁."""
    sp = sp_model(model_type=model_type, normalization_rule_name="identity", byte_fallback=True,
                  remove_extra_whitespaces=False, add_dummy_prefix=dummy)
    tok = SentencePieceTokenizer.from_sentencepiece(sp)

    @given(st.one_of(NO_META, st.lists(st.sampled_from([t for t in TRICKY if t != SPACE])).map("".join)))
    def check(text):
        ids = tok.encode(text)
        assert tok.decode(ids) == text
        assert ids == sp.encode(text)

    check()
    # The one exception: a literal ▁ comes back as a space.
    assert tok.decode(tok.encode("x" + SPACE + "y")) == "x y"


def test_where_round_trips_break(sp_model):
    nmt_bf = SentencePieceTokenizer.from_sentencepiece(sp_model(model_type="unigram", byte_fallback=True))
    # NFKC rewrites compatibility characters: the original spelling is gone.
    assert nmt_bf.decode(nmt_bf.encode("Ａ①")) == "A1"
    # Whitespace removal: runs collapse, ends are trimmed.
    ws = SentencePieceTokenizer.from_sentencepiece(sp_model(model_type="unigram", normalization_rule_name="identity",
                                                            byte_fallback=True))
    assert ws.decode(ws.encode("  a  b ")) == "a b"
    # Without byte fallback an uncovered character becomes <unk> and is lost.
    unk = SentencePieceTokenizer.from_sentencepiece(sp_model(model_type="unigram", normalization_rule_name="identity"))
    assert "龘" not in unk.get_vocab() and unk.encode("a龘b").count(unk.unk_id) == 1
    assert unk.decode(unk.encode("a龘b")) == "a \u2047 b"
    # The dummy prefix is dropped again by decode of a whole sequence...
    dummy = SentencePieceTokenizer.from_sentencepiece(sp_model(model_type="unigram", normalization_rule_name="identity",
                                                               byte_fallback=True, remove_extra_whitespaces=False))
    ids = dummy.encode("hello world")
    assert dummy.normalize("hello world") == SPACE + "hello" + SPACE + "world"
    assert dummy.decode(ids) == "hello world"
    # ...but decoding token by token strips it from every token that starts with ▁:
    # the spaces between words vanish (a streaming-detokenization trap).
    assert "".join(dummy.decode([i]) for i in ids) == "helloworld"


def test_d05_nfkc_lossy_byte_fallback_lossless(sp_model):
    """D05 (CONTENT.md §7): coverage and fidelity are separate questions."""
    nfkc = tiny_tokenizer(normalization="nfkc")
    assert nfkc.normalize("Ａ①") == SPACE + "A1"
    assert unicodedata.normalize("NFKC", "Ａ①") == "A1"
    sp = sp_model(model_type="bpe", normalization_rule_name="identity", byte_fallback=True, add_dummy_prefix=False)
    tok = SentencePieceTokenizer.from_sentencepiece(sp)
    assert "龘" not in tok.get_vocab()
    assert tok.encode_as_pieces("龘") == ["<0xE9>", "<0xBE>", "<0x98>"] == sp.encode("龘", out_type=str)
    assert "龘".encode("utf-8") == b"\xe9\xbe\x98"
    assert tok.decode(tok.encode("龘")) == "龘"
