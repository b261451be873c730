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

The student edition (the book without solutions) is staged by `toklab.teaching.edition`;
a sentencepiece model trained by the real library, in memory, comes from
`toklab.sentencepiece.compare.train_sentencepiece`.
"""

from __future__ import annotations

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
