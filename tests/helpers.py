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
