"""Shown code fits 88 columns (the developer guide's rule for pages), read from the built
chapters of the full edition.

Shown code is every code block a reader can see on a chapter page: code cells' inputs,
``literalinclude`` and ``code-block`` listings, and the code inside solution dropdowns
and inside hidden-input cells (``hide-input``: collapsed in a <details>, shown when the
reader opens it). Cells tagged ``remove-cell`` or ``remove-input`` leave no code in the
HTML, so they are not read. Outputs are not code and are not counted. Width is display
width, as black and ruff measure line length: a wide (CJK) character counts two columns,
a tab four.
"""

from __future__ import annotations

from wcwidth import wcwidth

from siteutil import chapter_pages, parsed

LIMIT = 88


def width(line: str) -> int:
    return sum(max(wcwidth(c), 0) for c in line.expandtabs(4))


def shown_code(article) -> list:
    """The <pre> of every code block on the page that is not a cell's output."""
    return [pre for pre in article.select("div.highlight pre") if not pre.find_parent(class_="cell_output")]


def test_no_line_of_shown_code_is_wider_than_88_columns(site):
    problems, lines = [], 0
    for rel in chapter_pages(site):
        article = parsed(site / rel).find("article")
        too_wide = []
        for pre in shown_code(article):
            for line in pre.get_text().splitlines():
                lines += 1
                if width(line) > LIMIT:
                    too_wide.append(line)
        if too_wide:
            shown = "\n".join(f"    {width(line)}: {line}" for line in too_wide[:3])
            problems.append(f"{rel}: {len(too_wide)} lines wider than {LIMIT} columns, e.g.\n{shown}")
    assert lines > 1000, f"only {lines} lines of shown code in the chapters"
    assert not problems, "\n".join(problems)
