"""Checker for the coding exercise of §2.4 (BPE, WordPiece and Unigram side by side).

* ``ch02_4-ex5``, `check_fewest_pieces(user_fn)`: the reader's shortest
  segmentation, called as ``user_fn(word, vocab)`` with ``word`` a non-empty
  ``str`` and ``vocab`` a ``set`` of ``str`` pieces. It must return a list of
  pieces of ``vocab`` that concatenate to ``word``, with as few pieces as any
  segmentation has (when several tie, any of them is accepted), and raise
  ``ValueError`` when no segmentation exists.

toklab's answer is Viterbi (`toklab.unigram.reference_viterbi`) with the same
score for every piece: maximising a sum of equal negative scores is minimising
the number of pieces. The checker runs hand-made cases first (the ones where
greedy longest-match-first takes too many pieces or dead-ends), then random
small vocabularies and words (fixed seed, so every run checks the same cases),
and reports in the format of `toklab.teaching.exercises.harness`, with hints for the
usual slips (greedy longest match from the left or from the right, pieces that
are not in the vocabulary, a result instead of an error when nothing fits).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

from ...unigram import reference_viterbi
from .harness import Run, Shown, exercise

__all__ = ["check_fewest_pieces"]

_SEED = 2024  # any fixed value: the random cases are the same on every run
_N_RANDOM = 300


def _fewest(word: str, vocab: Iterable[str]) -> list[str]:
    """A segmentation of ``word`` into the fewest pieces of ``vocab`` (ValueError if none)."""
    return reference_viterbi(word, {piece: -1.0 for piece in vocab})


def _greedy(word: str, vocab: frozenset[str], *, from_right: bool = False) -> list[str] | None:
    """Longest match first, from the left (WordPiece's rule without ##) or from the right; None at a dead end."""
    pieces, rest = [], word
    while rest:
        cut = next((n for n in range(len(rest), 0, -1) if (rest[-n:] if from_right else rest[:n]) in vocab), None)
        if cut is None:
            return None
        if from_right:
            pieces.insert(0, rest[-cut:])
            rest = rest[:-cut]
        else:
            pieces.append(rest[:cut])
            rest = rest[cut:]
    return pieces


def _segmentable(word: str, vocab: frozenset[str]) -> bool:
    reach = [True] + [False] * len(word)
    for end in range(1, len(word) + 1):
        reach[end] = any(reach[start] and word[start:end] in vocab for start in range(end))
    return reach[-1]


def _cases() -> list[tuple[str, frozenset[str], str]]:
    cases = [
        ("abcd", {"a", "ab", "bcd", "c", "d"}, "greedy takes ab, c, d (3 pieces); a + bcd needs 2"),
        ("xyz", {"x", "xy", "yz"}, "greedy takes xy and dead-ends at z; x + yz works"),
        ("abcd", {"abc", "d", "cd", "a", "b"}, "from the right, greedy takes cd, b, a; abc + d needs 2"),
        ("hello", {"h", "e", "l", "o", "hello", "hell"}, "the whole word is one piece"),
        ("aaaa", {"a", "aa", "aaa"}, "overlapping pieces: two pieces suffice"),
        ("abcab", {"a", "b", "c", "abc", "ca", "cab"}, "several segmentations tie at three pieces"),
        ("abcde", {"ab", "cde", "abc", "de", "a", "b", "c", "d", "e"}, "two different 2-piece answers"),
        ("北京大学", {"北", "北京", "京大", "大学", "京", "大", "学"}, "characters outside ASCII"),
        ("tokenization", {"token", "tok", "en", "ization", "iz", "ation", "t", "o", "k", "e", "n", "i", "z", "a"},
         "token + ization"),
        ("abc", {"a", "b"}, "no piece covers c: no segmentation exists"),
        ("ab", {"a", "abc"}, "a piece longer than the rest of the word does not fit"),
        ("x", {"x"}, "a one-character word"),
        ("🙂👋🏽", {"🙂", "👋", "🏽", "👋🏽", "🙂👋"}, "emoji and a skin-tone modifier (astral characters)"),
    ]
    out = [(w, frozenset(v), what) for w, v, what in cases]
    rng = random.Random(_SEED)
    for k in range(_N_RANDOM):
        alphabet = "abc"[: rng.randint(2, 3)]
        vocab = {c for c in alphabet if rng.random() < 0.8}
        for _ in range(rng.randint(1, 8)):
            vocab.add("".join(rng.choice(alphabet) for _ in range(rng.randint(2, 4))))
        word = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 10)))
        out.append((word, frozenset(vocab), f"random case {k}"))
    return out


