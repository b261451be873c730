#!/usr/bin/env python3
"""Rebuild the parallel slice data/parallel/*.txt from Debian's debian-handbook package.

Usage::

    python data/build_parallel.py            # (re)write data/parallel/
    python data/build_parallel.py --check    # rebuild in memory, exit 1 if a file differs

Standard library only; the HTML extraction is build_corpus.py's (same folder), so a
paragraph here is exactly what the main corpus would take from the same page.

The Debian Administrator's Handbook ships the same DocBook book in many locales, and
every locale's pages have the same paragraphs in the same order (checked below: a page
whose paragraph count differs from en-US stops the build). A translation is built from
PO files, so a paragraph nobody translated is shipped as the English original. The slice
is therefore chosen paragraph by paragraph:

1. Candidates: the paragraphs of CHAPTERS (chapters 1-3) in en-US with at least
   MIN_LETTERS letters (headings and one-word paragraphs carry no signal).
2. A paragraph counts as translated into a locale when it differs from the English
   one and (non-Latin locales) at least half of its letters are in the locale's script,
   or (Latin-script locales) its share of common English function words is below half
   of the English paragraph's.
3. A locale is excluded when fewer than MIN_LOCALE_SHARE of the candidates are
   translated: it ships (mostly) untranslated English.
4. Kept: the candidates translated in every locale not excluded. Line i of every
   output file is the same paragraph of the book, so the files are parallel.

Output: data/parallel/<locale>.txt (one paragraph per line) and
data/parallel/locales.tsv (every locale's translated share and whether it is included).
"""

from __future__ import annotations

import argparse
import re
import sys
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from build_corpus import HANDBOOK, html_paragraphs, write_or_check  # noqa: E402  (same extraction as the corpus)

OUT = HERE / "parallel"
CHAPTERS = [
    # chapter 1: the Debian project
    "the-debian-project.html", "sect.foundation-documents.html", "sect.debian-internals.html",
    "sect.follow-debian-news.html", "sect.role-of-distributions.html", "sect.release-lifecycle.html",
    # chapter 2: presenting the case study
    "case-study.html", "sect.master-plan.html", "sect.why-gnu-linux.html", "sect.why-debian.html",
    "sect.why-debian-stable.html",
    # chapter 3: analysing the existing setup and migrating
    "existing-setup.html", "sect.how-to-migrate.html",
]
MIN_LETTERS = 40
MIN_LOCALE_SHARE = 0.25
# Unicode character-name prefixes of the letters a locale's script uses.
SCRIPTS: dict[str, tuple[str, ...]] = {
    "ar-MA": ("ARABIC",), "fa-IR": ("ARABIC",), "ru-RU": ("CYRILLIC",), "el-GR": ("GREEK",),
    "ja-JP": ("CJK", "HIRAGANA", "KATAKANA"), "ko-KR": ("HANGUL",),
    "zh-CN": ("CJK",), "zh-TW": ("CJK",),
}
ENGLISH_FUNCTION_WORDS = frozenset(
    "the of and to a in is for that this it on with as are be by can or an which from not "
    "you its at has have will".split()
)


def script_share(text: str, prefixes: tuple[str, ...]) -> float:
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 0.0
    return sum(unicodedata.name(c, "").startswith(prefixes) for c in letters) / len(letters)


def function_word_share(text: str) -> float:
    words = re.findall(r"[a-z']+", text.lower())
    return sum(w in ENGLISH_FUNCTION_WORDS for w in words) / max(len(words), 1)


def translated(locale: str, para: str, english: str) -> bool:
    if para == english:
        return False
    if locale in SCRIPTS:
        return script_share(para, SCRIPTS[locale]) >= 0.5
    return function_word_share(para) < 0.5 * function_word_share(english)


def build() -> dict[str, str]:
    locales = sorted(p.name for p in HANDBOOK.iterdir() if (p / "index.html").is_file())
    pages: dict[str, list[str]] = {loc: [] for loc in locales}
    for name in CHAPTERS:
        english = html_paragraphs(HANDBOOK / "en-US" / name)
        for loc in locales:
            paras = html_paragraphs(HANDBOOK / loc / name)
            if len(paras) != len(english):
                raise SystemExit(f"{loc}/{name}: {len(paras)} paragraphs, en-US has {len(english)}")
            pages[loc] += paras
    en = pages["en-US"]
    candidates = [i for i, p in enumerate(en) if sum(c.isalpha() for c in p) >= MIN_LETTERS]
    others = [loc for loc in locales if loc != "en-US"]
    share = {loc: sum(translated(loc, pages[loc][i], en[i]) for i in candidates) / len(candidates) for loc in others}
    included = [loc for loc in others if share[loc] >= MIN_LOCALE_SHARE]
    kept = [i for i in candidates if all(translated(loc, pages[loc][i], en[i]) for loc in included)]
    files = {f"{loc}.txt": "".join(pages[loc][i] + "\n" for i in kept) for loc in ["en-US", *included]}
    rows = ["locale\ttranslated_share\tincluded"]
    rows += [f"{loc}\t{share[loc]:.3f}\t{'yes' if loc in included else 'no'}" for loc in others]
    files["locales.tsv"] = "\n".join(rows) + "\n"
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--out", type=Path, default=OUT, help="output folder (default: data/parallel/)")
    ap.add_argument("--check", action="store_true", help="compare a rebuild with the files in --out")
    args = ap.parse_args(argv)
    if not (HANDBOOK / "en-US" / "index.html").is_file():
        print("missing source; install it with:\n  apt-get update && apt-get install -y "
              "--no-install-recommends debian-handbook", file=sys.stderr)
        return 2
    files = build()
    if not args.check and args.out.is_dir():  # a locale dropped by a new build must not linger
        for stale in {p.name for p in args.out.glob("*.t[xs][tv]")} - set(files):
            (args.out / stale).unlink()
    return write_or_check({name: text.encode("utf-8") for name, text in sorted(files.items())}, args.out, args.check)


if __name__ == "__main__":
    sys.exit(main())
