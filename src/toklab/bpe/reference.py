"""Byte-pair encoding, the textbook way: short enough to print, slow enough to check by hand.

Training counts every adjacent pair of symbols in every word (weighted by the
word's count), merges the most frequent pair everywhere, records the merge, and
repeats. Encoding replays the recorded merges: it repeatedly applies the
applicable merge that was learned earliest. Frequencies play no part in
encoding; only the order of the merges does.

These functions work on any symbols that support ``+``: ``str`` for the
classic ``</w>`` example, ``bytes`` for byte-level BPE. The fast versions in
`toklab.bpe.trainer` and `toklab.bpe.encode` must return exactly what these
return; ``tests/bpe/test_fast_vs_reference.py`` checks that.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Literal, TypeVar

__all__ = ["pair_counts", "pick_pair", "merge_pair", "reference_train", "reference_encode", "check_tie_break"]

Sym = TypeVar("Sym", str, bytes)
TieBreak = Literal["smallest", "largest"]
Word = tuple[Sym, ...]


def pair_counts(words: Mapping[Sequence[Sym], int]) -> Counter:
    """Adjacent-pair counts, each occurrence weighted by its word's count.

    >>> pair_counts({("a", "b", "a", "b"): 3, ("a", "b", "a", "c"): 1})[("a", "b")]
    7
    """
    counts: Counter = Counter()
    for word, n in words.items():
        for pair in zip(word, word[1:]):
            counts[pair] += n
    return counts


def pick_pair(
    counts: Mapping[tuple[Sym, Sym], int], tie_break: TieBreak = "smallest"
) -> tuple[Sym, Sym]:
    """The most frequent pair; among equals the smallest or largest pair."""
    best = max(counts.values())
    tied = [pair for pair, c in counts.items() if c == best]
    return min(tied) if tie_break == "smallest" else max(tied)


def merge_pair(word: Sequence[Sym], pair: tuple[Sym, Sym]) -> Word:
    """Replace every non-overlapping occurrence of ``pair``, scanning left to right.

    >>> merge_pair(("a", "a", "a"), ("a", "a"))
    ('aa', 'a')
    """
    out = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(word[i] + word[i + 1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def reference_train(
    words: Mapping[Sequence[Sym], int],
    num_merges: int,
    *,
    tie_break: TieBreak = "smallest",
    min_frequency: int = 1,
    on_step: Callable[[int, Counter, tuple[Sym, Sym]], None] | None = None,
) -> list[tuple[Sym, Sym]]:
    """Learn up to ``num_merges`` merges from word counts (the plain O(n²) algorithm).

    ``words`` maps each word, already cut into symbols, to its count, e.g.
    ``{("l", "o", "w", "</w>"): 5}``. Each step counts every adjacent pair,
    weighted by word count, and merges the most frequent one everywhere.
    Training stops early when no pair occurs ``min_frequency`` times.
    ``on_step(step, counts, pair)``, if given, sees each step's counts and the
    pair chosen (step 1 first), so a caller can show ties without re-coding the loop.
    """
    check_tie_break(tie_break)
    if not isinstance(words, Mapping):
        raise TypeError(
            "words must map each word (a sequence of symbols) to its count, "
            f"got {type(words).__name__}"
        )
    not_int = isinstance(num_merges, bool) or not isinstance(num_merges, int)
    if not_int or num_merges < 0:
        raise TypeError(f"num_merges must be an int >= 0, got {num_merges!r}")
    corpus = {tuple(w): c for w, c in words.items()}
    merges: list[tuple[Sym, Sym]] = []
    for step in range(1, num_merges + 1):
        counts = pair_counts(corpus)
        if not counts or max(counts.values()) < min_frequency:
            break
        pair = pick_pair(counts, tie_break)
        if on_step is not None:
            on_step(step, counts, pair)
        merges.append(pair)
        corpus = {merge_pair(w, pair): c for w, c in corpus.items()}
    return merges


def reference_encode(
    symbols: Sequence[Sym], merges: Sequence[tuple[Sym, Sym]]
) -> list[Sym]:
    """Segment one word with frozen merges: apply the earliest-learned merge, repeat.

    Frequencies play no part here; only the order of ``merges`` does.
    """
    if isinstance(merges, (str, bytes)) or any(
        not (isinstance(m, tuple) and len(m) == 2) for m in merges
    ):
        raise TypeError("merges must be a sequence of (left, right) tuples")
    rank = {pair: i for i, pair in enumerate(merges)}
    word = tuple(symbols)
    while len(word) > 1:
        pairs = [p for p in zip(word, word[1:]) if p in rank]
        if not pairs:
            break
        word = merge_pair(word, min(pairs, key=rank.__getitem__))
    return list(word)


def check_tie_break(tie_break: str) -> None:
    """ValueError unless ``tie_break`` is ``"smallest"`` or ``"largest"``."""
    if tie_break not in ("smallest", "largest"):
        raise ValueError(f"tie_break must be 'smallest' or 'largest', got {tie_break!r}")
