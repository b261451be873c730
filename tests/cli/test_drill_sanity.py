"""``python -m toklab drill`` and ``python -m toklab sanity`` as a user runs them.

The drill is non-interactive when stdin is not a terminal (a pipe, /dev/null), and
interactive in a real terminal (a pseudo-terminal here). ``sanity`` passes on the package
as it is, and fails, naming the check, when a function it relies on is broken.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap

import pytest

from toklab import cli
from toklab.cli import drill
from toklab.teaching import drills

ENV = {**os.environ, "PYTHONHASHSEED": "0"}


def toklab(*args: str, stdin: str = "", code: str | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "toklab", *args]
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=ENV, timeout=300)


# ---------------------------------------------------------------------------- registry


def test_drill_and_sanity_are_subcommands_of_the_one_command_line():
    names = [c.name for c in cli.commands()]
    assert names[-2:] == ["drill", "sanity"] and names.count("drill") == names.count("sanity") == 1
    out = toklab("--help")
    assert out.returncode == 0 and "    drill " in out.stdout and "    sanity " in out.stdout
    for name in ("drill", "sanity"):
        usage = toklab(name, "--help")
        assert usage.returncode == 0 and usage.stdout.startswith(f"usage: toklab {name}")


# ---------------------------------------------------------------------------- drill, scripted


def test_drill_prints_the_problem_when_stdin_is_not_a_terminal():
    out = toklab("drill", "bpe-encode", "--seed", "7")
    p = drills.generate("bpe-encode", 7)
    assert out.returncode == 0
    assert out.stdout == f"== bpe-encode, seed 7 ==\n{p.prompt}\nAnswer format: {p.answer_format}\n"
    assert "Answer:" not in out.stdout


def test_drill_answer_prints_the_answer_and_the_worked_solution():
    out = toklab("drill", "unigram-forward", "--seed", "2", "--answer")
    p = drills.generate("unigram-forward", 2)
    assert out.returncode == 0 and f"Answer: {p.answer_text}\n{p.solution}\n" in out.stdout


def test_drill_check_exit_status_and_feedback():
    p = drills.generate("bpe-train", 4)
    right = toklab("drill", "bpe-train", "--seed", "4", "--check", p.answer_text)
    assert right.returncode == 0 and right.stdout.strip() == "correct"
    part, mistake = p.mistakes()[0]
    wrong = toklab("drill", "bpe-train", "--seed", "4", "--check", p.writer(p.with_part(part, mistake.value)))
    assert wrong.returncode == 1 and mistake.title in wrong.stdout
    unreadable = toklab("drill", "bpe-train", "--seed", "4", "--check", "???")
    assert unreadable.returncode == 1 and "could not read" in unreadable.stdout


def test_drill_count_and_the_topics_taking_turns():
    out = toklab("drill", "--seed", "10", "--count", "8")
    headers = [line for line in out.stdout.splitlines() if line.startswith("== ")]
    assert out.returncode == 0 and len(headers) == 8
    assert {h.split(",")[0][3:] for h in headers} == set(drills.TOPICS)
    assert [h.split("seed ")[1] for h in headers] == [f"{s} ==" for s in range(10, 18)]
    assert toklab("drill", "--seed", "10", "--count", "8").stdout == out.stdout


def test_drill_list_and_bad_arguments():
    listed = toklab("drill", "--list")
    assert listed.returncode == 0 and all(t in listed.stdout for t in drills.TOPICS)
    for args, message in [(("nope",), "unknown topic 'nope'"), (("wordpiece", "--seed", "-3"), "non-negative"),
                          (("wordpiece", "--count", "0"), "at least 1")]:
        out = toklab("drill", *args)
        assert out.returncode == 2 and message in out.stderr and out.stderr.count("\n") == 1
    assert toklab("drill", "--seed", "x").returncode == 2


# ---------------------------------------------------------------------------- drill, interactive


def test_interactive_loop_checks_answers_and_counts_them():
    first, second = drills.generate("wordpiece", 5), drills.generate("wordpiece", 6)
    typed = f"{first.answer_text}\n\n{first.answer_text}\n\n?\nq\n"
    out = io.StringIO()
    args = cli.build_parser()[0].parse_args(["drill", "wordpiece", "--seed", "5"])
    assert drill.run(args, stdin=io.StringIO(typed), stdout=out, interactive=True) == 0
    text = out.getvalue()
    assert text.count("Correct.") == 1
    assert drills.generate("wordpiece", 7).answer_text in text  # '?' revealed the third
    assert second.answer_text in text and "Answer:" in text  # the second answer was wrong: revealed
    assert text.rstrip().endswith("1 of 2 answered right.")


def test_interactive_in_a_real_terminal():
    pexpect = pytest.importorskip("pexpect")
    p = drills.generate("five-numbers", 3)
    child = pexpect.spawn(sys.executable, ["-m", "toklab", "drill", "five-numbers", "--seed", "3"],
                          env=ENV, encoding="utf-8", timeout=60)
    child.expect_exact("> ")
    child.sendline(p.answer_text)
    child.expect_exact("Correct.")
    child.expect_exact("Enter for the next problem, q to quit: ")
    child.sendline("")
    child.expect_exact("== five-numbers, seed 4 ==")
    child.expect_exact("> ")
    child.sendline("1 2 3 4 5")
    child.expect_exact("is wrong")
    child.expect_exact("q to quit: ")
    child.sendline("q")
    child.expect_exact("1 of 2 answered right.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


# ---------------------------------------------------------------------------- sanity


def test_sanity_passes_with_one_line_per_invariant():
    out = toklab("sanity")
    lines = out.stdout.splitlines()
    assert out.returncode == 0, out.stdout + out.stderr
    assert [line[:11] for line in lines[:8]] == [f"PASS  [D0{k}]" for k in range(1, 9)]
    assert lines[8] == "all 8 invariants hold" and len(lines) == 9


BREAK = textwrap.dedent("""
    import sys
    import toklab.{module} as target
    {patch}
    from toklab.cli import main
    sys.exit(main(["sanity"]))
