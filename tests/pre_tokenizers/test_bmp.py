"""The catalogue patterns rewritten for `re` (`toklab.pre_tokenizers.bmp`) and the `Splitter` that uses them:
the same chunks as `regex` on every BMP character, around astral ones, and on the corpus."""

from __future__ import annotations

import pickle
import re

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab.data import corpus
from toklab.pre_tokenizers import bmp, patterns

NAMES = tuple(patterns.PATTERNS)

# Neighbours that put a character into every alternative of the patterns: after and
# before a letter, a digit, an apostrophe, spaces, newlines, punctuation, case changes.
_CONTEXTS = ("a{}b", "{}1", "'{}", "{}'s", " {}  ", "\n{}\r\n", "A{}a", "{}.", "  {}")


@pytest.fixture(scope="module")
def every_bmp_character() -> str:
    chars = [chr(c) for c in range(0x10000)]
    return "".join(ctx.format(c) for c in chars for ctx in _CONTEXTS)


@pytest.mark.parametrize("name", NAMES)
def test_translation_matches_regex_on_every_bmp_character(name, every_bmp_character):
    fast = re.compile(bmp.translate(patterns.PATTERNS[name]))
    slow = patterns.compiled(name)
    assert fast.findall(every_bmp_character) == slow.findall(every_bmp_character)


@pytest.mark.parametrize("cls", [r"\p{L}", r"\p{N}", r"\p{M}", r"\p{Lu}", r"\s", "(?i:s)"])
def test_class_ranges_are_what_regex_matches(cls):
    members = {c for a, b in bmp.class_ranges(cls) for c in range(a, b + 1)}
    assert members == {c for c in range(0x10000) if regex.fullmatch(cls, chr(c))}
    assert all(b < 0x10000 for _, b in bmp.class_ranges(cls))


def test_caseless_letters_include_what_regex_folds_to_them():
    # U+017F LATIN SMALL LETTER LONG S folds to "s": `(?i:'s)` matches "'ſ" in regex, so here too.
    fast = re.compile(bmp.translate(patterns.PATTERNS["cl100k"]))
    assert fast.findall("it'ſ") == patterns.compiled("cl100k").findall("it'ſ") == ["it", "'ſ"]


@pytest.mark.parametrize("source", [r"\d+", r"(?<=a)b", r"\X", r"[[:alpha:]]", r"(?i:[a-z])", r"\p{L}\b"])
def test_translate_refuses_what_it_does_not_understand(source):
    with pytest.raises(ValueError, match="cannot translate"):
        bmp.translate(source)


@pytest.mark.parametrize("name", NAMES)
def test_splitter_equals_regex_on_the_whole_corpus(name):
    text = "".join(corpus.load_all().values())
    assert regex.search("[\U00010000-\U0010ffff]", text), "the corpus should hold astral characters"
    assert patterns.splitter(name)(text) == patterns.compiled(name).findall(text)


_ASTRAL = ["😀", "👍🏽", "𝐀𝐁", "𝑎", "𠀀", "𝟘𝟙", "\U000e0001", "🇫🇷"]
_PLAIN = ["a", "Bc", "é", "e\u0301", "中文", "1", "234", "'", "'s", "'LL", " ", "  ", "\n", "\r\n", "\t", ".", "-/", "\u3000"]
astral_text = st.lists(st.sampled_from(_ASTRAL + _PLAIN), max_size=60).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.one_of(astral_text, st.text(max_size=80)))
def test_splitter_equals_regex_around_astral_characters(text):
    for name in NAMES:
        assert patterns.splitter(name)(text) == patterns.compiled(name).findall(text), name


def test_a_custom_pattern_goes_to_regex_and_a_splitter_pickles():
    custom = r"\p{L}+|\p{N}+|\s+|."
    assert patterns.splitter(custom)("ab 12😀") == ["ab", " ", "12", "😀"]
    again = pickle.loads(pickle.dumps(patterns.splitter("cl100k")))
    assert again("Hello 😀 world") == patterns.compiled("cl100k").findall("Hello 😀 world")
