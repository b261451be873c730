"""WordPiece the textbook way (`toklab.wordpiece.reference`): the book's worked examples.

The likelihood score against plain frequency, the tie rule, longest match
first with a whole word becoming [UNK] (CONTENT.md §2, seed 004 §2.2, [D03]).
"""

from __future__ import annotations

from collections import Counter

import pytest
from tokenizers import Tokenizer, models

from toklab import bpe
from toklab import wordpiece as wp
from toklab.wordpiece import WordPiece

from .helpers import SCORE_EXAMPLE, VOCAB_D03


def symbol_and_pair_counts(words: dict[str, int]) -> tuple[Counter, Counter]:
    symbols: Counter = Counter()
    pairs: Counter = Counter()
    for w, c in words.items():
        s = wp.split_word(w)
        for x in s:
            symbols[x] += c
        for p in zip(s, s[1:]):
            pairs[p] += c
    return symbols, pairs


def test_score_example_has_the_counts_of_the_worked_example():
    f, pairs = symbol_and_pair_counts(SCORE_EXAMPLE)
    assert (pairs["a", "##b"], f["a"], f["##b"]) == (6, 10, 10)
    assert (pairs["q", "##u"], f["q"], f["##u"]) == (2, 2, 10)
    assert pairs["a", "##b"] / (f["a"] * f["##b"]) == pytest.approx(0.06)
    assert pairs["q", "##u"] / (f["q"] * f["##u"]) == pytest.approx(0.1)
    # (a, ##b) is the most frequent pair and (q, ##u) the best-scoring one
    assert max(pairs, key=pairs.get) == ("a", "##b")
    assert max(pairs, key=lambda p: pairs[p] / (f[p[0]] * f[p[1]])) == ("q", "##u")


def test_bpe_merges_ab_but_wordpiece_merges_qu():
    start = len(wp.initial_vocab(SCORE_EXAMPLE))
    for train in (wp.reference_train, wp.train_vocab):
        assert train(SCORE_EXAMPLE, start + 1, score="likelihood")[start] == "qu"
        assert train(SCORE_EXAMPLE, start + 1, score="frequency")[start] == "ab"
    # toklab's BPE on the same symbol sequences makes the frequency choice
    split = {tuple(wp.split_word(w)): c for w, c in SCORE_EXAMPLE.items()}
    assert bpe.reference_train(split, 1) == [("a", "##b")]


def test_likelihood_score_rises_when_a_part_is_merged_away():
    # (a,##b): 1/(4*1) = 0.25 ties (a,##c): 3/(4*3) = 0.25; the more frequent (a,##c)
    # wins. Then f(a) drops to 1 and (a,##b) scores 1/(1*1) = 1 without any change
    # to the words containing it: the fast trainer must notice.
    words = {"ab": 1, "ac": 3}
    init = wp.initial_vocab(words)
    assert init == ["a", "b", "c", "##b", "##c"]
    expected = init + ["ac", "ab"]
    assert wp.reference_train(words, 7) == expected
    assert wp.train_vocab(words, 7) == expected


def test_tie_rule_prefers_older_ids():
    # every pair occurs once and scores 1/(1*1): the pair with the smaller left ID wins
    words = {"xy": 1, "ab": 1}
    vocab = wp.train_vocab(words, len(wp.initial_vocab(words)) + 1)
    assert vocab[-1] == "ab"
    assert wp.reference_train(words, len(vocab)) == vocab


def test_min_frequency_skips_rare_pairs_instead_of_stopping():
    words = {"xy": 1, "ab": 3}
    init = wp.initial_vocab(words)
    # likelihood prefers (x,##y): 1/(1*1) > 3/(3*3); min_frequency=2 excludes it, and training goes on
    assert wp.train_vocab(words, len(init) + 1)[-1] == "xy"
    assert wp.train_vocab(words, len(init) + 5, min_frequency=2) == init + ["ab"]
    assert wp.reference_train(words, len(init) + 5, min_frequency=2) == init + ["ab"]


@pytest.mark.parametrize(
    "vocab, expected",
    [
        (VOCAB_D03, ["a", "##bc"]),  # ##bc is longer than ##b, so it wins
        (["[UNK]", "a", "##b"], ["[UNK]"]),  # a, ##b, then no ##c: the whole word fails
        (["[UNK]", "a", "ab", "##bc"], ["[UNK]"]),  # greedy ab, then no ##c; no backtracking to a + ##bc
    ],
)
def test_d03_longest_match_first_and_whole_word_unk(vocab, expected):
    assert wp.encode_word("abc", vocab) == expected
    tok = WordPiece(vocab)
    assert tok.encode_word("abc") == expected
    assert tok.tokenize("abc") == expected
    hf = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    assert hf.encode("abc").tokens == expected


def test_unk_replaces_the_whole_word_not_just_the_failing_piece():
    tok = WordPiece(["[UNK]", "a", "##b", "c"])
    assert tok.tokenize("ab abz c") == ["a", "##b", "[UNK]", "c"]
