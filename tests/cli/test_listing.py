"""``exercises``: every labelled exercise of the chapters, its difficulty marks, and the registry's checkers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from toklab.cli import listing
from toklab.teaching import catalog
from toklab.teaching.exercises import REGISTRY

BOOK = Path(__file__).resolve().parents[2] / "book"

CHAPTER = """\
---
jupytext:
  formats: md:myst
---

(ch09_1-demo)=
# §9.1 A demo chapter

```{code-cell} ipython3
# a comment, not a heading
x = 1
```

## Exercises

````{exercise-start} ★★ Implement something
:label: ch09_1-ex1
````

Write `my_thing(x)`.

````{exercise-end}
````

```{exercise} ★ A question
:label: ch09_1-ex2
:class: dropdown

Why?
```

```{exercise}
:label: ch09_1-ex3

**A bold title.** Then the question.
```

:::{exercise} ★★★ Colon fence, hardest
:label: ch09_1-ex4
:::

```{exercise} No mark at all
:label: ch09_1-ex5
```

```{exercise}
:label: ch09_1-ex6

A statement with no title, long enough that its first sentence is cut short somewhere. Second sentence.
```

```{exercise} ★★ Forgot the label
```
"""


def test_titles_difficulties_and_labels_are_read_from_a_chapter(tmp_path):
    path = tmp_path / "ch09_1_demo.md"
    path.write_text(CHAPTER, encoding="utf-8")
    title, found = listing.parse_chapter(path)
    assert title == "§9.1 A demo chapter"
    got = [(e["label"], e["difficulty"], e["title"]) for e in found]
    assert got == [
        ("ch09_1-ex1", "★★", "Implement something"),
        ("ch09_1-ex2", "★", "A question"),
        ("ch09_1-ex3", "unmarked", "A bold title"),
        ("ch09_1-ex4", "★★★", "Colon fence, hardest"),
        ("ch09_1-ex5", "unmarked", "No mark at all"),
        ("ch09_1-ex6", "unmarked", ""),
        ("", "★★", "Forgot the label"),
    ]
    assert found[5]["opening"] == "A statement with no title, long enough that its first …"
    items = listing.listing(tmp_path)
    assert [i.label for i in items[:6]] == [f"ch09_1-ex{n}" for n in range(1, 7)]
    assert items[5].title == found[5]["opening"]
    assert items[6].label == "ch09_1_demo.md:52 (no label)"  # reported, not dropped
    assert all(not i.checker for i in items[:7])
    assert {i.label for i in items[7:]} == set(REGISTRY) and all(not i.in_book for i in items[7:])


def test_the_book_lists_every_labelled_exercise_and_every_checker():
    items = listing.listing(BOOK)
    labels = [i.label for i in items]
    in_sources = [m for p in sorted(BOOK.glob("ch*.md"))
                  for m in re.findall(r"^:label: (ch[\w]+-ex\d+)$", p.read_text(encoding="utf-8"), re.M)]
    assert labels == in_sources and len(labels) == len(set(labels))
    assert all(i.in_book for i in items)
    with_checker = {i.label: i.function for i in items if i.checker}
    assert with_checker == {label: e.function for label, e in REGISTRY.items()}
    for item in items:
        assert item.chapter == item.label.split("-ex")[0] and item.chapter_title.startswith("§")
        assert item.difficulty in ("★", "★★", "★★★", listing.UNMARKED)
        assert item.title, item.label


def test_the_command_prints_the_table_and_json(toklab):
    result = toklab("exercises")
    assert result.status == 0 and result.err == ""
    for label, entry in REGISTRY.items():
        (line,) = [line for line in result.out.splitlines() if line.split()[:1] == [label]]
        assert f"checker: {entry.function}()" in line
    assert "no checker" in result.out and "§2.1" in result.out
    assert re.fullmatch(rf"\d+ exercises in \d+ chapters, {len(REGISTRY)} with a checker: .+", result.out.splitlines()[-1])
    rows = json.loads(toklab("exercises", "--json").out)
    assert [r["label"] for r in rows] == [i.label for i in listing.listing(BOOK)]
    only = json.loads(toklab("exercises", "--json", "--checkers", "--chapter", "ch02_1").out)
    assert [r["label"] for r in only] == [label for label in REGISTRY if label.startswith("ch02_1-")]


def test_without_book_sources_the_registry_is_listed_and_the_user_told(toklab, monkeypatch):
    monkeypatch.setattr(listing, "book_dir", lambda: None)  # (the command looks it up there)
    result = toklab("exercises", "--json")
    assert result.status == 0
    assert "book sources (book/ch*.md) are not here" in result.err and "--book DIR" in result.err
    rows = json.loads(result.out)
    assert [r["label"] for r in rows] == list(REGISTRY)
    assert all(r["checker"] and r["difficulty"] == "unknown" for r in rows)
    assert "(checkers only)" in toklab("exercises").out


def test_the_installed_package_finds_no_book(tmp_path, monkeypatch):
    fake = tmp_path / "lib" / "python3.11" / "site-packages" / "toklab" / "teaching" / "catalog.py"
    fake.parent.mkdir(parents=True)
    monkeypatch.setattr(catalog, "__file__", str(fake))
    assert catalog.book_dir() is None
    monkeypatch.undo()
    assert catalog.book_dir() == BOOK


def test_bad_options_are_one_line(toklab, tmp_path):
    for argv, status, phrase in [
        (("exercises", "--book", tmp_path), 1, "holds no chapter sources"),
        (("exercises", "--chapter", "ch99"), 1, "no exercises in chapter 'ch99'"),
        (("exercises", "extra"), 2, "unrecognized arguments"),
    ]:
        result = toklab(*argv)
        assert result.status == status and phrase in result.error(), (argv, result.err)


@pytest.mark.parametrize("label", sorted(REGISTRY))
def test_each_checker_is_listed_with_its_chapter(label):
    (item,) = [i for i in listing.listing(BOOK) if i.label == label]
    assert item.checker and item.function == REGISTRY[label].function and item.chapter == REGISTRY[label].chapter
