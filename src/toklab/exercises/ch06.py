"""Checkers for the coding exercises of §6 (tokenizer-free models).

* `check_patch_starts(fn)` -- the reader's entropy patcher, called as
  ``fn(entropies, threshold, rule)`` with ``entropies`` a list of floats (one per
  byte: the entropy of the prediction for that byte), ``rule`` "global" or
  "monotonic". It must return the sorted positions where patches start, like
  `toklab.patching.patch_starts`.
* `check_mean_size_threshold(fn)` -- the reader's threshold tuner for the global
  rule, called as ``fn(entropies, mean_size)``. The threshold it returns must give
  a mean patch size as close to ``mean_size`` as any threshold can (ties between
  equally good thresholds are all accepted).
* `check_full_collisions(fn)` -- the reader's count of code points that share their
  bucket under *every* hash function with at least one other code point, called as
  ``fn(code_points, num_hashes, num_buckets)`` (buckets from
  `toklab.patching.hash_buckets`).

Each runs hand-made cases first, then random ones (fixed seed), and raises
AssertionError naming the input, the expected answer and the one received, with
a hint at the usual mistake. On success it returns a short message.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

import numpy as np

from ..patching import RULES, hash_buckets, patch_starts

__all__ = ["check_patch_starts", "check_mean_size_threshold", "check_full_collisions"]

_SEED = 2024

_HAND_MADE: list[tuple[list[float], float]] = [
    ([], 1.0),
    ([5.0], 1.0),
    ([0.5, 3.0, 1.0, 2.5, 2.5, 2.0], 2.0),  # a value equal to the threshold is not above it
    ([0.5, 3.0, 1.0, 2.5, 2.5, 2.0], 1.0),
    ([0.1, 4.0, 4.0, 4.0, 0.2, 4.1], 1.0),  # a plateau: the two rules disagree
    ([0.0, 0.9, 1.8, 2.7, 3.6], 1.0),  # a slow climb
    ([3.0, 2.0, 1.0, 0.0], -0.5),  # a negative threshold for the monotonic rule
]


def _random_entropies(rng: random.Random) -> list[float]:
    n = rng.randint(1, 40)
    if rng.random() < 0.3:  # coarse values: many ties
        return [float(rng.randint(0, 4)) for _ in range(n)]
    return [round(rng.uniform(0.0, 6.0), 3) for _ in range(n)]


def _hint(entropies: list[float], rule: str, got: list[int]) -> str:
    if entropies and (not got or got[0] != 0):
        return "; the first byte always starts a patch"
    if rule == "monotonic":
        return "; the monotonic rule compares entropies[i] - entropies[i - 1] (the rise into byte i) with the threshold"
    return "; the global rule starts a patch at i >= 1 when entropies[i] > threshold (strictly)"


def check_patch_starts(fn: Callable[[list[float], float, str], list[int]]) -> str:
    """Check a reader's ``patch_starts(entropies, threshold, rule) -> list[int]``."""
    rng = random.Random(_SEED)
    cases = [(e, t, r) for e, t in _HAND_MADE for r in RULES]
    for _ in range(300):
        e = _random_entropies(rng)
        cases.append((e, round(rng.uniform(-1.0, 4.0), 2), rng.choice(RULES)))
    for entropies, threshold, rule in cases:
        expected = patch_starts(entropies, threshold, rule).tolist()
        got = fn(list(entropies), threshold, rule)
        got = [int(i) for i in got] if got is not None else got
        if got != expected:
            raise AssertionError(
                f"patch_starts({entropies}, {threshold}, {rule!r}): expected {expected}, got {got}"
                + _hint(entropies, rule, got or [])
            )
    return f"patch_starts: all {len(cases)} cases agree with toklab, both rules"


def _mean_size(entropies: list[float], threshold: float) -> float:
    return len(entropies) / len(patch_starts(entropies, threshold, "global"))


def check_mean_size_threshold(fn: Callable[[list[float], float], float]) -> str:
    """Check a reader's ``mean_size_threshold(entropies, mean_size) -> float`` (global rule)."""
    rng = random.Random(_SEED + 1)
    cases = [([0.5, 3.0, 1.0, 2.5, 2.5, 2.0, 0.1, 4.0], 2.0), ([1.0] * 10, 3.0), ([0.0, 1.0, 2.0, 3.0], 1.0)]
    for _ in range(200):
        e = _random_entropies(rng)
        cases.append((e, round(rng.uniform(1.0, max(1.0, len(e) / 1.5)), 2)))
    for entropies, target in cases:
        scores = entropies[1:]
        candidates = scores + [min(scores, default=0.0) - 1.0, max(scores, default=0.0) + 1.0]
        best = min(abs(_mean_size(entropies, c) - target) for c in candidates)
        t = fn(list(entropies), target)
        got = _mean_size(entropies, float(t))
        if abs(got - target) > best + 1e-9:
            n_best = len(entropies) / target
            raise AssertionError(
                f"mean_size_threshold({entropies}, {target}): your threshold {t} gives patches of mean size "
                f"{got:.4g} bytes, but a mean of {target - best:.4g} or {target + best:.4g} is reachable. "
                f"With n = {len(entropies)} bytes and p patches the mean is n / p, and p - 1 positions "
                f"(never byte 0) must be above the threshold: aim for p near {n_best:.3g}"
            )
    return f"mean_size_threshold: all {len(cases)} cases reach the best mean patch size"


def check_full_collisions(fn: Callable[[np.ndarray, int, int], int]) -> str:
    """Check a reader's ``full_collisions(code_points, num_hashes, num_buckets) -> int``."""
    rng = np.random.default_rng(_SEED)
    cases = [(np.array([1, 2, 3]), 1, 1), (np.array([65, 66]), 2, 1), (np.array([], dtype=np.int64), 3, 7)]
    for _ in range(60):
        n = int(rng.integers(1, 400))
        cps = np.unique(rng.integers(0, 0x110000, size=n))
        cases.append((cps, int(rng.integers(1, 4)), int(rng.integers(2, 300))))
    for cps, k, b in cases:
        rows = Counter(map(tuple, hash_buckets(cps, k, b).tolist()))
        expected = sum(c for c in rows.values() if c > 1)
        got = fn(cps.copy(), k, b)
        if got != expected:
            pairs = sum(c * (c - 1) // 2 for c in rows.values())
            raise AssertionError(
                f"full_collisions({len(cps)} code points, num_hashes={k}, num_buckets={b}): expected {expected}, "
                f"got {got!r}. Count code points, not pairs (there are {pairs} colliding pairs), and a code point "
                "only counts if it matches another one under all hash functions at once"
            )
    return f"full_collisions: all {len(cases)} cases agree with toklab"
