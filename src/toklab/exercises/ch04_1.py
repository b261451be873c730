"""Checkers for the coding exercises of §4.1 (training corpus and vocabulary size).

* `check_truncate` -- the reader cuts a trained byte-level BPE tokenizer down to a
  smaller vocabulary size using only its merges (the first ``vocab_size - 256`` of
  them). Compared, on English, Chinese and code, with a fresh training run stopped at
  that size, which must give the same tokenizer.

The checker raises AssertionError naming the size and what differed, and returns a
one-line success message otherwise.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import corpus
from ..bpe import ByteBPE, train

__all__ = ["check_truncate"]


def check_truncate(fn: Callable[[ByteBPE, int], ByteBPE]) -> str:
    """Check a reader's ``truncate(tokenizer, vocab_size) -> ByteBPE``."""
    docs = [corpus.load(name, 60_000) for name in ("en", "zh", "code")]
    full = train(docs, 900)
    probe = "".join(corpus.held_out(name, 20_000, 3_000) for name in ("en", "zh", "code"))
    for size in (256, 257, 300, 512, 899, 900):
        try:
            got = fn(full, size)
        except Exception as exc:  # a wrong merge list often fails inside ByteBPE
            raise AssertionError(f"truncate(tokenizer, {size}) raised {type(exc).__name__}: {exc}") from None
        assert isinstance(got, ByteBPE), f"truncate(tokenizer, {size}) returned {type(got).__name__}, not a ByteBPE"
        assert len(got) == size, f"truncate(tokenizer, {size}) has {len(got)} tokens"
        expected = train(docs, size)
        assert got.merges == expected.merges, (
            f"truncate(tokenizer, {size}): merges differ from a run stopped at {size} tokens "
            f"(first difference at merge {next(i for i, (a, b) in enumerate(zip(got.merges, expected.merges)) if a != b) if got.merges[:1] else 0})"
        )
        assert got.encode_ordinary(probe) == expected.encode_ordinary(probe), f"truncate(tokenizer, {size}) encodes differently"
    for bad in (255, 901, -1):
        try:
            fn(full, bad)
        except ValueError:
            continue
        raise AssertionError(f"truncate(tokenizer, {bad}) should raise ValueError (sizes run from 256 to 900)")
    return "truncate: OK (sizes 256-900 equal fresh training runs; bad sizes refused)"
