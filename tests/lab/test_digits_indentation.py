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
    assert digits.aligned(["12", "345"]) and digits.aligned(["1", "234", "567"])
    assert digits.aligned(list("12345")) and digits.aligned(["12345"])
    assert not digits.aligned(["123", "45"]) and not digits.aligned(["123", "4"])
    assert not digits.aligned(["1", "23", "4"]) and digits.aligned(["1", "23", "45"])


@given(st.integers(0, 10**12))
def test_right_to_left_grouping_is_always_aligned_and_left_to_right_only_sometimes(n):
    s = str(n)
    r2l = regex.findall(digits.RIGHT_TO_LEFT_3, s)
    assert "".join(r2l) == s and digits.aligned(r2l)
    assert all(len(p) == 3 for p in r2l[1:])
    l2r = pre_tokenizers.split(s, "cl100k")
    assert "".join(l2r) == s
    assert digits.aligned(l2r) == (len(s) <= 3 or len(s) % 3 == 0)


def test_alignment_rate_and_shapes():
    nums = [str(n) for n in range(10_000)]
    l2r = lambda s: pre_tokenizers.split(s, "cl100k")  # noqa: E731
    assert digits.alignment_rate(nums, l2r) == 1000 / 10_000
    shapes = digits.shapes_by_length(nums, l2r)
    assert shapes[4] == {(3, 1): 9000}
    with pytest.raises(ValueError, match="does not spell"):
        digits.alignment_rate(["12"], lambda s: ["1"])
    with pytest.raises(ValueError, match="no numbers"):
        digits.alignment_rate([], l2r)
    with pytest.raises(ValueError, match="non-empty"):
        digits.aligned([])
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
    assert digits.alignment_rate(ints, bpe(qwen)) == digits.alignment_rate(ints, mistral_cut) == 1.0
    for name in ("cl100k_base", "o200k_base"):
        assert digits.alignment_rate(ints, bpe(toklab.ByteBPE.from_tiktoken(name))) == 1000 / 100_000
    assert 0.5 < digits.alignment_rate(ints, bpe(toklab.ByteBPE.from_tiktoken("r50k_base"))) < 0.7


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
