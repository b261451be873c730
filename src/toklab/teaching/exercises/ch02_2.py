"""Checker for the coding exercise of §2.2 (WordPiece: likelihood scores and whole-word failure).

* ``ch02_2-ex1``, `check_encode_word(user_fn)`: the reader's longest-match-first WordPiece
  encoder, called as ``user_fn(word, vocab)`` with ``word`` one pre-tokenized
  word (a ``str``) and ``vocab`` a ``set`` of token strings. Pieces after the
  first carry the ``##`` prefix. It must return the list of pieces, or
  ``["[UNK]"]`` for the whole word when some position has no match or when the
  word is longer than 100 characters (Hugging Face's ``max_input_chars_per_word``;
  Google's original BERT code uses 200), like `toklab.wordpiece.encode_word` with
  its defaults.

The checker runs the chapter's worked examples first (including the dead end
that greedy matching cannot back out of), then randomized vocabularies and
words compared with `toklab.wordpiece.encode_word` (fixed seed, so every run
checks the same cases). It reports in the format of
`toklab.teaching.exercises.harness`, with hints for the usual slips (shortest match,
backtracking, keeping pieces found before a dead end, ``##`` on the wrong pieces).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable

from ...wordpiece import encode_word
from .harness import Run, exercise

__all__ = ["check_encode_word"]

_SEED = 2012  # any fixed value: the random cases are the same on every run
_N_RANDOM = 400
_UNK = "[UNK]"


def _cases() -> list[tuple[str, frozenset[str], str]]:
    cases = [
        ("abc", {"a", "##b", "##bc"}, "the worked example: ##bc is longer than ##b, so it wins"),
        ("abc", {"a", "##b"}, "no piece for the final c: the whole word is [UNK]"),
        ("abc", {"a", "ab", "##bc"}, "greedy takes ab, then c fails: [UNK], no backtracking to a + ##bc"),
        ("abc", {"a", "##bc"}, "a then ##bc"),
        ("unaffable", {"u", "un", "##n", "##a", "##aff", "##able", "##ab"}, "longest first at every position"),
        ("ba", {"a", "b", "##a"}, "a continuation needs its ## form"),
        ("ab", {"a", "b", "##a"}, "b exists only at a word start, not as ##b: [UNK]"),
        ("hello", {"hello", "h", "##e", "##l", "##o"}, "the whole word is a vocabulary entry"),
        ("x", {"a", "##x"}, "a one-character word whose only match would be a ## piece: [UNK]"),
        ("a" * 100, {"a", "##a"}, "100 characters: still encoded"),
        ("a" * 101, {"a", "##a"}, "101 characters: longer than max_input_chars_per_word=100, so [UNK]"),
        ("北京大学", {"北", "北京", "##京", "##大", "##学", "##大学"}, "characters outside ASCII"),
    ]
    out = [(w, frozenset(v | {_UNK}), what) for w, v, what in cases]
    rng = random.Random(_SEED)
    for k in range(_N_RANDOM):
        alphabet = "abc"[: rng.randint(2, 3)]
        vocab = {_UNK}
        for _ in range(rng.randint(1, 10)):
            piece = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 4)))
            vocab.add(piece if rng.random() < 0.5 else "##" + piece)
        word = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8)))
        out.append((word, frozenset(vocab), f"random case {k}"))
    out += [("🙂👋🏽", frozenset({_UNK, "🙂", "##👋", "##🏽", "##👋🏽"}), "emoji and a skin-tone modifier (astral characters)"),
            ("", frozenset({_UNK, "a"}), "the empty word: no pieces")]
    out += [(word, vocab, LARGE) for word, vocab in [_large()]]
    return out


LARGE = "large: 100 letters of English against a vocabulary of 30,000 pieces (timed)"


@functools.lru_cache(maxsize=1)
def _large() -> tuple[str, frozenset[str]]:
    """Pieces from the corpus's words (each word's prefixes, ## and its other substrings), and a 100-letter word."""
    from ...data import corpus

    words = [w for w in corpus.load("en", 200_000).lower().split() if w.isalpha()]
    vocab = {_UNK}
    for word in words:
        if len(vocab) >= 30_000:
            break
        vocab.update(word[:n] for n in range(1, min(len(word), 6) + 1))
        vocab.update("##" + word[i:i + n] for i in range(1, len(word)) for n in (1, 2, 3))
    return "".join(words[5_000:5_020])[:100], frozenset(vocab)


