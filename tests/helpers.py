"""Plain helpers and constants shared by test files in more than one folder."""

from __future__ import annotations

from functools import lru_cache


# sentencepiece models trained for the tests (`sp_model` in tests/conftest.py)
TRAIN_BYTES = 120_000  # per language, for training
EVAL_BYTES = 60_000  # per language, held out (the bytes right after the training slice)
VOCAB_SIZE = 3000
COVERAGE = 0.9995  # < 1: rare characters stay out of the vocabulary


def every_code_point() -> str:
    """Each code point (surrogates excluded) between two a's, so no two interact."""
    return "a" + "a".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF) + "a"


@lru_cache(maxsize=None)
def small_wordpiece():
    """A BERT-style (uncased) WordPiece trained on 15 KB of each corpus file: 1,500 tokens."""
    from toklab import wordpiece
    from toklab.data import corpus

    return wordpiece.train([corpus.load(name, 15_000) for name in corpus.CORPUS], 1500)


# ----------------------------------------------------------------------------- the parity sample
#
# An encoder's primary parity tests (toklab against tiktoken, sentencepiece or HF on the same
# vocabulary) run on the whole bundled corpus. Tests of a layer built on top of an encoder
# already proven there (offsets, token healing, file formats, tokenizer.json round trips,
# models written back) run on this fixed sample instead, so no suite encodes the same 3.3 MB
# a dozen times. It is chosen to cover, not drawn at random: `mixed.txt`, the file with every
# script of the corpus (Latin, Han, kana, Hangul, Cyrillic, Greek, Arabic, Hebrew,
# Devanagari, Thai) and its emoji, whole; from en, zh and code, evenly spaced blocks of
# SAMPLE_BLOCK consecutive lines, about SAMPLE_LINES_PER_FILE lines per file, so multi-line
# runs (indentation after a newline, blank lines, CRLF) stay whole. tests/test_parity_sample.py
# checks that it holds every script, character category and kind of run the corpus holds.
SAMPLE_BLOCK = 16
SAMPLE_LINES_PER_FILE = 2_000


@lru_cache(maxsize=None)
def sample_blocks() -> tuple[str, ...]:
    """The parity sample as texts of SAMPLE_BLOCK consecutive corpus lines (newlines kept)."""
    from toklab.data import corpus

    out: list[str] = []
    for name, text in sorted(corpus.load_all().items()):
        lines = text.split("\n")
        blocks = ["\n".join(lines[i : i + SAMPLE_BLOCK]) for i in range(0, len(lines), SAMPLE_BLOCK)]
        if name != "mixed":
            blocks = blocks[:: max(1, len(lines) // SAMPLE_LINES_PER_FILE)]
        out += blocks
    return tuple(out)


@lru_cache(maxsize=None)
def sample_lines() -> tuple[str, ...]:
    """The parity sample line by line (non-empty lines), for tests of sentence-wise encoders."""
    return tuple(line for block in sample_blocks() for line in block.split("\n") if line)
