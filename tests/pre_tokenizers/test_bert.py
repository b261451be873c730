"""BERT's pre-tokenizer (`toklab.pre_tokenizers.bert`) against Hugging Face, and fused with the normalizer.

`bert_words` runs BERT's normalizer and pre-tokenizer in one pass; it must
equal the two stages run one after the other, ``pre_tokenize(normalize(x))``.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import normalizers, pre_tokenizers

from toklab.normalizers import BertNormalizer
from toklab.normalizers import bert as bert_norm
from toklab.pre_tokenizers import bert_words
from toklab.pre_tokenizers import bert as bert_pre
from toklab.wordpiece import WordPiece

from ..helpers import every_code_point


@pytest.mark.slow
def test_pre_tokenizer_matches_hf_on_every_code_point(fresh_char_tables):
    text = every_code_point()
    hf = [w for w, _ in pre_tokenizers.BertPreTokenizer().pre_tokenize_str(text)]
    assert bert_pre.pre_tokenize(text) == hf


@pytest.mark.parametrize(
    "text",
    [
        "Hey friend!     How are you?!?",
        "ΟΔΟΣ Σ ΣΑΣ",  # no final-sigma rule
        "İstanbul Straße ǅemal ﬃ",  # multi-character lowercase, no NFKC
        "Cafe\u0301 cafe\u0301\u0316 a\u0301\u1ac0\u0316",  # NFD reordering, recent marks
        "x\U00011938y \U00011935\U00011930",  # decomposed by Python, not by HF
        "\x1c\x1d\x1e\x1f x\x0by\x0cz\x85w\u00a0v\u2028u\u3000t",  # whitespace vs control
        "a\x00b\ufffdc\u200bd\u200de\ue000f\U000f0000g",  # deleted by clean-up
        "北京大学 \U0002b820\U0002b920 かな 한국어",  # CJK ideographs only, and HF's Extension E range
        "e-mail don't $5+3=8 ^_^ ‹a› «b» ⁅c⁆ \u2e43 \u166d",
        "\t\n\r  \r\n",
        "",
    ],
)
@pytest.mark.parametrize("lowercase", [True, False])
def test_bert_pipeline_matches_hf_on_tricky_text(text, lowercase):
    hf_norm = normalizers.BertNormalizer(lowercase=lowercase)
    normalized = bert_norm.normalize(text, lowercase=lowercase)
    assert normalized == hf_norm.normalize_str(text)
    hf_words = [w for w, _ in pre_tokenizers.BertPreTokenizer().pre_tokenize_str(normalized)]
    assert bert_pre.pre_tokenize(normalized) == hf_words
    assert WordPiece(["[UNK]"], lowercase=lowercase).words(text) == hf_words


# --------------------------------------------------------------------------
# The fused pass equals the two stages in turn
# --------------------------------------------------------------------------

# Every combination of BERT's four normalizer options:
# lowercase, strip_accents (None: follow lowercase), handle_chinese_chars, clean_text.
ALL_FLAGS = list(itertools.product([True, False], [None, True, False], [True, False], [True, False]))


@pytest.mark.parametrize("lowercase", [True, False], ids=["uncased", "cased"])
def test_bert_words_equals_pre_tokenize_of_normalize_on_the_whole_corpus(lowercase, corpus_texts):
    """The two settings real BERT checkpoints use, on every bundled corpus file whole."""
    normalizer = BertNormalizer(lowercase=lowercase)
    for name, text in corpus_texts.items():
        fused = bert_words(text, normalizer)
        assert fused == bert_pre.pre_tokenize(normalizer.normalize(text)), name
        assert len(fused) > 40_000, name  # the comparison covers real work


# Text where the options matter: accents to strip or keep, case, CJK ideographs,
# controls and format characters for the clean-up, whitespace and punctuation.
_BERT_TRICKY = st.sampled_from(
    list("aZéÉ\u0301\u0316ǅİßﬃ北京かな한\x00\x01\x7f\ufffd\u200b\u200d\ue000 \t\n\r\u00a0\u3000!?-'$^_«»")
    + ["\U0002b820", "\U00011938", "ΟΔΟΣ", "don't", "e-mail"]
)


@settings(max_examples=300)
@given(
    text=st.lists(st.one_of(st.characters(), _BERT_TRICKY), max_size=40).map("".join),
    flags=st.sampled_from(ALL_FLAGS),
)
def test_bert_words_equals_pre_tokenize_of_normalize_on_random_text(text, flags):
    normalizer = BertNormalizer(*flags)
    assert bert_words(text, normalizer) == bert_pre.pre_tokenize(normalizer.normalize(text))
