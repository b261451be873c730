"""tests/changed.py, which picks what `make check` runs."""

from __future__ import annotations

from .changed import select


def test_a_changed_module_selects_its_mirror_folder_its_importers_and_the_layout_test():
    tests, notebooks = select(["src/toklab/lab/healing/unstable.py"])
    assert "tests/lab/healing/test_unstable.py" in tests
    assert "tests/test_layout.py" in tests and notebooks == []
    assert all(t.startswith("tests/") and not t.startswith("tests/site") for t in tests)


def test_a_changed_chapter_selects_its_notebook_and_a_changed_helper_its_folder():
    tests, notebooks = select(["book/ch02_1_bpe.md", "notebooks/ch00_pipeline.ipynb", "tests/lab/healing/helpers.py"])
    assert notebooks == ["notebooks/ch00_pipeline.ipynb", "notebooks/ch02_1_bpe.ipynb"]
    assert set(tests) >= {"tests/lab/healing/test_unstable.py", "tests/lab/healing/test_heal.py"}


def test_nothing_else_is_selected():
    assert select(["README.md", "book/index.md", "tests/site/test_browser.py", "src/toklab/__init__.py"]) == (
        ["tests/test_layout.py"], [])
