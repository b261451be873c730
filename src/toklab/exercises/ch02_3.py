"""Checkers for the exercises of §2.3 (Unigram: a probabilistic vocabulary).

* `check_forward(user_fn)` — the reader's forward algorithm, called as
  ``user_fn(text, probs)`` with ``probs`` a dict mapping each piece to its
  probability. It must return the forward table: a list of ``len(text) + 1``
  floats where entry ``i`` is the total probability of all segmentations of
  ``text[:i]`` (entry 0 is 1.0; an entry is 0.0 when that prefix cannot be
  segmented), like `toklab.unigram.reference_forward`.
* `check_viterbi(user_fn)` — the reader's Viterbi segmenter, called as
  ``user_fn(text, scores)`` with ``scores`` a dict mapping each piece to its
  log-probability. It must return a most probable segmentation (a list of
  pieces that concatenates to ``text``) and raise ValueError when ``text``
  cannot be segmented, like `toklab.unigram.reference_viterbi`. When several
  segmentations tie for the best score, any of them is accepted.
* `check_expected_counts(user_fn)` — the reader's E-step, called as
  ``user_fn(word_counts, probs)``. It must return a dict mapping each piece to
  its expected count over all segmentations of every word, weighted by the
  word's count, like `toklab.unigram.reference_expected_counts` (pieces with
  expected count 0 may be left out).

Each runs the chapter's worked examples first, then random small vocabularies
and words compared with toklab's reference functions (fixed seed, so every run
checks the same cases). The first disagreement raises AssertionError naming the
input, the expected result and the result received. On success they return a
short message.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from ..unigram import reference_expected_counts, reference_forward, reference_viterbi, segmentations

__all__ = ["check_forward", "check_viterbi", "check_expected_counts"]

_SEED = 2018  # any fixed value: the random cases are the same on every run
_N_RANDOM = 200
_TOL = 1e-9  # relative tolerance: the order of a sum may differ from the reference's

ABAB = {"a": 0.15, "b": 0.15, "ab": 0.40, "aba": 0.20, "bab": 0.10}
BEIJING_COSTS = {"北": 3.0, "北京": 1.0, "大学": 1.0, "大": 2.0, "学": 2.0}
HUG_WORDS = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}
HUG_VOCAB = ["h", "u", "g", "hu", "ug", "p", "pu", "n", "un", "b", "bu", "s", "hug", "gs", "ugs"]


def _hug_probs() -> dict[str, float]:
    """Seed 001's probabilities: each piece's substring count in the corpus over the total (210)."""
    freq = {v: sum(c * sum(w.startswith(v, i) for i in range(len(w))) for w, c in HUG_WORDS.items())
            for v in HUG_VOCAB}
    total = sum(freq.values())
    return {v: f / total for v, f in freq.items()}


def _random_probs(rng: random.Random, alphabet: str = "abc", *, all_chars: bool = True) -> dict[str, float]:
    """A small random vocabulary: (all or some) single characters plus a few longer pieces."""
    chars = list(alphabet) if all_chars else [c for c in alphabet if rng.random() < 0.7]
    extra = {"".join(rng.choice(alphabet) for _ in range(rng.randint(2, 4)))
             for _ in range(rng.randint(0, 7))}
    pieces = sorted(set(chars) | extra)
    if not pieces:
        pieces = [alphabet[0]]
    weights = [rng.randint(1, 20) for _ in pieces]
    total = sum(weights)
    return {p: w / total for p, w in zip(pieces, weights)}


def _random_word(rng: random.Random, alphabet: str = "abc") -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8)))


def _close(a: float, b: float, abs_tol: float = 0.0) -> bool:
    """Equal up to a relative error of `_TOL` (tiny probabilities are compared relatively too)."""
    return abs(a - b) <= max(_TOL * max(abs(a), abs(b)), abs_tol)


def _short(d: dict) -> str:
    """A dict for a message, rounded so it stays readable."""
    return "{" + ", ".join(f"{k!r}: {v:.6g}" for k, v in d.items()) + "}"


# ---------------------------------------------------------------------------- forward


def _forward_cases() -> list[tuple[str, dict[str, float], str]]:
    hug = _hug_probs()
    cases = [
        ("abab", ABAB, "the worked example 'abab'"),
        ("ababab", ABAB, "a longer word over the worked example's pieces"),
        ("b", ABAB, "a single character"),
        ("", ABAB, "the empty string (its table is [1.0])"),
        ("abc", ABAB, "'c' is no piece: the last entry is 0.0"),
        ("cab", ABAB, "'c' is no piece at the start: every entry after 0 is 0.0"),
        *[(w, hug, f"seed 001's word {w!r}") for w in HUG_WORDS],
    ]
    rng = random.Random(_SEED)
    for k in range(_N_RANDOM):
        probs = _random_probs(rng, all_chars=rng.random() < 0.85)
        cases.append((_random_word(rng), probs, f"random case {k}"))
    return cases


def check_forward(user_fn: Callable) -> str:
    """Compare ``user_fn(text, probs)`` with `toklab.unigram.reference_forward` (whole table).

    Raises AssertionError describing the first case where the tables differ.
    """
    cases = _forward_cases()
    for text, probs, what in cases:
        expected = reference_forward(text, probs)
        shown = f"text={text!r}, probs={_short(probs)}"
        try:
            got = user_fn(text, dict(probs))
        except Exception as exc:
            raise AssertionError(
                f"check_forward, {what}: your function raised {type(exc).__name__}: {exc}\n  input: {shown}"
            ) from exc
        try:
            table = [float(x) for x in got]
        except (TypeError, ValueError):
            raise AssertionError(
                f"check_forward, {what}: expected a list of {len(expected)} floats, got {got!r}\n  input: {shown}"
            ) from None
        if len(table) != len(expected):
            raise AssertionError(
                f"check_forward, {what}: expected {len(expected)} entries (len(text) + 1, entry 0 = empty "
                f"prefix), got {len(table)}\n  input:    {shown}\n  expected: {expected}\n  got:      {table}"
            )
        for i, (e, g) in enumerate(zip(expected, table)):
            if not _close(e, g):
                hint = ""
                if i == 0:
                    hint = "\n  (entry 0 is the empty prefix: its probability is 1)"
                elif i > 0 and _close(g, max((math.prod(probs[p] for p in s)
                                              for s in segmentations(text[:i], probs)), default=0.0)):
                    hint = "\n  (that is the best single segmentation: forward *sums* over all of them)"
                raise AssertionError(
                    f"check_forward, {what}: entry {i} (prefix {text[:i]!r}) differs\n  input:    {shown}\n"
                    f"  expected: {expected}\n  got:      {table}{hint}"
                )
    return f"check_forward: all {len(cases)} cases match toklab.unigram.reference_forward"


# ---------------------------------------------------------------------------- Viterbi


def _viterbi_cases() -> list[tuple[str, dict[str, float], str]]:
    abab = {p: math.log(v) for p, v in ABAB.items()}
    hug = {p: math.log(v) for p, v in _hug_probs().items()}
    beijing = {p: -c for p, c in BEIJING_COSTS.items()}
    cases = [
        ("abab", abab, "the worked example 'abab'"),
        ("abababa", abab, "a longer word over the worked example's pieces"),
        ("北京大学", beijing, "seed 000's 北京大学 (scores = -costs)"),
        ("北京大", beijing, "a prefix of seed 000's example"),
        ("abc", abab, "'c' is no piece: raise ValueError"),
        ("", abab, "the empty string (no pieces)"),
        *[(w, hug, f"seed 001's word {w!r} (ties allowed)") for w in HUG_WORDS],
    ]
    rng = random.Random(_SEED + 1)
    for k in range(_N_RANDOM):
        probs = _random_probs(rng, all_chars=rng.random() < 0.85)
        cases.append((_random_word(rng), {p: math.log(v) for p, v in probs.items()}, f"random case {k}"))
    return cases


def check_viterbi(user_fn: Callable) -> str:
    """Check that ``user_fn(text, scores)`` returns a best segmentation (or raises ValueError).

    The reference is `toklab.unigram.reference_viterbi`. A segmentation is
    accepted if its pieces are in ``scores``, concatenate to ``text`` and score
    as high as the reference's (ties may be broken either way). Raises
    AssertionError describing the first case that fails.
    """
    cases = _viterbi_cases()
    for text, scores, what in cases:
        shown = f"text={text!r}, scores={_short(scores)}"
        try:
            expected = reference_viterbi(text, scores)
        except ValueError:
            expected = None
        try:
            got = user_fn(text, dict(scores))
        except ValueError as exc:
            if expected is None:
                continue
            raise AssertionError(
                f"check_viterbi, {what}: your function raised ValueError ({exc}), but the text can be "
                f"segmented\n  input:    {shown}\n  expected: {expected}"
            ) from exc
        except Exception as exc:
            raise AssertionError(
                f"check_viterbi, {what}: your function raised {type(exc).__name__}: {exc}\n  input: {shown}"
            ) from exc
        if expected is None:
            raise AssertionError(
                f"check_viterbi, {what}: no segmentation exists, so your function should raise ValueError\n"
                f"  input: {shown}\n  got:   {got!r}"
            )
        try:
            pieces = [str(p) for p in got]
        except TypeError:
            raise AssertionError(
                f"check_viterbi, {what}: expected a list of pieces, got {got!r}\n  input: {shown}"
            ) from None
        if "".join(pieces) != text or any(p not in scores for p in pieces):
            raise AssertionError(
                f"check_viterbi, {what}: {pieces} is not a segmentation of {text!r} into pieces of the "
                f"vocabulary\n  input:    {shown}\n  expected: {expected}"
            )
        best, yours = sum(scores[p] for p in expected), sum(scores[p] for p in pieces)
        if not _close(best, yours, abs_tol=_TOL):
            raise AssertionError(
                f"check_viterbi, {what}: not the most probable segmentation\n  input:    {shown}\n"
                f"  expected: {expected} (log-probability {best:.6f})\n"
                f"  got:      {pieces} (log-probability {yours:.6f})"
            )
    return (f"check_viterbi: all {len(cases)} cases give a best segmentation "
            f"(reference: toklab.unigram.reference_viterbi)")


# ---------------------------------------------------------------------------- E-step


def _counts_cases() -> list[tuple[dict[str, int], dict[str, float], str]]:
    cases = [
        ({"abab": 1}, ABAB, "the worked example 'abab'"),
        ({"abab": 3, "aba": 2, "bab": 1, "ba": 1}, ABAB, "the chapter's hard-versus-soft EM example"),
        (HUG_WORDS, _hug_probs(), "seed 001's corpus with its substring-frequency probabilities"),
        ({"a": 4}, ABAB, "one word with a single segmentation"),
    ]
    rng = random.Random(_SEED + 2)
    for k in range(_N_RANDOM):
        probs = _random_probs(rng)  # all characters: every word can be segmented
        words = {_random_word(rng): rng.randint(1, 5) for _ in range(rng.randint(1, 4))}
        cases.append((words, probs, f"random case {k}"))
    return cases


def check_expected_counts(user_fn: Callable) -> str:
    """Compare ``user_fn(word_counts, probs)`` with `toklab.unigram.reference_expected_counts`.

    Raises AssertionError describing the first case where a piece's expected
    count differs (a missing piece counts as 0).
    """
    cases = _counts_cases()
    for words, probs, what in cases:
        expected = reference_expected_counts(words, probs)
        shown = f"word_counts={words}, probs={_short(probs)}"
        try:
            got = user_fn(dict(words), dict(probs))
        except Exception as exc:
            raise AssertionError(
                f"check_expected_counts, {what}: your function raised {type(exc).__name__}: {exc}\n"
                f"  input: {shown}"
            ) from exc
        try:
            got_d = {str(k): float(v) for k, v in dict(got).items()}
        except (TypeError, ValueError):
            raise AssertionError(
                f"check_expected_counts, {what}: expected a dict piece -> count, got {got!r}\n  input: {shown}"
            ) from None
        for piece in sorted(set(expected) | set(got_d)):
            e, g = expected.get(piece, 0.0), got_d.get(piece, 0.0)
            if not _close(e, g):
                hint = ""
                if all(abs(v - round(v)) < 1e-12 for v in got_d.values()):
                    hint = ("\n  (all your counts are whole numbers: counting the best segmentation only is "
                            "hard EM; the E-step averages over all segmentations)")
                raise AssertionError(
                    f"check_expected_counts, {what}: piece {piece!r} differs (expected {e:.6g}, got {g:.6g})\n"
                    f"  input:    {shown}\n  expected: {_short(expected)}\n  got:      {_short(got_d)}{hint}"
                )
    return f"check_expected_counts: all {len(cases)} cases match toklab.unigram.reference_expected_counts"
