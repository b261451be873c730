"""``check`` and ``grade``: the registry's checker on a student's function, in a process of its own, under limits."""

from __future__ import annotations

import csv
import inspect
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from toklab.cli import grading
from toklab.teaching.exercises import REGISTRY, sandbox
from toklab.teaching.exercises.sandbox import ALIASES, STATUSES, Limits

from ..teaching.exercises.test_registry import encode_by_recounting

BOOK = Path(__file__).resolve().parents[2] / "book"

GOOD = """
def my_encode(symbols, merges):
    rank = {pair: r for r, pair in enumerate(merges)}
    parts = list(symbols)
    while len(parts) > 1:
        ranked = [(rank[p], i) for i, p in enumerate(zip(parts, parts[1:])) if p in rank]
        if not ranked:
            break
        _, i = min(ranked)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return parts

if __name__ == "__main__":
    raise SystemExit("the script part must not run under the checker")
"""

#: ch03_1-ex1 under the name its solution uses.
OWN_TABLE = """
def my_bytes_to_unicode():
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table, n = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + n)
            n += 1
    return table
"""

#: The typical slip of this exercise (§2.1's pitfall), as the registry's own test writes it, in a file of its own.
BY_COUNT = "from collections import Counter\nfrom toklab import bpe\n\n" + inspect.getsource(
    encode_by_recounting).replace("def encode_by_recounting(", "def my_encode(")

#: name -> (source, status, a phrase of the summary)
ODD = {
    "exits_on_import.py": ("import sys\nsys.exit(2)\n", "exited", "calls sys.exit(2) when imported"),
    "exits_in_check.py": ("import sys\ndef my_encode(s, m):\n    sys.exit(5)\n", "exited", "called sys.exit(5)"),
    "os_exit.py": ("import os\ndef my_encode(s, m):\n    os._exit(4)\n", "exited", "exited with status 4"),
    "hog.py": ("def my_encode(s, m):\n    return bytearray(1 << 40)\n", "memory",
               "ran out of memory (limit 512 MB) on case 1"),
    "hog_on_import.py": ("table = bytearray(1 << 40)\n", "memory", "while being imported"),
    "missing_import.py": ("import numpyy\n", "import-error", "ModuleNotFoundError: No module named 'numpyy'"),
    "wrong_name.py": ("def encode(s, m):\n    return s\n", "no-function",
                      "defines no function my_encode() (the exercise asks for it); it defines: encode"),
    "not_callable.py": ("my_encode = 3\n", "no-function", "my_encode is not a function (it is 3)"),
    "forks_and_loops.py": ("import os, time\ndef my_encode(s, m):\n    if os.fork() == 0:\n        time.sleep(600)\n"
                           "    while True:\n        pass\n", "timeout", "within the 1.5 s time limit"),
    "recursion.py": ("def my_encode(s, m):\n    return my_encode(s, m)\n", "failed", "got raised RecursionError"),
    "keyboard.py": ("def my_encode(s, m):\n    raise KeyboardInterrupt\n", "failed", "got raised KeyboardInterrupt"),
}


