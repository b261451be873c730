"""The textbook BPE trainer and encoder on the book's worked examples."""

from __future__ import annotations

from collections import Counter

import pytest

from toklab import bpe
from toklab.bpe import reference_encode, reference_train
from toklab.data import corpus


def chars(words: dict[str, int], end: str | None = None) -> dict[tuple[str, ...], int]:
    return {tuple(w) + ((end,) if end else ()): c for w, c in words.items()}


def pair_counts(corpus: dict[tuple[str, ...], int]) -> Counter:
    """Weighted adjacent-pair counts, written out independently of toklab."""
    counts: Counter = Counter()
    for word, c in corpus.items():
        for i in range(len(word) - 1):
            counts[word[i], word[i + 1]] += c
    return counts


def apply_merge(corpus, pair):
    out = {}
    for word, c in corpus.items():
        new, i = [], 0
        while i < len(word):
            if i + 1 < len(word) and word[i] == pair[0] and word[i + 1] == pair[1]:
                new.append(pair[0] + pair[1])
                i += 2
            else:
                new.append(word[i])
                i += 1
        out[tuple(new)] = out.get(tuple(new), 0) + c
    return out


def test_abab_abac_worked_example():
    words = chars({"abab": 3, "abac": 1})
    counts = pair_counts(words)
    assert counts == {("a", "b"): 7, ("b", "a"): 4, ("a", "c"): 1}
    merges = reference_train(words, 2)
    assert merges == [("a", "b"), ("ab", "ab")]
    # after the first merge: abab -> (ab, ab) x3, abac -> (ab, a, c) x1
    after = apply_merge(words, ("a", "b"))
    assert pair_counts(after) == {("ab", "ab"): 3, ("ab", "a"): 1, ("a", "c"): 1}


def test_sennrich_example_with_end_of_word():
    words = chars({"low": 5, "lower": 2, "newest": 6, "widest": 3}, end="</w>")
    merges = reference_train(words, 5)
    assert merges == [("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o"), ("lo", "w")]
    corpus = dict(words)
    seen = []
    for pair in merges:
        counts = pair_counts(corpus)
        assert counts[pair] == max(counts.values()), pair  # it really was a most frequent pair
        seen.append(counts[pair])
        corpus = apply_merge(corpus, pair)
    assert seen == [9, 9, 9, 7, 7]
    # the first step is a three-way tie at 9 that "smallest" breaks alphabetically
    first = pair_counts(words)
    assert sorted(p for p, c in first.items() if c == 9) == [("e", "s"), ("s", "t"), ("t", "</w>")]
    assert reference_train(words, 1, tie_break="largest") == [("t", "</w>")]


def test_aaaa_counts_three_overlapping_pairs_but_merges_two():
    # (a,a) occurs 3 times in "aaaa" when counted sliding; with tie_break="largest"
    # a count of 2 would have tied with (x,y) and lost to it.
    words = chars({"aaaa": 1, "xy": 2})
    assert pair_counts(words)[("a", "a")] == 3
    merges = reference_train(words, 1, tie_break="largest")
    assert merges == [("a", "a")]
    assert reference_encode(list("aaaa"), [("a", "a")]) == ["aa", "aa"]
    assert reference_encode(list("aaa"), [("a", "a")]) == ["aa", "a"]
    assert reference_encode(list("aaaaa"), [("a", "a")]) == ["aa", "aa", "a"]
    # the next merge sees the word as (aa, aa), not three overlapping pieces
    assert reference_train(chars({"aaaa": 1}), 2) == [("a", "a"), ("aa", "aa")]


def test_encoding_uses_merge_order_not_frequency():
    assert reference_encode(list("abc"), [("a", "b"), ("b", "c")]) == ["ab", "c"]
    assert reference_encode(list("abc"), [("b", "c"), ("a", "b")]) == ["a", "bc"]
    assert reference_encode(list("abc"), [("a", "b"), ("ab", "c")]) == ["abc"]
    assert reference_encode(list("ab"), [("a", "b"), ("ab", "c")]) == ["ab"]
    assert reference_encode(list("xyz"), [("a", "b")]) == ["x", "y", "z"]
    assert reference_encode([], [("a", "b")]) == []


def test_reference_works_on_bytes():
    words = {(b"a", b"b", b"a", b"b"): 3, (b"a", b"b", b"a", b"c"): 1}
    assert reference_train(words, 2) == [(b"a", b"b"), (b"ab", b"ab")]
    assert reference_encode([b"a", b"b", b"c"], [(b"a", b"b")]) == [b"ab", b"c"]


