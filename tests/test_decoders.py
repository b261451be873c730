"""`toklab.decoders`: the way back, against Hugging Face's decoders and sentencepiece's byte handling."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab.base.unicode import to_proxy
from toklab.decoders import ByteLevelDecoder, WordPieceDecoder, decode_utf8_per_byte
from toklab.sentencepiece import SentencePieceTokenizer


@st.composite
def split_bytes(draw, data=st.binary(max_size=40)):
    """Bytes cut into tokens at arbitrary points (inside characters too)."""
    raw = draw(data)
    cuts = sorted(set(draw(st.lists(st.integers(0, len(raw)), max_size=8))))
    bounds = [0, *cuts, len(raw)]
    return [raw[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


_TEXT_BYTES = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20).map(lambda s: s.encode("utf-8"))


@given(split_bytes(_TEXT_BYTES))
def test_byte_level_joins_bytes_before_decoding(tokens):
    """A character split across tokens decodes whole: the bytes are joined first."""
    text = b"".join(tokens).decode("utf-8")
    assert ByteLevelDecoder().decode(tokens) == text
    assert ByteLevelDecoder(errors="strict").decode(tokens) == text


@given(split_bytes())
def test_byte_level_equals_hugging_face(tokens):
    """[real] HF's ``decoders.ByteLevel`` on the same tokens in GPT-2's proxy alphabet."""
    hf = ByteLevelDecoder().to_hf()
    assert ByteLevelDecoder().decode(tokens) == hf.decode([to_proxy(t) for t in tokens])


def test_byte_level_strict_refuses_broken_utf8():
    with pytest.raises(UnicodeDecodeError):
        ByteLevelDecoder(errors="strict").decode([b"\xe6\xb3"])
    assert ByteLevelDecoder().decode([b"\xe6\xb3"]) == "\ufffd"


_PIECES = ["hello", "##world", "##s", ",", ".", "?", "!", "'", "don", "t", "n't", "'m", "'s", "'ve", "'re", "do", "not",
           "a", "##a", "[UNK]", "##", "#", "it"]


@settings(max_examples=300)
@given(st.lists(st.sampled_from(_PIECES), max_size=12), st.booleans())
def test_wordpiece_equals_hugging_face(tokens, cleanup):
    """[real] HF's ``decoders.WordPiece``: ## glue, spaces, and the clean-up replacements token by token."""
    ours = WordPieceDecoder(cleanup=cleanup)
    assert ours.decode(tokens) == ours.to_hf().decode(tokens)


@pytest.fixture(scope="module")
def byte_pieces(sp_model):
    """A sentencepiece model with byte fallback, its reimplementation, and the IDs of <0x00>..<0xFF>."""
    sp = sp_model(model_type="unigram", byte_fallback=True)
    tok = SentencePieceTokenizer.from_sentencepiece(sp)
    return sp, tok, [tok.piece_to_id(f"<0x{b:02X}>") for b in range(256)]


@settings(max_examples=300)
@given(st.binary(max_size=24))
def test_decode_utf8_per_byte_equals_sentencepiece(byte_pieces, data):
    """[real] sentencepiece turns each byte outside a valid character into its own U+FFFD."""
    sp, tok, byte_ids = byte_pieces
    ids = [byte_ids[b] for b in data]
    assert decode_utf8_per_byte(data) == sp.decode(ids) == tok.decode(ids)


@given(_TEXT_BYTES)
def test_decode_utf8_per_byte_of_valid_utf8_is_plain_decoding(data):
    assert decode_utf8_per_byte(data) == data.decode("utf-8")
