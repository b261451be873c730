"""Checker for the coding exercise of §2.2 (WordPiece: likelihood scores and whole-word failure).

* `check_encode_word(user_fn)` — the reader's longest-match-first WordPiece
  encoder, called as ``user_fn(word, vocab)`` with ``word`` one pre-tokenized
  word (a ``str``) and ``vocab`` a ``set`` of token strings. Pieces after the
  first carry the ``##`` prefix. It must return the list of pieces, or
  ``["[UNK]"]`` for the whole word when some position has no match or when the
  word is longer than 100 characters (BERT's ``max_input_chars_per_word``),
  like `toklab.wordpiece.encode_word` with its defaults.

The checker runs the chapter's worked examples first (including the dead end
that greedy matching cannot back out of), then randomized vocabularies and
words compared with `toklab.wordpiece.encode_word` (fixed seed, so every run
checks the same cases). The first disagreement raises AssertionError naming the
word, the vocabulary, the expected pieces and the pieces received. On success
it returns a short message.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ..wordpiece import encode_word

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
    return out


def _show_vocab(vocab: frozenset[str]) -> str:
    return "{" + ", ".join(repr(t) for t in sorted(vocab)) + "}"


def _is_segmentation(word: str, vocab: frozenset[str], pieces: list[str]) -> bool:
    """True if ``pieces`` spell ``word`` with vocabulary entries, ``##`` exactly on the later pieces."""
    if not pieces or any(p not in vocab for p in pieces):
        return False
    if pieces[0].startswith("##") or not all(p.startswith("##") for p in pieces[1:]):
        return False
    return pieces[0] + "".join(p[2:] for p in pieces[1:]) == word


def _hint(word: str, vocab: frozenset[str], expected: list[str], got: list[str]) -> str:
    """One line that names the rule the reader's answer most likely broke."""
    if expected == [_UNK]:
        if len(word) > 100:
            return "\n  (words longer than 100 characters are [UNK] without any search)"
        if _UNK in got and len(got) > 1:
            return "\n  (a failure anywhere makes the *whole word* one [UNK]; drop the pieces found so far)"
        if _is_segmentation(word, vocab, got):
            return ("\n  (that segmentation exists, but greedy longest-match-first never backtracks: "
                    "after a dead end the word is [UNK])")
    if got == [_UNK]:
        return ("\n  (this word can be encoded: at each position try the longest remaining substring first, "
                "then shorten it one character at a time)")
    if got and (got[0].startswith("##") or not all(p.startswith("##") for p in got[1:])):
        return "\n  (only the first piece is plain; every later piece is looked up with the ## prefix)"
    if any(p not in vocab for p in got if p != _UNK):
        return "\n  (every piece must be a vocabulary entry, looked up with ## after the first position)"
    if _is_segmentation(word, vocab, got):
        return "\n  (a valid segmentation, but not the greedy one: at each position take the longest match)"
    return ""


def check_encode_word(user_fn: Callable) -> str:
    """Compare ``user_fn(word, vocab)`` with `toklab.wordpiece.encode_word` (unk ``[UNK]``, prefix ``##``).

    Raises AssertionError describing the first case where the pieces differ.
    """
    cases = _cases()
    for word, vocab, what in cases:
        expected = encode_word(word, vocab)
        shown_word = word if len(word) <= 20 else f"{word[:10]}...({len(word)} characters)"
        shown = f"word={shown_word!r}, vocab={_show_vocab(vocab)}"
        try:
            got = user_fn(word, set(vocab))
        except Exception as exc:
            raise AssertionError(
                f"check_encode_word, {what}: your function raised {type(exc).__name__}: {exc}\n  input: {shown}"
            ) from exc
        if not isinstance(got, (list, tuple)) or not all(isinstance(p, str) for p in got):
            raise AssertionError(
                f"check_encode_word, {what}: expected a list of str pieces, got {got!r}\n  input: {shown}"
            )
        got = list(got)
        if got != expected:
            hint = _hint(word, vocab, expected, got)
            shown_expected = expected if len(expected) <= 12 else f"{expected[:6]}... ({len(expected)} pieces)"
            shown_got = got if len(got) <= 12 else f"{got[:6]}... ({len(got)} pieces)"
            raise AssertionError(
                f"check_encode_word, {what}: pieces differ\n  input:    {shown}\n"
                f"  expected: {shown_expected}\n  got:      {shown_got}{hint}"
            )
    return f"check_encode_word: all {len(cases)} cases match toklab.wordpiece.encode_word"
