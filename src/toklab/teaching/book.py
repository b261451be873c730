"""Helpers for the book's chapters: one call to make every chapter look and run the same.

Each chapter's first code cell is::

    import toklab
    from toklab.teaching.book import glue, setup
    setup()

``setup()`` fixes the plot style (readable defaults, one figure size, no seaborn), seeds
the random number generators, and checks ``PYTHONHASHSEED``. It prints nothing when all is
well, so the committed notebook outputs that nbval compares stay identical run to run.

``glue(name, value)`` records a value for ``{glue:text}``/``{glue:figure}`` in the prose
(via ``myst_nb.glue``) without displaying it in the cell, and closes a glued matplotlib
figure so it is not shown twice.

``md_table(header, rows, align)`` writes a Markdown table for ``{glue:md}``.

``html_table(header, rows)`` is the same as an HTML table a cell displays, for cells that
hold more than Markdown can (several lines, token boxes). It carries no styling of its
own: the site's stylesheet gives every such table one look and makes it scroll sideways on
a phone when it must. ``RawHtml`` marks a cell that is already HTML, and
``chunk_boxes(labels)`` draws a row of chunks or tokens as small boxes.

``layers_svg(rows, title=...)`` draws a text as stacked rows of boxes on one shared axis
(bytes, say): a grapheme over its code points over their bytes over the tokens that cut
them. The chapters build the rows from real encodings and place the drawing with
``{glue:figure}``; it is sized for a phone's column.

The student edition (the book without solutions) is staged by `toklab.teaching.edition`;
a sentencepiece model trained by the real library, in memory, comes from
`toklab.sentencepiece.compare.train_sentencepiece`.
"""

from __future__ import annotations

import html
import os
import random
import sys
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "SEED",
    "FIGSIZE",
    "DPI",
    "setup",
    "glue",
    "md_table",
    "RawHtml",
    "HtmlTable",
    "html_table",
    "chunk_boxes",
    "Svg",
    "layers_svg",
]

#: Seed used for ``random`` and ``numpy.random`` in every chapter.
SEED: int = 0
#: Default figure size in inches (width, height): fits the book's text column.
FIGSIZE: tuple[float, float] = (7.0, 3.5)
#: Fixed resolution, so a figure's PNG bytes do not depend on the machine's defaults.
DPI: int = 100

_RC: dict[str, Any] = {
    "figure.figsize": FIGSIZE,
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "savefig.bbox": "tight",
    # Chapters keep figures open to glue them; don't warn about a handful of them.
    "figure.max_open_warning": 0,
    # SVG output: fixed element ids, so identical figures give identical files.
    "svg.hashsalt": "toklab",
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "legend.fontsize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.8,
    "image.cmap": "viridis",
}


def setup(seed: int = SEED) -> None:
    """Prepare a chapter: plot style, seeded RNGs, hash-seed check. Returns nothing.

    Warns (once, visibly in the cell's output) when ``PYTHONHASHSEED`` is not ``"0"``:
    set iteration order then differs between runs, so a number that depends on it (a
    tie broken by set order, a dict built from a set) may differ from the book's. The
    Makefile sets ``PYTHONHASHSEED=0`` for every notebook run.
    """
    random.seed(seed)
    try:
        import numpy as np
    except ImportError:  # numpy is a book dependency, not a package one
        pass
    else:
        np.random.seed(seed)

    try:
        import matplotlib as mpl
    except ImportError:
        pass
    else:
        import matplotlib.style

        # Start from matplotlib's defaults (the style machinery leaves the backend alone),
        # so a chapter looks the same whatever ran before it in the kernel.
        matplotlib.style.use("default")
        mpl.rcParams.update(_RC)

    hashseed = os.environ.get("PYTHONHASHSEED")
    if hashseed != "0":
        warnings.warn(
            f"PYTHONHASHSEED is {hashseed!r}, not '0': str hashing (and so set order) "
            "changes from run to run, so some numbers may differ from the book's. "
            "Run the notebooks via `make notebooks`/`make book`, or start Jupyter with "
            "PYTHONHASHSEED=0.",
            RuntimeWarning,
            stacklevel=2,
        )


def glue(name: str, value: Any, display: bool = False) -> None:
    """Record ``value`` under ``name`` for ``{glue:text}``/``{glue:figure}``.

    A thin wrapper around ``myst_nb.glue``: by default the value is not displayed in the
    cell (the prose shows it). A matplotlib figure is closed once glued, so the inline
    backend does not show it a second time at the end of the cell; place it with
    ``{glue:figure}``. Returns None, like ``myst_nb.glue``, so a ``glue(...)`` on a cell's
    last line adds no output.
    """
    from myst_nb import glue as _glue  # imported lazily: only notebooks need myst_nb

    _glue(name, value, display=display)
    if "matplotlib.figure" in sys.modules:
        from matplotlib.figure import Figure

        if isinstance(value, Figure):
            import matplotlib.pyplot as plt

            plt.close(value)


