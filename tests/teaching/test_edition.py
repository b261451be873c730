"""Staging the two editions: the full one whole, the student one without its solutions.

``toklab.teaching.edition.strip_solutions`` (MyST text) and ``strip_notebook_solutions`` (a notebook)
remove plain ``{solution}`` directives and gated ``solution-start`` … ``solution-end``
blocks with their code cells; ``stage_edition`` writes either edition's sources from the
executed notebooks, refusing one out of step with its chapter. The built editions
themselves are checked in tests/site.
"""

from __future__ import annotations

import json

import jupytext
import nbformat
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab.teaching.edition import SOLUTION_CHECK, stage_edition, strip_notebook_solutions, strip_solutions

EXERCISE = """```{exercise-start}
:label: ch99-ex1
```

Write `f(x)`, which doubles `x`.

```{exercise-end}
```
"""
GATED_START = """```{solution-start} ch99-ex1
:class: dropdown
```

Doubling is adding `x` to itself.
"""
GATED_END = """
Either way the answer is exact.

```{solution-end}
```
"""
PLAIN = """````{solution} ch99-ex2
:class: dropdown

Use a loop:

```python
for i in range(3):
    print(i)
```
````
"""


def md_notebook(*cells: tuple[str, str]) -> dict:
    """A notebook dict from (cell_type, source) pairs."""
    nb = nbformat.v4.new_notebook()
    for kind, source in cells:
        nb.cells.append(nbformat.v4.new_markdown_cell(source) if kind == "markdown" else nbformat.v4.new_code_cell(source))
    nb.metadata["jupytext"] = {"default_lexer": "ipython3"}
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return json.loads(nbformat.writes(nb))


def sources(nb: dict) -> list[tuple[str, str]]:
    return [(c["cell_type"], c["source"] if isinstance(c["source"], str) else "".join(c["source"])) for c in nb["cells"]]


def test_gated_solution_loses_its_prose_and_code_cells_and_keeps_the_exercise():
    nb = md_notebook(
        ("markdown", "# Exercises\n\n" + EXERCISE + "\n" + GATED_START),
        ("code", "def f(x):\n    return x + x"),
        ("code", "assert f(2) == 4"),
        ("markdown", GATED_END + "\nThe end of the chapter."),
        ("code", "print('after the exercises')"),
    )
    student = strip_notebook_solutions(nb, where="ch99.ipynb")
    assert sources(student) == [
        ("markdown", "# Exercises\n\n" + EXERCISE.strip("\n")),
        ("markdown", "The end of the chapter."),
        ("code", "print('after the exercises')"),
    ]
    assert "jupytext" not in student["metadata"]
    assert student["metadata"]["kernelspec"]["name"] == "python3"
    assert sources(nb)[1] == ("code", "def f(x):\n    return x + x"), "the input notebook is not modified"
    nbformat.validate(nbformat.from_dict(student))


def test_plain_solution_with_a_nested_fence_is_removed_whole():
    text = "Before.\n\n" + PLAIN + "\nAfter.\n"
    assert strip_solutions(text) == "Before.\n\n\nAfter.\n"
    student = strip_notebook_solutions(md_notebook(("markdown", text)))
    assert sources(student) == [("markdown", "Before.\n\n\nAfter.")]


def test_markdown_file_with_a_gated_solution_drops_the_code_cells_inside():
    text = EXERCISE + "\n" + GATED_START + "\n```{code-cell} ipython3\ndef f(x):\n    return 2 * x\n```\n" + GATED_END + "\nNext section.\n"
    out = strip_solutions(text)
    assert out == EXERCISE + "\n" + "\nNext section.\n"
    assert "return 2 * x" not in out and "solution" not in out


def test_text_without_solutions_is_unchanged():
    text = "# Title\n\n" + EXERCISE + "\n```{code-cell} ipython3\nx = 1\n```\n\n:::{note}\nA note.\n:::\n"
    assert strip_solutions(text) == text


@pytest.mark.parametrize(
    "text, message",
    [
        (GATED_START + "\nno end marker\n", "solution-start without a matching solution-end"),
        ("```{solution-end}\n```\n", "solution-end without a solution-start"),
        ("```{solution} ch99-ex1\nnever closed\n", "unclosed ``` directive"),
    ],
)
def test_malformed_solutions_raise_a_clear_error(text, message):
    with pytest.raises(ValueError, match=message) as err:
        strip_solutions(text, where="book/ch99.md")
    assert "book/ch99.md" in str(err.value)
    with pytest.raises(ValueError, match=message):
        strip_notebook_solutions(md_notebook(("markdown", text)), where="notebooks/ch99.ipynb")


