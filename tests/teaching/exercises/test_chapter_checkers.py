"""Chapter exercise checkers: each accepts a correct answer and explains a typical mistake.

Moved here verbatim from the test files of the modules they exercise (the
pipeline for §0, metrics for §1, Unicode for §3.3).
"""

from __future__ import annotations

import math

import pytest

from toklab.base import unicode as tu
from toklab.measure import metrics
from toklab.teaching.exercises import ch00, ch01


# --------------------------------- §0 the pipeline (toklab.teaching.exercises.ch00)


def reader_decode(pipe, ids):
    ids = list(ids)
    specials = pipe.model.special_tokens
    if pipe.bos is not None and ids[:1] == [specials[pipe.bos]]:
        ids = ids[1:]
    if pipe.eos is not None and ids[-1:] == [specials[pipe.eos]]:
        ids = ids[:-1]
    return b"".join(pipe.model.token_bytes(i) for i in ids).decode("utf-8", errors="replace")


def reader_encode_chat(pipe, messages):
    ids = []
    for text, trusted in pipe.chat_template(messages, False):
        if trusted:
            ids += pipe.encode(text, allowed_special="all", add_special_tokens=False)
        else:
            ids += pipe.encode(text, disallowed_special=(), add_special_tokens=False)
    return ids


def test_checkers_accept_correct_solutions():
    assert "pass" in ch00.check_decode(reader_decode)
    assert "pass" in ch00.check_encode_chat(reader_encode_chat)


def test_check_decode_catches_per_token_decoding():
    def per_token(pipe, ids):
        return "".join(pipe.model.decode([i]) for i in ids[1:-1])

    with pytest.raises(AssertionError, match="join all the tokens' bytes"):
        ch00.check_decode(per_token)


def test_check_decode_catches_missing_post_processor_undo():
    with pytest.raises(AssertionError, match="undo the post-processor"):
        ch00.check_decode(lambda pipe, ids: pipe.model.decode(ids))
    with pytest.raises(AssertionError, match="other than BOS/EOS decode to their text"):
        ch00.check_decode(lambda pipe, ids: pipe.decode(ids, skip_special_tokens=True))


def test_check_encode_chat_catches_injection_and_post_processing():
    def naive(pipe, messages):
        return pipe.encode(pipe.render_chat(messages), allowed_special="all", add_special_tokens=False)

    with pytest.raises(AssertionError, match="inject"):
        ch00.check_encode_chat(naive)

    def strict(pipe, messages):
        return pipe.encode(pipe.render_chat(messages), add_special_tokens=False)

    with pytest.raises(AssertionError, match="must never make encoding fail"):
        ch00.check_encode_chat(strict)

    with pytest.raises(AssertionError, match="post-processor"):
        ch00.check_encode_chat(lambda pipe, m: pipe.post_process(reader_encode_chat(pipe, m)))


# -------------------------------------- §1 metrics (toklab.teaching.exercises.ch01)


def _good_corpus_bpb(documents, nlls, normalize=None):
    if len(nlls) != len(documents):
        raise ValueError("one list of losses per document")
    total, n_bytes = 0.0, 0
    for doc, losses in zip(documents, nlls):
        if any(not math.isfinite(x) or x < 0 for x in losses):
            raise ValueError("bad loss")
        total += sum(losses)
        n_bytes += len((doc if normalize is None else normalize(doc)).encode("utf-8"))
    if not n_bytes:
        raise ValueError("no bytes")
    return total / (n_bytes * math.log(2))


def test_check_bits_per_byte_accepts_the_reference_and_a_correct_version():
    assert "passed" in ch01.check_bits_per_byte(ch01.reference_corpus_bits_per_byte)
    assert "passed" in ch01.check_bits_per_byte(_good_corpus_bpb)


def test_check_bits_per_byte_explains_missing_ln2():
    def nats(documents, nlls, normalize=None):
        return _good_corpus_bpb(documents, nlls, normalize) * math.log(2)

    with pytest.raises(AssertionError, match="nats per byte"):
        ch01.check_bits_per_byte(nats)