def _hint(word: str, vocab: frozenset[str], best: int, got: list) -> str:
    if got == _greedy(word, vocab):
        return ("that is greedy longest-match-first: taking the longest piece at each position can force "
                f"short pieces later. Minimise over all segmentations ({best} pieces suffice here), e.g. with "
                "a shortest-path (Viterbi) pass where every piece costs 1.")
    if got == _greedy(word, vocab, from_right=True):
        return ("that is greedy longest match from the right end: greedy from either side can miss the "
                f"fewest-piece segmentation ({best} pieces here). Minimise over all segmentations.")
    return (f"a valid segmentation, but {len(got)} pieces where {best} suffice: keep, for every prefix, "
            "the fewest pieces that reach it and where its last piece starts.")


def _error_hint(word: str, vocab: frozenset[str], expected: list[str]) -> str:
    exists = f"{word!r} can be segmented (e.g. {expected})"
    if _greedy(word, vocab) is None:
        return (f"{exists}, but greedy longest-match-first dead-ends on it: a long piece taken early can "
                "leave a rest that nothing covers. Minimise over all segmentations instead.")
    if _greedy(word, vocab, from_right=True) is None:
        return (f"{exists}, but greedy longest match from the right end dead-ends on it. Minimise over all "
                "segmentations instead.")
    return f"{exists}; raise ValueError only when no segmentation exists."


LARGE = "large: a word of 400 letters over 60 pieces (timed)"


def _large() -> tuple[str, frozenset[str]]:
    rng = random.Random(_SEED + 1)
    pieces = {"a", "b", "c"} | {"".join(rng.choice("abc") for _ in range(rng.randint(2, 6))) for _ in range(80)}
    return "".join(rng.choice("abc") for _ in range(400)), frozenset(sorted(pieces)[:60])


def _reference(word: str, vocab: set[str]) -> list[str]:
    return _fewest(word, vocab)


@exercise("ch02_4-ex5", title="The fewest tokens a vocabulary allows", function="my_fewest_pieces",
          reference=_reference, against="toklab.unigram.reference_viterbi with equal scores")
def check_fewest_pieces(run: Run, user_fn: Callable) -> None:
    """Check ``user_fn(word, vocab)``: a fewest-piece segmentation of ``word``, ValueError if none exists."""
    for word, vocab, what in _cases() + [(*_large(), LARGE)]:
        if not _segmentable(word, vocab):
            case = run.case(what, expected=Shown("raises ValueError"))
            case.expect_error(user_fn, word, set(vocab),
                              why=f"no segmentation of {word!r} into these pieces exists")
            continue
        expected, seconds = run.timed(_fewest, word, vocab)
        case = run.case(what, expected=expected, seconds=seconds if what == LARGE else None, slow_hint=(
            "keep, for every prefix, the fewest pieces that reach it (one pass, each prefix from shorter ones); "
            "trying every segmentation, or recursing without remembering results, is exponential in the length"))
        got = case.call(user_fn, word, set(vocab), error_hint=_error_hint(word, vocab, expected))
        if not isinstance(got, (list, tuple)) or not all(isinstance(p, str) for p in got):
            case.fail(got, "return the pieces as a list of str, e.g. ['a', 'bcd'].")
        got = list(got)
        if "".join(got) != word or not got:
            case.fail(got, f"the pieces must concatenate to the word {word!r}, in order.")
        if any(p not in vocab for p in got):
            missing = sorted({p for p in got if p not in vocab})
            case.fail(got, f"every piece must be in vocab; not in it: {missing}.")
        if len(got) != len(expected):
            case.fail(got, _hint(word, vocab, len(expected), got))
