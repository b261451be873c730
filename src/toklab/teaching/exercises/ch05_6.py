"""Checkers for the coding exercises of §5.6 (the inference stack).

* ``ch05_6-ex4``, `check_reusable_prefix`: the reader computes how many leading
  tokens of a request a block-granular prefix cache can reuse from an earlier
  request: the whole blocks, from the start, whose IDs are identical in both.
  Compared with the rule (common ID prefix rounded down to a multiple of the block
  size) on worked cases, on requests encoded with ``cl100k_base`` (emoji and
  astral characters, whose bytes a change splits mid-character), on random ID
  sequences, and on a long prompt; a block size below 1 must raise ValueError.

Reported in the format of `toklab.teaching.exercises.harness`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from .harness import Run, Shown, exercise

__all__ = ["check_reusable_prefix", "reference_reusable_prefix"]


def reference_reusable_prefix(cached: Sequence[int], request: Sequence[int], block_size: int) -> int:
    """Tokens of ``request`` a cache of ``cached`` reuses in blocks of ``block_size`` tokens."""
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be a positive int, got {block_size!r}")
    same = 0
    for a, b in zip(cached, request):
        if a != b:
            break
        same += 1
    return same // block_size * block_size


def _common(cached: Sequence[int], request: Sequence[int]) -> int:
    return reference_reusable_prefix(cached, request, 1)


def _hint(cached: Sequence[int], request: Sequence[int], block_size: int, expected: int, got: object) -> str:
    same = _common(cached, request)
    if not isinstance(got, int) or isinstance(got, bool):
        return "return the number of reusable tokens, an int."
    if got == same and same != expected:
        return (f"{same} leading IDs agree, but the cache keeps whole blocks of {block_size} only: the "
                "partial block after them is recomputed. Round down to a multiple of the block size.")
    anywhere = sum(a == b for a, b in zip(cached, request))
    if anywhere != same and got == anywhere // block_size * block_size:
        return ("that counts equal IDs anywhere; a cache hit stops at the first difference, because the keys "
                "and values of every later token depend on all the tokens before it.")
    if got == -(-same // block_size) * block_size and got != expected:
        return "that rounds up; a block is reused only if every one of its tokens matches. Round down."
    if got > min(len(cached), len(request)):
        return "no more tokens can be reused than the shorter of the two sequences holds."
    return (f"the sequences agree on their first {same} IDs; with blocks of {block_size}, "
            f"{expected} tokens are reusable.")


def _encoded_cases() -> list[tuple[list[int], list[int], int, str]]:
    """Requests encoded with cl100k_base, where a change falls inside emoji and astral characters."""
    from ...bpe import ByteBPE

    tok = ByteBPE.from_tiktoken("cl100k_base")
    base = "System: answer briefly. \U0001f642 " * 12 + "User: \U0001d518\U0001d52b\U0001d526 \u9f98?"
    out = []
    for k, (old, new) in enumerate((("\U0001f642", "\U0001f643"), ("\U0001d52b", "n"), ("?", "!"),
                                    ("briefly", "briefly,"))):
        at = base.rindex(old) if k % 2 else base.index(old)
        changed = base[:at] + new + base[at + len(old):]
        for size in (1, 4, 16):
            out.append((tok.encode(base), tok.encode(changed), size,
                        f"cl100k_base prompts, {old!r} changed to {new!r}, blocks of {size}"))
    return out


@exercise("ch05_6-ex4", title="What a block-granular prefix cache reuses", function="reusable_prefix",
          reference=reference_reusable_prefix,
          against="the common ID prefix rounded down to whole blocks (vLLM's rule)")
def check_reusable_prefix(run: Run, fn: Callable[[list[int], list[int], int], int]) -> None:
    """Check a reader's ``reusable_prefix(cached, request, block_size) -> int``."""
    cases: list[tuple[list[int], list[int], int, str]] = [
        ([], [], 16, "both empty"),
        ([], [1, 2, 3], 2, "nothing cached"),
        ([1, 2, 3], [], 2, "an empty request"),
        (list(range(40)), list(range(40)), 16, "identical, with a partial last block"),
        (list(range(32)), list(range(32)), 16, "identical, two full blocks"),
        (list(range(40)), list(range(17)) + [99] + list(range(18, 40)), 16, "a change at 17"),
        (list(range(40)), list(range(15)) + [99] + list(range(16, 40)), 16, "a change inside the first block"),
        (list(range(20)), list(range(40)), 8, "the request extends the cached one"),
        ([5, 6, 7, 8], [5, 6, 7, 8], 1, "blocks of one token"),
    ]
    cases += _encoded_cases()
    rng = random.Random(6)
    for k in range(120):
        cached = [rng.randrange(50) for _ in range(rng.randint(0, 60))]
        cut = rng.randint(0, len(cached))
        request = cached[:cut] + [rng.randrange(50) for _ in range(rng.randint(0, 30))]
        cases.append((cached, request, rng.choice([1, 2, 3, 4, 8, 16]), f"random sequences {k}"))
    for cached, request, size, what in cases:
        expected = reference_reusable_prefix(cached, request, size)
        case = run.case(what, expected=expected)
        got = case.call(fn, list(cached), list(request), size)
        if got != expected:
            case.fail(got, _hint(cached, request, size, expected, got))
    long_cached = [rng.randrange(100_000) for _ in range(200_000)]
    long_request = long_cached[:150_007] + [100_001] + long_cached[150_008:]
    expected, seconds = run.timed(reference_reusable_prefix, long_cached, long_request, 16)
    case = run.case("large: a 200,000-token prompt changed at token 150,007 (timed)", expected=expected,
                    input="reusable_prefix(<200,000 IDs>, <the same, one ID changed>, 16)", seconds=seconds,
                    slow_hint="one pass along the two lists up to the first difference is enough; comparing "
                              "slices block by block from the start again, or whole prefixes, is quadratic")
    got = case.call(fn, list(long_cached), list(long_request), 16)
    if got != expected:
        case.fail(got, _hint(long_cached, long_request, 16, expected, got))
    for bad in (0, -16):
        case = run.case(f"block_size {bad}", expected=Shown("ValueError"))
        case.expect_error(fn, [1, 2], [1, 2], bad, why="a block holds at least one token")
