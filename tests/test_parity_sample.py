"""The parity sample (tests/helpers.py) covers what the whole corpus holds.

Tests of layers built on an encoder (offsets, healing, file formats, round trips) run on
this fixed slice of the corpus instead of all of it. That is only as good as the slice,
so here it must hold, at least a few times each, every script, every Unicode character
category and every kind of run that the whole corpus holds often.
"""

from __future__ import annotations

import unicodedata
from collections import Counter

import regex

from toklab.data import corpus

from .helpers import sample_blocks, sample_lines

SCRIPTS = ("Latin", "Han", "Hiragana", "Katakana", "Hangul", "Cyrillic", "Greek", "Arabic", "Hebrew",
           "Devanagari", "Thai")
RUNS = {
    "tab": r"\t",
    "CRLF": r"\r\n",
    "blank line": r"\n\n",
    "indentation after a newline": r"\n {8,}\S",
    "8+ spaces": r" {8,}",
    "4+ digits": r"\d{4,}",
    "decimal number": r"\d+\.\d+",
    "20+ letters": r"\p{L}{20,}",
    "contraction": r"\p{L}'(?:s|t|re|ve|m|ll|d)\b",
    "emoji": r"\p{Extended_Pictographic}",
    "ZWJ sequence": r"\p{Extended_Pictographic}\u200d",
    "combining mark": r"\p{M}",
    "punctuation run": r"[^\s\p{L}\p{N}]{3,}",
}
OFTEN = 20  # a feature the corpus holds this often must be in the sample
FEW = 3  # and the sample must hold it at least this often


def _features(text: str) -> Counter:
    found: Counter = Counter(f"category {unicodedata.category(c)}" for c in text)
    for script in SCRIPTS:
        found[f"script {script}"] = len(regex.findall(rf"\p{{Script={script}}}", text))
    for name, pattern in RUNS.items():
        found[name] = len(regex.findall(pattern, text))
    return found


def test_the_sample_holds_every_feature_the_corpus_holds_often():
    whole = _features("".join(corpus.load_all().values()))
    sample = _features("\n".join(sample_blocks()))
    assert all(whole[f"script {s}"] >= OFTEN for s in SCRIPTS), "the corpus itself lost a script"
    missing = {f: (n, sample[f]) for f, n in whole.items() if n >= OFTEN and sample[f] < FEW}
    assert not missing, f"the parity sample lacks (corpus count, sample count): {missing}"


def test_the_sample_is_fixed_large_and_from_every_file():
    blocks, lines = sample_blocks(), sample_lines()
    assert sum(map(len, blocks)) > 400_000 and len(lines) > 5_000
    texts = corpus.load_all()
    for name, text in texts.items():
        assert sum(block in text for block in blocks) >= 100, name
    assert texts["mixed"].strip("\n") in "\n".join(blocks), "mixed.txt is in the sample whole"
    # the lines are the blocks' lines, in order: sentence-wise tests see the same text
    assert list(lines) == [ln for b in blocks for ln in b.split("\n") if ln]
