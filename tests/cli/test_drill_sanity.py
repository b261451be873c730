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
import shlex
import textwrap
from pathlib import Path

import pytest

from toklab import cli
from toklab.cli import drill
from toklab.teaching import drills
from toklab.teaching.drills import questions

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


def _header(topic, seed):
    return f"== {topic}, seed {seed} == (replay: python -m toklab drill {topic} --seed {seed})"


def test_drill_prints_the_problem_when_stdin_is_not_a_terminal():
    out = toklab("drill", "bpe-encode", "--seed", "7")
    p = drills.generate("bpe-encode", 7)
    assert out.returncode == 0
    assert out.stdout == f"{_header('bpe-encode', 7)}\n{p.prompt}\nAnswer format: {p.answer_format}\n"
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
    assert unreadable.returncode == 2 and "could not read" in unreadable.stderr and not unreadable.stdout
    five = drills.generate("five-numbers", 3)
    grouped = " ".join(f"{n:,}" for n in five.answer)  # as the prompt writes numbers
    assert toklab("drill", "five-numbers", "--seed", "3", "--check", grouped).returncode == 0


def test_drill_check_names_its_problem_by_topic_and_seed_and_checks_one():
    for args, message in [(("--check", "a"), "needs the problem's topic and --seed"),
                          (("wordpiece", "--check", "a"), "needs the problem's topic and --seed"),
                          (("--seed", "3", "--check", "a"), "needs the problem's topic and --seed"),
                          (("wordpiece", "bpe-train", "--seed", "3", "--check", "a"), "topic and --seed"),
                          (("wordpiece", "--seed", "3", "--count", "3", "--check", "a"), "drop --count"),
                          (("Q4", "--seed", "3", "--check", "a"), "graded by you"),
                          (("wordpiece", "--minutes", "5", "--check", "a"), "does not combine")]:
        out = toklab("drill", *args)
        assert out.returncode == 2 and message in out.stderr and out.stderr.count("\n") == 1, (args, out.stderr)
        assert "python -m toklab drill TOPIC --seed N --check ANSWER" in out.stderr or "needs" not in message


def test_every_header_prints_the_command_that_replays_it():
    out = toklab("drill", "--seed", "92397", "--count", "14")
    headers = [line for line in out.stdout.splitlines() if line.startswith("== ")]
    assert out.returncode == 0 and len(headers) == 14
    assert {h.split(" ==")[0][3:].split(",")[0].split(" (")[0] for h in headers} >= set(drills.TOPICS)
    assert any(h.startswith("== Q") for h in headers)  # the questions take their turn
    blocks = out.stdout.split("\n\n")
    for block in blocks[:5]:
        command = block.splitlines()[0].split("(replay: ")[1].rstrip(")")
        again = toklab(*command.split()[3:])
        assert again.stdout.strip() == block.strip(), command
    assert toklab("drill", "--seed", "92397", "--count", "14").stdout == out.stdout


def test_drill_count_answer_puts_an_answer_key_after_the_last_problem():
    out = toklab("drill", "wordpiece", "--seed", "10", "--count", "3", "--answer")
    sheet, key = out.stdout.split("\n== Answer key ==\n")
    assert "Answer:" not in sheet and sheet.count("== wordpiece, seed") == 3
    for k, seed in enumerate((10, 11, 12), 1):
        p = drills.generate("wordpiece", seed)
        assert f"\n{k}. wordpiece, seed {seed}\nAnswer: {p.answer_text}\n{p.solution}\n" in key


def test_drill_questions_print_and_reveal():
    out = toklab("drill", "Q17", "--answer")
    q = questions.question(17)
    assert out.returncode == 0 and out.stdout.startswith("== Q17 (L2) == (replay: python -m toklab drill Q17)\n")
    assert q.title in out.stdout and "Model answer:" in out.stdout and "Common mistake. " in out.stdout
    assert "Shown in §7" in out.stdout and "{ref}" not in out.stdout


def test_the_help_and_the_readme_check_examples_are_right():
    examples = [line.split("python -m toklab ")[1] for line in drill.EPILOG.splitlines()
                if "python -m toklab drill" in line and "--check" in line]
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    examples += [line.split("python -m toklab ")[1].split("   #")[0] for line in readme.splitlines()
                 if line.startswith("python -m toklab drill") and "--check" in line]
    assert len(examples) == 2
    for example in examples:
        out = toklab(*shlex.split(example))
        assert out.returncode == 0 and out.stdout == "correct\n", example


def test_drill_list_and_bad_arguments():
    listed = toklab("drill", "--list")
    assert listed.returncode == 0 and all(t in listed.stdout for t in drills.TOPICS)
    assert all(f"  {q.name:4} {q.level}  {q.title}" in listed.stdout for q in questions.QUESTIONS)
    for args, message in [(("nope",), "unknown topic 'nope'"), (("wordpiece", "--seed", "-3"), "non-negative"),
                          (("wordpiece", "--count", "0"), "at least 1"), (("Q26",), "no question 'Q26'"),
                          (("--minutes", "0"), "more than 0"), (("--minutes", "5", "--answer"), "does not combine")]:
        out = toklab("drill", *args)
        assert out.returncode == 2 and message in out.stderr and out.stderr.count("\n") == 1, (args, out.stderr)
    assert toklab("drill", "--seed", "x").returncode == 2


