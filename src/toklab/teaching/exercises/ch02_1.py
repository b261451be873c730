"""Checkers for the exercises of §2.1 (BPE: training is not encoding).

* ``ch02_1-ex1``, `check_train(user_fn)`: the reader's BPE trainer, called as
  ``user_fn(words, num_merges)`` with ``words`` a dict mapping a word (a tuple of
  ``str`` symbols, e.g. ``("l", "o", "w", "</w>")``) to its count. It must return
  the learned merges in order, as a list of ``(left, right)`` pairs, breaking
  frequency ties by the smallest pair (Python's tuple order), like
  `toklab.bpe.reference_train` with ``tie_break="smallest"``.
* ``ch02_1-ex2``, `check_encode(user_fn)`: the reader's BPE encoder, called as
  ``user_fn(symbols, merges)`` with ``symbols`` a list of ``str`` symbols and
  ``merges`` a list of pairs in rank order (a merge list as training produces
  it). It must return the segmentation as a list of ``str``, like
  `toklab.bpe.reference_encode`.

Both run the book's worked examples first, then randomized small cases compared
with toklab's reference functions (fixed seed, so every run checks the same
cases), and report in the format of `toklab.teaching.exercises.harness`: the hints
replay the merges to name the rule a wrong one breaks (ties, weighting by
word count, recounting after each merge; ranks, not frequencies, at encoding).
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Callable

from ...bpe import merge_pair, pair_counts, reference_encode, reference_train, train
from ...data import corpus
from .harness import Run, exercise

__all__ = ["check_train", "check_encode"]

_SEED = 2016  # any fixed value: the random cases are the same on every run
_N_RANDOM = 300


def _end(word: str) -> tuple[str, ...]:
    return tuple(word) + ("</w>",)


def _sennrich() -> dict[tuple[str, ...], int]:
    return {_end("low"): 5, _end("lower"): 2, _end("newest"): 6, _end("widest"): 3}


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
    if isinstance(got, (str, bytes)):
        return None
    try:
        pairs = [None if isinstance(p, (str, bytes)) else tuple(p) for p in got]  # type: ignore[union-attr]
    except TypeError:
        return None
    return pairs if all(p is not None and len(p) == 2 for p in pairs) else None  # type: ignore[return-value]


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
    cases.append((_large_words(), 20, LARGE_TRAIN))
    return cases


#: The last case of each checker: real text, large enough that a far slower method shows.
LARGE_TRAIN = "large: the words of 2.6 KB of English and Chinese, 20 merges (timed)"
LARGE_ENCODE = "large: 450 symbols of English, 1,000 merges (timed)"


def _large_words() -> dict[tuple[str, ...], int]:
    text = corpus.load("en", 2_000) + corpus.load("zh", 600)
    return dict(Counter(_end(w) for w in text.split()))


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def _train_hint(words: dict[tuple[str, ...], int], num_merges: int, expected: list, got: list) -> str:
    """Replay the merges both lists share and name the rule the first different merge breaks."""
    i = next((k for k, (e, g) in enumerate(zip(expected, got)) if e != g), min(len(expected), len(got)))
    corpus = dict(words)
    for pair in expected[:i]:
        corpus = {merge_pair(w, pair): c for w, c in corpus.items()}
    counts = pair_counts(corpus)
    if i == len(expected):
        if len(expected) == num_merges:
            return f"you returned {_n(len(got), 'merge')}; num_merges={num_merges} is how many to make."
        return (f"after {_n(i, 'merge')} no adjacent pair is left (every word is one symbol), so training stops "
                "there; yours goes on.")
    if i == len(got):
        return (f"yours stops after {_n(i, 'merge')}, but {expected[i]} still occurs {_times(counts[expected[i]])}: "
                f"go on until num_merges={num_merges} merges are made or no pair is left.")
    e, g = expected[i], got[i]
    where = f"merge {i + 1} should be {e}, yours is {g}"
    after = "in the input" if i == 0 else "after the first merge" if i == 1 else f"after the first {i} merges"
    if g not in counts:
        return (f"{where}, which is not a pair of adjacent symbols {after}: after each "
                "merge, rewrite every word (replace the pair everywhere, left to right) before counting again.")
    if counts[g] == counts[e]:
        return (f"{where}: both occur {_times(counts[e])}, a tie. Break ties by the smallest pair "
                "(Python's tuple order, min over the tied pairs), not by the order you met them.")
    unweighted = pair_counts({w: 1 for w in corpus})
    if unweighted[g] == max(unweighted.values()):
        return (f"{where}: {e} occurs {_times(counts[e])} and {g} {_times(counts[g])} when every occurrence "
                "is weighted by its word's count; yours looks like each distinct word was counted once.")
    return (f"{where}: {e} occurs {_times(counts[e])} and {g} only {_times(counts[g])}. Count the pairs again after "
            "every merge (or update the counts of the words that changed), then take the most frequent.")


def _reference_train(words: dict[tuple[str, ...], int], num_merges: int) -> list[tuple[str, str]]:
    return reference_train(words, num_merges, tie_break="smallest")


@exercise("ch02_1-ex1", title="Implement BPE training", function="my_train", reference=_reference_train,
          against="toklab.bpe.reference_train, ties to the smallest pair")
def check_train(run: Run, user_fn: Callable) -> None:
    """Compare ``user_fn(words, num_merges)`` with `toklab.bpe.reference_train` (ties: smallest pair)."""
    for words, num_merges, what in _train_cases():
        expected, seconds = run.timed(_reference_train, words, num_merges)
        case = run.case(what, expected=expected, seconds=seconds if what == LARGE_TRAIN else None, slow_hint=(
            "each merge should cost one pass over the words (count the pairs, take the best, rewrite the words "
            "that contain it); searching a list for each pair, or copying the whole corpus per pair, costs far more"))
        got = case.call(user_fn, dict(words), num_merges)
        pairs = _as_pairs(got)
        if pairs is None:
            case.fail(got, "return the merges as a list of (left, right) pairs of symbols, e.g. [('a', 'b')], "
                           "not the merged symbols or the rewritten words.")
        if pairs != expected:
            case.fail(pairs, _train_hint(words, num_merges, expected, pairs))


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
    cases += [(list("🙂👋🏽a"), [("🙂", "👋"), ("🏽", "a")], "emoji and a skin-tone modifier (astral characters)"),
              (list("北京大学"), [("大", "学"), ("北", "京"), ("北京", "大学")], "Chinese characters")]
    cases.append((*_large_encoding(), LARGE_ENCODE))
    return cases


@functools.lru_cache(maxsize=1)
def _large_encoding() -> tuple[list[str], list[tuple[str, str]]]:
    """1,000 merges learned (by toklab's fast trainer) from 30 KB of English, and 450 characters after them."""
    text = " ".join(corpus.load("en", 40_000).split())
    model = train(text[:30_000], 256 + 1_000)
    merges = [(a.decode("latin-1"), b.decode("latin-1")) for a, b in model.merges]
    return list(text[30_000:30_450]), merges


def _by_frequency(symbols: list[str], merges: list[tuple[str, str]]) -> list[str]:
    """The chapter's pitfall: merge the known pair that occurs most often in the input (first one among equals)."""
    known, word = set(merges), tuple(symbols)
    while True:
        counts = Counter(p for p in zip(word, word[1:]) if p in known)
        if not counts:
            return list(word)
        word = merge_pair(word, counts.most_common(1)[0][0])


def _leftmost(symbols: list[str], merges: list[tuple[str, str]]) -> list[str]:
    """Merge the leftmost adjacent pair that is in ``merges``, whatever its rank."""
    known, word = set(merges), list(symbols)
    while True:
        i = next((k for k, p in enumerate(zip(word, word[1:])) if p in known), None)
        if i is None:
            return word
        word[i : i + 2] = [word[i] + word[i + 1]]


def _skipping_an_end(symbols: list[str], merges: list[tuple[str, str]], end: int) -> list[str]:
    """The right encoder with an off-by-one loop: it never looks at the first (``end=0``) or last (-1) pair."""
    rank, parts = {pair: r for r, pair in enumerate(merges)}, list(symbols)
    while True:
        pairs = list(enumerate(zip(parts, parts[1:])))
        pairs = pairs[1:] if end == 0 else pairs[:-1]
        ranked = [(rank[p], i) for i, p in pairs if p in rank]
        if not ranked:
            return parts
        _, i = min(ranked)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]


