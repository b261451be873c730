"""Checkers for the coding exercises of §7 (the tour: fast algorithms beside the reference ones).

* ``ch07-ex1``, `check_merge_delta(fn)`: the reader's ``merge_delta(word, pair)``, the
  heart of the incremental BPE trainer. ``word`` is a tuple of symbols (str), ``pair``
  two symbols. It must return a dict mapping each adjacent pair to the change in its
  number of occurrences in ``word`` when every occurrence of ``pair`` is merged left to
  right (``toklab.bpe.merge_pair``); pairs whose count does not change may be left out.
  Compared with recounting: ``pair_counts`` of the merged word minus that of the word.
* ``ch07-ex2``, `check_log_forward(fn)`: the reader's ``log_forward(text, scores)``,
  the forward table in log space. ``scores`` maps each piece to its natural log
  probability; the result is a list of ``len(text) + 1`` floats, entry i the log of the
  total probability of all segmentations of ``text[:i]`` (entry 0 is 0.0, an
  unreachable prefix is ``-inf``). Compared with `toklab.unigram.reference_forward` on
  short texts and with `toklab.Unigram.forward` on texts long enough to underflow a
  product of probabilities.

Each runs hand-made cases first, then random ones (fixed seed), and reports in the
format of `toklab.teaching.exercises.harness`, with a hint at the usual mistake.
"""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Callable

from ... import bpe
from ...unigram import Unigram, reference_forward
from .harness import Run, Shown, exercise

__all__ = ["check_merge_delta", "check_log_forward"]

_SEED = 2007
_SMALLEST_LOG = math.log(sys.float_info.min)  # about -708: below it a double is subnormal, then 0


def _delta(word: tuple[str, ...], pair: tuple[str, str]) -> dict[tuple[str, str], int]:
    before = bpe.pair_counts({word: 1})
    after = bpe.pair_counts({bpe.merge_pair(word, pair): 1})
    out = {p: after.get(p, 0) - before.get(p, 0) for p in set(before) | set(after)}
    return {p: d for p, d in sorted(out.items()) if d}


def _delta_hint(word: tuple[str, ...], pair: tuple[str, str], expected: dict, got: dict) -> str:
    a, b = pair
    occurrences = sum(1 for x in zip(word, word[1:]) if x == pair)
    if a == b and got.get(pair, 0) == -occurrences != expected.get(pair, 0):
        merged = bpe.merge_pair(word, pair).count(a + b)
        return (f"in {word!r} the pair {pair} occurs {occurrences} times (overlapping) but is merged {merged} "
                "times, left to right: what is left of the run still holds the pair. Recount the merged word, "
                "do not just subtract the occurrences.")
    new = (a + b, a + b)
    if new in expected and new not in got:
        return f"two merged symbols next to each other form a new pair {new}: count it too."
    return ("the change is every pair of the merged word minus every pair of the word: each merged occurrence "
            "takes its neighbours' pairs with it and makes new ones with the new symbol.")


@exercise("ch07-ex1", title="Incremental pair counts for one merge", function="merge_delta",
          reference=_delta, against="recounting with toklab.bpe.pair_counts")
def check_merge_delta(run: Run, fn: Callable[[tuple[str, ...], tuple[str, str]], dict]) -> None:
    """Check a reader's ``merge_delta(word, pair) -> {pair: change}``."""
    cases = [
        (tuple("abab"), ("a", "b"), "abab: the merged symbols meet, (ab, ab) is new"),
        (tuple("abac"), ("a", "b"), "abac: one occurrence"),
        (tuple("aaa"), ("a", "a"), "aaa: (a, a) occurs twice, is merged once"),
        (tuple("aaaa"), ("a", "a"), "aaaa: three occurrences, two merges, (aa, aa) is new"),
        (tuple("xyz"), ("a", "b"), "the pair does not occur: nothing changes"),
        (("ab", "c", "ab", "c"), ("ab", "c"), "merged symbols as parts"),
    ]
    rng = random.Random(_SEED)
    for k in range(300):
        word = tuple(rng.choice("aab") for _ in range(rng.randint(1, 9)))
        pair = (rng.choice("ab"), rng.choice("ab"))
        cases.append((word, pair, f"random case {k}"))
    for word, pair, what in cases:
        expected = _delta(word, pair)
        case = run.case(what, expected=expected)
        got = case.call(fn, word, pair)
        if not isinstance(got, dict):
            case.fail(got, "return a dict mapping each pair (a tuple of two symbols) to its change in count.")
        cleaned = {tuple(p): d for p, d in got.items() if d}
        if cleaned != expected:
            case.fail(Shown(repr(dict(sorted(cleaned.items())))), _delta_hint(word, pair, expected, cleaned))


