"""Helpers for the book's chapters: one call to make every chapter look and run the same.

Each chapter's first code cell is::

    import toklab
    from toklab.book import setup, glue
    setup()

``setup()`` fixes the plot style (readable defaults, one figure size, no seaborn), seeds
the random number generators, and checks ``PYTHONHASHSEED``. It prints nothing when all is
well, so the committed notebook outputs that nbval compares stay identical run to run.

``glue(name, value)`` records a value for ``{glue:text}``/``{glue:figure}`` in the prose
(via ``myst_nb.glue``) without displaying it in the cell, and closes a glued matplotlib
figure so it is not shown twice.

``python -m toklab.book student-edition DIR`` (used by ``make student``) stages the
student edition's sources in DIR: the book with every solution removed. sphinx-exercise's
own ``hide_solutions`` handles plain ``{solution}`` directives, but with gated ones
(``solution-start``/``solution-end``, sphinx-exercise 1.2.1) it drops the start marker
only, leaving the solution's cells in the page and an end marker no HTML writer knows, so
the build crashes. ``strip_gated_solutions`` removes those blocks from the sources instead.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import sys
import warnings
from pathlib import Path
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "SEED",
    "FIGSIZE",
    "DPI",
    "setup",
    "glue",
    "md_table",
    "train_sentencepiece",
    "strip_gated_solutions",
    "stage_student_edition",
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


def train_sentencepiece(lines: str | Iterable[str], **options: Any):
    """Train a sentencepiece model in memory, quietly, on one thread; return its ``SentencePieceProcessor``.

    ``lines`` is a list of sentences, or text cut into its non-empty lines.
    ``options`` go to ``SentencePieceTrainer.train`` as they are (``vocab_size``,
    ``model_type``, ``byte_fallback``, ...); only ``num_threads=1`` (so the
    result does not depend on thread timing) and ``minloglevel=2`` (no log on
    stderr) are defaults here, and ``model_writer`` keeps the model out of the
    file system. The model's bytes are ``processor.serialized_model_proto()``.
    """
    import io

    import sentencepiece as spm

    if isinstance(lines, str):
        lines = [line for line in lines.splitlines() if line.strip()]
    buffer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(list(lines)), model_writer=buffer, **{"num_threads": 1, "minloglevel": 2, **options}
    )
    return spm.SentencePieceProcessor(model_proto=buffer.getvalue())


# --------------------------------------------------------------------------- student edition

_FENCE_OPEN = re.compile(r"^(?P<fence>`{3,}|~{3,}|:{3,})\{(?P<name>[\w-]+)\}")


def strip_gated_solutions(text: str) -> str:
    """Remove every gated solution (``solution-start`` … ``solution-end``) from MyST text.

    Prose inside a solution is dropped. Code cells inside it are kept but tagged
    ``remove-cell``: they still execute (a later cell may use what they define), but the
    page does not show them. Everything outside solutions is returned unchanged.
    """
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        if not (m and m["name"] == "solution-start"):
            out.append(lines[i])
            i += 1
            continue
        i = _skip_directive(lines, i, m["fence"])  # the solution-start block itself
        while i < len(lines):
            m = _FENCE_OPEN.match(lines[i])
            if m and m["name"] == "solution-end":
                i = _skip_directive(lines, i, m["fence"])
                break
            if m and m["name"] == "code-cell":
                end = _skip_directive(lines, i, m["fence"])
                out.extend(_tag_remove_cell(lines[i:end]))
                i = end
            elif m:
                i = _skip_directive(lines, i, m["fence"])
            else:
                i += 1
        else:
            raise ValueError("solution-start without a matching solution-end")
    return "".join(out)


def _skip_directive(lines: list[str], start: int, fence: str) -> int:
    """Index just past the directive opened at ``lines[start]`` (its closing fence)."""
    for j in range(start + 1, len(lines)):
        if lines[j].strip() == fence:
            return j + 1
    raise ValueError(f"unclosed {fence} directive opened at line {start + 1}")


def _tag_remove_cell(cell: list[str]) -> list[str]:
    """Add ``remove-cell`` to a code cell's tags (``:tags:`` or a ``---`` YAML header)."""
    import yaml

    head, body = cell[:1], cell[1:]
    if body and body[0].strip() == "---":  # YAML option block
        end = next(k for k in range(1, len(body)) if body[k].strip() == "---")
        options = yaml.safe_load("".join(body[1:end])) or {}
        options["tags"] = [*options.get("tags", []), "remove-cell"]
        dumped = yaml.safe_dump(options, sort_keys=False, default_flow_style=None)
        return head + ["---\n", dumped, "---\n"] + body[end + 1 :]
    options = []
    while body and body[0].startswith(":"):
        options.append(body.pop(0))
    for k, opt in enumerate(options):
        tm = re.match(r"^:tags:\s*\[(.*)\]\s*$", opt)
        if tm:
            tags = [t.strip() for t in tm[1].split(",") if t.strip()]
            options[k] = f":tags: [{', '.join(tags + ['remove-cell'])}]\n"
            break
    else:
        options.append(":tags: [remove-cell]\n")
    return head + options + body


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def stage_student_edition(dest: str | os.PathLike[str], root: str | os.PathLike[str] = ".") -> Path:
    """Write the student edition's book sources to ``dest`` and return it.

    ``dest`` gets ``_config.yml`` (``_config.yml`` with ``_config_student.yml`` merged
    on top), ``_toc.yml``, and a copy of ``book/`` with gated solutions stripped. The
    other top-level folders a chapter may read or ``literalinclude`` (``src``, ``data``,
    ``tests``, ``benchmarks``) are symlinked, so ``../src/…`` paths resolve as in the
    full build.
    """
    import yaml

    root, dest = Path(root).resolve(), Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    config = _merge(
        yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8")),
        yaml.safe_load((root / "_config_student.yml").read_text(encoding="utf-8")),
    )
    (dest / "_config.yml").write_text(
        yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8"
    )
    shutil.copy2(root / "_toc.yml", dest / "_toc.yml")
    shutil.copytree(root / "book", dest / "book", ignore=shutil.ignore_patterns("*.md"))
    for md in (root / "book").rglob("*.md"):
        target = dest / "book" / md.relative_to(root / "book")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(strip_gated_solutions(md.read_text(encoding="utf-8")), encoding="utf-8")
    for name in ("src", "data", "tests", "benchmarks"):
        if (root / name).exists():
            (dest / name).symlink_to(root / name, target_is_directory=True)
    return dest


def _main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "student-edition":
        print(f"student edition sources staged in {stage_student_edition(argv[1])}")
        return 0
    print("usage: python -m toklab.book student-edition DIR", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
