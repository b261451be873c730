"""`toklab.teaching.sanity` in process: every invariant holds, a failing or raising check is reported, not raised."""

from __future__ import annotations

from pathlib import Path

import pytest

from toklab.teaching import sanity


def test_every_invariant_holds_and_says_what_it_checked():
    results = sanity.run()
    assert [r.label for r in results] == [f"D0{k}" for k in range(1, 9)]
    assert all(r.ok for r in results), sanity.report(results)
    assert all(r.detail and "\n" not in r.detail for r in results)
    assert sanity.report(results).endswith("all 8 invariants hold")


def test_a_failing_and_a_raising_check_are_reported_and_the_rest_still_run():
    def fails():
        raise AssertionError("expected 7, got 6")

    def raises():
        return {}["missing"]

    checks = (sanity.Invariant("X1", "fails", fails), sanity.Invariant("X2", "raises", raises),
              sanity.INVARIANTS[5])
    results = sanity.run(checks)
    assert [r.ok for r in results] == [False, False, True]
    assert results[0].line() == "FAIL  [X1] fails: AssertionError: expected 7, got 6"
    assert results[1].detail == "KeyError: 'missing'"
    assert sanity.report(results).splitlines()[-1] == "2 of 3 invariants FAILED: X1, X2"


# ---------------------------------------------------------------------------- an implementation of one's own

SCRATCH = Path(__file__).resolve().parents[2] / "book" / "code" / "tokenization_from_scratch.py"

# One part of the book's file replaced by a typical mistake, and the one check that must catch it.
BREAKS = {
    # a byte table that shifts every byte, so no text is stored as itself
    "D01": "def bytes_to_unicode():\n    return {b: chr(0x100 + b) for b in range(256)}\n",
    # WordPiece that keeps the pieces found before a failure
    "D03": ("_good_wordpiece = wordpiece\n"
            "def wordpiece(word, vocab, unk='[UNK]'):\n"
            "    for end in range(len(word), 0, -1):\n"
            "        if word[:end] in vocab:\n"
            "            return [word[:end]] + _good_wordpiece('#' * 2 + word[end:], vocab, unk)\n"
            "    return [unk]\n"),
    # a forward pass in probability space: exact on short texts, 0.0 (log: an error) on long ones
    "D04": ("def forward(text, logp):\n"
            "    alpha = [1.0] + [0.0] * len(text)\n"
            "    for end in range(1, len(text) + 1):\n"
            "        alpha[end] = sum(alpha[s] * math.exp(logp[text[s:end]])\n"
            "                         for s in range(end) if text[s:end] in logp)\n"
            "    return math.log(alpha[-1])\n"),
    # an extension that puts a new token at the front of the merges, so every merge ID moves
    "D08": ("def extend(ranks, tokens):\n"
            "    new = {t: i for t, i in ranks.items() if i < 256}\n"
            "    for t in [*tokens, *(t for t in ranks if ranks[t] >= 256)]:\n"
            "        new.setdefault(t, len(new))\n"
            "    return new\n"),
}


def broken_copy(tmp_path: Path, label: str) -> Path:
    path = tmp_path / f"broken_{label}.py"
    path.write_text(SCRATCH.read_text(encoding="utf-8") + "\n\n" + BREAKS[label], encoding="utf-8")
    return path


def test_the_books_single_file_satisfies_every_invariant():
    module = sanity.load_impl(SCRATCH)
    assert sanity.missing_names(module) == []
    results = sanity.run(sanity.impl_invariants(module))
    assert [r.label for r in results] == [f"D0{k}" for k in range(1, 9)]
    assert all(r.ok for r in results), sanity.report(results)
    assert [r.title for r in results] == [inv.title for inv in sanity.INVARIANTS]


@pytest.mark.parametrize("label", sorted(BREAKS))
def test_a_broken_implementation_fails_only_the_check_for_its_mistake(tmp_path, label):
    module = sanity.load_impl(broken_copy(tmp_path, label))
    results = sanity.run(sanity.impl_invariants(module))
    assert [r.label for r in results if not r.ok] == [label], sanity.report(results)
    failed = next(r for r in results if not r.ok)
    assert failed.line().startswith(f"FAIL  [{label}]") and "\n" not in failed.line()
    assert WHAT_WENT_WRONG[label] in failed.detail, failed.detail
    assert label != "D04" or failed.detail.startswith("AssertionError: forward('ababab")


WHAT_WENT_WRONG = {
    "D01": "bytes_to_unicode()[33] is 'ġ'; in GPT-2's table it is '!'",
    "D03": "expected ['[UNK]']",
    "D04": ") raised ValueError: math domain error",
    "D08": "extend(...) for two new tokens gave",
}


def test_chosen_checks_need_only_their_own_functions(tmp_path):
    path = tmp_path / "partial.py"
    path.write_text("def wordpiece(word, vocab, unk='[UNK]'):\n    return [unk]\n", encoding="utf-8")
    module = sanity.load_impl(path)
    assert sanity.missing_names(module, ("D03",)) == []
    assert sanity.missing_names(module, ("D04", "D03")) == ["viterbi", "forward"]
    (result,) = sanity.run(sanity.impl_invariants(module, ("D03",)))
    assert not result.ok and "wordpiece('abc', ['##b', '##bc', 'a']) gave ['[UNK]'], expected ['a', '##bc']" in result.detail


def test_every_function_a_check_calls_has_a_signature():
    called = {name for names in sanity.IMPL_NAMES.values() for name in names}
    assert called == set(sanity.IMPL_SIGNATURES)
    assert list(sanity.IMPL_NAMES) == [inv.label for inv in sanity.INVARIANTS]
    assert all(text.startswith(f"{name}(") for name, text in sanity.IMPL_SIGNATURES.items())


def test_a_file_that_cannot_be_imported_is_one_line_of_error(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^importing .*bad\.py raised SyntaxError: ") as info:
        sanity.load_impl(bad)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="is not a Python file"):
        sanity.load_impl(tmp_path / "missing.py")
    leaves = tmp_path / "leaves.py"
    leaves.write_text("import sys\nsys.exit(3)\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"raised SystemExit: 3$"):
        sanity.load_impl(leaves)


def test_a_file_loads_as_an_import_would(tmp_path):
    """A reader's dataclass needs its module in sys.modules, as after a real import."""
    mine = tmp_path / "with_dataclass.py"
    mine.write_text("from __future__ import annotations\nfrom dataclasses import dataclass\n\n\n"
                    "@dataclass\nclass Merge:\n    left: str\n    right: str\n", encoding="utf-8")
    assert sanity.load_impl(mine).Merge("a", "b").left == "a"
