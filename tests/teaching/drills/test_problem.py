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
    with pytest.raises(ValueError, match="2 parts"):
        split_parts("ab c", 2)


def test_numeric_tolerance_is_four_significant_digits():
    assert close(0.22350625, 0.2235) and close(0.2235, 0.22350625)
    assert not close(0.224, 0.22350625)
    assert not close(True, 1.0) and not close("0.2", 0.2)
    assert close([1.0, 0.5], [1.0, 0.50004]) and not close([1.0], [1.0, 0.5])
    assert show_number(0.16) == "0.16" and show_number(0.22350625) == "0.2235"


@pytest.mark.parametrize("topic", drills.TOPICS)
def test_unreadable_and_misshapen_answers_are_explained(topic):
    problem = drills.generate(topic, 0)
    ok, feedback = problem.check("")
    assert not ok and "could not read" in feedback and problem.answer_format in feedback
    if len(problem.parts) > 1:
        ok, feedback = problem.check((problem.answer[0],))
        assert not ok and f"{len(problem.parts)} parts" in feedback


def test_a_multi_part_answer_says_which_parts_are_right():
    problem = drills.generate("fertility-bpb", 3)
    chars = problem.data["text"]
    wrong = problem.with_part("bytes", len(chars))
    ok, feedback = problem.check(wrong)
    assert not ok
    assert feedback.startswith("bytes is wrong. Counted characters")
    assert "Right: tokens per byte, loss per token, BPB." in feedback


def test_bad_topics_and_seeds_are_refused_by_name():
    with pytest.raises(ValueError, match="unknown drill topic 'bpe'.*bpe-train"):
        drills.generate("bpe", 1)
    for seed in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="seed must be a non-negative int"):
            drills.generate("bpe-train", seed)


def test_no_seed_draws_one_and_records_it():
    problem = drills.generate("bpe-train")
    assert isinstance(problem.seed, int)
    assert drills.generate("bpe-train", problem.seed).prompt == problem.prompt
