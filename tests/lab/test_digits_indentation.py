"""toklab.lab.digits (place-value alignment) and toklab.lab.indentation (re-indented code)."""

from __future__ import annotations

import regex
import pytest
from hypothesis import given
from hypothesis import strategies as st

import toklab
from toklab import pre_tokenizers
from toklab.lab import digits, indentation


def test_aligned_examples():
    assert digits.aligned(["12", "345"], 3) and digits.aligned(["1", "234", "567"], 3)
    assert digits.aligned(list("12345"), 1) and digits.aligned(["12345"], 5)
    assert digits.aligned(["123"], 3) and digits.aligned(["12"], 3)
    assert not digits.aligned(["123", "45"], 3) and not digits.aligned(["123", "4"], 3)
    assert not digits.aligned(["1", "23", "4"], 2) and digits.aligned(["1", "23", "45"], 2)
    # one size per rule: pairs are not thousands groups, a whole number is not digits
    assert not digits.aligned(["12", "34"], 3) and not digits.aligned(["1", "23", "45"], 3)
    assert not digits.aligned(["12345"], 3) and not digits.aligned(["12", "345"], 1)
    assert digits.groups_from_right(7, 3) == (1, 3, 3) and digits.groups_from_right(3, 5) == (3,)


@given(st.integers(0, 10**12), st.integers(1, 6))
def test_groups_from_right_spell_the_number_with_one_short_head(n, group):
    s = str(n)
    sizes = digits.groups_from_right(len(s), group)
    assert sum(sizes) == len(s) and 1 <= sizes[0] <= group
    assert all(size == group for size in sizes[1:])


@given(st.integers(0, 10**12))
def test_right_to_left_grouping_is_always_aligned_and_left_to_right_only_sometimes(n):
    s = str(n)
    r2l = regex.findall(digits.RIGHT_TO_LEFT_3, s)
    assert "".join(r2l) == s and digits.aligned(r2l, 3)
    assert all(len(p) == 3 for p in r2l[1:])
    l2r = pre_tokenizers.split(s, "cl100k")
    assert "".join(l2r) == s
    assert digits.aligned(l2r, 3) == (len(s) <= 3 or len(s) % 3 == 0)
    assert digits.aligned(list(s), 1)


def test_alignment_rate_best_group_and_shapes():
    nums = [str(n) for n in range(10_000)]
    l2r = lambda s: pre_tokenizers.split(s, "cl100k")  # noqa: E731
    assert digits.alignment_rate(nums, l2r, 3) == 1000 / 10_000
    assert digits.alignment_rate(nums, l2r, 1) == 10 / 10_000
    assert digits.best_group(nums, l2r) == (3, 1000 / 10_000)
    assert digits.best_group(nums, list) == (1, 1.0)
    assert digits.best_group(nums, lambda s: [s]) == (4, 1.0)  # whole: only g >= 4 fits
    # a cut that mixes pairs and triples is credited for one size only
    mixed = {"1234": ["12", "34"], "12345": ["12", "345"]}
    assert digits.best_group(list(mixed), mixed.__getitem__) == (2, 0.5)
    shapes = digits.shapes_by_length(nums, l2r)
    assert shapes[4] == {(3, 1): 9000}
    with pytest.raises(ValueError, match="does not spell"):
        digits.alignment_rate(["12"], lambda s: ["1"], 1)
    with pytest.raises(ValueError, match="no numbers"):
        digits.alignment_rate([], l2r, 3)
    with pytest.raises(ValueError, match="no numbers"):
        digits.best_group([], l2r)
    with pytest.raises(ValueError, match="non-empty"):
        digits.aligned([], 1)
    for bad in (0, -1, 1.5, True, None):
        with pytest.raises(ValueError, match="group must be an int >= 1"):
            digits.aligned(["1"], bad)
    with pytest.raises(ValueError, match="length must be"):
        digits.groups_from_right(0, 3)
    assert digits.digit_runs("a 12, b 3456 and ٣٤ or １２") == ["12", "3456"]


def test_real_vocabularies_three_generations_over_every_integer_below_10_5():
    """r50k: BPE cuts whole runs irregularly; cl100k/o200k: groups of three from the left;
    Mistral v1 (sentencepiece, split_digits) and Qwen (a bare \\p{N}): one digit per token."""
    import sentencepiece as spm

    from toklab.data import vocabs

    ints = [str(n) for n in range(100_000)]

    def bpe(tok):
        return lambda s: [t.decode() for t in tok.tokens(tok.encode(s))]

    spec = vocabs.qwen("qwen")
    qwen = toklab.ByteBPE.from_ranks(spec.ranks, pattern=spec.pattern, special_tokens=spec.special_tokens)
    mistral = spm.SentencePieceProcessor(model_file=str(vocabs.wheel_file("mistral-v1")))
    mistral_cut = lambda s: [p for p in (x.replace("\u2581", "") for x in mistral.encode(s, out_type=str)) if p]  # noqa: E731
    assert digits.best_group(ints, bpe(qwen)) == digits.best_group(ints, mistral_cut) == (1, 1.0)
    for name in ("cl100k_base", "o200k_base"):
        assert digits.best_group(ints, bpe(toklab.ByteBPE.from_tiktoken(name))) == (3, 1000 / 100_000)
    # GPT-2's cuts follow no group size; thousands groups fit the most of them, 42,323
    r50k = bpe(toklab.ByteBPE.from_tiktoken("r50k_base"))
    assert digits.best_group(ints, r50k) == (3, 42_323 / 100_000)
    assert digits.alignment_rate(ints, r50k, 2) == 17_004 / 100_000


def test_reindent_compiles_and_only_changes_indentation(corpus_texts):
    files = indentation.source_files(corpus_texts["code"])
    assert len(files) > 10
    for path, src in files.items():
        for unit in ("  ", "\t", "    "):
            out = indentation.reindent(src, unit)
            compile(out, path, "exec")
            # nothing but whitespace changed
            assert regex.sub(r"\s", "", out) == regex.sub(r"\s", "", src)
            assert out.count("\n") == src.count("\n")
        assert indentation.reindent(src, "    ") == src
    assert indentation.reindent("if x:\n        y\n      z\n", "\t") == "if x:\n\t\ty\n\t  z\n"
    with pytest.raises(ValueError, match="unit"):
        indentation.reindent("x", "ab")
    with pytest.raises(ValueError, match="header"):
        indentation.source_files("no header\n")


def test_whitespace_runs_are_tokens():
    tok = toklab.ByteBPE.from_tiktoken("cl100k_base")
    runs = indentation.whitespace_runs(tok, longest=40)
    for n in runs["spaces"]:
        assert tok.encode_ordinary(" " * n) == [tok.token_to_id(b" " * n)]
    assert 4 in runs["spaces"] and 8 in runs["spaces"] and runs["newline+spaces"] == []
    r50k = indentation.whitespace_runs(toklab.ByteBPE.from_tiktoken("r50k_base"))
    assert r50k["spaces"] == [1] and r50k["tabs"] == [1]
