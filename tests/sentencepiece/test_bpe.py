"""sentencepiece's BPE segmentation: the rule (`reference_bpe_segment`) and the heap (`bpe_segment`)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from toklab.sentencepiece import bpe_segment, reference_bpe_segment


def test_bpe_rule_examples():
    scores = {"ab": -1.0, "bc": -1.0, "abc": -2.0, "aa": -0.5}
    assert reference_bpe_segment(list("abc"), scores) == ["abc"]  # ab (leftmost of the tie), then ab+c
    assert reference_bpe_segment(list("abc"), {"ab": -1.0, "bc": 0.0}) == ["a", "bc"]  # higher score first
    assert reference_bpe_segment(list("aaa"), scores) == ["aa", "a"]  # overlap: left first
    assert bpe_segment(list("aaaa"), scores) == ["aa", "aa"]


@given(st.text("abc", max_size=14), st.dictionaries(st.text("abc", min_size=2, max_size=4),
                                                    st.sampled_from([-3.0, -2.0, -1.0, -0.5]), max_size=12))
def test_bpe_segment_equals_reference_bpe_segment(text, scores):
    assert bpe_segment(list(text), scores) == reference_bpe_segment(list(text), scores)
