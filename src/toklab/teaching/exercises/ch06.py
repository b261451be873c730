"""Checkers for the coding exercises of §6 (tokenizer-free models).

* ``ch06-ex1``, `check_patch_starts(fn)`: the reader's entropy patcher, called as
  ``fn(entropies, threshold, rule)`` with ``entropies`` a list of floats (one per
  byte: the entropy of the prediction for that byte), ``rule`` "global" or
  "monotonic". It must return the sorted positions where patches start, like
  `toklab.lab.patching.patch_starts`.
* ``ch06-ex2``, `check_mean_size_threshold(fn)`: the reader's threshold tuner for
  the global rule, called as ``fn(entropies, mean_size)``. The threshold it returns
  must give a mean patch size as close to ``mean_size`` as any threshold can (ties
  between equally good thresholds are all accepted).
* ``ch06-ex3``, `check_full_collisions(fn)`: the reader's count of code points that
  share their bucket under *every* hash function with at least one other code point,
  called as ``fn(code_points, num_hashes, num_buckets)`` (buckets from
  `toklab.lab.patching.hash_buckets`).

Each runs hand-made cases first, then random ones (fixed seed), and reports in the
format of `toklab.teaching.exercises.harness`, with a hint at the usual mistake.
"""

from __future__ import annotations

import functools
import math
import random
from collections import Counter
from collections.abc import Callable

import numpy as np

from ...lab.patching import RULES, hash_buckets, patch_starts, threshold_for_mean_size
from .harness import Run, Shown, exercise, show

__all__ = ["check_patch_starts", "check_mean_size_threshold", "check_full_collisions"]

_SEED = 2024

_HAND_MADE: list[tuple[list[float], float, str]] = [
    ([], 1.0, "no bytes"),
    ([5.0], 1.0, "one byte"),
    ([0.5, 3.0, 1.0, 2.5, 2.5, 2.0], 2.0, "a value equal to the threshold is not above it"),
    ([0.5, 3.0, 1.0, 2.5, 2.5, 2.0], 1.0, "a lower threshold"),
    ([0.1, 4.0, 4.0, 4.0, 0.2, 4.1], 1.0, "a plateau: the two rules disagree"),
    ([0.0, 0.9, 1.8, 2.7, 3.6], 1.0, "a slow climb"),
    ([3.0, 2.0, 1.0, 0.0], -0.5, "a negative threshold"),
]


def _random_entropies(rng: random.Random) -> list[float]:
    n = rng.randint(1, 40)
    if rng.random() < 0.3:  # coarse values: many ties
        return [float(rng.randint(0, 4)) for _ in range(n)]
    return [round(rng.uniform(0.0, 6.0), 3) for _ in range(n)]


LARGE_STARTS = "large: 100,000 entropies (timed)"
LARGE_THRESHOLD = "large: 100,000 entropies, a mean of 4.5 bytes (timed)"
LARGE_COLLISIONS = "large (timed)"


def _large_entropies() -> list[float]:
    return list(_large_entropies_once())


@functools.lru_cache(maxsize=1)
def _large_entropies_once() -> tuple[float, ...]:
    rng = random.Random(_SEED + 2)
    return tuple(round(rng.uniform(0.0, 6.0), 3) for _ in range(100_000))


def _scores(entropies: list[float], rule: str) -> list[tuple[int, float]]:
    """(position, score) for every byte after the first, under ``rule``."""
    return [(i, entropies[i] if rule == "global" else entropies[i] - entropies[i - 1])
            for i in range(1, len(entropies))]


def _patch_hint(entropies: list[float], threshold: float, rule: str, got: list[int]) -> str:
    if entropies and (not got or got[0] != 0):
        return "the first byte always starts a patch: position 0 is in the list."
    if got == [0] + [i for i, s in _scores(entropies, rule) if s >= threshold]:
        return "a patch starts where the score is strictly above the threshold: a score equal to it does not."
    if rule == "monotonic":
        return ("the monotonic rule compares entropies[i] - entropies[i - 1] (the rise into byte i) with the "
                "threshold.")
    return "the global rule starts a patch at i >= 1 when entropies[i] > threshold (strictly)."


def _reference_patch_starts(entropies: list[float], threshold: float, rule: str) -> list[int]:
    return patch_starts(entropies, threshold, rule).tolist()