def test_closed_standard_input_is_one_line_not_a_traceback():
    def closed(*args):
        return subprocess.run([sys.executable, "-m", "toklab", "drill", *args], capture_output=True, text=True,
                              env=ENV, timeout=300, preexec_fn=lambda: os.close(0))

    session = closed("--minutes", "5")
    assert session.returncode == 1 and session.stderr == (
        "toklab drill: error: standard input is closed: a session reads your answers from it\n")
    printed = closed("wordpiece", "--seed", "1")
    assert printed.returncode == 0 and printed.stdout.startswith(_header("wordpiece", 1))


# ---------------------------------------------------------------------------- drill, interactive


def test_interactive_loop_asks_again_on_unreadable_input_and_ends_with_a_summary():
    first, second = drills.generate("five-numbers", 5), drills.generate("five-numbers", 6)
    typed = f"\n1 2\n{first.answer_text}\n\n1 2 3 4 5\n\n?\nq\n"
    out = io.StringIO()
    args = cli.build_parser()[0].parse_args(["drill", "five-numbers", "--seed", "5"])
    assert drill.run(args, stdin=io.StringIO(typed), stdout=out, interactive=True,
                     clock=lambda: 0.0) == 0  # a still clock: the summary's times are 0:00
    text = out.getvalue()
    assert "Type your answer as five whole numbers" in text  # the empty line asked again
    assert "could not read '1 2': expected 5 whole numbers, found 2" in text and "Nothing counted" in text
    assert text.count("Correct.") == 1
    assert second.answer_text in text  # the second answer was wrong: revealed
    assert drills.generate("five-numbers", 7).answer_text in text  # '?' revealed the third
    summary = text.split("Summary by topic\n")[1].splitlines()
    assert summary[1].split() == ["five-numbers", "3", "1", "1", "1", "0:00"]
    assert "python -m toklab drill five-numbers --seed 7" in text.split("To work on")[1]


def test_interactive_in_a_real_terminal():
    pexpect = pytest.importorskip("pexpect")
    p = drills.generate("five-numbers", 3)
    child = pexpect.spawn(sys.executable, ["-m", "toklab", "drill", "five-numbers", "--seed", "3"],
                          env=ENV, encoding="utf-8", timeout=60)
    child.expect_exact("> ")
    child.sendline("")
    child.expect_exact("Type your answer as")
    child.expect_exact("> ")
    child.sendline(" ".join(f"{n:,}" for n in p.answer))  # 100,256 as the prompt writes it
    child.expect_exact("Correct.")
    child.expect_exact("Enter for the next item, q to quit: ")
    child.sendline("")
    child.expect_exact(_header("five-numbers", 4))
    child.expect_exact("> ")
    child.sendline("1 2 3 4 5")
    child.expect_exact("is wrong")
    child.expect_exact("q to quit: ")
    child.sendline("q")
    child.expect_exact("Summary by topic")
    child.expect_exact("five-numbers")
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


SCRATCH = Path(__file__).resolve().parents[2] / "book" / "code" / "tokenization_from_scratch.py"


def test_sanity_checks_a_file_of_ones_own():
    out = toklab("sanity", "--impl", str(SCRATCH))
    lines = out.stdout.splitlines()
    assert out.returncode == 0, out.stdout + out.stderr
    assert [line[:11] for line in lines[:8]] == [f"PASS  [D0{k}]" for k in range(1, 9)]
    assert lines[8] == "all 8 invariants hold" and len(lines) == 9


def test_sanity_impl_names_what_a_file_lacks_in_one_line(tmp_path):
    mine = tmp_path / "my_tokenization.py"
    mine.write_text("def bytes_to_unicode():\n    return {}\n", encoding="utf-8")
    out = toklab("sanity", "--impl", str(mine))
    assert out.returncode == 2 and out.stdout == ""
    (line,) = out.stderr.strip().splitlines()
    assert line == (f"toklab sanity: error: {mine} does not define train, encode_word, encode, decode, wordpiece, "
                    "viterbi, forward, segment, decode_pieces, fertility, bits_per_byte, extend, regression, "
                    "grow_rows, which D01, D02, D03, D04, D05, D06, D07, D08 call (see sanity --help)")
    # Only the chosen check's functions are needed; this one fails, saying what went wrong.
    out = toklab("sanity", "D01", "--impl", str(mine))
    assert out.returncode == 2 and "does not define encode, decode, which D01 calls" in out.stderr
    mine.write_text(mine.read_text() + "def encode(text, ranks):\n    return []\n"
                    "def decode(ids, ranks):\n    return ''\n", encoding="utf-8")
    out = toklab("sanity", "D01", "--impl", str(mine))
    assert out.returncode == 1
    assert out.stdout.splitlines()[0] == ("FAIL  [D01] bytes_to_unicode is a bijection: AssertionError: "
                                          "bytes_to_unicode()[0] is None; in GPT-2's table it is 'Ā'")


def test_sanity_impl_refuses_a_file_it_cannot_import(tmp_path):
    mine = tmp_path / "mine.py"
    mine.write_text("import numpy_that_is_not_there\n", encoding="utf-8")
    out = toklab("sanity", "--impl", str(mine))
    assert out.returncode == 2
    assert out.stderr.strip() == (f"toklab sanity: error: importing {mine} raised ModuleNotFoundError: "
                                  "No module named 'numpy_that_is_not_there'")


def test_sanity_help_lists_the_functions_a_file_must_define():
    from toklab.teaching import sanity

    help_text = toklab("sanity", "--help").stdout
    assert all(f"  {signature}\n" in help_text for signature in sanity.IMPL_SIGNATURES.values())
