"""Every chapter page reads as a book page (measured by ``tests/reading.py``).

A page a reader can finish in one sitting (at most 25 minutes of skim time), checks kept
out of the reader's way (a few visible asserts where the assert is the lesson, no visible
``glue`` calls), and no mention of the documents the book was written from: readers never
see them, so a named source or a bare demo number reads as errata for another book.
"""

from __future__ import annotations

import re

import pytest

from .reading import MAX_MINUTES, chapters, read

# The whole book's visible asserts: each one is a lesson (a round trip, an invariant).
MAX_VISIBLE_ASSERTS = 60

# "seed 001", "seed `004` §3", "(seed Q12)", "the seed's script", "seed corrections";
# not a random seed ("--seed 4", "seed=0", "three seeds"). (D01-D08 stay: they are the
# names `python -m toklab sanity` gives its checks, each shown beside what it checks.)
SOURCE_NAMES = re.compile(
    r"\bseed\s+`?\d{3}\b|\bseed\s+Q\d+|\bseed's\b|\bseed\s+(?:corrections?|documents?|claims?)\b"
    r"|\bthe\s+seeds\b",
    re.IGNORECASE,
)

PAGES = chapters()


def test_there_are_pages():
    assert len(PAGES) >= 20, [p.name for p in PAGES]


@pytest.mark.parametrize("md", PAGES, ids=lambda p: p.stem)
def test_a_page_takes_at_most_25_minutes(md):
    minutes = read(md).minutes
    assert minutes <= MAX_MINUTES, f"{md.name}: {minutes:.1f} minutes of skim time (at most {MAX_MINUTES})"


@pytest.mark.parametrize("md", PAGES, ids=lambda p: p.stem)
def test_no_visible_glue_calls(md):
    assert read(md).visible_glue == 0, f"{md.name}: glue(...) in a shown cell; move it to a hidden one"


def test_few_visible_asserts_in_the_whole_book():
    counts = {md.stem: read(md).visible_asserts for md in PAGES}
    total = sum(counts.values())
    busiest = sorted(counts.items(), key=lambda kv: -kv[1])[:5]
    assert total <= MAX_VISIBLE_ASSERTS, f"{total} visible assert lines; most in {busiest}"


@pytest.mark.parametrize("md", sorted({*PAGES, *PAGES[0].parent.glob("*.md")}), ids=lambda p: p.stem)
def test_no_page_names_a_source_document(md):
    hits = [
        f"{md.name}:{n}: {m.group(0)!r}"
        for n, line in enumerate(md.read_text(encoding="utf-8").splitlines(), 1)
        for m in SOURCE_NAMES.finditer(line)
    ]
    assert not hits, "\n".join(hits)
