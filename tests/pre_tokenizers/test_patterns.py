"""The pre-tokenizer catalogue (`toklab.pre_tokenizers.patterns`): exact patterns, lossless splits,
safe cut points, and the rewrite for Oniguruma (Hugging Face `tokenizers`)."""

from __future__ import annotations

import random

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab.pre_tokenizers import onig_pattern, patterns

NAMES = ("gpt2", "gpt2-2019", "cl100k", "o200k")
SAFE_NAMES = ("gpt2", "cl100k", "o200k")

# Text that exercises every alternative: letters in several scripts and cases,
# combining marks, digits, apostrophes (contractions), punctuation, all kinds of
# whitespace including CR/LF and non-ASCII spaces, CJK and emoji.
_FRAGMENTS = [
    "a", "b", "Z", "é", "e\u0301", "ß", "ǅ", "ʰ", "注", "中文", "ا", "क", "ि", "्",
    "0", "7", "123", "٣", "½", "'", "'s", "'S", "'ll", "'VE", "'d", "’",
    " ", "  ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\u200b",
    ".", ",", "-", "/", "(", ")", "!?", "#", "_", "😀", "👍🏽", "\ufe0f", "\u200d",
]
texty = st.one_of(
    st.text(max_size=80),
    st.lists(st.sampled_from(_FRAGMENTS), max_size=40).map("".join),
)
no_surrogates = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=80),
    st.lists(st.sampled_from(_FRAGMENTS), max_size=40).map("".join),
)


@pytest.fixture(scope="module")
def tiktoken_patterns():
    """The pat_str of tiktoken's r50k/cl100k/o200k definitions, read without downloading.

    tiktoken_ext.openai_public's constructors call ``load_tiktoken_bpe(url, ...)``
    before returning their dict; we swap that loader for a stub for the duration
    of the three calls, so the real functions run and return their real
    ``pat_str`` but fetch nothing.
    """
    import tiktoken_ext.openai_public as op

    calls = []

    def fake_loader(url, expected_hash=None):
        calls.append(url)
        return {}

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(op, "load_tiktoken_bpe", fake_loader)
        out = {
            "r50k": op.r50k_base()["pat_str"],
            "cl100k": op.cl100k_base()["pat_str"],
            "o200k": op.o200k_base()["pat_str"],
        }
    assert len(calls) == 3 and all(u.startswith("https://") for u in calls)
    return out


def test_patterns_equal_tiktoken(tiktoken_patterns):
    import tiktoken_ext.openai_public as op

    assert patterns.PATTERNS["gpt2"] == op.r50k_pat_str == tiktoken_patterns["r50k"]
    assert patterns.PATTERNS["cl100k"] == tiktoken_patterns["cl100k"]
    assert patterns.PATTERNS["o200k"] == tiktoken_patterns["o200k"]
    assert patterns.resolve("cl100k") == tiktoken_patterns["cl100k"]


def test_gpt2_2019_is_the_released_spelling():
    # GPT-2's encoder.py (2019) and the comment in tiktoken_ext/openai_public.py
    # write the letter class as [\p{L}]; the two spellings compile to the same thing.
    import inspect

    import tiktoken_ext.openai_public as op

    src = inspect.getsource(op)
    m = regex.search(r"# r\"\"\"('s\|'t.*?)\"\"\"", src)
    assert m, "tiktoken no longer quotes the original GPT-2 pattern"
    original = m.group(1)
    ours = patterns.PATTERNS["gpt2-2019"]
    assert ours == original.replace("[\\p{L}]", "\\p{L}").replace("[\\p{N}]", "\\p{N}")


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=200)
@given(text=texty)
def test_split_is_lossless(name, text):
    pieces = patterns.split(text, name)
    assert "".join(pieces) == text
    assert all(pieces), "empty pre-token"
    offs = patterns.split_with_offsets(text, name)
    assert [p for p, _, _ in offs] == pieces
    assert all(text[s:e] == p for p, s, e in offs)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=200)
@given(text=texty)
def test_offsets_equal_the_regex_matches_positions(name, text):
    # the catalogue path derives offsets from lengths; the regex module's own match positions are the oracle
    expected = [(m.group(), m.start(), m.end()) for m in patterns.compiled(name).finditer(text)]
    assert patterns.split_with_offsets(text, name) == expected


def test_offsets_of_a_pattern_that_skips_characters_cover_the_gaps_too():
    assert patterns.split_with_offsets("ab, cd", r"\w+") == [("ab", 0, 2), (", ", 2, 4), ("cd", 4, 6)]
    assert patterns.split_with_offsets("", "cl100k") == []
    with pytest.raises(TypeError, match="text must be str"):
        patterns.split_with_offsets(b"ab", "cl100k")


@pytest.mark.parametrize("name", NAMES)
def test_split_is_lossless_on_corpus(name, corpus_texts):
    for text in corpus_texts.values():
        assert "".join(patterns.split(text, name)) == text


def test_gpt2_and_gpt2_2019_agree_on_the_whole_corpus(corpus_texts):
    for fname, text in corpus_texts.items():
        a = patterns.split(text, "gpt2")
        b = patterns.split(text, "gpt2-2019")
        assert a == b, f"gpt2 spellings disagree on corpus {fname}"