def _log_table(text: str, scores: dict[str, float]) -> list[float]:
    if len(text) <= 12:
        f = reference_forward(text, {p: math.exp(s) for p, s in scores.items()})
        return [math.log(x) if x > 0 else -math.inf for x in f]
    model = Unigram.from_probs({p: math.exp(s) for p, s in scores.items()})
    return model.forward(text, log=True)


def _log_close(a: float, b: float) -> bool:
    if math.isinf(b) or math.isinf(a):
        return a == b
    return abs(a - b) <= 1e-7 * max(1.0, abs(b))


@exercise("ch07-ex2", title="The forward table in log space", function="log_forward",
          reference=_log_table, against="toklab.unigram.reference_forward and Unigram.forward")
def check_log_forward(run: Run, fn: Callable[[str, dict[str, float]], list[float]]) -> None:
    """Check a reader's ``log_forward(text, scores) -> list[float]``."""
    abab = {p: math.log(v) for p, v in {"a": 0.15, "b": 0.15, "ab": 0.40, "aba": 0.20, "bab": 0.10}.items()}
    cases = [("abab", abab, "seed 004's abab (P = 0.22350625)"),
             ("", abab, "the empty text"),
             ("abc", abab, "'c' is not a piece: the last entries are -inf")]
    rng = random.Random(_SEED + 1)
    for k in range(150):
        pieces = sorted({"".join(rng.choice("ab") for _ in range(rng.randint(1, 3))) for _ in range(6)} | {"a", "b"})
        weights = [rng.uniform(0.05, 1.0) for _ in pieces]
        total = sum(weights)
        scores = {p: math.log(w / total) for p, w in zip(pieces, weights)}
        n = rng.randint(1, 10) if k < 120 else rng.randint(600, 1500)
        what = f"random case {k}" + (f" ({n} characters: a product of probabilities underflows)" if n > 12 else "")
        cases.append(("".join(rng.choice("ab") for _ in range(n)), scores, what))
    for text, scores, what in cases:
        expected = _log_table(text, scores)
        shown = Shown(f"[{', '.join(f'{x:.6g}' for x in expected[:6])}{', ...' if len(expected) > 6 else ''}] "
                      f"(last {expected[-1]:.6g})")
        case = run.case(what, expected=shown)
        got = case.call(fn, text, dict(scores))
        try:
            got = [float(x) for x in got]
        except (TypeError, ValueError):
            case.fail(got, "return a list of floats, one per position 0..len(text).")
        if len(got) != len(expected):
            case.fail(Shown(f"{len(got)} entries"), f"the table has len(text) + 1 = {len(expected)} entries.")
        bad = next((i for i, (g, e) in enumerate(zip(got, expected)) if not _log_close(g, e)), None)
        if bad is None:
            continue
        g, e = got[bad], expected[bad]
        if (g == -math.inf and e > -math.inf) or e < _SMALLEST_LOG:
            hint = (f"entry {bad} is {'-inf' if g == -math.inf else 'off'} where the probability is about "
                    f"e^{e:.0f}: a product of probabilities underflows (below about e^-708 a double loses "
                    "precision, then becomes 0). Add logs and combine terms with log-sum-exp (subtract the "
                    "largest term first).")
        elif bad == 0:
            hint = "entry 0 is log 1 = 0.0: the empty prefix has one segmentation."
        elif g < e:
            hint = (f"entry {bad} is below the right value: keeping only the best term is Viterbi; forward "
                    "adds every path (log-sum-exp of the terms).")
        else:
            hint = f"entry {bad} is too large: each term is table[j] + scores[text[j:i]] for a piece ending at i."
        case.fail(Shown(f"entry {bad} = {g!r}"), hint, expected=Shown(f"entry {bad} = {e!r}"))
