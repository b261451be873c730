"""A small trained BPE with special tokens and corpus samples, shared by the pipeline tests."""

from __future__ import annotations

from functools import lru_cache

from toklab import bpe
from toklab.data import corpus

SPECIALS = ["<|bos|>", "<|eos|>", "<|im_start|>", "<|im_end|>"]


@lru_cache(maxsize=None)
def trained(pattern: str = "cl100k") -> bpe.ByteBPE:
    """A small BPE trained on slices of all four corpus files."""
    text = "".join(corpus.load(name, max_bytes=60_000) for name in ("en", "zh", "code", "mixed"))
    return bpe.train(text, 1500, pattern=pattern, special_tokens=SPECIALS)


def sample_texts() -> list[str]:
    return [corpus.load(name, max_bytes=40_000) for name in ("en", "zh", "code", "mixed")]


def ids_of(tok: bpe.ByteBPE, name: str) -> int:
    return tok.special_tokens[name]