def md_table(header: Sequence[str], rows: Iterable[Sequence[Any]], align: str) -> str:
    """A Markdown table for ``{glue:md}``; ``align`` has a letter per column: l, r or c.

    >>> print(md_table(["token", "ID"], [["a", 64]], "lr"))
    | token | ID |
    |---|--:|
    | a | 64 |
    """
    rule = {"l": "---", "r": "--:", "c": ":-:"}
    if len(align) != len(header) or set(align) - set(rule):
        raise ValueError(f"align needs one of l/r/c per column ({len(header)} columns), got {align!r}")
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(rule[a] for a in align) + "|"]
    for row in rows:
        row = [str(v) for v in row]
        if len(row) != len(header):
            raise ValueError(f"row {row!r} has {len(row)} cells; the header has {len(header)}")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


class RawHtml(str):
    """A table cell that is already HTML: ``html_table`` inserts it without escaping."""


class HtmlTable:
    """An HTML table that renders in a notebook (``_repr_html_``) and as text elsewhere."""

    def __init__(self, header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> None:
        self.header = [str(h) for h in header]
        self.rows = [list(row) for row in rows]
        for row in self.rows:
            if len(row) != len(self.header):
                raise ValueError(f"row {row!r} has {len(row)} cells; the header has {len(self.header)}")

    @staticmethod
    def _cell(value: Any) -> str:
        if isinstance(value, RawHtml):
            return str(value)
        # A line break in a cell is kept: cells may list several short lines.
        return html.escape(str(value)).replace("\n", "<br>")

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.header)
        body = "".join(
            "<tr>" + "".join(f"<td>{self._cell(c)}</td>" for c in row) + "</tr>" for row in self.rows
        )
        return f'<table class="toklab-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'

    def __repr__(self) -> str:
        return "\n".join(" | ".join(str(c) for c in row) for row in [self.header, *self.rows])


def html_table(header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> HtmlTable:
    """A table for a cell to display; every cell is escaped unless it is ``RawHtml``.

    >>> html_table(["a", "b"], [[1, "x<y"]])._repr_html_().count("&lt;")
    1
    """
    return HtmlTable(header, rows)


_BOX = (
    "border:1px solid #9ca3af;border-radius:3px;padding:0 2px;margin:1px;"
    "font-family:monospace;white-space:pre;display:inline-block"
)


def chunk_boxes(labels: Iterable[str]) -> RawHtml:
    """One small box per label (a chunk or a token, already made printable), as a cell."""
    return RawHtml("".join(f'<span style="{_BOX}">{html.escape(label)}</span>' for label in labels))


class Svg:
    """An SVG drawing that a notebook displays as an image (``_repr_svg_``)."""

    def __init__(self, markup: str) -> None:
        self.markup = markup

    def _repr_svg_(self) -> str:
        return self.markup

    def __str__(self) -> str:
        return self.markup


_FILLS = ("#dbeafe", "#fde68a")  # two tints, alternating, so neighbouring boxes part


def layers_svg(
    rows: Sequence[tuple[str, Sequence[tuple[str, int]]]], *, title: str, width: int = 420
) -> Svg:
    """Rows of boxes on one shared horizontal axis, each row under its heading.

    ``rows`` is ``[(heading, [(label, units), ...]), ...]``: a box is ``units`` wide, and
    every row must add up to the same number of units, so boxes line up across rows
    where they cover the same stretch of the text. A label that does not fit its box at
    a legible size is left out (the box still shows where the piece begins and ends).
    ``title`` becomes the drawing's SVG title; the figure's alt text is the chapter's.
    """
    totals = {sum(units for _, units in boxes) for _, boxes in rows}
    if len(totals) != 1:
        raise ValueError(f"every row must span the same number of units, got {sorted(totals)}")
    (total,) = totals
    if total <= 0 or any(units <= 0 for _, boxes in rows for _, units in boxes):
        raise ValueError("every box needs a positive width")
    unit = width / total
    head, box_h, gap = 18, 28, 10
    y = 0.0
    parts = []
    for heading, boxes in rows:
        y += head
        parts.append(
            f'<text x="0" y="{y - 5:.1f}" font-family="sans-serif" font-size="13" '
            f'fill="#4b5563">{html.escape(heading)}</text>'
        )
        x = 0.0
        for k, (label, units) in enumerate(boxes):
            w = units * unit
            parts.append(
                f'<rect x="{x + 1:.1f}" y="{y:.1f}" width="{w - 2:.1f}" height="{box_h}" rx="3" '
                f'fill="{_FILLS[k % 2]}" stroke="#6b7280" stroke-width="1"/>'
            )
            # A monospace glyph is about 0.62 em wide; shrink to 11 px at most, then omit.
            size = min(15.0, (w - 6) / (0.62 * max(len(label), 1)))
            if label and size >= 11:
                parts.append(
                    f'<text x="{x + w / 2:.1f}" y="{y + box_h / 2 + size * 0.35:.1f}" '
                    f'text-anchor="middle" font-family="DejaVu Sans Mono, Menlo, Consolas, '
                    f'monospace" font-size="{size:.1f}" fill="#111827">{html.escape(label)}</text>'
                )
            x += w
        y += box_h + gap
    height = y - gap + 2
    return Svg(
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height:.0f}" '
        f'width="{width}" height="{height:.0f}" role="img" '
        f'style="max-width:100%;height:auto"><title>{html.escape(title)}</title>'
        + "".join(parts)
        + "</svg>"
    )
