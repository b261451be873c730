"""Checkers for the coding exercises of §4.1 (training corpus and vocabulary size).

* ``ch04_1-ex1``, `check_truncate(fn)`: the reader cuts a trained byte-level BPE
  tokenizer down to a smaller vocabulary size using only its merges (the first
  ``vocab_size - 256`` of them), called as ``fn(tokenizer, vocab_size)``. Compared,
  on English, Chinese and code, with a fresh training run stopped at that size, which
  must give the same tokenizer; sizes outside 256..len(tokenizer) must raise ValueError.

Reports in the format of `toklab.teaching.exercises.harness`, with a hint at the usual mistake.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from ...bpe import ByteBPE, train
from ...data import corpus
from .harness import Run, Shown, exercise

__all__ = ["check_truncate"]

_SIZES = (256, 257, 258, 300, 384, 512, 640, 768, 899, 900)
_FRESH = (300, 640)  # sizes at which a fresh training run is compared too


@lru_cache(maxsize=None)
def _setup() -> tuple[ByteBPE, dict[int, ByteBPE], str]:
    """The 900-token tokenizer, the fresh runs stopped at `_FRESH`, and held-out text."""
    docs = [corpus.load(name, 60_000) for name in ("en", "zh", "code")]
    probe = "".join(corpus.held_out(name, 20_000, 3_000) for name in ("en", "zh", "code"))
    return train(docs, 900), {size: train(docs, size) for size in _FRESH}, probe


def _reference_truncate(tokenizer: ByteBPE, vocab_size: int) -> ByteBPE:
    n = vocab_size - 256
    if isinstance(vocab_size, bool) or not 0 <= n <= len(tokenizer.merges):
        raise ValueError(f"vocab_size must be in [256, {256 + len(tokenizer.merges)}], got {vocab_size}")
    return ByteBPE(tokenizer.merges[:n], pattern=tokenizer.pattern)


def _truncate_hint(full: ByteBPE, size: int, got: ByteBPE) -> str:
    n = size - 256
    if got.merges == full.merges[len(full.merges) - n :] and n:
        return ("those are the *last* merges; a late merge joins tokens that earlier merges made, so a run "
                "stopped early has the *first* vocab_size - 256 merges.")
    if got.merges == full.merges[:size]:
        return "each merge adds one token on top of the 256 byte tokens: keep vocab_size - 256 merges, not vocab_size."
    if got.pattern != full.pattern:
        return f"keep the tokenizer's pre-tokenizer pattern ({full.pattern!r}): it decides which pairs ever meet."
    return "a training run stopped at vocab_size tokens has exactly the first vocab_size - 256 merges, in order."


@exercise("ch04_1-ex1", title="Cut a trained BPE vocabulary to a smaller size", function="truncate",
          reference=_reference_truncate, against="fresh training runs stopped at each size")
def check_truncate(run: Run, fn: Callable[[ByteBPE, int], ByteBPE]) -> None:
    """Check a reader's ``truncate(tokenizer, vocab_size) -> ByteBPE``."""
    full, fresh, probe = _setup()
    for size in _SIZES:
        # A run stopped at `size` has the first size - 256 merges of the longer run
        # (at the sizes in `fresh`, the fresh run itself is what is compared).
        expected = fresh.get(size) or _reference_truncate(full, size)
        case = run.case(f"cut the 900-token tokenizer to {size} tokens", expected=Shown(
            f"a ByteBPE with {size} tokens whose merges are those of a run stopped at {size}"))
        got = case.call(fn, full, size)
        if not isinstance(got, ByteBPE):
            case.fail(got, "return a toklab ByteBPE built from the kept merges (ByteBPE(merges, pattern=...)).")
        if len(got) != size:
            case.fail(Shown(f"a ByteBPE with {len(got)} tokens"), _truncate_hint(full, size, got))
        if got.merges != expected.merges or got.pattern != expected.pattern:
            first = next((i for i, (a, b) in enumerate(zip(got.merges, expected.merges)) if a != b), None)
            where = f" (first difference at merge {first})" if first is not None else ""
            case.fail(Shown(f"a ByteBPE whose merges differ from the fresh run's{where}"), _truncate_hint(full, size, got))
        if got.encode_ordinary(probe) != expected.encode_ordinary(probe):
            case.fail(Shown("a ByteBPE that encodes held-out text differently"), _truncate_hint(full, size, got))
    for bad in (255, 901, -1):
        case = run.case(f"vocab_size {bad} is out of range", expected=None)
        case.expect_error(fn, full, bad, why=f"the tokenizer can be cut to 256..{len(full)} tokens only")
    expected, seconds = run.timed(_reference_truncate, full, 899)
    case = run.case(LARGE, expected=Shown("a ByteBPE with 899 tokens whose merges are the first 643"), seconds=seconds,
                    slow_hint=("keep the first vocab_size - 256 merges and build one ByteBPE from them; training "
                               "again, or building a tokenizer per merge, does far more work than a cut needs"))
    got = case.call(fn, full, 899)
    if not isinstance(got, ByteBPE) or got.merges != expected.merges or got.pattern != expected.pattern:
        case.fail(Shown("another tokenizer"), "a training run stopped at vocab_size tokens has exactly the first "
                  "vocab_size - 256 merges, in order.")


#: There is no larger input than the tokenizer itself: this times the largest cut, against toklab's.
LARGE = "large: the 900-token tokenizer cut to 899 tokens (timed)"
