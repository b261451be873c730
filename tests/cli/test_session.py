"""A new user's first session with ``python -m toklab``, as real processes, in the order they would try things.

Every step is a fresh ``python -m toklab ...`` in a scratch folder; whatever
goes wrong, a command prints no traceback and, when it fails, says why on one
line and exits non-zero.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import textwrap

from toklab.data import corpus
from toklab.teaching.exercises import REGISTRY

TIMEOUT = 120


def test_a_new_users_session(tmp_path):
    def toklab(*args, stdin: str | None = None, status: int = 0) -> subprocess.CompletedProcess:
        done = subprocess.run([sys.executable, "-m", "toklab", *map(str, args)], input=stdin, capture_output=True,
                              text=True, cwd=tmp_path, timeout=TIMEOUT)
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
        assert done.returncode == status, (args, done.returncode, done.stdout, done.stderr)
        if done.stderr:
            assert len(done.stderr.strip().splitlines()) == 1, done.stderr  # one line says what is wrong
        return done

    # 1. What is there?
    overview = toklab("--help").stdout
    for command in ("encode", "decode", "show", "train", "compare", "exercises", "check", "grade"):
        assert command in overview
    assert "--vocab" in toklab("encode", "--help").stdout

    # 2. A first mistake or two: no tokenizer named, a vocabulary that does not exist.
    assert "choose a tokenizer" in toklab("encode", "hello", status=2).stderr  # (a usage error is status 2)
    assert "invalid choice: 'gpt4'" in toklab("encode", "hello", "--vocab", "gpt4", status=2).stderr

    # 3. Encode and decode with each real vocabulary: the text comes back, byte for byte.
    text = "Tokenization, from bytes to production: naïve café, 分词, 🙂"
    for name in ("r50k_base", "cl100k_base", "o200k_base"):
        ids = toklab("encode", text, "--vocab", name).stdout
        assert ids.strip() and all(i.isdigit() for i in ids.split())
        assert toklab("decode", "--vocab", name, "-n", stdin=ids).stdout == text

    # 4. Where do the boundaries fall?
    shown = toklab("show", "unbelievable 12345 世界", "--vocab", "r50k_base", "--vocab", "o200k_base").stdout
    r50k, o200k = shown.splitlines()
    assert r50k.startswith("r50k_base") and "|" in r50k and "\x1b[" not in shown  # plain: not a terminal
    assert int(r50k.split()[1]) > int(o200k.split()[1])

    # 5. Train a tiny tokenizer, then use it.
    (tmp_path / "corpus.txt").write_text(corpus.load("en", 20_000), encoding="utf-8")
    trained = toklab("train", "bpe", "corpus.txt", "--vocab-size", "300", "-o", "tiny.json").stdout
    assert "300 entries" in trained and "--model tiny.json" in trained
    ids = toklab("encode", "the tokenizer", "--model", "tiny.json").stdout
    assert toklab("decode", "--model", "tiny.json", "-n", stdin=ids).stdout == "the tokenizer"
    assert "not a tokenizer file" in toklab("encode", "x", "--model", "corpus.txt", status=1).stderr

    # 6. Compare two vocabularies on a file.
    (tmp_path / "zh.txt").write_text(corpus.load("zh", 5_000), encoding="utf-8")
    rows = json.loads(toklab("compare", "zh.txt", "--vocab", "r50k_base", "--vocab", "o200k_base", "--json").stdout)
    assert rows[1]["tokens"] < rows[0]["tokens"] and rows[1]["bytes_per_token"] > rows[0]["bytes_per_token"]

    # 7. Which exercises are there?
    listed = toklab("exercises").stdout
    assert all(label in listed for label in REGISTRY)

    # 8. Check a solution, right and wrong.
    good = ("def my_encode(symbols, merges):\n    rank = {p: r for r, p in enumerate(merges)}\n    parts = list(symbols)\n"
            "    while True:\n        ranked = [(rank[p], i) for i, p in enumerate(zip(parts, parts[1:])) if p in rank]\n"
            "        if not ranked:\n            return parts\n        _, i = min(ranked)\n"
            "        parts[i : i + 2] = [parts[i] + parts[i + 1]]\n")
    wrong = "def my_encode(symbols, merges):\n    return list(symbols)\n"
    (tmp_path / "mine.py").write_text(good, encoding="utf-8")
    (tmp_path / "oops.py").write_text(wrong, encoding="utf-8")
    assert "cases passed" in toklab("check", "ch02_1-ex2", "mine.py").stdout
    failed = toklab("check", "ch02_1-ex2", "oops.py", status=1)
    assert "fails case 1" in failed.stdout and "hint:" in failed.stdout and failed.stderr == ""

    # 9. Grade a class: a correct, a wrong, an endless, a crashing and a broken submission.
    subs = tmp_path / "class"
    subs.mkdir()
    sources = {
        "alice.py": good,
        "bob.py": wrong,
        "carol.py": "def my_encode(symbols, merges):\n    while True:\n        pass\n",
        "dave.py": "import ctypes\n\ndef my_encode(symbols, merges):\n    return ctypes.string_at(0)\n",
        "erin.py": "def my_encode(symbols, merges)\n    return symbols\n",
    }
    for name, source in sources.items():
        (subs / name).write_text(textwrap.dedent(source), encoding="utf-8")
    graded = toklab("grade", "ch02_1-ex2", "class", "--csv", "grades.csv", "--timeout", "2", "--memory", "1024",
                    "--jobs", "2").stdout
    assert "1 of 5 passed" in graded
    with open(tmp_path / "grades.csv", newline="", encoding="utf-8") as fh:
        rows = {row["file"]: row for row in csv.DictReader(fh)}
    assert {name: (row["result"], row["status"]) for name, row in rows.items()} == {
        "alice.py": ("pass", "passed"),
        "bob.py": ("fail", "failed"),
        "carol.py": ("fail", "timeout"),
        "dave.py": ("fail", "crashed"),
        "erin.py": ("fail", "import-error"),
    }
    assert rows["bob.py"]["failure"].startswith("case 1 (") and "expected" in rows["bob.py"]["failure"]
    assert "SIGSEGV" in rows["dave.py"]["failure"] and "line 1" in rows["erin.py"]["failure"]