@exercise("ch06-ex1", title="Entropy patch starts, both BLT rules", function="my_patch_starts",
          reference=_reference_patch_starts, against="toklab.lab.patching.patch_starts, both rules")
def check_patch_starts(run: Run, fn: Callable[[list[float], float, str], list[int]]) -> None:
    """Check a reader's ``patch_starts(entropies, threshold, rule) -> list[int]``."""
    rng = random.Random(_SEED)
    cases = [(e, t, r, f"{what} ({r} rule)") for e, t, what in _HAND_MADE for r in RULES]
    for k in range(300):
        e = _random_entropies(rng)
        threshold = round(rng.uniform(-1.0, 4.0), 2)
        rule = rng.choice(RULES)
        cases.append((e, threshold, rule, f"random case {k} ({rule} rule)"))
    cases.append((_large_entropies(), 2.0, "monotonic", LARGE_STARTS))
    for entropies, threshold, rule, what in cases:
        expected, seconds = run.timed(_reference_patch_starts, entropies, threshold, rule)
        large = what == LARGE_STARTS
        case = run.case(what, expected=expected, seconds=seconds if large else None,
                        input=f"my_patch_starts(<{len(entropies):,} entropies>, {threshold}, {rule!r})" if large
                        else None, slow_hint=("one pass over the entropies, appending each start; inserting at the "
                                              "front of a list or slicing it at every byte makes it quadratic"))
        got = case.call(fn, list(entropies), threshold, rule)
        try:
            got = [int(i) for i in got]
        except (TypeError, ValueError):
            case.fail(got, "return the patch starts as a list of ints (positions of bytes).")
        if got != expected:
            case.fail(got, _patch_hint(entropies, threshold, rule, got))


def _mean_size(entropies: list[float], threshold: float) -> float:
    return len(entropies) / len(patch_starts(entropies, threshold, "global"))


def _reference_mean_size_threshold(entropies: list[float], mean_size: float) -> float:
    return threshold_for_mean_size(entropies, mean_size, "global")


@exercise("ch06-ex2", title="A threshold for a target mean patch size", function="mean_size_threshold",
          reference=_reference_mean_size_threshold, against="the best mean patch size any threshold reaches")
def check_mean_size_threshold(run: Run, fn: Callable[[list[float], float], float]) -> None:
    """Check a reader's ``mean_size_threshold(entropies, mean_size) -> float`` (global rule)."""
    rng = random.Random(_SEED + 1)
    cases = [([0.5, 3.0, 1.0, 2.5, 2.5, 2.0, 0.1, 4.0], 2.0, "eight bytes, a mean of 2"),
             ([0.0, 5.0, 1.0, 4.0, 2.0, 3.0], 3.0, "six bytes, a mean of 3: two patches, one position above"),
             ([1.0] * 10, 3.0, "all scores tied: only 1 or 10 patches are reachable"),
             ([0.0, 1.0, 2.0, 3.0], 1.0, "a patch per byte")]
    for k in range(200):
        e = _random_entropies(rng)
        cases.append((e, round(rng.uniform(1.0, max(1.0, len(e) / 1.5)), 2), f"random case {k}"))
    cases.append((_large_entropies(), 4.5, LARGE_THRESHOLD))
    for entropies, target, what in cases:
        large = what == LARGE_THRESHOLD
        reference, seconds = run.timed(_reference_mean_size_threshold, entropies, target)
        if large:  # trying every candidate here would be the slow method the exercise rules out
            best = reference
        else:
            scores = entropies[1:]
            candidates = scores + [min(scores, default=0.0) - 1.0, max(scores, default=0.0) + 1.0]
            best = min(candidates, key=lambda c: abs(_mean_size(entropies, c) - target))
        best_mean = _mean_size(entropies, best)
        case = run.case(what, expected=Shown(f"a threshold giving a mean patch size of {_bytes(best_mean)}, "
                                             f"e.g. {best!r}"), seconds=seconds if large else None,
                        input=f"mean_size_threshold(<{len(entropies):,} entropies>, {target})" if large else None,
                        slow_hint="sort the scores once and find the patch count closest to the target by binary "
                                  "search; running the patcher once per candidate threshold is quadratic")
        t = case.call(fn, list(entropies), target)
        try:
            t = float(t)
        except (TypeError, ValueError):
            case.fail(t, "return the threshold as a float.")
        if math.isnan(t):
            case.fail(t, "return a number: NaN compares false with every score, so it gives a single patch.")
        got = _mean_size(entropies, t)
        if abs(got - target) > abs(best_mean - target) + 1e-9:
            n, aimed = len(entropies), round(len(entropies) / target)
            shown = Shown(f"{t!r}, which gives a mean patch size of {_bytes(got)}")
            if len(patch_starts(entropies, t, "global")) == aimed + 1:
                case.fail(shown, f"{t!r} puts round(n / mean_size) = {aimed} positions above the threshold, "
                          "which makes one patch too many: byte 0 starts a patch for free, so p patches need "
                          "p - 1 positions above it.")
            case.fail(shown, f"with n = {n} bytes and p patches the mean is n / p, and p - 1 positions (never "
                      "byte 0) must be above the threshold. Try each distinct score (and one below them all) "
                      "as the threshold and keep the one whose mean n / p is closest to mean_size: closest in "
                      "mean, not in count, since ties make some patch counts unreachable.")


