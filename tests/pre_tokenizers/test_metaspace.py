"""sentencepiece's ``▁`` (`toklab.pre_tokenizers.metaspace`): escaping, the whitespace rules, the trainer's split.

The sentencepiece configuration flags that drive `split_words` are tested with
the tokenizer, in ``tests/sentencepiece/test_parity.py``.
"""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab.base.pieces import SPACE, escape, unescape
from toklab.normalizers.spm import whitespace_rules
from toklab.pre_tokenizers.metaspace import split_words


def test_split_words_cuts_before_every_space():
    assert split_words("ab\u2581cd\u2581\u2581e") == ["ab", "\u2581cd", "\u2581", "\u2581e"]
    assert split_words("\u2581x") == ["\u2581x"] and split_words("") == []


def test_escape_and_unescape():
    assert escape("a b") == "a" + SPACE + "b" and unescape("a" + SPACE + "b") == "a b"
    assert escape("  x ") == SPACE * 2 + "x" + SPACE
    # not injective: a literal ▁ and a space both come back as a space
    assert unescape(escape("a" + SPACE + " b")) == "a  b"


@given(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters=SPACE)))
def test_unescape_undoes_escape_without_a_literal_meta_symbol(text):
    escaped = escape(text)
    assert " " not in escaped and len(escaped) == len(text)
    assert unescape(escaped) == text


@lru_cache(maxsize=None)
def _sentencepiece_identity(dummy: bool, rew: bool, escape_ws: bool):
    spm = pytest.importorskip("sentencepiece")
    return spm.SentencePieceNormalizer(
        rule_name="identity", add_dummy_prefix=dummy, remove_extra_whitespaces=rew, escape_whitespaces=escape_ws
    )


@settings(max_examples=300)
@given(
    text=st.text(alphabet=" ab\t" + SPACE, min_size=1, max_size=16),
    flags=st.tuples(st.booleans(), st.booleans(), st.booleans()),
)
def test_whitespace_rules_equal_sentencepiece(text, flags):
    """Under the identity rule each character is one chunk, so the rules alone decide the output."""
    dummy, rew, escape_ws = flags
    ours = whitespace_rules(list(text), add_dummy_prefix=dummy, remove_extra_whitespaces=rew, escape_whitespaces=escape_ws)
    assert ours == _sentencepiece_identity(*flags).Normalize(text)
