"""The answer readers and `Problem.check`: typed answers, shapes, tolerance, unreadable input."""

from __future__ import annotations

import pytest

from toklab.teaching import drills
from toklab.teaching.drills.problem import (
    close,
    read_ints,
    read_merges,
    read_numbers,
    read_tokens,
    show_number,
    split_parts,
)


def test_read_tokens_accepts_spaces_commas_and_python_lists():
    assert read_tokens("ab c") == read_tokens(" ab,  c ") == read_tokens("['ab', 'c']") == ["ab", "c"]
    assert read_tokens("a ##bc [UNK]") == ["a", "##bc", "[UNK]"]
    assert read_tokens("[UNK]") == ["[UNK]"]
    with pytest.raises(ValueError, match="no tokens"):
        read_tokens("   ")
    with pytest.raises(ValueError, match="quoted strings"):
        read_tokens("['ab', c]")


def test_read_merges_accepts_plus_and_tuples():
    assert read_merges("a+b, ab+c") == read_merges("(a, b), (ab, c)") == [("a", "b"), ("ab", "c")]
    assert read_merges("('a', 'b'),('ab','c')") == [("a", "b"), ("ab", "c")]
    for bad in ("", "a b", "a+b ab+c", "a+"):
        with pytest.raises(ValueError):
            read_merges(bad)


def test_read_numbers_and_ints_count_what_they_read():
    assert read_numbers("0.5 1e-3, 2", 3) == [0.5, 0.001, 2.0]
    with pytest.raises(ValueError, match="expected 2 numbers, found 3"):
        read_numbers("1 2 3", 2)
    with pytest.raises(ValueError, match="plain numbers"):
        read_numbers("1/2")
    with pytest.raises(ValueError, match="finite"):
        read_numbers("nan")
    assert read_ints("199998 5 200_003") == [199998, 5, 200003]
    with pytest.raises(ValueError, match="whole numbers"):
        read_ints("1.5")
    assert split_parts("ab c ; 2", 2) == ["ab c", "2"]


def test_thousands_separators_are_read_as_the_prompts_write_them():
    assert read_ints("100,256 3 100,259; 100,277, 100,352") == [100256, 3, 100259, 100277, 100352]
    assert read_ints("1,2,3") == [1, 2, 3] and read_ints("1,234,567") == [1234567]
    assert read_numbers("1,234.5 0.5,0.25") == [1234.5, 0.5, 0.25]
    problem = drills.generate("five-numbers", 0)
    typed = " ".join(f"{n:,}" for n in problem.answer)
    assert "," in typed and problem.check(typed) == (True, "correct")


def test_a_number_rounded_too_far_is_told_the_precision_wanted():
    problem = next(p for p in map(lambda s: drills.generate("fertility-bpb", s), range(50))
                   if not close(float(f"{p.answer[3]:.2g}"), p.answer[3]))
    b, tpb, loss, bpb = problem.answer
    assert problem.check((b, float(f"{tpb:.4g}"), float(f"{loss:.4g}"), float(f"{bpb:.4g}")))[0]
    ok, feedback = problem.check((b, tpb, loss, float(f"{bpb:.2g}")))
    assert not ok and "BPB is wrong. correct only to " in feedback and "significant digits; give 4" in feedback
    assert "4 significant digits" in problem.prompt and "4 significant digits" in problem.answer_format
    forward = next(p for p in map(lambda s: drills.generate("unigram-forward", s), range(50))
                   if not close(float(f"{p.answer[1]:.3g}"), p.answer[1]))
    rounded = [float(f"{x:.4g}") for x in forward.answer]
    assert forward.check(rounded)[0]
    rounded[1] = float(f"{forward.answer[1]:.3g}")
    ok, feedback = forward.check(rounded)
    assert not ok and feedback.startswith("value 2: correct only to ") and "; give 4" in feedback