def test_check_bits_per_byte_requires_validation():
    def no_checks(documents, nlls, normalize=None):
        total = sum(sum(x) for x in nlls)
        n_bytes = sum(len((d if normalize is None else normalize(d)).encode("utf-8")) for d in documents)
        return total / (n_bytes * math.log(2))

    with pytest.raises(AssertionError, match=r"expected: raises ValueError\n  got:      returned "):
        ch01.check_bits_per_byte(no_checks)

    def checks_lengths_only(documents, nlls, normalize=None):
        if len(nlls) != len(documents):
            raise ValueError("lengths")
        return no_checks(documents, nlls, normalize)

    with pytest.raises(AssertionError, match=r"\[\[1.0, -0.5\]\]\)\n  expected: raises ValueError"):
        ch01.check_bits_per_byte(checks_lengths_only)


def test_check_bits_per_byte_reports_crashes():
    def crashes(documents, nlls, normalize=None):
        raise RuntimeError("boom")

    with pytest.raises(AssertionError, match="RuntimeError"):
        ch01.check_bits_per_byte(crashes)


def test_check_corpus_fertility_accepts_a_correct_version():
    def good(tokenizer, documents, unit, segmenter=None):
        units = sum(metrics.count_units(d, unit, segmenter) for d in documents)
        if not units:
            raise ValueError("no units")
        return sum(len(tokenizer.encode(d)) for d in documents) / units

    assert "passed" in ch01.check_corpus_fertility(good)
    assert "passed" in ch01.check_corpus_fertility(ch01.reference_corpus_fertility)


def test_check_corpus_fertility_catches_the_inverse_and_chars_for_bytes():
    def inverse(tokenizer, documents, unit, segmenter=None):
        return 1 / ch01.reference_corpus_fertility(tokenizer, documents, unit, segmenter)

    with pytest.raises(AssertionError, match="inverse"):
        ch01.check_corpus_fertility(inverse)

    def chars_always(tokenizer, documents, unit, segmenter=None):
        return ch01.reference_corpus_fertility(tokenizer, documents, "chars" if unit == "bytes" else unit, segmenter)

    with pytest.raises(AssertionError, match="tokens per char"):
        ch01.check_corpus_fertility(chars_always)


def test_check_unigram_bits_per_byte_accepts_the_reference():
    assert "33 cases passed" in ch01.check_unigram_bits_per_byte(ch01.reference_unigram_bits_per_byte)


def test_reference_unigram_is_a_distribution_and_matches_the_uniform_model():
    # With no training data every ID has probability 1 / V: BPB = n log2(V) / bytes.
    assert math.isclose(ch01.reference_unigram_bits_per_byte([], [0, 1, 2], 3, 8), 3 * 3 / 3)
    # Add-one probabilities over the whole vocabulary sum to one.
    train = [0, 0, 1, 5]
    probs = [2 ** (-ch01.reference_unigram_bits_per_byte(train, [t], 1, 6)) for t in range(6)]
    assert math.isclose(sum(probs), 1.0)
    with pytest.raises(ValueError, match="not an ID in range"):
        ch01.reference_unigram_bits_per_byte([0], [6], 1, 6)


# ---------------------------------- §3.3 Unicode (toklab.teaching.exercises.ch03_3)


def test_exercise_checkers():
    from toklab.teaching.exercises import ch03_3

    assert "agree" in ch03_3.check_truncate_utf16(ch03_3.check_truncate_utf16.exercise.reference)
    with pytest.raises(AssertionError, match="surrogate pair"):
        ch03_3.check_truncate_utf16(lambda text, limit: text[:limit])
    assert "agree" in ch03_3.check_byte_span_to_char_span(tu.byte_span_to_char_span)

    def no_widening(text, start, end):  # treats byte offsets as character offsets
        return start, end

    with pytest.raises(AssertionError, match="expected"):
        ch03_3.check_byte_span_to_char_span(no_widening)
