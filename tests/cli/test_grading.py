"""``check`` and ``grade``: the registry's checker on a student's function, in a process of its own, under limits."""

from __future__ import annotations

import csv
import inspect
import json
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from toklab.cli import grading
from toklab.teaching.exercises import REGISTRY, count_cases, sandbox
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
                           "    while True:\n        pass\n", "timeout", "within the 3 s time limit"),
    "recursion.py": ("def my_encode(s, m):\n    return my_encode(s, m)\n", "failed", "got raised RecursionError"),
    "keyboard.py": ("def my_encode(s, m):\n    raise KeyboardInterrupt\n", "failed", "got raised KeyboardInterrupt"),
    "kills_parent.py": ("import os, signal\ndef my_encode(s, m):\n    os.kill(os.getppid(), signal.SIGKILL)\n",
                        "crashed", "killed its parent process"),
    "reexport.py": ("from toklab.bpe import reference_encode as my_encode\n", "reused", "toklab's own answer"),
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
    # the chapter file that holds the exercise (a chapter may have optional deep-dive pages)
    (chapter,) = [path for path in BOOK.glob(f"{entry.chapter}_*.md")
                  if f":label: {label}\n" in path.read_text(encoding="utf-8")]
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
        (("check", "ch02_1-ex2", path, "--timeout", "0"), 2, "--timeout must be a positive number of seconds"),
        (("check", "ch02_1-ex2", path, "--timeout", "nan"), 2, "--timeout must be a positive number of seconds"),
        (("grade", "ch02_1-ex2", tmp_path, "--timeout", "inf"), 2, "--timeout must be a positive number of seconds"),
        (("check", "ch02_1-ex2", path, "--memory", "10"), 2, "--memory must be at least 64"),
        (("check", "ch02_1-ex2"), 2, "required: FILE"),
        (("grade", "ch05_3-ex1", tmp_path), 2, "ch05_3-ex1 is not graded: its checker is meant to fail"),
        (("grade", "ch99", tmp_path), 2, "chapter 'ch99' has no graded exercise"),
        (("grade", "ch02_1-ex2", tmp_path / "good.py", "--recursive"), 1, "is not a folder"),
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
    assert "holds no .py or .ipynb files" in toklab("grade", "ch02_1-ex2", empty).error()
    assert "holds no student folders" in toklab("grade", "ch02_1-ex2", empty, "--recursive").error()
    (empty / "alice").mkdir()
    assert "--recursive grades one folder per student" in toklab("grade", "ch02_1-ex2", empty).error()


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
    result = toklab("grade", "ch02_1-ex2", folder, "--csv", out, "--timeout", "3", "--memory", "512", "--jobs", "2")
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
    assert float(by_file["forks_and_loops.py"]["seconds"]) < 6  # killed at the limit, not waited for
    assert [r["student"] for r in rows] == [Path(r["file"]).stem for r in rows]
    assert all(r["label"] == "ch02_1-ex2" and r["cases_total"] == str(count_cases("ch02_1-ex2")) for r in rows)
    assert by_file["good.py"]["score"] == "100" and by_file["wrong_name.py"]["score"] == "0"
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
    assert proc.stdout.readline().startswith("grading 4 students")
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


# ---------------------------------------------------------------------------- notebooks, folders, gradebooks


def _notebook(path: Path, *sources: str) -> Path:
    cells = [{"cell_type": "markdown", "metadata": {}, "source": "Answers (null and true are JSON words)"}]
    cells += [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": s}
              for s in sources]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}),
                    encoding="utf-8")
    return path


#: ch02_1-ex1, written out.
TRAIN = """
def my_train(words, num_merges):
    words, merges = dict(words), []
    for _ in range(num_merges):
        counts = {}
        for word, n in words.items():
            for pair in zip(word, word[1:]):
                counts[pair] = counts.get(pair, 0) + n
        if not counts:
            break
        best = min(counts, key=lambda p: (-counts[p], p))
        merges.append(best)
        merged = {}
        for word, n in words.items():
            out, i = [], 0
            while i < len(word):
                if tuple(word[i : i + 2]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] = merged.get(tuple(out), 0) + n
        words = merged
    return merges
"""


