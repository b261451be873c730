"""BERT's normalizer (`toklab.normalizers.bert`) against Hugging Face, character for character."""

from __future__ import annotations

import unicodedata

import pytest
from tokenizers import normalizers

from toklab.normalizers import bert as bert_norm

from ..helpers import every_code_point


@pytest.mark.slow
def test_normalizer_matches_hf_on_every_code_point(fresh_char_tables):
    """[real] All 1,112,064 scalar values through every step (clean-up, CJK, accents, lowercase).

    Each step is a per-character rule, so one run with all of them on checks
    every rule on every character; the tricky-text cases below check the options.
    """
    text = every_code_point()
    assert bert_norm.normalize(text) == normalizers.BertNormalizer().normalize_str(text)


def test_strip_accents_defaults_to_lowercase():
    assert bert_norm.normalize("Café") == "cafe"
    assert bert_norm.normalize("Café", lowercase=False) == "Café"
    assert bert_norm.normalize("Café", lowercase=False, strip_accents=True) == "Cafe"
    assert bert_norm.normalize("Café", strip_accents=False) == "café"


def test_unicode_category_tables_are_consistent():
    # the exception tables only name characters whose Python category says otherwise
    assert all(unicodedata.category(chr(c))[0] == "P" for c in bert_norm.HF_NOT_PUNCT)
    assert all(unicodedata.category(chr(c))[0] != "P" for c in bert_norm.HF_EXTRA_PUNCT)
    assert all(unicodedata.category(chr(c)) == "Cf" for c in bert_norm.HF_NOT_FORMAT)
    assert all(unicodedata.category(chr(c)) == "Mn" for c in bert_norm.HF_NOT_MN)
    assert all(unicodedata.category(chr(c)) != "Mn" for c in bert_norm.HF_EXTRA_MN)


def test_ideographs_apart_leaves_one_space_per_run_and_counts_each_ideograph():
    text, found = bert_norm.ideographs_apart("中文a中\U00020000b\uf900 \ud800中")
    assert text == " a b  \ud800 "
    assert found == {ord("中"): 3, ord("文"): 1, 0x20000: 1, 0xF900: 1}
    assert bert_norm.ideographs_apart("no ideographs, ﬁ 한") == ("no ideographs, ﬁ 한", {})
    assert bert_norm.ideographs_apart("") == ("", {})
    every = every_code_point()
    rest, found = bert_norm.ideographs_apart(every)
    assert set(found) == {ord(c) for c in every if bert_norm.is_chinese_char(c)}
    assert not any(map(bert_norm.is_chinese_char, rest))