@settings(max_examples=300)
@given(text=texty)
def test_gpt2_and_gpt2_2019_agree_on_random_text(text):
    assert patterns.split(text, "gpt2") == patterns.split(text, "gpt2-2019")


def _split_at(text, cuts, name):
    out = []
    prev = 0
    for c in list(cuts) + [len(text)]:
        out.extend(patterns.split(text[prev:c], name))
        prev = c
    return out


@pytest.mark.parametrize("name", SAFE_NAMES)
def test_safe_cuts_on_corpus(name, corpus_texts):
    rng = random.Random(1234)
    for fname, text in corpus_texts.items():
        points = patterns.safe_cut_points(text, name)
        assert len(points) > 1000, fname
        for p in points[:: max(1, len(points) // 500)]:
            assert regex.match(r"\p{L}", text[p - 1]) and not regex.match(r"[\p{L}\p{M}\p{N}']", text[p])
        cuts = sorted(rng.sample(points, 300))
        assert _split_at(text, cuts, name) == patterns.split(text, name), fname
        assert patterns.last_safe_cut(text, name) == points[-1]


@pytest.mark.parametrize("name", SAFE_NAMES)
@settings(max_examples=300)
@given(text=no_surrogates)
def test_every_safe_cut_is_safe(name, text):
    whole = patterns.split(text, name)
    points = patterns.safe_cut_points(text, name)
    for p in points:
        assert 0 < p < len(text)
        assert patterns.split(text[:p], name) + patterns.split(text[p:], name) == whole, p
    assert _split_at(text, points, name) == whole
    last = patterns.last_safe_cut(text, name)
    assert last == (points[-1] if points else None)


def test_custom_pattern_has_no_safe_cuts():
    assert patterns.safe_cut_points("hello world", r"\w+|\s") == []
    assert patterns.last_safe_cut("hello world", r"\w+|\s") is None
    assert patterns.safe_cut_points("hello world", "gpt2") == [5]


def test_digit_runs():
    assert patterns.split("12345", "cl100k") == ["123", "45"]
    assert patterns.split("12345", "o200k") == ["123", "45"]
    assert patterns.split("12345", "gpt2") == ["12345"]
    assert patterns.split("12345", "gpt2-2019") == ["12345"]
    assert patterns.split("1234567", "cl100k") == ["123", "456", "7"]
    assert patterns.split(" 12345", "gpt2") == [" 12345"]
    assert patterns.split(" 12345", "cl100k") == [" ", "123", "45"]


def test_pattern_behaviours():
    # contractions: gpt2 is case-sensitive, cl100k is not, o200k glues them on
    assert patterns.split("I'M", "gpt2") == ["I", "'", "M"]
    assert patterns.split("I'M", "cl100k") == ["I", "'M"]
    assert patterns.split("I'M", "o200k") == ["I'M"]
    # o200k splits CamelCase, cl100k does not
    assert patterns.split("CamelCase", "o200k") == ["Camel", "Case"]
    assert patterns.split("CamelCase", "cl100k") == ["CamelCase"]
    # a space sticks to the following word; extra spaces stay behind
    assert patterns.split("a   b", "gpt2") == ["a", "  ", " b"]
    assert patterns.split("x\n\n\n", "cl100k") == ["x", "\n\n\n"]


@pytest.mark.parametrize("bad", ["gtp2", "cl100", "o200k_base", "GPT2"])
def test_unknown_pattern_name(bad):
    with pytest.raises(ValueError, match=regex.escape(repr(bad))) as exc:
        patterns.resolve(bad)
    assert "unknown" in str(exc.value) and "gpt2" in str(exc.value)
    with pytest.raises(ValueError, match="unknown"):
        patterns.split("text", bad)


@pytest.mark.parametrize("bad", ["(?P<x", "[a-", "a{2,1}", r"\p{NotAProperty}"])
def test_non_compiling_regex(bad):
    with pytest.raises(ValueError, match="does not compile"):
        patterns.resolve(bad)


def test_custom_regex_is_used():
    assert patterns.split("ab cd", r"\S+|\s+") == ["ab", " ", "cd"]
    assert patterns.pattern_name(patterns.PATTERNS["o200k"]) == "o200k"
    assert patterns.pattern_name(r"\S+") is None


# ---------------------------- Hugging Face: the same split under Oniguruma


def test_onig_pattern_rewrites_only_bounded_possessives():
    from tokenizers import Regex, pre_tokenizers

    assert onig_pattern(patterns.resolve("gpt2")) == patterns.resolve("gpt2")
    assert onig_pattern(patterns.resolve("o200k")) == patterns.resolve("o200k")
    rewritten = onig_pattern(patterns.resolve("cl100k"))
    assert r"(?>\p{N}{1,3})" in rewritten and r"{1,3}+" not in rewritten

    def chunks(p):
        return [c for c, _ in pre_tokenizers.Split(Regex(p), behavior="isolated").pre_tokenize_str("x 12345")]

    assert chunks(rewritten) == patterns.split("x 12345", "cl100k") == ["x", " ", "123", "45"]
    # verbatim, Oniguruma reads {1,3}+ as ({1,3})+ and keeps the digits together
    assert chunks(patterns.resolve("cl100k")) == ["x", " ", "12345"]
    with pytest.raises(ValueError, match="cannot rewrite"):
        onig_pattern(r"(?:ab){2}+")
