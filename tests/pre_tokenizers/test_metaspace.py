"""sentencepiece's ``▁`` (`toklab.pre_tokenizers.metaspace`): escaping and the trainer's word split."""

from __future__ import annotations

from toklab.pre_tokenizers.metaspace import split_words


def test_split_words_cuts_before_every_space():
    assert split_words("ab\u2581cd\u2581\u2581e") == ["ab", "\u2581cd", "\u2581", "\u2581e"]
    assert split_words("\u2581x") == ["\u2581x"] and split_words("") == []