def _encode_hint(symbols: list[str], merges: list[tuple[str, str]], expected: list, got: list) -> str:
    if "".join(map(str, got)) != "".join(symbols):
        return "your pieces do not concatenate back to the input: a merge joins two adjacent symbols into one."
    if got == list(symbols):
        return ("no merge was applied: look up every adjacent pair (a tuple, as in merges) among the merges "
                "and merge the one with the lowest rank.")
    # Each known mistake, replayed on this input; on a small input several can give the same answer, and then
    # the hint names them all rather than guess.
    by_frequency, leftmost = got == _by_frequency(symbols, merges), got == _leftmost(symbols, merges)
    causes = []
    if by_frequency and leftmost:
        causes.append("that ignores the ranks (it is what merging the most frequent, or the leftmost, known pair "
                      "gives): the merge with the lowest rank (earliest in merges) goes first, wherever it is")
    elif by_frequency:
        causes.append("that merges the pair that occurs most often in the input: encoding re-counts nothing, "
                      "the merge with the lowest rank (earliest in merges) goes first")
    elif leftmost:
        causes.append("that merges the leftmost known pair: the merge with the lowest rank goes first, wherever "
                      "it is in the word")
    if got == reference_encode(symbols, merges[::-1]):
        causes.append("you applied the latest-learned merge first: the lowest rank (earliest in merges) wins")
    if got == reference_encode(symbols, merges[1:]):
        causes.append("the first merge (rank 0) is never applied: a rank of 0 is falsy, so a test such as "
                      "`if rank.get(pair):` skips it; test `pair in rank` instead")
    for end, which in ((-1, "last"), (0, "first")):
        if got == _skipping_an_end(symbols, merges, end):
            causes.append(f"the {which} adjacent pair of the word is never looked at (an off-by-one in the loop): "
                          "the pairs start at every i in range(len(parts) - 1)")
    if len(causes) == 1:
        return causes[0] + "."
    if causes:
        return (f"{len(causes)} different mistakes give this answer on this input: "
                + "; or ".join(f"({k}) {c}" for k, c in enumerate(causes, 1)) + ".")
    return ("repeatedly merge the adjacent pair with the lowest rank (its index in merges), until no "
            "adjacent pair is in merges.")


@exercise("ch02_1-ex2", title="Implement BPE encoding from ranks", function="my_encode",
          reference=reference_encode, against="toklab.bpe.reference_encode")
def check_encode(run: Run, user_fn: Callable) -> None:
    """Compare ``user_fn(symbols, merges)`` with `toklab.bpe.reference_encode`.

    Merge lists come from training (each merge's parts exist before it), so
    "apply the earliest-learned applicable merge, repeat" is the rule to match.
    """
    for symbols, merges, what in _encode_cases():
        expected, seconds = run.timed(reference_encode, symbols, merges)
        case = run.case(what, expected=expected, seconds=seconds if what == LARGE_ENCODE else None, slow_hint=(
            "look each pair's rank up in a dict built once ({pair: rank}); searching the merge list for every "
            "pair at every step (merges.index, `in merges`) costs a pass over all the merges each time"))
        got = case.call(user_fn, list(symbols), list(merges))
        try:
            got_list = list(got)
        except TypeError:
            case.fail(got, "return the segmentation as a list of str pieces.")
        if got_list != expected:
            case.fail(got_list, _encode_hint(symbols, merges, expected, got_list))