""")

BROKEN = {
    # a byte table that keeps the space as itself (0x20 is printable, but it is whitespace)
    "D01": ("base.unicode", "old = target.bytes_to_unicode()\n"
                       "target.bytes_to_unicode = lambda: {**old, 0x20: ' ', 0x21: old[0x20]}"),
    # an encoder that ignores the ranks and merges the leftmost known pair
    "D02": ("bpe", "from toklab.teaching.drills.bpe import leftmost_encode\n"
                   "target.reference_encode = lambda s, m: leftmost_encode(''.join(s), m)"),
    # WordPiece that keeps the pieces found before a failure
    "D03": ("wordpiece.reference", "from toklab.teaching.drills.wordpiece import keep_found_pieces\n"
                                   "target.encode_word = lambda w, v, **k: keep_found_pieces(w, v)"),
    # a forward pass that keeps the best path (Viterbi) instead of the sum
    "D04": ("unigram", "from toklab.teaching.drills.unigram import viterbi_values\n"
                       "target.reference_forward = viterbi_values"),
    # BPB computed in nats
    "D07": ("measure.metrics", "target.bits_per_byte = lambda nll, n: nll / n"),
    # an extension that re-ranks: the new special takes an old ID
    "D08": ("lab.extension", "old = target.extend\n"
                         "def extend(tok, tokens, special):\n"
                         "    new = old(tok, tokens, special=special)\n"
                         "    return type(tok)(tok.merges[1:], pattern=tok.pattern, special_tokens=new.special_tokens)\n"
                         "target.extend = extend"),
}


@pytest.mark.parametrize("label", sorted(BROKEN))
def test_sanity_fails_and_names_the_broken_invariant(label):
    module, patch = BROKEN[label]
    out = toklab(code=BREAK.format(module=module, patch=patch))
    lines = out.stdout.splitlines()
    assert out.returncode == 1, out.stdout + out.stderr
    failed = [line for line in lines if line.startswith("FAIL")]
    assert [line[7:10] for line in failed] == [label], failed
    assert sum(line.startswith("PASS") for line in lines) == 7
    assert lines[-1] == f"1 of 8 invariants FAILED: {label}"


def test_sanity_runs_chosen_checks_and_refuses_unknown_ones():
    out = toklab("sanity", "d06", "D02")
    assert out.returncode == 0 and [line[7:10] for line in out.stdout.splitlines()[:2]] == ["D06", "D02"]
    bad = toklab("sanity", "D09")
    assert bad.returncode == 2 and "unknown check D09" in bad.stderr


def test_in_process_runs_share_the_registry_error_handling(capsys):
    """Through `toklab.cli.main`: output on stdout, a usage error as one line naming the command."""
    assert cli.main(["drill", "unigram-viterbi", "--seed", "3", "--answer"]) == 0
    assert drills.generate("unigram-viterbi", 3).answer_text in capsys.readouterr().out
    assert cli.main(["sanity", "D06"]) == 0
    assert capsys.readouterr().out.startswith("PASS  [D06]")
    assert cli.main(["drill", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("toklab drill: error: unknown topic 'nope'") and err.count("\n") == 1
