"""The small bundled corpus of real text used by the book and the tests.

The files live in the repository's ``data/`` folder (see ``data/README.md`` for
sources, versions, licences and checksums; ``data/build_corpus.py`` rebuilds
them byte-for-byte from installed Debian packages and the CPython stdlib):

* ``en``    -- English prose (~1.0 MB): Python Language Reference topics and
  the Debian Administrator's Handbook.
* ``zh``    -- Simplified Chinese prose (~1.0 MB): Debian documentation
  translations.
* ``code``  -- Python source (~1.0 MB): a fixed list of CPython 3.11 stdlib modules.
* ``mixed`` -- ~0.36 MB of emoji (ZWJ sequences, skin tones, flags, keycaps,
  variation selectors), CLDR emoji names in 11 languages and prose in 9
  languages/scripts; one block has CRLF line endings on purpose.

All files are UTF-8 without BOM.  Set ``TOKLAB_DATA_DIR`` to use another folder.

`parallel` reads the parallel slice in ``data/parallel/``: the same 122 paragraphs of the
Debian Administrator's Handbook (chapters 1-3) in English and every locale whose shipped
translation covers them (``data/build_parallel.py`` explains the selection), one paragraph
per line, line *i* the same paragraph in every locale.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CORPUS", "data_dir", "corpus_path", "load", "load_all", "held_out", "parallel_locales", "parallel"]

CORPUS: dict[str, str] = {
    "en": "en.txt",
    "zh": "zh.txt",
    "code": "code.py.txt",
    "mixed": "mixed.txt",
}


def data_dir() -> Path:
    """The corpus folder: ``$TOKLAB_DATA_DIR`` if set, else the repository's ``data/``."""
    env = os.environ.get("TOKLAB_DATA_DIR")
    path = Path(env) if env else Path(__file__).resolve().parents[3] / "data"
    if not path.is_dir():
        how = "TOKLAB_DATA_DIR points to" if env else "expected the repository's data folder at"
        raise FileNotFoundError(
            f"toklab corpus folder not found: {how} {path}. Run from a checkout of the "
            "repository (the corpus is not part of the installed package) or set "
            "TOKLAB_DATA_DIR to a folder holding " + ", ".join(CORPUS.values()) + "."
        )
    return path


def corpus_path(name: str) -> Path:
    """Path of corpus file ``name`` (one of the keys of :data:`CORPUS`)."""
    try:
        filename = CORPUS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown corpus {name!r}; valid names: {', '.join(sorted(CORPUS))}"
        ) from None
    return data_dir() / filename


def load(name: str, max_bytes: int | None = None) -> str:
    """Read corpus ``name`` as UTF-8 text, line endings untouched.

    With ``max_bytes``, only the first ``max_bytes`` bytes are considered and the
    text is cut after the last ``\\n`` within them (so never mid-line and never
    mid-character); if that prefix holds no newline the result is ``""``.
    """
    if max_bytes is not None and (isinstance(max_bytes, bool) or not isinstance(max_bytes, int)):
        raise TypeError(f"max_bytes must be an int or None, got {type(max_bytes).__name__} {max_bytes!r}")
    if max_bytes is not None and max_bytes < 0:
        raise ValueError("max_bytes must be >= 0 or None")
    path = corpus_path(name)
    if max_bytes is None:
        data = path.read_bytes()
    else:
        with path.open("rb") as f:
            data = f.read(max_bytes)
        if len(data) == max_bytes:  # possibly truncated: cut at the last newline
            data = data[: data.rfind(b"\n") + 1]
    return data.decode("utf-8")


def load_all(max_bytes_each: int | None = None) -> dict[str, str]:
    """All corpus files, keyed by short name, each loaded with :func:`load`."""
    return {name: load(name, max_bytes_each) for name in CORPUS}


def held_out(name: str, start: int, size: int = 50_000) -> str:
    """About ``size`` characters of corpus ``name`` from character ``start`` on, cut after
    the last newline: text a tokenizer trained on ``load(name)[:start]`` has not seen."""
    for arg, value in (("start", start), ("size", size)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{arg} must be an int, got {type(value).__name__} {value!r}")
    if start < 0 or size <= 0:
        raise ValueError(f"start must be >= 0 and size > 0, got start={start}, size={size}")
    text = load(name)[start : start + size]
    return text[: text.rfind("\n") + 1]


def parallel_locales() -> list[str]:
    """The locales of the parallel slice (``en-US`` first, then sorted), from ``locales.tsv``."""
    table = (data_dir() / "parallel" / "locales.tsv").read_text(encoding="utf-8").splitlines()
    included = [line.split("\t")[0] for line in table[1:] if line.endswith("\tyes")]
    return ["en-US", *sorted(included)]


def parallel(locale: str) -> list[str]:
    """The paragraphs of the parallel slice in ``locale`` (e.g. ``"zh-CN"``), in book order."""
    locales = parallel_locales()
    if locale not in locales:
        raise ValueError(f"no parallel text for locale {locale!r}; available: {', '.join(locales)}")
    text = (data_dir() / "parallel" / f"{locale}.txt").read_text(encoding="utf-8")
    return text.split("\n")[:-1]  # not splitlines(): U+2028 or U+0085 inside a paragraph is text
