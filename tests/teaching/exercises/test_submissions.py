"""Which file of a student's folder answers which exercise, read without running anything."""

from __future__ import annotations

import json

from toklab.teaching.exercises.submissions import defined_names, files, flat, per_student, pick


def test_defined_names_reads_definitions_imports_and_guarded_ones(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("import os\nfrom x import y as z\ndef f(): pass\nclass C: pass\ng = h = 1\n"
                    "if True:\n    def guarded(): pass\ntry:\n    k: int = 2\nexcept Exception:\n    pass\n")
    assert defined_names(path) == {"os", "z", "f", "C", "g", "h", "guarded", "k"}
    broken = tmp_path / "b.py"
    broken.write_text("def f(:\n")
    assert defined_names(broken) == set()


def test_defined_names_of_a_notebook_skips_magics_and_cells_that_do_not_parse(tmp_path):
    cells = [{"cell_type": "code", "source": "%time x = 1\ndef f():\n    return 1"},
             {"cell_type": "code", "source": "def broken(:"},
             {"cell_type": "markdown", "source": "def not_code(): pass"},
             {"cell_type": "code", "source": ["%%bash\n", "def skipped(): pass"]}]
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps({"cells": cells, "nbformat": 4}))
    assert defined_names(path) == {"f"}


def test_pick_prefers_the_label_then_the_chapter_and_notes_the_choice(tmp_path):
    for name in ("misc.py", "ch02_1.py", "ch02_1-ex2.py", "ch02_10.py"):
        (tmp_path / name).write_text("def my_encode(s, m):\n    return s\n")
    candidates = files(tmp_path, recursive=True)
    found = pick("ann", candidates, "ch02_1-ex2", ["my_encode"])
    assert found.path.name == "ch02_1-ex2.py" and "4 files define my_encode()" in found.note
    found = pick("ann", [p for p in candidates if p.name != "ch02_1-ex2.py"], "ch02_1-ex2", ["my_encode"])
    assert found.path.name == "ch02_1.py"
    assert pick("ann", candidates, "ch02_1-ex1", ["my_train"]).path is None


def test_students_and_files_skip_hidden_and_tool_folders(tmp_path):
    for rel in ("alice/a.py", "alice/.ipynb_checkpoints/a-checkpoint.ipynb", "alice/__pycache__/x.py", ".git/h.py",
                "bob.py", "notes.txt"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    assert [name for name, _ in per_student(tmp_path)] == ["alice"]
    assert [p.name for p in files(tmp_path / "alice", recursive=True)] == ["a.py"]
    assert [f.student for f in flat(tmp_path)] == ["bob"]
