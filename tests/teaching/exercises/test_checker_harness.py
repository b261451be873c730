"""The harness every exercise checker reports through: one failure format, one success line.

Whatever a reader's function does (return the wrong thing, return nonsense,
raise), a checker answers with a `CheckFailure` whose report holds the case,
the input, the expected answer, what was received and a hint, in that order,
and the same report in every process.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab.teaching.exercises import REGISTRY, CheckFailure, ch02_1, ch03_3, get
from toklab.teaching.exercises.harness import FIELDS, Run, Shown, exercise, show

LABELS = list(REGISTRY)


def _failure(label: str, fn) -> CheckFailure:
    with pytest.raises(CheckFailure) as info:
        get(label).check(fn)
    return info.value


def test_report_is_one_block_with_the_fields_in_order():
    failure = _failure("ch02_1-ex2", lambda symbols, merges: list(symbols))
    lines = str(failure).splitlines()
    assert lines[0] == "ch02_1-ex2: my_encode fails case 1"
    heads = [line.split(":")[0].strip() for line in lines[1:] if not line.startswith(" " * 4)]
    assert heads == list(FIELDS)
    assert "  input:    my_encode(['a', 'b', 'c'], [('a', 'b'), ('b', 'c')])" in lines
    assert "  expected: ['ab', 'c']" in lines
    assert "  got:      ['a', 'b', 'c']" in lines
    assert failure.case == "rank 0 is (a, b)"
    assert failure.number == 1 and failure.function == "my_encode"
    assert isinstance(failure, AssertionError)


def test_later_cases_are_numbered():
    def right_until_ten(text, limit):
        return get("ch03_3-ex1").reference(text, limit) if len(text) < 10 else ""

    failure = _failure("ch03_3-ex1", right_until_ten)
    assert failure.number > 1
    assert str(failure).startswith(f"ch03_3-ex1: truncate_utf16 fails case {failure.number}\n")


@pytest.mark.parametrize("label", LABELS)
def test_an_exception_in_the_readers_function_is_reported(label):
    def boom(*args, **kwargs):
        raise RuntimeError("boom\nsecond line")

    failure = _failure(label, boom)
    assert failure.got == "raised RuntimeError: boom second line"
    assert isinstance(failure.__cause__, RuntimeError)
    assert failure.hint


@pytest.mark.parametrize("label", LABELS)
@pytest.mark.parametrize("answer", [None, object(), "text", 7, float("nan")], ids=["None", "object", "text", "7", "nan"])
def test_a_nonsense_answer_is_a_failure_not_a_crash(label, answer):
    failure = _failure(label, lambda *args, **kwargs: answer)
    assert failure.hint and failure.input and failure.expected


def test_an_answer_the_checker_cannot_compare_is_a_failure():
    class Unequal:
        def __ne__(self, other):
            raise TypeError("cannot compare")

        __eq__ = __ne__

        def __repr__(self):
            raise ValueError("no repr either")

    failure = _failure("ch03_3-ex1", lambda text, limit: Unequal())
    assert "cannot compare" in failure.got
    assert isinstance(failure.__cause__, TypeError)


def test_keyboard_interrupt_is_not_swallowed():
    def interrupted(*args):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ch03_3.check_truncate_utf16(interrupted)


def test_a_function_that_must_raise_but_returns_is_told_so():
    def no_checks(documents, nlls, normalize=None):
        total = sum(sum(x) for x in nlls)
        n_bytes = sum(len((d if normalize is None else normalize(d)).encode("utf-8")) for d in documents)
        return total / (n_bytes * 0.6931471805599453)

    failure = _failure("ch01-ex1", no_checks)
    assert failure.input == "corpus_bits_per_byte(['one', 'two'], [[1.0]])"
    assert failure.expected == "raises ValueError"
    assert failure.got == f"returned {1.0 / (6 * 0.6931471805599453)!r}"
    assert "one list of losses per document" in failure.hint


def test_the_readers_arguments_are_shown_as_they_were_passed():
    def mutating(symbols, merges):
        symbols.clear()
        merges.clear()
        return []

    failure = _failure("ch02_1-ex2", mutating)
    assert failure.input == "my_encode(['a', 'b', 'c'], [('a', 'b'), ('b', 'c')])"


def test_failure_survives_pickling():
    failure = _failure("ch03_3-ex1", lambda text, limit: text[:limit])
    again = pickle.loads(pickle.dumps(failure))
    assert isinstance(again, CheckFailure)
    assert again.fields() == failure.fields()
    assert str(again) == str(failure)


def test_show_is_stable_and_bounded():
    assert show({"b", "a", "c"}) == "{'a', 'b', 'c'}"
    assert show(frozenset()) == "frozenset()"
    assert show(Shown("as is")) == "as is"
    long = show(list(range(1000)))
    assert len(long) < 500 and long.endswith("(1,000 items in all)")


_SCRIPT = """
import json
from toklab.teaching.exercises import REGISTRY, CheckFailure
out = {}
for label, entry in REGISTRY.items():
    out[label + " pass"] = entry.check(entry.reference)
    try:
        entry.check(lambda *args, **kwargs: None)
    except CheckFailure as failure:
        out[label + " fail"] = str(failure)
print(json.dumps(out))
"""


def test_reports_are_the_same_in_every_process():
    runs = []
    for seed in ("0", "4242"):  # two hash seeds in two processes: every checker twice (they are not fast)
        done = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, check=True,
                              env={"PYTHONHASHSEED": seed, "PATH": ""})
        runs.append(json.loads(done.stdout))
    assert runs[0] == runs[1]
    assert len(runs[0]) == 2 * len(REGISTRY)


# ---------------------------------------------------------------------------- registration


def _body(run: Run, fn) -> None:
    run.case("one case", expected=1).call(fn)


def test_registration_refuses_a_malformed_label():
    with pytest.raises(ValueError, match="form <chapter file stem>-exN"):
        exercise("chapter2-ex1", title="t", function="f", reference=len, against="x")


def test_registration_refuses_a_label_of_another_chapter():
    with pytest.raises(ValueError, match="defined in module 'test_checker_harness', not in 'ch00'"):
        exercise("ch00-ex9", title="t", function="f", reference=len, against="x")(_body)


def test_registration_refuses_a_label_twice():
    def body(run, fn):
        pass

    body.__module__ = "toklab.teaching.exercises.ch02_1"
    with pytest.raises(ValueError, match="'ch02_1-ex1' already has a checker"):
        exercise("ch02_1-ex1", title="t", function="f", reference=len, against="x")(body)
    assert get("ch02_1-ex1").check is ch02_1.check_train


def test_registration_refuses_a_bad_function_name():
    with pytest.raises(ValueError, match="not a Python identifier"):
        exercise("ch00-ex9", title="t", function="my train", reference=len, against="x")


@given(message=st.text(max_size=300), name=st.sampled_from(["ValueError", "KeyError", "ZeroDivisionError"]))
@settings(max_examples=60)
def test_any_exception_is_reported_on_one_line_of_one_block(message, name):
    error = {"ValueError": ValueError, "KeyError": KeyError, "ZeroDivisionError": ZeroDivisionError}[name]

    def raises(text, limit):
        raise error(message)

    failure = _failure("ch03_3-ex1", raises)
    lines = str(failure).splitlines()
    heads = [line.split(":")[0].strip() for line in lines[1:] if not line.startswith(" " * 4)]
    assert heads == list(FIELDS)
    assert failure.got.startswith(f"raised {name}") and "\n" not in failure.got
    assert len(failure.got) < 500
