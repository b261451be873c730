"""The §6 exercise checkers accept toklab's answer and reject a typical slip.

Kept apart from tests/test_exercise_checkers.py (same pattern) so that this branch does
not edit that file while the package layout moves; fold it in when convenient.
"""

from __future__ import annotations

from collections import Counter

import pytest

from toklab.lab import patching
from toklab.teaching.exercises import ch06


def _rejects(check, fn) -> None:
    with pytest.raises(AssertionError):
        check(fn)


def test_ch06_patch_starts():
    ch06.check_patch_starts(lambda e, t, rule: patching.patch_starts(e, t, rule).tolist())
    # the usual slips: >= instead of >, and the monotonic rise taken towards the next byte
    _rejects(ch06.check_patch_starts,
             lambda e, t, rule: [0] + [i for i in range(1, len(e))
                                       if (e[i] if rule == "global" else e[i] - e[i - 1]) >= t] if e else [])
    _rejects(ch06.check_patch_starts,
             lambda e, t, rule: patching.patch_starts(e, t, rule).tolist() if rule == "global"
             else [0] + [i for i in range(1, len(e)) if i + 1 < len(e) and e[i + 1] - e[i] > t] if e else [])


def test_ch06_mean_size_threshold():
    ch06.check_mean_size_threshold(lambda e, m: patching.threshold_for_mean_size(e, m, "global"))

    def off_by_one(e, m):  # n / m positions above the threshold: one patch too many
        k = min(len(e) - 1, round(len(e) / m))
        scores = sorted(e[1:], reverse=True)
        return scores[k] if k < len(scores) else min(scores, default=0.0) - 1.0

    _rejects(ch06.check_mean_size_threshold, off_by_one)


def test_ch06_full_collisions():
    def full(cps, k, b):
        rows = Counter(map(tuple, patching.hash_buckets(cps, k, b).tolist()))
        return sum(c for c in rows.values() if c > 1)

    def pairs(cps, k, b):
        rows = Counter(map(tuple, patching.hash_buckets(cps, k, b).tolist()))
        return sum(c * (c - 1) // 2 for c in rows.values())

    ch06.check_full_collisions(full)
    _rejects(ch06.check_full_collisions, pairs)
