"""Symbols: user-defined (cut out whole), control (never from text), unknown runs, byte pieces."""

from __future__ import annotations

import pytest

from toklab.base.pieces import SPACE
from toklab.sentencepiece import SentencePieceTokenizer

from .helpers import ORACLE_CONFIGS


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_user_defined_and_control_symbols(sp_model, model_type):
    sp = sp_model(**ORACLE_CONFIGS["unigram-nmt-bf-user" if model_type == "unigram" else "bpe-nmt-user"])
    tok = SentencePieceTokenizer.from_sentencepiece(sp)
    kinds = {p.piece: p.kind for p in tok.pieces}
    assert kinds["<tag>"] == kinds["ab"] == kinds["Ａ"] == "user"
    assert kinds["<s>"] == kinds["</s>"] == kinds["<ctl>"] == "control"
    # User-defined symbols are cut out whole, wherever they occur...
    pieces = tok.encode_as_pieces("x<tag>yabz<tag><tag>")
    assert pieces.count("<tag>") == 3 and "ab" in pieces
    # ...and are exempt from normalization (Ａ stays fullwidth, Ｂ becomes B).
    assert tok.normalize("ＡＢ") == SPACE + "ＡB" == sp.normalize("ＡＢ")
    # Control symbols never come from text, only from the caller.
    for text in ("<s>", "</s>", "<ctl>", "a<s>b"):
        assert not any(tok.kind(i) == "control" for i in tok.encode(text))
        assert tok.encode(text) == sp.encode(text)
    ids = tok.encode("ab", add_bos=True, add_eos=True)
    assert ids == sp.encode("ab", add_bos=True, add_eos=True)
    assert ids[0] == tok.piece_to_id("<s>") and ids[-1] == tok.piece_to_id("</s>")
    assert tok.decode(ids) == "ab" == sp.decode(ids)  # control pieces vanish in decode


def test_unknown_runs_and_bytes(sp_model):
    for model_type in ("unigram", "bpe"):
        sp = sp_model(model_type=model_type, normalization_rule_name="identity")
        tok = SentencePieceTokenizer.from_sentencepiece(sp)
        # A run of uncovered characters is one <unk>; its surface is the run itself.
        assert tok.encode_as_pieces("龘龘x")[-2:] == ["龘龘", "x"] == sp.encode("龘龘x", out_type=str)[-2:]
        assert tok.encode("龘龘x").count(tok.unk_id) == 1
        bf = SentencePieceTokenizer.from_sentencepiece(sp_model(model_type=model_type, normalization_rule_name="identity",
                                                                byte_fallback=True))
        assert [bf.id_to_piece(i) for i in bf.encode("龘龘")][-6:] == ["<0xE9>", "<0xBE>", "<0x98>"] * 2
    # Byte pieces that are not valid UTF-8 decode to one U+FFFD per byte, as in sentencepiece.
    b = [bf.piece_to_id(f"<0x{x:02X}>") for x in (0xF0, 0x9F, 0x98)] + [bf.piece_to_id("a")]
    assert bf.decode(b) == "\ufffd" * 3 + "a" == sp_model(model_type="bpe", normalization_rule_name="identity",
                                                          byte_fallback=True).decode(b)
    assert b"\xf0\x9f\x98a".decode("utf-8", "replace") == "\ufffda"  # Python would merge them
    # A byte-fallback ▁ decodes as a literal ▁, not as a space.
    meta = [bf.piece_to_id(f"<0x{x:02X}>") for x in SPACE.encode("utf-8")]
    assert bf.decode(meta) == SPACE
