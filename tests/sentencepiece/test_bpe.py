"""sentencepiece's BPE segmentation: the rule (`reference_bpe_segment`) and the heap (`bpe_segment`)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from toklab.pre_tokenizers.metaspace import split_words
from toklab.sentencepiece import SentencePieceTokenizer, bpe_segment, reference_bpe_segment


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


def test_bpe_segment_equals_reference_bpe_segment_on_corpus(sp_model, eval_lines):
    """Every distinct word of the held-out lines, with the scores of a BPE model sentencepiece trained.

    Words come from the model's own normalizer (``▁`` marks each word start), and
    a few short lines are segmented whole, as the encoder does (no pre-tokenization).
    """
    tok = SentencePieceTokenizer.from_sentencepiece(sp_model(model_type="bpe", normalization_rule_name="identity"))
    scores = {e.piece: e.score for e in tok.pieces if e.kind == "normal"}
    normalized = [tok.normalize(ln) for ln in eval_lines]
    words = sorted({w for ln in normalized for w in split_words(ln)})
    assert len(words) > 5000
    for word in words:
        assert bpe_segment(list(word), scores) == reference_bpe_segment(list(word), scores), word
    lines = [ln for ln in normalized if 20 < len(ln) < 80][::10]
    assert len(lines) > 50
    for line in lines:
        assert bpe_segment(list(line), scores) == reference_bpe_segment(list(line), scores), line
