"""`toklab.wordpiece.train`: from text or a file to a tokenizer, and its errors."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab import wordpiece as wp
from toklab.data import corpus
from toklab.normalizers.bert import BertNormalizer
from toklab.pre_tokenizers.bert import bert_words
from toklab.wordpiece import WordPiece

from .helpers import SPECIALS


def test_train_end_to_end_and_frequency_option():
    text = corpus.load("en", 30_000)
    tok = wp.train(text, 600)
    assert isinstance(tok, WordPiece) and len(tok) == 600
    assert [tok.id_to_token(i) for i in range(5)] == SPECIALS
    assert tok.unk_id == 1
    freq = wp.train(text, 600, score="frequency")
    assert [freq.id_to_token(i) for i in range(600)] == wp.train_vocab(
        wp.word_counts(text), 600, special_tokens=SPECIALS, score="frequency"
    )


def test_train_from_file_equals_train_from_text(tmp_path):
    text = corpus.load("mixed", 60_000)  # has CRLF line endings
    path = tmp_path / "mixed.txt"
    path.write_text(text, encoding="utf-8", newline="")
    assert wp.word_counts(path) == wp.word_counts(text)
    a, b = wp.train(path, 1500), wp.train([text], 1500)
    assert a.vocab == b.vocab


def test_training_errors():
    with pytest.raises(ValueError, match="corpus is empty"):
        wp.train("", 100)
    with pytest.raises(ValueError, match="corpus is empty"):
        wp.train(["  \t\n", "\x00\ufffd"], 100)
    # a, b, c and ##b, ##c after the 5 specials
    with pytest.raises(ValueError, match=r"vocab_size=9 is too small: the 5 special tokens and 5 characters"):
        wp.train("abc abc", 9)
    initial = SPECIALS + ["a", "b", "c", "##b", "##c"]
    assert wp.train("abc abc", 10).get_vocab() == {t: i for i, t in enumerate(initial)}
    # training stops early once no pair is left
    assert wp.train("abc abc", 20).get_vocab() == {t: i for i, t in enumerate(initial + ["ab", "abc"])}
    with pytest.raises(ValueError, match="score must be"):
        wp.train_vocab({"ab": 1}, 10, score="pmi")
    with pytest.raises(ValueError, match="unk_token '<unk>' must be one of special_tokens"):
        wp.train("abc", 20, unk_token="<unk>")
    with pytest.raises(ValueError, match="lacks 1 required entries"):
        wp.train_vocab({"ab": 1}, 10, initial=["a", "b"])
    with pytest.raises(TypeError, match="must be str"):
        wp.train([b"bytes"], 20)


OPTIONS = [
    {},
    {"lowercase": False},
    {"strip_accents": False},
    {"clean_text": False},
    {"handle_chinese_chars": False, "clean_text": False, "lowercase": False},
]
# Separators, the whitespace BERT deletes or keeps, controls, marks next to separators, CJK (compatibility
# and astral ideographs too) and a lone surrogate.
TRICKY = " \t\n\r\x0b\x0c\x1c\x85\xa0\u3000\u2028\x00\x01\u200b\ufffd\u0301\u0308e\u00e9Ab!?中文한ﬁ\uf900\U00020000\U0002f800\ud800"


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_word_counts_equal_counting_bert_words_of_the_whole_text(options):
    text = "".join(corpus.load(name, 20_000) for name in corpus.CORPUS)
    expected = Counter(bert_words(text, BertNormalizer(**options)))
    assert wp.word_counts(text, **options) == expected
    assert wp.word_counts([text[:7_000], text[7_000:]], **options) == Counter(
        bert_words(text[:7_000], BertNormalizer(**options))
    ) + Counter(bert_words(text[7_000:], BertNormalizer(**options)))


@pytest.mark.parametrize("options", OPTIONS, ids=str)
@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet=TRICKY, max_size=60) | st.text(max_size=40))
def test_word_counts_equal_counting_bert_words_on_random_text(options, text):
    assert wp.word_counts(text, **options) == Counter(bert_words(text, BertNormalizer(**options)))