def test_check_runs_a_notebooks_cells(toklab, tmp_path):
    path = _notebook(tmp_path / "answer.ipynb", "%load_ext autoreload\nimport math", GOOD)
    result = toklab("check", "ch02_1-ex2", path)
    assert result.status == 0, result.out
    assert "my_encode(symbols, merges)" in result.out.splitlines()[0]  # the call the checker makes


def test_check_of_an_exercise_meant_to_fail_says_so(toklab, tmp_path):
    heal_one = ("def heal_one(tokenizer, prompt):\n    ids = tokenizer.encode(prompt, disallowed_special=())\n"
                "    return ids[:-1], tokenizer.decode_bytes(ids[-1:])\n")
    result = toklab("check", "ch05_3-ex1", _write(tmp_path, "heal.py", heal_one))
    assert result.status == 1 and "is meant to fail" in result.out and "not graded as code" in result.out


def test_grade_recursive_builds_one_gradebook_from_folders_of_notebooks(toklab, tmp_path):
    folder = tmp_path / "class"
    _notebook(folder / "北京大学" / "ch02_1_bpe.ipynb", GOOD, TRAIN)  # one notebook answers both
    _notebook(folder / "bob" / "work" / "ch02_1-ex2.ipynb", GOOD)  # below a subfolder
    _write((folder / "bob").resolve(), "train.py", TRAIN.replace("(-counts[p], p)", "(-counts[p], p[::-1])"))
    (folder / "carol").mkdir()
    _write(folder / "carol", "notes.py", "x = 1\n")
    (folder / "dave 🙂").mkdir()
    (folder / ".git").mkdir()  # not a student
    details, book = tmp_path / "details.csv", tmp_path / "gradebook.csv"
    result = toklab("grade", "ch02_1", folder, "--recursive", "--csv", details, "--gradebook", book, "--bom",
                    "--timeout", "30")
    assert result.status == 0, result.err
    raw = book.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and "北京大学".encode() in raw and "🙂".encode() in raw
    with open(book, newline="", encoding="utf-8-sig") as fh:
        gradebook = {row["student"]: row for row in csv.DictReader(fh)}
    assert list(gradebook) == sorted(["北京大学", "bob", "carol", "dave 🙂"])
    assert list(next(iter(gradebook.values()))) == ["student", "score", "passed", "exercises", "ch02_1-ex1",
                                                    "ch02_1-ex2"]
    assert gradebook["北京大学"]["passed"] == "2" and gradebook["北京大学"]["score"] == "100.0"
    assert gradebook["bob"]["ch02_1-ex2"] == "100" and float(gradebook["bob"]["ch02_1-ex1"]) < 100
    assert gradebook["carol"]["score"] == "0.0" and gradebook["dave 🙂"]["passed"] == "0"
    with open(details, newline="", encoding="utf-8-sig") as fh:
        rows = {(r["student"], r["label"]): r for r in csv.DictReader(fh)}
    assert len(rows) == 8 and list(next(iter(rows.values()))) == list(grading.CSV_COLUMNS)
    assert rows[("bob", "ch02_1-ex2")]["file"] == "bob/work/ch02_1-ex2.ipynb"
    assert rows[("bob", "ch02_1-ex1")]["file"] == "bob/train.py"
    assert rows[("dave 🙂", "ch02_1-ex1")]["status"] == "missing"
    assert rows[("carol", "ch02_1-ex2")]["status"] == "no-function"
    passed, total = int(rows[("bob", "ch02_1-ex1")]["cases_passed"]), int(rows[("bob", "ch02_1-ex1")]["cases_total"])
    assert 0 < passed < total == count_cases("ch02_1-ex1")
    assert rows[("bob", "ch02_1-ex1")]["score"] == f"{round(100 * passed / total, 1):g}"


def test_without_bom_the_csv_is_plain_utf8(toklab, tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    _write(folder, "zoë.py", GOOD)
    out = tmp_path / "g.csv"
    assert toklab("grade", "ch02_1-ex2", folder, "--csv", out).status == 0
    assert out.read_bytes().startswith(b"student,label,score,")
    assert "zoë,ch02_1-ex2,100," in out.read_text(encoding="utf-8")
