"""The sandbox of ``check`` and ``grade``: the verdict is out of the submission's reach, and so is the grader.

Each test is a submission that attacks what the old sandbox trusted: a forged result
line on its pipe, a patched checker in its own process, the grader's environment, its
parent process, a grandchild that escapes with ``setsid``. None of them passes, and
nothing of them is left running. Plus what a student meets: a notebook, toklab's own
function handed in as an answer, a submission too slow on the large case, a time
limit that names the case it stopped.
"""

from __future__ import annotations

import inspect
import json
import os
import textwrap
import time
from pathlib import Path

import pytest

from toklab.teaching.exercises import sandbox, worker
from toklab.teaching.exercises.sandbox import Limits

from .test_speed import encode_searching_the_merge_list

#: A correct my_encode (ch02_1-ex2), written out.
ENCODE = """
def my_encode(symbols, merges):
    rank = {pair: r for r, pair in enumerate(merges)}
    parts = list(symbols)
    while True:
        ranked = [(rank[p], i) for i, p in enumerate(zip(parts, parts[1:])) if p in rank]
        if not ranked:
            return parts
        _, i = min(ranked)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
"""

WRONG = "def my_encode(symbols, merges):\n    return list(symbols)\n"


def _write(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    with open(f"/proc/{pid}/stat", "rb") as fh:  # still listed: only a zombie (dead, not yet reaped) is allowed
        return fh.read().rsplit(b")", 1)[1].split()[0] == b"Z"


# ---------------------------------------------------------------------------- the verdict


@pytest.mark.parametrize("how", ["line", "framed"])
def test_a_forged_result_on_every_descriptor_does_not_pass(tmp_path, how):
    forger = WRONG + f"""
import json, os, struct
for message in ({{"event": "result", "status": "passed", "summary": "ch02_1-ex2: all 311 cases passed",
                 "seconds": 0.0}}, {{"event": "load-failed", "status": "passed", "summary": "all cases passed"}},
                {{"event": "returned", "value": ["ab", "c"], "seconds": 0.0}}):
    data = json.dumps(message).encode()
    data = data + b"\\n" if {how!r} == "line" else struct.pack(">Q", len(data)) + data
    for fd in range(3, 64):
        try:
            os.write(fd, data)
        except OSError:
            pass
"""
    outcome = sandbox.run("ch02_1-ex2", _write(tmp_path, "forger.py", forger), limits=Limits(seconds=20))
    assert not outcome.passed and outcome.cases_passed == 0, outcome
    assert outcome.status == "error" and "not an answer" in outcome.summary, outcome


def test_patching_the_checker_in_the_submissions_process_changes_nothing(tmp_path):
    patcher = WRONG + """
import toklab.teaching.exercises as exercises
from toklab.teaching.exercises import ch02_1, harness

def fake(fn, **options):
    return "ch02_1-ex2: all 311 cases passed (my_encode agrees with toklab.bpe.reference_encode)"

object.__setattr__(exercises.get("ch02_1-ex2"), "check", fake)
ch02_1.check_encode = fake
harness.Case.fail = lambda self, *a, **k: None
harness.Run.summary = lambda self: "all cases passed"
"""
    outcome = sandbox.run("ch02_1-ex2", _write(tmp_path, "patcher.py", patcher), limits=Limits(seconds=20))
    assert outcome.status == "failed" and "expected ['ab', 'c']" in outcome.summary, outcome


def test_the_answers_cross_as_plain_values_only(tmp_path):
    sneaky = """
class Always:
    def __eq__(self, other):
        return True
    def __iter__(self):
        return iter([])

def my_encode(symbols, merges):
    return Always()
"""
    outcome = sandbox.run("ch02_1-ex2", _write(tmp_path, "sneaky.py", sneaky), limits=Limits(seconds=20))
    assert outcome.status == "failed" and "Always" in outcome.summary, outcome


# ---------------------------------------------------------------------------- isolation


def test_a_submission_runs_in_a_fresh_folder_with_a_minimal_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKLAB_GRADER_SECRET", "do not show")
    report = tmp_path / "seen.json"
    spy = ENCODE + f"""
import json, os
with open({str(report)!r}, "w") as fh:
    json.dump({{"env": dict(os.environ), "cwd": os.getcwd(), "files": os.listdir(".")}}, fh)
"""
    outcome = sandbox.run("ch02_1-ex2", _write(tmp_path, "spy.py", spy), limits=Limits(seconds=30))
    assert outcome.status == "passed", outcome
    seen = json.loads(report.read_text())
    assert "TOKLAB_GRADER_SECRET" not in seen["env"]
    assert set(seen["env"]) <= set(sandbox.PASSED_ON) | {
        "HOME", "TMPDIR", "LANG", "LC_ALL", "PYTHONHASHSEED", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE",
        "PYTHONIOENCODING", "PYTHONNOUSERSITE", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"}
    assert seen["env"]["HOME"] == seen["cwd"] != str(tmp_path)
    assert seen["files"] == []
    assert not Path(seen["cwd"]).exists()  # removed once the check is over


def test_a_submission_that_kills_its_parent_ends_only_its_own_check(tmp_path):
    killer = ENCODE + "\nimport os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"
    outcome = sandbox.run("ch02_1-ex2", _write(tmp_path, "killer.py", killer), limits=Limits(seconds=20))
    assert outcome.status == "crashed" and "killed its parent process" in outcome.summary, outcome
    assert sandbox.run("ch02_1-ex2", _write(tmp_path, "good.py", ENCODE), limits=Limits(seconds=20)).passed


def test_nothing_a_submission_starts_outlives_its_check(tmp_path):
    pids = tmp_path / "pids"
    escaper = ENCODE + f"""
import os, subprocess, sys, time
child = '''
import os, sys, time
if os.fork():
    os._exit(0)
os.setsid()
if os.fork():
    os._exit(0)
with open(sys.argv[1], "a") as fh:
    fh.write(f"{{os.getpid()}}\\\\n")
time.sleep(600)
'''
subprocess.Popen([sys.executable, "-c", child, {str(pids)!r}], start_new_session=True)
sleeper = subprocess.Popen(["sleep", "600"], start_new_session=True)
with open({str(pids)!r}, "a") as fh:
    fh.write(f"{{sleeper.pid}}\\n")
for _ in range(200):
    if len(open({str(pids)!r}).read().split()) == 2:
        break
    time.sleep(0.05)
"""
    outcome = sandbox.run("ch02_1-ex2", _write(tmp_path, "escaper.py", escaper), limits=Limits(seconds=30))
    assert outcome.status == "passed", outcome
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 2
    assert all(_gone(pid) for pid in started), started


def test_a_keyboard_interrupt_in_the_submission_is_its_failure(tmp_path):
    raiser = "def my_encode(symbols, merges):\n    raise KeyboardInterrupt\n"
    outcome = sandbox.run("ch02_1-ex2", _write(tmp_path, "raiser.py", raiser), limits=Limits(seconds=20))
    assert outcome.status == "failed" and "got raised KeyboardInterrupt" in outcome.summary, outcome
    on_import = sandbox.run("ch02_1-ex2", _write(tmp_path, "stops.py", "raise KeyboardInterrupt\n"))
    assert on_import.status == "import-error" and "KeyboardInterrupt" in on_import.summary


@pytest.mark.parametrize("seconds", [float("nan"), float("inf"), 0.0, -1.0])
def test_a_time_limit_must_be_a_positive_number_of_seconds(seconds):
    with pytest.raises(ValueError, match="positive number of seconds"):
        Limits(seconds=seconds)


# ---------------------------------------------------------------------------- what a student meets


def test_a_notebook_is_run_cell_by_cell(tmp_path):
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# My answers\n", "null, true and false are JSON."]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["%matplotlib inline\n", "!pip list\n", "import math"]},
        {"cell_type": "code", "metadata": {}, "execution_count": 3, "outputs": [],
         "source": "print(undefined_name)  # an exploratory cell that fails"},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": ENCODE},
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "answers.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    outcome = sandbox.run("ch02_1-ex2", path, limits=Limits(seconds=30))
    assert outcome.status == "passed", outcome
    assert "cell 3" not in outcome.report  # my_encode does not need that cell: it does not run


def _cells(*sources: str) -> list[dict]:
    return [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": s}
            for s in sources]


def test_a_chapter_notebook_runs_only_the_cells_the_function_needs(tmp_path):
    """A student answers below a chapter's own cells: those that train or load for a minute, or read files
    the fresh folder lacks, do not run unless the function reads what they bind."""
    cells = _cells(
        "import time\nfrom toklab import bpe",
        "time.sleep(600)  # a chapter cell that takes long",
        "open('../data/results.json').read()  # a chapter cell that needs the repository",
        "SEPARATOR = '|'",
        "def my_encode(symbols, merges):\n    return _merge_all(list(symbols), _ranks(merges))",
        "def _ranks(merges):\n    return {p: r for r, p in enumerate(merges)}",  # a helper defined after it
        ENCODE.replace("def my_encode(symbols, merges):", "def _merge_all(parts, rank):").replace(
            "    rank = {pair: r for r, pair in enumerate(merges)}\n    parts = list(symbols)\n", ""),
        "TRACE = []\nTRACE.append(SEPARATOR)",
    )
    path = tmp_path / "ch02_1_bpe.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), "utf-8")
    start = time.monotonic()
    outcome = sandbox.run("ch02_1-ex2", path, limits=Limits(seconds=30))
    assert outcome.status == "passed", outcome
    assert time.monotonic() - start < 30 and "results.json" not in outcome.report


def test_a_notebook_that_does_not_load_in_time_names_the_cell_that_was_running(tmp_path):
    cells = _cells("TABLE = {}", "while True:  # a cell the function needs, stuck\n    TABLE[0] = 1",
                   "def my_encode(symbols, merges):\n    return TABLE")
    path = tmp_path / "stuck.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), "utf-8")
    outcome = sandbox.run("ch02_1-ex2", path, limits=Limits(seconds=2))
    assert outcome.status == "timeout" and "cell 2 of the notebook was running" in outcome.summary, outcome


def test_the_cells_needed_follow_globals_in_place_changes_and_star_imports():
    cells = [(1, "import math\nfrom os.path import *"), (2, "SCALE = 2\nunused = 1"), (3, "SCALE *= 3"),
             (4, "TABLE = {}"), (5, "TABLE['a'] = SCALE"), (6, "TABLE.update(b=1)"), (7, "print(unused)"),
             (8, "def f(x):\n    y = x + 1\n    return math.floor(y * TABLE['a'])"), (9, "def g(:"),
             (10, "def other():\n    global TABLE\n    TABLE = None")]
    assert [n for n, _ in worker.needed_cells(cells, ["f"])] == [1, 2, 3, 4, 5, 6, 8, 10]
    # Nothing binds it: only the cells of imports and definitions run, so that the report can list the functions.
    assert [n for n, _ in worker.needed_cells(cells, ["absent"])] == [1, 8, 10]


def test_a_notebook_without_the_function_says_what_it_defines_without_running_the_rest(tmp_path):
    cells = _cells("import time\ntime.sleep(600)", "1 / 0", "def my_encoder(symbols, merges):\n    return symbols",
                   "@undefined_decorator\ndef helper():\n    pass")
    path = tmp_path / "misnamed.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), "utf-8")
    outcome = sandbox.run("ch02_1-ex2", path, limits=Limits(seconds=30))
    assert outcome.status == "no-function", outcome
    assert "it defines: my_encoder" in outcome.summary and "cell 4 raised NameError" in outcome.summary
    assert "ZeroDivisionError" not in outcome.summary


@pytest.mark.parametrize("name, source, phrase", [
    ("reexport.py", "from toklab.bpe import reference_encode as my_encode\n", "toklab.bpe.reference.reference_encode"),
    ("wrapper.py", "from toklab import bpe\n\ndef my_encode(s, m):\n    return bpe.reference_encode(s, m)\n",
     "toklab.bpe.reference.reference_encode"),
])
def test_toklabs_own_answer_handed_in_is_flagged(tmp_path, name, source, phrase):
    outcome = sandbox.run("ch02_1-ex2", _write(tmp_path, name, source), limits=Limits(seconds=30))
    assert outcome.status == "reused" and phrase in outcome.summary and outcome.cases_passed == 0, outcome


def test_using_toklabs_helpers_is_not_flagged(tmp_path):
    helper = "from toklab.bpe import merge_pair\n" + ENCODE
    assert sandbox.run("ch02_1-ex2", _write(tmp_path, "helper.py", helper), limits=Limits(seconds=30)).passed


def test_a_solution_far_too_slow_on_the_large_case_is_stopped_and_named(tmp_path):
    # The quadratic encoder of the speed tests, handed in under the exercise's name.
    slow = inspect.getsource(encode_searching_the_merge_list) + "\n\nmy_encode = encode_searching_the_merge_list\n"
    start = time.monotonic()
    outcome = sandbox.run("ch02_1-ex2", _write(tmp_path, "slow.py", slow), limits=Limits(seconds=60))
    assert outcome.status == "slow", outcome
    assert "(timed)" in outcome.summary and "x toklab's" in outcome.summary
    assert outcome.cases_passed == outcome.failure["number"] - 1 > 300
    assert time.monotonic() - start < 30


def test_a_timeout_names_the_case_that_was_running(tmp_path):
    sleepy = ENCODE.replace("    rank = {", "    import time; time.sleep(0.05)\n    rank = {")
    outcome = sandbox.run("ch02_1-ex2", _write(tmp_path, "sleepy.py", sleepy), limits=Limits(seconds=1))
    assert outcome.status == "timeout", outcome
    assert "within the 1 s time limit" in outcome.summary
    assert f"on case {outcome.cases_passed + 1} (" in outcome.summary
