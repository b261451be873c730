"""The WordPiece tokenizer object: decoding, lookups and their errors, properties on any text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import decoders

from toklab.normalizers import bert as bert_norm
from toklab.wordpiece import WordPiece

from .helpers import VOCAB_D03, trained_small


def test_decode_follows_hf_wordpiece_decoder():
    vocab = ["[UNK]", "hello", "##world", ",", "don", "'", "t", "it", "s", "n't", ".", "##a", "do", "not"]
    tok = WordPiece(vocab)
    ids = list(range(1, len(vocab)))
    for cleanup in (True, False):
        hf = decoders.WordPiece(cleanup=cleanup)
        assert tok.decode(ids, cleanup=cleanup) == hf.decode([vocab[i] for i in ids])
    assert tok.decode([11, 1]) == "##a hello"  # a leading ## piece keeps its prefix, as in HF
    assert tok.decode([]) == ""


def test_unknown_ids_and_tokens_are_named():
    tok = WordPiece(VOCAB_D03)
    with pytest.raises(ValueError, match=r"unknown token ID 99: not in this vocabulary \(IDs 0..3, 4 entries\) \(at position 1\)"):
        tok.decode([1, 99])
    with pytest.raises(ValueError, match="unknown token ID 7"):
        tok.id_to_token(7)
    with pytest.raises(KeyError, match="token 'zz' is not in the vocabulary"):
        tok.token_to_id("zz")


def test_constructor_errors():
    with pytest.raises(ValueError, match="unk_token '\\[UNK\\]' is not in the vocabulary"):
        WordPiece(["a", "##b"])
    with pytest.raises(ValueError, match="'a' appears twice"):
        WordPiece(["[UNK]", "a", "a"])
    with pytest.raises(ValueError, match="ID 1 is given to both"):
        WordPiece({"[UNK]": 0, "a": 1, "b": 1})
    with pytest.raises(ValueError, match="gaps"):
        WordPiece({"[UNK]": 0, "a": 5}).save("/nonexistent/never-written.txt")
    assert WordPiece({"[UNK]": 3, "a": 0}).encode("a a z") == [0, 0, 3]


@settings(max_examples=200)
@given(text=st.text(max_size=200), lowercase=st.booleans())
def test_tokenize_never_crashes_and_stays_in_vocab(text, lowercase):
    tok = trained_small(lowercase)
    ids = tok.encode(text)
    assert all(i in tok.vocab for i in ids)
    assert tok.tokenize(text) == [tok.id_to_token(i) for i in ids]
    tok.decode(ids)


# Characters clean-up keeps (no controls, formats, private use, surrogates, U+FFFD),
# plus the whitespace characters it turns into spaces.
kept_chars = st.characters(blacklist_categories=("Cc", "Cf", "Co", "Cs"), blacklist_characters="\ufffd")


spacing = st.sampled_from(" \t\n\r\u00a0\u3000\u2028")


@settings(max_examples=200)
@given(text=st.text(st.one_of(kept_chars, spacing), max_size=60), extra=st.lists(st.text(min_size=2, max_size=4)))
def test_pieces_rebuild_the_text_without_whitespace(text, extra):
    chars = sorted(set(text))
    vocab = ["[UNK]"] + chars + ["##" + c for c in chars] + [t for t in extra if t not in chars and t != "[UNK]"]
    tok = WordPiece(list(dict.fromkeys(vocab)), lowercase=False, strip_accents=False)
    pieces = tok.tokenize(text)
    assert "[UNK]" not in pieces
    rebuilt = "".join(p[2:] if p.startswith("##") else p for p in pieces)
    assert rebuilt == "".join(c for c in text if not (c in "\t\n\r" or bert_norm.is_whitespace(c)))


def test_chinese_is_one_word_per_ideograph():
    tok = trained_small(True)
    assert tok.words("北京大学，in 2024年") == ["北", "京", "大", "学", "，", "in", "2024", "年"]