# Property: for any sequence of blocks, what is left is exactly the non-solution blocks.
prose = st.text(alphabet="abc xyz\n", min_size=1, max_size=30).map(lambda s: "Text " + s.strip() + "\n")
code = st.text(alphabet="abc=1+ ", min_size=1, max_size=20).map(lambda s: "x = " + s.strip() + "1")
block = st.one_of(
    st.tuples(st.just("prose"), prose),
    st.tuples(st.just("code"), code),
    st.tuples(st.just("exercise"), st.just(EXERCISE)),
    st.tuples(st.just("plain"), st.just(PLAIN)),
    st.tuples(st.just("gated"), st.lists(code, max_size=3)),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(block, max_size=12))
def test_property_exactly_the_solutions_go(blocks):
    cells: list[tuple[str, str]] = []
    kept: list[tuple[str, str]] = []

    def add_markdown(text: str, keep: bool) -> None:
        # consecutive Markdown joins into one cell, as jupytext does
        if cells and cells[-1][0] == "markdown":
            cells[-1] = ("markdown", cells[-1][1] + "\n" + text)
        else:
            cells.append(("markdown", text))
        if keep:
            if kept and kept[-1][0] == "markdown":
                kept[-1] = ("markdown", kept[-1][1] + "\n" + text)
            else:
                kept.append(("markdown", text))

    for kind, value in blocks:
        if kind == "code":
            cells.append(("code", value))
            kept.append(("code", value))
        elif kind in ("prose", "exercise"):
            add_markdown(value, keep=True)
        elif kind == "plain":
            add_markdown(value, keep=False)
        else:
            add_markdown(GATED_START, keep=False)
            cells.extend(("code", c) for c in value)
            add_markdown(GATED_END, keep=False)
    student = strip_notebook_solutions(md_notebook(*cells))
    got = [(k, s) for k, s in sources(student)]
    want = [(k, s.strip("\n") if k == "markdown" else s) for k, s in kept if k == "code" or s.strip()]
    # Removing a solution between two kept Markdown blocks leaves them in one cell (and,
    # after a removed code cell, in two): compare the kept text and code in order.
    flat = lambda items: [(k, " ".join(s.split())) for k, s in items]  # noqa: E731
    assert " ".join(s for _, s in flat(got)) == " ".join(s for _, s in flat(want))
    assert [s for k, s in got if k == "code"] == [s for k, s in kept if k == "code"]
    assert not any("solution" in s for _, s in got)


# ---------------------------------------------------------------------------- staging


def _tiny_book(root, chapter_md: str) -> None:
    (root / "book").mkdir()
    (root / "notebooks").mkdir()
    (root / "book" / "_static").mkdir()
    (root / "book" / "_static" / "x.css").write_text("p {}\n")
    (root / "_config.yml").write_text("title: T\nexecute:\n  execute_notebooks: force\nsphinx:\n  config:\n    hide_solutions: false\n")
    (root / "_config_student.yml").write_text("title: T (student)\nexecute:\n  execute_notebooks: 'off'\nsphinx:\n  config:\n    hide_solutions: true\n")
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/index\n")
    (root / "book" / "index.md").write_text("# Index\n")
    (root / "book" / "ch99_x.md").write_text(chapter_md)
    nb = jupytext.reads(chapter_md, fmt="md:myst")
    nbformat.write(nb, root / "notebooks" / "ch99_x.ipynb")


CHAPTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# §99 A chapter

```{code-cell} ipython3
x = 1
```