def _bytes(size: float) -> str:
    return f"{size:.4g} byte" if size == 1 else f"{size:.4g} bytes"


def _full_collisions(code_points: np.ndarray, num_hashes: int, num_buckets: int) -> int:
    rows = Counter(map(tuple, hash_buckets(code_points, num_hashes, num_buckets).tolist()))
    return sum(c for c in rows.values() if c > 1)


def _collision_hint(cps: np.ndarray, k: int, b: int, got: object) -> str:
    rows = Counter(map(tuple, hash_buckets(cps, k, b).tolist()))
    pairs = sum(c * (c - 1) // 2 for c in rows.values())
    if got == pairs:
        return f"that counts colliding pairs ({pairs}); count code points: a group of 3 counts 3, not 3 pairs."
    if got == sum(1 for c in rows.values() if c > 1):
        return "that counts the colliding groups; count every code point in them (a group of 3 counts 3)."
    if got == sum(c - 1 for c in rows.values()):
        return "that leaves out one member of every group; every code point that shares its buckets counts."
    columns = hash_buckets(cps, k, b).T.tolist()
    any_function = sum(any(Counter(col)[col[i]] > 1 for col in columns) for i in range(len(cps)))
    if got == any_function:
        return ("that counts a code point that collides under *some* function; it only counts if it matches "
                "another one under all hash functions at once (the whole row of buckets).")
    return ("group the code points by their row of buckets (one per hash function) and add up the sizes of "
            "the groups with more than one member.")


@exercise("ch06-ex3", title="Code points that collide under every hash", function="full_collisions",
          reference=_full_collisions, against="toklab.lab.patching.hash_buckets, grouped by row")
def check_full_collisions(run: Run, fn: Callable[[np.ndarray, int, int], int]) -> None:
    """Check a reader's ``full_collisions(code_points, num_hashes, num_buckets) -> int``."""
    rng = np.random.default_rng(_SEED)
    cases = [(np.array([1, 2, 3]), 1, 1, "three code points, one bucket"),
             (np.array([65, 66]), 2, 1, "two code points, two functions, one bucket"),
             (np.array([], dtype=np.int64), 3, 7, "no code points")]
    for i in range(60):
        n = int(rng.integers(1, 400))
        cps = np.unique(rng.integers(0, 0x110000, size=n))
        cases.append((cps, int(rng.integers(1, 4)), int(rng.integers(2, 300)), f"random case {i}"))
    cases.append((np.unique(rng.integers(0, 0x110000, size=10_000)), 4, 1 << 12, LARGE_COLLISIONS))
    for cps, k, b, what in cases:
        expected, seconds = run.timed(_full_collisions, cps, k, b)
        points = show(cps.tolist(), 200)
        large = what == LARGE_COLLISIONS
        case = run.case(f"{what}: {len(cps)} code points", expected=expected, seconds=seconds if large else None,
                        input=Shown(f"full_collisions(np.array({points}), {k}, {b})"), slow_hint=(
                            "group the code points by their row of buckets (a dict or a Counter of tuples, or "
                            "np.unique over rows): comparing every code point with every other is quadratic"))
        got = case.call(fn, cps.copy(), k, b)
        if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
            case.fail(got, "return the count as an int.")
        if got != expected:
            case.fail(got, _collision_hint(cps, k, b, got))
