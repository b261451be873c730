"""`toklab.teaching.catalog`: what each exercise box says, and the answer templates it links."""

from __future__ import annotations

import inspect

import pytest

from toklab.teaching import catalog
from toklab.teaching.exercises import REGISTRY

BOOK = catalog.book_dir()
CHAPTERS = sorted({e.chapter for e in REGISTRY.values()})


def test_a_box_says_how_its_exercise_is_checked():
    graded = catalog.box("ch02_1-ex2", "★★")
    assert graded == catalog.Box("ch02_1-ex2", "★★", "my_encode(symbols, merges)",
                                 "python -m toklab check ch02_1-ex2 ch02_1_answers.py", "ch02_1_answers.py", True)
    meant_to_fail = catalog.box("ch05_3-ex1", "★")  # its checker is the lesson: answered in words
    assert meant_to_fail.call == "heal_one(tokenizer, prompt)" and not meant_to_fail.graded
    in_words = catalog.box("ch05_3-ex2", catalog.UNMARKED)
    assert in_words.call is None and in_words.command is None and not in_words.graded


@pytest.mark.parametrize("label", list(REGISTRY))
def test_the_call_shown_is_the_one_the_checker_makes(label):
    entry = REGISTRY[label]
    call = catalog.box(label, "★").call
    namespace: dict = {}
    exec(f"def {call}:\n    pass", namespace)  # noqa: S102 - the call shown is a valid def line...
    shown = inspect.signature(namespace[entry.function])
    reference = inspect.signature(entry.reference)  # ...with the reference's parameters and defaults
    assert [(p.name, p.default, p.kind) for p in shown.parameters.values()] == [
        (p.name, p.default, p.kind) for p in reference.parameters.values()]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_each_chapter_template_defines_every_graded_function_and_each_stub_says_what_to_write(chapter):
    pages = sorted(BOOK.glob(f"{chapter}_*.md")) or [BOOK / f"{chapter}.md"]  # deep-dive pages too
    parsed = [catalog.parse_chapter(page) for page in pages]
    text = catalog.template(chapter, parsed[0][0], [ex for _, found in parsed for ex in found])
    graded = [e for e in REGISTRY.values() if e.chapter == chapter and e.graded]
    if not graded:
        assert text is None
        return
    namespace: dict = {}
    exec(compile(text, catalog.template_name(chapter), "exec"), namespace)  # noqa: S102 - our own template
    assert len({e.function for e in graded}) == len(graded), "two exercises of a chapter ask for one name"
    for entry in graded:
        assert f"python -m toklab check {entry.label} {catalog.template_name(chapter)}" in text
        stars = next(ex["difficulty"] for _, found in parsed for ex in found if ex["label"] == entry.label)
        assert f'"""{entry.label} ({stars}): ' in text, f"{entry.label}: its difficulty is not its page's"
        stub = namespace[entry.function]
        assert list(inspect.signature(stub).parameters) == list(inspect.signature(entry.reference).parameters)
        with pytest.raises(NotImplementedError, match=f"{entry.label}: write {entry.function}"):
            stub(*[None] * len(inspect.signature(stub).parameters))
    assert all(f"def {e.function}(" not in text for e in REGISTRY.values() if e.chapter == chapter and not e.graded)