def test_tie_break_chooses_differently():
    words = chars({"ab": 4, "cd": 4, "ef": 1})
    assert reference_train(words, 1, tie_break="smallest") == [("a", "b")]
    assert reference_train(words, 1, tie_break="largest") == [("c", "d")]
    assert reference_train(words, 3, tie_break="smallest") == [("a", "b"), ("c", "d"), ("e", "f")]
    assert reference_train(words, 3, tie_break="largest") == [("c", "d"), ("a", "b"), ("e", "f")]
    # ties are broken on the pair, first symbol first
    words = chars({"ba": 2, "bc": 2, "ac": 2})
    assert reference_train(words, 1, tie_break="smallest") == [("a", "c")]
    assert reference_train(words, 1, tie_break="largest") == [("b", "c")]


def test_min_frequency_stops_training():
    words = chars({"ab": 5, "cd": 2, "ef": 1})
    assert reference_train(words, 10) == [("a", "b"), ("c", "d"), ("e", "f")]
    assert reference_train(words, 10, min_frequency=2) == [("a", "b"), ("c", "d")]
    assert reference_train(words, 10, min_frequency=3) == [("a", "b")]
    assert reference_train(words, 10, min_frequency=6) == []


def test_num_merges_and_exhaustion():
    words = chars({"abcd": 1})
    assert len(reference_train(words, 2)) == 2
    # a 4-symbol word can be merged at most 3 times
    assert len(reference_train(words, 100)) == 3
    assert reference_train({}, 5) == []


@pytest.mark.parametrize("bad", ["random", "", "Smallest", None])
def test_invalid_tie_break_raises(bad):
    with pytest.raises(ValueError, match="tie_break"):
        reference_train(chars({"ab": 1}), 1, tie_break=bad)
    with pytest.raises(ValueError, match="tie_break"):
        bpe.train("abab abab", 260, tie_break=bad)


# ---------------------------------------------------------------- the step callback


def test_reference_train_on_step_sees_every_step_counts_and_chosen_pair():
    words = chars({"low": 5, "lower": 2, "newest": 6, "widest": 3}, end="</w>")
    seen = []
    merges = reference_train(words, 8, on_step=lambda step, counts, pair: seen.append((step, dict(counts), pair)))
    assert [step for step, _, _ in seen] == list(range(1, len(merges) + 1)) == list(range(1, 9))
    assert [pair for _, _, pair in seen] == merges
    corpus = dict(words)
    for (step, counts, pair), merge in zip(seen, merges):
        assert counts == pair_counts(corpus), step  # the counts of the corpus as it is before this step
        assert counts[pair] == max(counts.values())
        assert pair == min(p for p, c in counts.items() if c == counts[pair])  # "smallest" breaks the tie
        corpus = apply_merge(corpus, merge)
    # the first step's three-way tie is visible to the caller, as the book shows it
    assert sorted(p for p, c in seen[0][1].items() if c == 9) == [("e", "s"), ("s", "t"), ("t", "</w>")]


def test_reference_train_on_step_is_not_called_for_the_step_that_stops():
    words = chars({"ab": 5, "cd": 2, "ef": 1})
    for min_frequency, expected in ((1, 3), (2, 2), (3, 1), (6, 0)):
        calls = []
        merges = reference_train(words, 10, min_frequency=min_frequency, on_step=lambda *args: calls.append(args))
        assert len(calls) == len(merges) == expected
        assert all(counts[pair] >= min_frequency for _, counts, pair in calls)
    calls = []
    assert reference_train(chars({"abcd": 1}), 100, on_step=lambda *args: calls.append(args)) == [
        ("a", "b"), ("ab", "c"), ("abc", "d")
    ]
    assert [step for step, _, _ in calls] == [1, 2, 3]  # exhausted: no call once nothing is left to merge


def test_reference_train_on_step_on_corpus_bytes_matches_the_fast_trainer():
    """On real pre-token counts the callback's pairs are the fast trainer's merges, in order."""
    text = corpus.load("en", 6000)
    counts = bpe.pretoken_counts(text)
    words = {tuple(bytes([b]) for b in piece.encode("utf-8")): c for piece, c in counts.items()}
    seen = []
    reference_train(words, 40, tie_break="largest", on_step=lambda step, c, pair: seen.append((c[pair], pair)))
    fast = bpe.train(text, 256 + 40, tie_break="largest").merges
    assert [pair for _, pair in seen] == fast
    frequencies = [n for n, _ in seen]
    assert frequencies[0] == max(frequencies) and all(n >= 1 for n in frequencies)
