"""Chapter exercise checkers: each accepts a correct answer and explains a typical mistake.

Moved here verbatim from the test files of the modules they exercise (the
pipeline for §0, metrics for §1, Unicode for §3.3).
"""

from __future__ import annotations

import math

import pytest

from toklab import metrics
from toklab import unicode as tu
from toklab.exercises import ch00, ch01


# --------------------------------- §0 the pipeline (toklab.exercises.ch00)


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


# -------------------------------------- §1 metrics (toklab.exercises.ch01)


def test_check_bits_per_byte_accepts_the_reference():
    assert "passed" in ch01.check_bits_per_byte(metrics.bits_per_byte)


def test_check_bits_per_byte_explains_missing_ln2():
    with pytest.raises(AssertionError, match="nats per byte"):
        ch01.check_bits_per_byte(lambda nll, b: nll / b)


def test_check_bits_per_byte_requires_validation():
    def no_checks(nll, b):
        return nll / (b * math.log(2))

    with pytest.raises(AssertionError, match=r"expected: raises ValueError\n  got:      raised ZeroDivisionError"):
        ch01.check_bits_per_byte(no_checks)

    def checks_bytes_only(nll, b):
        if b <= 0:
            raise ValueError("no bytes")
        return nll / (b * math.log(2))

    with pytest.raises(AssertionError, match=r"bits_per_byte\(-1.0, 8\)\n  expected: raises ValueError\n  got:      returned "):
        ch01.check_bits_per_byte(checks_bytes_only)


def test_check_bits_per_byte_reports_crashes():
    def crashes(nll, b):
        raise RuntimeError("boom")

    with pytest.raises(AssertionError, match="RuntimeError"):
        ch01.check_bits_per_byte(crashes)


def _good_tokens_per_unit(n_tokens, text, unit):
    if unit == "bytes":
        d = len(text.encode("utf-8"))
    elif unit == "chars":
        d = len(text)
    else:
        raise ValueError(unit)
    if d == 0:
        raise ValueError("empty")
    return n_tokens / d


def test_check_tokens_per_unit_accepts_a_correct_version():
    assert "passed" in ch01.check_tokens_per_unit(_good_tokens_per_unit)


def test_check_tokens_per_unit_catches_char_for_byte():
    with pytest.raises(AssertionError, match="tokens per char"):
        ch01.check_tokens_per_unit(lambda n, text, unit: n / len(text))


def test_check_tokens_per_unit_catches_inverse():
    def inverse(n, text, unit):
        return 1 / _good_tokens_per_unit(n, text, unit)

    with pytest.raises(AssertionError, match="inverse"):
        ch01.check_tokens_per_unit(inverse)


def test_check_tokens_per_unit_requires_refusing_words():
    def accepts_words(n, text, unit):
        if unit == "words":
            return n / max(1, len(text.split()))
        return _good_tokens_per_unit(n, text, unit)

    with pytest.raises(AssertionError, match="named segmenter"):
        ch01.check_tokens_per_unit(accepts_words)


# ---------------------------------- §3.3 Unicode (toklab.exercises.ch03_3)


def test_exercise_checkers():
    from toklab.exercises import ch03_3

    assert "agree" in ch03_3.check_utf16_length(tu.utf16_length)
    with pytest.raises(AssertionError, match="surrogate pair"):
        ch03_3.check_utf16_length(len)
    assert "agree" in ch03_3.check_byte_span_to_char_span(tu.byte_span_to_char_span)

    def no_widening(text, start, end):  # treats byte offsets as character offsets
        return start, end

    with pytest.raises(AssertionError, match="expected"):
        ch03_3.check_byte_span_to_char_span(no_widening)
