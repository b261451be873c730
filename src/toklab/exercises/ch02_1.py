"""Checkers for the exercises of §2.1 (BPE: training is not encoding).

* `check_train(user_fn)` — the reader's BPE trainer, called as
  ``user_fn(words, num_merges)`` with ``words`` a dict mapping a word (a tuple of
  ``str`` symbols, e.g. ``("l", "o", "w", "</w>")``) to its count. It must return
  the learned merges in order, as a list of ``(left, right)`` pairs, breaking
  frequency ties by the smallest pair (Python's tuple order), like
  `toklab.bpe.reference_train` with ``tie_break="smallest"``.
* `check_encode(user_fn)` — the reader's BPE encoder, called as
  ``user_fn(symbols, merges)`` with ``symbols`` a list of ``str`` symbols and
  ``merges`` a list of pairs in rank order (a merge list as training produces
  it). It must return the segmentation as a list of ``str``, like
  `toklab.bpe.reference_encode`.

Both run the book's worked examples first, then randomized small cases compared
with toklab's reference functions (fixed seed, so every run checks the same
cases). The first disagreement raises AssertionError naming the input, the
expected result and the result received. On success they return a short message.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ..bpe import reference_encode, reference_train

__all__ = ["check_train", "check_encode"]

_SEED = 2016  # any fixed value: the random cases are the same on every run
_N_RANDOM = 300


def _end(word: str) -> tuple[str, ...]:
    return tuple(word) + ("</w>",)


def _sennrich() -> dict[tuple[str, ...], int]:
    return {_end("low"): 5, _end("lower"): 2, _end("newest"): 6, _end("widest"): 3}


def _show_words(words: dict[tuple[str, ...], int]) -> str:
    return "{" + ", ".join(f"{' '.join(w)!r}: {c}" for w, c in words.items()) + "}"


def _random_words(rng: random.Random) -> dict[tuple[str, ...], int]:
    """A few short words over a tiny alphabet: ties and overlapping pairs are common."""
    alphabet = "abcd"[: rng.randint(2, 4)]
    words: dict[tuple[str, ...], int] = {}
    for _ in range(rng.randint(1, 6)):
        word = tuple(rng.choice(alphabet) for _ in range(rng.randint(1, 7)))
        words[word] = words.get(word, 0) + rng.randint(1, 5)
    return words


def _as_pairs(got: object) -> list[tuple[object, object]] | None:
    """``got`` as a list of 2-tuples, or None if it is not shaped like a merge list."""
    try:
        pairs = [tuple(p) for p in got]  # type: ignore[union-attr]
    except TypeError:
        return None
    return pairs if all(len(p) == 2 for p in pairs) else None


def _first_difference(expected: list, got: list) -> str:
    for i, (e, g) in enumerate(zip(expected, got)):
        if e != g:
            return f"they first differ at index {i}: expected {e!r}, got {g!r}"
    if len(got) < len(expected):
        return f"yours stops after {len(got)} items; item {len(got)} should be {expected[len(got)]!r}"
    return f"yours has extra items from index {len(expected)} on: {got[len(expected):]!r}"


# ---------------------------------------------------------------------------- training


def _train_cases() -> list[tuple[dict[tuple[str, ...], int], int, str]]:
    cases = [
        ({tuple("abab"): 3, tuple("abac"): 1}, 2, "the worked example {'abab': 3, 'abac': 1}"),
        (_sennrich(), 5, "Sennrich's example with </w> (ties at steps 1, 2 and 4)"),
        (_sennrich(), 40, "Sennrich's example run until no pair is left"),
        ({tuple("aaaa"): 1}, 2, "overlapping pairs: 'aaaa'"),
        ({tuple("aaa"): 2, tuple("ab"): 1}, 3, "overlap, left-first: 'aaa'"),
        ({tuple("ab"): 1, tuple("cd"): 1}, 1, "a tie between (a, b) and (c, d)"),
        ({tuple("cd"): 1, tuple("ab"): 1}, 1, "the same tie with the words in the other order"),
        ({("a",): 4, ("b",): 1}, 3, "words of one symbol: nothing to merge"),
    ]
    rng = random.Random(_SEED)
    for k in range(_N_RANDOM):
        cases.append((_random_words(rng), rng.randint(1, 10), f"random case {k}"))
    return cases


def check_train(user_fn: Callable) -> str:
    """Compare ``user_fn(words, num_merges)`` with `toklab.bpe.reference_train` (ties: smallest pair).

    Raises AssertionError describing the first case where the merge lists differ.
    """
    cases = _train_cases()
    for words, num_merges, what in cases:
        expected = reference_train(words, num_merges, tie_break="smallest")
        shown = f"words={_show_words(words)}, num_merges={num_merges}"
        try:
            got = user_fn(dict(words), num_merges)
        except Exception as exc:
            raise AssertionError(
                f"check_train, {what}: your function raised {type(exc).__name__}: {exc}\n  input: {shown}"
            ) from exc
        pairs = _as_pairs(got)
        if pairs is None:
            raise AssertionError(
                f"check_train, {what}: expected a list of (left, right) pairs, got {got!r}\n  input: {shown}"
            )
        if pairs != expected:
            hint = ""
            if len(pairs) == len(expected) and set(pairs) == set(expected):
                hint = "\n  (same merges, different order: check how you break ties and update counts)"
            raise AssertionError(
                f"check_train, {what}: merges differ\n  input:    {shown}\n"
                f"  expected: {expected}\n  got:      {pairs}\n  {_first_difference(expected, pairs)}{hint}"
            )
    return f"check_train: all {len(cases)} cases match toklab.bpe.reference_train"


# ---------------------------------------------------------------------------- encoding


def _encode_cases() -> list[tuple[list[str], list[tuple[str, str]], str]]:
    sennrich = reference_train(_sennrich(), 10)
    cases = [
        (list("abc"), [("a", "b"), ("b", "c")], "rank 0 is (a, b)"),
        (list("abc"), [("b", "c"), ("a", "b")], "ranks reversed: rank 0 is (b, c)"),
        (list("aaa"), [("a", "a")], "overlap: 'aaa' merges left-first"),
        (list("aaaa"), [("a", "a")], "overlap: 'aaaa'"),
        (list("abab"), [("a", "b"), ("ab", "ab")], "the worked example's merges on 'abab'"),
        (list("ababac"), [("a", "b"), ("ab", "ab"), ("a", "c")], "the worked example's merges on 'ababac'"),
        (list("lowest") + ["</w>"], sennrich, "Sennrich's merges on an unseen word"),
        (list("newer") + ["</w>"], sennrich, "Sennrich's merges on 'newer'"),
        (list("xyz"), sennrich, "no merge applies"),
        (["a"], [("a", "b")], "a single symbol"),
        ([], [("a", "b")], "empty input"),
    ]
    rng = random.Random(_SEED + 1)
    for k in range(_N_RANDOM):
        words = _random_words(rng)
        merges = reference_train(words, rng.randint(1, 12))
        alphabet = sorted({s for w in words for s in w})
        if rng.random() < 0.5:
            symbols = list(rng.choice(list(words)))  # a training word
        else:
            symbols = [rng.choice(alphabet) for _ in range(rng.randint(1, 10))]  # an unseen word
        cases.append((symbols, merges, f"random case {k}"))
    return cases


def check_encode(user_fn: Callable) -> str:
    """Compare ``user_fn(symbols, merges)`` with `toklab.bpe.reference_encode`.

    Merge lists come from training (each merge's parts exist before it), so
    "apply the earliest-learned applicable merge, repeat" is the rule to match.
    Raises AssertionError describing the first case where the segmentations differ.
    """
    cases = _encode_cases()
    for symbols, merges, what in cases:
        expected = reference_encode(symbols, merges)
        shown = f"symbols={symbols}, merges={merges}"
        try:
            got = user_fn(list(symbols), list(merges))
        except Exception as exc:
            raise AssertionError(
                f"check_encode, {what}: your function raised {type(exc).__name__}: {exc}\n  input: {shown}"
            ) from exc
        try:
            got_list = list(got)
        except TypeError:
            raise AssertionError(
                f"check_encode, {what}: expected a list of symbols, got {got!r}\n  input: {shown}"
            ) from None
        if got_list != expected:
            hint = ""
            if "".join(map(str, got_list)) != "".join(symbols):
                hint = "\n  (your pieces do not even concatenate back to the input)"
            raise AssertionError(
                f"check_encode, {what}: segmentations differ\n  input:    {shown}\n"
                f"  expected: {expected}\n  got:      {got_list}{hint}"
            )
    return f"check_encode: all {len(cases)} cases match toklab.bpe.reference_encode"