def _write(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def test_check_passes_a_correct_file_and_prints_the_checkers_line(toklab, tmp_path):
    path = _write(tmp_path, "good.py", GOOD)
    result = toklab("check", "ch02_1-ex2", path)
    assert result.status == 0, result.out + result.err
    assert re.search(r"^ch02_1-ex2: all [\d,]+ cases passed \(my_encode agrees with toklab\.bpe\.reference_encode\)$",
                     result.out, re.M)
    assert not (tmp_path / "__pycache__").exists()  # nothing written next to a student's file


def test_check_prints_the_harness_block_for_a_wrong_answer(toklab, tmp_path):
    path = _write(tmp_path, "by_count.py", BY_COUNT)
    result = toklab("check", "ch02_1-ex2", path)
    assert result.status == 1
    block = result.out.split("\n", 1)[1]
    assert block.startswith("ch02_1-ex2: my_encode fails case")
    for field in ("case:", "input:", "expected:", "got:", "hint:"):
        assert f"\n  {field}" in block
    assert "that ignores the ranks" in block


def test_check_shows_only_the_students_frames_of_an_exception(toklab, tmp_path):
    path = _write(tmp_path, "raises.py", "def helper(x):\n    return x[10]\n\ndef my_encode(s, m):\n    return helper(s)\n")
    result = toklab("check", "ch02_1-ex2", path)
    assert result.status == 1
    assert "got:      raised IndexError: list index out of range" in result.out
    assert f'File "{path}", line 2, in helper' in result.out
    assert "toklab/teaching/exercises" not in result.out.split("Traceback")[1]


def test_check_reports_a_syntax_error_with_its_line(toklab, tmp_path):
    path = _write(tmp_path, "syntax.py", "def my_encode(symbols, merges)\n    return symbols\n")
    result = toklab("check", "ch02_1-ex2", path)
    assert result.status == 1
    assert f"{path}: SyntaxError: expected ':' (line 1)" in result.out and "^" in result.out


def test_function_overrides_the_name_and_aliases_are_only_where_the_exercise_allows(toklab, tmp_path):
    renamed = _write(tmp_path, "renamed.py", GOOD.replace("my_encode", "encode_with_ranks"))
    assert toklab("check", "ch02_1-ex2", renamed).status == 1
    assert toklab("check", "ch02_1-ex2", renamed, "--function", "encode_with_ranks").status == 0
    table = _write(tmp_path, "table.py", OWN_TABLE)
    result = toklab("check", "ch03_1-ex1", table)
    assert result.status == 0 and "checking my_bytes_to_unicode(), which ch03_1-ex1 accepts" in result.out


@pytest.mark.parametrize("label", sorted(ALIASES))
def test_each_alias_is_allowed_by_its_exercise_and_used_by_its_solution(label):
    entry = REGISTRY[label]
    (chapter,) = BOOK.glob(f"{entry.chapter}_*.md")
    text = chapter.read_text(encoding="utf-8")
    start = text.index(f":label: {label}\n")
    statement = text[start : text.index(f"{{solution-start}} {label}", start)]
    solution = text[text.index(f"{{solution-start}} {label}", start) : text.index("solution-end", start)]
    assert "(your_function)" in statement, f"{label}: the statement fixes the name {entry.function}"
    for alias in ALIASES[label]:
        assert f"def {alias}(" in solution


def test_bad_arguments_are_one_line(toklab, tmp_path):
    path = _write(tmp_path, "good.py", GOOD)
    cases = [
        (("check", "ch09-ex7", path), 2, "no checker for exercise 'ch09-ex7'"),
        (("check", "ch00-ex3", path), 2, "python -m toklab exercises lists them all"),
        (("check", "ch02_1-ex2", tmp_path / "missing.py"), 1, "no such file"),
        (("check", "ch02_1-ex2", tmp_path), 1, "is not a file"),
        (("check", "ch02_1-ex2", path, "--timeout", "0"), 2, "--timeout must be positive"),
        (("check", "ch02_1-ex2", path, "--memory", "10"), 2, "--memory must be at least 64"),
        (("check", "ch02_1-ex2"), 2, "required: FILE.py"),
        (("grade", "ch02_1-ex2", tmp_path / "nowhere"), 1, "is not a folder"),
        (("grade", "ch02_1-ex2", tmp_path / "good.py"), 1, "is not a folder"),
        (("grade", "ch02_1-ex2", tmp_path, "--jobs", "0"), 2, "--jobs must be at least 1"),
        (("grade", "ch02_1-ex2", tmp_path, "--csv", tmp_path / "no" / "g.csv"), 1, "cannot write"),
    ]
    for argv, status, phrase in cases:
        result = toklab(*argv)
        assert result.status == status, (argv, result)
        assert phrase in result.error(), (argv, result.err)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "holds no .py files" in toklab("grade", "ch02_1-ex2", empty).error()


def test_a_memory_limit_below_what_python_needs_is_explained(tmp_path):
    path = _write(tmp_path, "good.py", GOOD)
    outcome = sandbox.run("ch02_1-ex2", path, limits=Limits(seconds=10, memory_mb=64))
    assert outcome.status == "error" and "leaves no room" in outcome.summary and "raise --memory" in outcome.summary


def test_grade_survives_every_kind_of_broken_submission(toklab, tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    _write(folder, "good.py", GOOD)
    _write(folder, "toklab.py", GOOD)  # a file named like the package cannot shadow it
    _write(folder, ".hidden.py", GOOD)  # not a submission
    _write(folder, "notes.txt", "not python")
    for name, (source, _, _) in ODD.items():
        _write(folder, name, source)
    out = tmp_path / "grades.csv"
    result = toklab("grade", "ch02_1-ex2", folder, "--csv", out, "--timeout", "1.5", "--memory", "512", "--jobs", "2")
    assert result.status == 0, result.err
    with open(out, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["file"] for r in rows] == sorted(["good.py", "toklab.py", *ODD])
    assert list(rows[0]) == list(grading.CSV_COLUMNS)
    by_file = {r["file"]: r for r in rows}
    for name in ("good.py", "toklab.py"):
        assert by_file[name]["result"] == "pass" and by_file[name]["failure"] == "", by_file[name]
    for name, (_, status, phrase) in ODD.items():
        row = by_file[name]
        assert row["result"] == "fail" and row["status"] == status, (name, row)
        assert status in STATUSES
        assert phrase in row["failure"], (name, row["failure"])
        assert "\n" not in row["failure"]
        assert float(row["seconds"]) >= 0
    assert float(by_file["forks_and_loops.py"]["seconds"]) < 5  # killed at the limit, not waited for
    assert by_file["recursion.py"]["hint"]  # a failed case carries the checker's hint
    summary = result.out.strip().splitlines()[-1]
    assert summary.startswith(f"2 of {len(ODD) + 2} passed") and str(out) in summary
    assert sum(line.startswith(("PASS", "FAIL")) for line in result.out.splitlines()) == len(ODD) + 2


def test_ctrl_c_stops_grading_and_every_running_submission_at_once(tmp_path):
    folder = tmp_path / "loops"
    folder.mkdir()
    for k in range(4):
        _write(folder, f"loop{k}.py", "def my_encode(s, m):\n    while True:\n        pass\n")
    proc = subprocess.Popen([sys.executable, "-m", "toklab", "grade", "ch02_1-ex2", folder, "--timeout", "60",
                             "--jobs", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # even if we ignore it
    assert proc.stdout.readline().startswith("grading 4 files")
    time.sleep(1.5)  # two submissions are looping now
    proc.send_signal(signal.SIGINT)
    start = time.monotonic()
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and err.strip() == "toklab grade: interrupted"
    assert time.monotonic() - start < 10  # not the 60 s limit, and not the two files still waiting
    assert "FAIL" not in out


def test_a_checker_that_cannot_start_in_time_is_an_error_not_a_timeout(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "STARTUP_SECONDS", 0.01)  # no Python starts that fast
    outcome = sandbox.run("ch02_1-ex2", _write(tmp_path, "good.py", GOOD), limits=Limits(seconds=10))
    assert outcome.status == "error" and "did not start within 0.01 s" in outcome.summary
