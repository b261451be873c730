"""Code whitespace: re-indent Python source and list a vocabulary's whitespace tokens.

In Python, indentation is syntax, and a byte-level tokenizer pays for it in
tokens: the same function indented with four spaces, two spaces or tabs is
three different token sequences of different lengths. Whether a vocabulary
has a single token for "eight spaces" or "newline and eight spaces" is a fact
about its merge table, which `whitespace_runs` reads off.
"""

from __future__ import annotations

from typing import Any

import regex

__all__ = ["reindent", "source_files", "whitespace_runs"]

_LEADING = regex.compile(r"^(?: {4})+", regex.MULTILINE)


def reindent(source: str, unit: str) -> str:
    """Replace each leading run of four spaces on every line by ``unit`` (e.g. ``"  "`` or ``"\\t"``).

    Logical lines in PEP 8 code are indented in multiples of four spaces, so they
    get exactly one ``unit`` per level; continuation lines keep any extra 1-3
    spaces after their converted levels. Text inside triple-quoted strings is
    re-indented too, as an editor's "convert indentation" does.
    """
    if not unit or unit.strip(" \t"):
        raise ValueError(f"unit must be a non-empty run of spaces or tabs, got {unit!r}")
    return _LEADING.sub(lambda m: unit * (len(m.group()) // 4), source)


def source_files(bundle: str) -> dict[str, str]:
    """Split the bundled code corpus (``# ==> path <==`` headers) into ``{path: source}``."""
    parts = regex.split(r"^# ==> (.+?) <==\n", bundle, flags=regex.MULTILINE)
    if parts[0].strip():
        raise ValueError("the text does not start with a '# ==> path <==' header")
    return {parts[k]: parts[k + 1] for k in range(1, len(parts), 2)}


def whitespace_runs(tokenizer: Any, *, longest: int = 128) -> dict[str, list[int]]:
    """Which whitespace runs are single tokens: run lengths per kind, up to ``longest``.

    Kinds: ``"spaces"`` (n spaces), ``"tabs"`` (n tabs), ``"newlines"`` (n line
    feeds), ``"newline+spaces"`` (a line feed then n spaces, the start of an
    indented line) and ``"newline+tabs"``.
    """
    kinds = {
        "spaces": lambda n: b" " * n,
        "tabs": lambda n: b"\t" * n,
        "newlines": lambda n: b"\n" * n,
        "newline+spaces": lambda n: b"\n" + b" " * n,
        "newline+tabs": lambda n: b"\n" + b"\t" * n,
    }
    have = set(tokenizer.vocab.values())
    return {kind: [n for n in range(1, longest + 1) if make(n) in have] for kind, make in kinds.items()}