def _is_segmentation(word: str, vocab: frozenset[str], pieces: list[str]) -> bool:
    """True if ``pieces`` spell ``word`` with vocabulary entries, ``##`` exactly on the later pieces."""
    if not pieces or any(p not in vocab for p in pieces):
        return False
    if pieces[0].startswith("##") or not all(p.startswith("##") for p in pieces[1:]):
        return False
    return pieces[0] + "".join(p[2:] for p in pieces[1:]) == word


def _shortest_first(word: str, vocab: frozenset[str]) -> list[str]:
    """The usual slip: at each position take the *shortest* piece that matches."""
    pieces, start = [], 0
    while start < len(word):
        for end in range(start + 1, len(word) + 1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                pieces.append(piece)
                start = end
                break
        else:
            return [_UNK]
    return pieces


def _hint(word: str, vocab: frozenset[str], expected: list[str], got: list[str]) -> str:
    """Name the rule the reader's answer most likely broke."""
    if expected == [_UNK]:
        if len(word) > 100:
            return "words longer than 100 characters are [UNK] without any search (max_input_chars_per_word)."
        if _UNK in got and len(got) > 1:
            return "a failure anywhere makes the *whole word* one [UNK]; drop the pieces found so far."
        if _is_segmentation(word, vocab, got):
            return ("that segmentation exists, but greedy longest-match-first never backtracks: "
                    "after a dead end the word is [UNK].")
    if len(word) <= 100 and got == _shortest_first(word, vocab) != expected:
        return ("that takes the shortest match at each position: WordPiece tries the longest remaining "
                "substring first and shortens it one character at a time.")
    if got == [_UNK]:
        return ("this word can be encoded: at each position try the longest remaining substring first, "
                "then shorten it one character at a time.")
    if got and (got[0].startswith("##") or not all(p.startswith("##") for p in got[1:])):
        return "only the first piece is plain; every later piece is looked up with the ## prefix."
    if any(p not in vocab for p in got if p != _UNK):
        return "every piece must be a vocabulary entry, looked up with ## after the first position."
    if _is_segmentation(word, vocab, got):
        return "a valid segmentation, but not the greedy one: at each position take the longest match."
    return ("at each position take the longest vocabulary entry that matches (## after the first "
            "position); if none matches, the whole word is [UNK].")


def _reference_encode_word(word: str, vocab: set[str]) -> list[str]:
    return encode_word(word, vocab)


@exercise("ch02_2-ex1", title="Implement longest-match-first encoding", function="my_encode_word",
          reference=_reference_encode_word, against="toklab.wordpiece.encode_word")
def check_encode_word(run: Run, user_fn: Callable) -> None:
    """Compare ``user_fn(word, vocab)`` with `toklab.wordpiece.encode_word` (unk ``[UNK]``, prefix ``##``)."""
    for word, vocab, what in _cases():
        expected, seconds = run.timed(encode_word, word, vocab)
        case = run.case(what, expected=expected, seconds=seconds if what == LARGE else None, slow_hint=(
            "look each candidate substring up in the set (a hash lookup); scanning the vocabulary for pieces "
            "that match costs a pass over all 30,000 pieces at every position"))
        got = case.call(user_fn, word, set(vocab))
        if not isinstance(got, (list, tuple)) or not all(isinstance(p, str) for p in got):
            case.fail(got, "return the pieces as a list of str, e.g. ['a', '##bc'], or ['[UNK]'].")
        got = list(got)
        if got != expected:
            case.fail(got, _hint(word, vocab, expected, got))