""" + EXERCISE + "\n" + GATED_START + "\n```{code-cell} ipython3\ndef f(x):\n    return x + x\n```\n" + GATED_END


def test_stage_student_edition_writes_stripped_notebooks_and_merged_config(tmp_path):
    root, dest = tmp_path / "repo", tmp_path / "out"
    root.mkdir()
    _tiny_book(root, CHAPTER)
    stage_edition(dest, root, student=True)
    config = yaml.safe_load((dest / "_config.yml").read_text())
    assert config["title"] == "T (student)"
    assert config["execute"]["execute_notebooks"] == "off"
    assert config["sphinx"]["config"]["hide_solutions"] is True
    assert not (dest / "book" / "ch99_x.md").exists(), "a chapter is staged as its notebook only"
    nb = json.loads((dest / "book" / "ch99_x.ipynb").read_text())
    text = "".join(c["source"] if isinstance(c["source"], str) else "".join(c["source"]) for c in nb["cells"])
    assert "Write `f(x)`" in text and "x = 1" in text
    assert "return x + x" not in text and "Doubling" not in text and "solution" not in text
    assert (dest / "book" / "index.md").read_text() == "# Index\n"
    assert (dest / "book" / "_static" / "x.css").is_file()
    assert "toklab_markdown_root" not in config["sphinx"]["config"], "the student download is the notebook alone"


def test_stage_full_edition_keeps_every_cell_and_renders_without_executing(tmp_path):
    root, dest = tmp_path / "repo", tmp_path / "out"
    root.mkdir()
    _tiny_book(root, CHAPTER)
    stage_edition(dest, root)
    config = yaml.safe_load((dest / "_config.yml").read_text())
    assert config["title"] == "T"
    assert config["execute"]["execute_notebooks"] == "off"
    assert config["sphinx"]["config"]["hide_solutions"] is False
    assert config["sphinx"]["config"]["toklab_markdown_root"] == str(root.resolve())
    assert not (dest / "book" / "ch99_x.md").exists(), "a chapter is staged as its notebook only"
    staged = nbformat.read(dest / "book" / "ch99_x.ipynb", as_version=4)
    committed = nbformat.read(root / "notebooks" / "ch99_x.ipynb", as_version=4)
    assert [(c.cell_type, c.source) for c in staged.cells] == [(c.cell_type, c.source) for c in committed.cells]
    assert "jupytext" in committed.metadata and "jupytext" not in staged.metadata
    assert (dest / "book" / "index.md").read_text() == "# Index\n"
    assert (dest / "src").is_symlink() is (root / "src").exists()


@pytest.mark.parametrize("student", [False, True])
def test_stage_edition_refuses_a_notebook_out_of_step_with_its_chapter(tmp_path, student):
    root = tmp_path / "repo"
    root.mkdir()
    _tiny_book(root, CHAPTER)
    (root / "book" / "ch99_x.md").write_text(CHAPTER.replace("x = 1", "x = 2"))
    with pytest.raises(ValueError, match=r"notebooks/ch99_x.ipynb does not match .*make notebooks"):
        stage_edition(tmp_path / "out", root, student=student)


@pytest.mark.parametrize("student", [False, True])
def test_stage_edition_refuses_a_chapter_without_its_notebook(tmp_path, student):
    root = tmp_path / "repo"
    root.mkdir()
    _tiny_book(root, CHAPTER)
    (root / "notebooks" / "ch99_x.ipynb").unlink()
    with pytest.raises(ValueError, match=r"book/ch99_x.md is a notebook without notebooks/ch99_x.ipynb"):
        stage_edition(tmp_path / "out", root, student=student)


# ---------------------------------------------------------------------------- checks of solutions

BOOK = __import__("pathlib").Path(__file__).resolve().parents[2] / "book"
CHECK_COMMENT = "# Executed check of the solution to "


def test_a_cell_tagged_solution_check_is_dropped_from_the_student_notebook():
    nb = md_notebook(("markdown", EXERCISE), ("code", "x = 1"), ("code", CHECK_COMMENT + "ch99-ex1.\nassert x == 1"))
    nb["cells"][2]["metadata"]["tags"] = ["remove-cell", SOLUTION_CHECK]
    nb["cells"][1]["metadata"]["tags"] = ["remove-cell"]  # hidden set-up stays: the notebook needs it
    student = strip_notebook_solutions(nb)
    assert sources(student) == [("markdown", EXERCISE.strip("\n")), ("code", "x = 1")]


@pytest.mark.parametrize("chapter", sorted(p.name for p in BOOK.glob("ch*.md")))
def test_exactly_the_checks_of_solutions_carry_the_tag(chapter):
    """Every cell that executes a solution's check is tagged, and only those: the tag is how the student
    edition finds them (a new check cell without the tag would put its expected answer in students' hands)."""
    for cell in jupytext.read(BOOK / chapter).cells:
        tagged = SOLUTION_CHECK in cell.metadata.get("tags", [])
        checks = cell.cell_type == "code" and cell.source.lstrip().startswith(CHECK_COMMENT)
        assert tagged == checks, f"{chapter}: {cell.source[:80]!r}"
        if tagged:
            assert "remove-cell" in cell.metadata["tags"], f"{chapter}: a check of a solution is hidden from the page"
