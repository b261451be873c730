"""Corpus slices and small trained tokenizers, built once for all BPE test files."""

from __future__ import annotations

import pytest

from toklab import bpe
from toklab.data import corpus

from .helpers import EOT, PAD, SLICES


@pytest.fixture(scope="package")
def slices():
    return {name: (pattern, corpus.load(name, size)) for name, pattern, size in SLICES}


@pytest.fixture(scope="package")
def trained(slices):
    _, en = slices["en"]
    _, zh = slices["zh"]
    return {
        "gpt2": bpe.train(en, 256 + 500, pattern="gpt2"),
        "cl100k": bpe.train(zh + en[:10_000], 256 + 500, pattern="cl100k"),
        "o200k": bpe.train(en, 256 + 400, pattern="o200k", tie_break="largest"),
    }


@pytest.fixture(scope="package")
def tok():
    docs = [corpus.load(name, 25_000) for name in corpus.CORPUS]
    return bpe.train(docs, 256 + 600 + 2, special_tokens=[EOT, PAD])


@pytest.fixture(scope="package")
def exported(tok):
    """The trained tokenizer as a real tiktoken.Encoding."""
    return tok.to_tiktoken()


@pytest.fixture(scope="package")
def sample():
    """~40 KB of mixed text with special tokens between the documents."""
    parts = [corpus.load(name, 40_000)[25_000:35_000] for name in corpus.CORPUS]
    return EOT.join(parts) + PAD + EOT
