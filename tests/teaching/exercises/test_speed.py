"""Far too slow is wrong: each checker's large case, timed against toklab on the same input.

`test_registry.py` checks that every checker ends with a timed large case that
toklab's own answer passes; here the harness's timing rule itself, and the slow
solutions a class hands in: a BPE encoder that searches the merge list, an
exponential Viterbi, a quadratic ``partial_utf8``. Each fails its large case, in
about a second (the call is interrupted at its budget), with the time and the
ratio in the report.
"""

from __future__ import annotations

import math
import re
import time

import pytest

from toklab.teaching.exercises import CheckFailure, get, harness
from toklab.teaching.exercises.harness import SLOW_MARGIN, SLOW_RATIO, Run, TooSlow


def test_a_timed_case_allows_the_ratio_and_a_margin():
    case = Run("ch99-ex1", "f", "g").case("large (timed)", expected=1, seconds=0.5)
    assert case.budget() == pytest.approx(SLOW_RATIO * 0.5)
    case = Run("ch99-ex1", "f", "g").case("large (timed)", expected=1, seconds=0.001)
    assert case.budget() == pytest.approx(0.001 + SLOW_MARGIN)
    assert Run("ch99-ex1", "f", "g").case("small", expected=1).budget() is None


def test_a_call_past_its_budget_is_interrupted_and_reported_with_its_time_and_ratio():
    case = Run("ch99-ex1", "spin", "toklab").case("large (timed)", expected=1, seconds=0.01, slow_hint="why")

    def spin():
        while True:
            pass

    start = time.monotonic()
    with pytest.raises(CheckFailure) as info:
        case.call(spin)
    assert time.monotonic() - start < SLOW_MARGIN + 2  # interrupted, not waited for
    failure = info.value
    assert failure.slow and failure.hint == "why" and "is too slow on case 1" in str(failure)
    assert re.search(r"still running after \d\.\d\d s, \d+x toklab's 0\.010 s", failure.got), failure.got


def test_a_call_that_swallows_the_interruption_is_still_too_slow():
    case = Run("ch99-ex1", "stubborn", "toklab").case("large (timed)", expected=1, seconds=0.001)

    def stubborn():
        end = time.monotonic() + SLOW_MARGIN + 0.2
        while time.monotonic() < end:
            try:
                time.sleep(0.01)
            except BaseException:  # noqa: BLE001 - the point of this submission
                pass
        return 1

    with pytest.raises(CheckFailure) as info:
        case.call(stubborn)
    assert info.value.slow and "answered after" in info.value.got


def test_an_untimed_case_never_interrupts():
    assert Run("ch99-ex1", "f", "g").case("small", expected=1).call(lambda: time.sleep(0.3) or 1) == 1


def test_the_budget_does_not_outlive_the_call():
    case = Run("ch99-ex1", "f", "g").case("large (timed)", expected=1, seconds=0.001)
    assert case.call(lambda: 1) == 1
    time.sleep(SLOW_MARGIN + 0.1)  # an alarm left behind would fire here
    with pytest.raises(TooSlow):
        raise TooSlow(1.0)  # (the class is importable and constructible on its own)


# ---------------------------------------------------------------------------- the slow solutions of the issue


def encode_searching_the_merge_list(symbols, merges):
    """Right answers, but every pair's rank is found by a search through the merge list."""
    parts = list(symbols)
    while True:
        ranked = [(merges.index(p), i) for i, p in enumerate(zip(parts, parts[1:])) if p in merges]
        if not ranked:
            return parts
        _, i = min(ranked)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]


def viterbi_by_enumeration(text, scores):
    """Right answers, by trying every segmentation (exponential in the length of the text)."""
    if not text:
        return []
    best = None
    for end in range(1, len(text) + 1):
        piece = text[:end]
        if piece not in scores:
            continue
        try:
            rest = viterbi_by_enumeration(text[end:], scores)
        except ValueError:
            continue
        total = scores[piece] + sum(scores[p] for p in rest)
        if best is None or total > best[0]:
            best = (total, [piece, *rest])
    if best is None:
        raise ValueError(f"{text!r} cannot be segmented")
    return best[1]


def partial_utf8_quadratic(tokens):
    """Right answers, but each ID is first looked for in the list of the IDs already seen."""
    seen, out = [], []
    for i, data in tokens.items():
        if i in seen:
            continue
        seen.append(i)
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            out.append(i)
    return sorted(out)


@pytest.mark.parametrize("label, slow", [
    ("ch02_1-ex2", encode_searching_the_merge_list),
    ("ch02_3-ex2", viterbi_by_enumeration),
    ("ch05_2-ex1", partial_utf8_quadratic),
])
def test_a_far_too_slow_solution_fails_its_large_case(label, slow):
    entry = get(label)
    start = time.monotonic()
    with pytest.raises(CheckFailure) as info:
        entry.check(slow)
    failure = info.value
    assert failure.slow and "(timed)" in failure.case, failure.report()
    assert failure.number == harness.count_cases(label)  # every other case passed: only the speed is wrong
    seconds, ratio = re.search(r"after (\d+\.\d\d) s, (\d+)x toklab's", failure.got).groups()
    assert float(seconds) >= SLOW_MARGIN and int(ratio) >= SLOW_RATIO  # stopped at its budget (shown to 0.01 s)
    assert time.monotonic() - start < 60


def test_the_slow_solutions_are_right_on_small_inputs():
    """So that the test above is about speed: each gives toklab's answers where it is fast enough."""
    from toklab.bpe import reference_encode
    from toklab.lab.glitch import partial_utf8_tokens
    from toklab.unigram import reference_viterbi

    merges = [("a", "b"), ("ab", "c"), ("c", "a")]
    assert encode_searching_the_merge_list(list("abcab"), merges) == reference_encode(list("abcab"), merges)
    scores = {"a": math.log(0.3), "b": math.log(0.3), "ab": math.log(0.4)}
    assert viterbi_by_enumeration("abab", scores) == reference_viterbi("abab", scores)
    tokens = {3: b"\xe6", 1: b"a", 2: b"\x80"}

    class Vocab:
        vocab = tokens

    assert partial_utf8_quadratic(tokens) == partial_utf8_tokens(Vocab())
