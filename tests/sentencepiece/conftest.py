"""Held-out evaluation lines for the sentencepiece tests (the models come from ``tests/conftest.py``)."""

from __future__ import annotations

import pytest

from toklab.data import corpus

from ..helpers import EVAL_BYTES, TRAIN_BYTES


@pytest.fixture(scope="session")
def eval_lines() -> list[str]:
    """Held-out lines of en, zh and mixed, plus Python source (never trained on)."""
    lines = []
    for name in ("en", "zh", "mixed"):
        seen = corpus.load(name, max_bytes=TRAIN_BYTES)
        lines += corpus.load(name, max_bytes=TRAIN_BYTES + EVAL_BYTES)[len(seen) :].split("\n")
    lines += corpus.load("code", max_bytes=EVAL_BYTES).split("\n")
    return lines
