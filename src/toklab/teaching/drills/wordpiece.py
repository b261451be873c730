"""WordPiece by hand: longest match first, and a whole word to ``[UNK]`` when any position fails.

The answer comes from `toklab.wordpiece.reference.encode_word`, word by word. A
problem's sentence has three or four words, of which none, one or two fail: a failing
word either fails after a first match (so keeping the pieces found so far is caught) or,
more often, walks greedy matching into a dead end although another segmentation exists
(so backtracking is caught). Every word that encodes takes a ## piece, and a piece of two
letters or more.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence

from ...wordpiece.reference import encode_word
from .bpe import ATTEMPTS, LETTERS
from .problem import Mistake, Part, Problem, first_difference, read_tokens, show_tokens

__all__ = ["problem", "keep_found_pieces", "backtracking", "shortest_first", "unknown_char_alone"]

UNK, PREFIX = "[UNK]", "##"


def _match(word: str, start: int, vocab: Collection[str], lengths: Sequence[int]) -> str | None:
    for end in lengths:
        if start < end <= len(word):
            piece = word[start:end] if start == 0 else PREFIX + word[start:end]
            if piece in vocab:
                return piece
    return None


def _greedy(word: str, vocab: Collection[str], shortest: bool) -> tuple[list[str], bool]:
    """Pieces matched from the left (longest or shortest first) and whether the word was finished."""
    pieces, start = [], 0
    while start < len(word):
        ends = range(start + 1, len(word) + 1) if shortest else range(len(word), start, -1)
        piece = _match(word, start, vocab, list(ends))
        if piece is None:
            return pieces, False
        pieces.append(piece)
        start += len(piece) - (len(PREFIX) if start else 0)
    return pieces, True


def keep_found_pieces(word: str, vocab: Collection[str]) -> list[str]:
    """WRONG on purpose: a failure adds [UNK] after the pieces already found."""
    pieces, done = _greedy(word, vocab, shortest=False)
    return pieces if done else pieces + [UNK]


def shortest_first(word: str, vocab: Collection[str]) -> list[str]:
    """WRONG on purpose: the shortest entry at each position."""
    pieces, done = _greedy(word, vocab, shortest=True)
    return pieces if done else [UNK]


def backtracking(word: str, vocab: Collection[str], start: int = 0) -> list[str]:
    """WRONG on purpose: longest first, but a dead end backs up and tries a shorter piece."""
    if start == len(word):
        return []
    for end in range(len(word), start, -1):
        piece = word[start:end] if start == 0 else PREFIX + word[start:end]
        if piece in vocab:
            rest = backtracking(word, vocab, end)
            if rest != [UNK]:
                return [piece, *rest]
    return [UNK]


def unknown_char_alone(word: str, vocab: Collection[str]) -> list[str]:
    """WRONG on purpose: a position nothing matches becomes [UNK] for one character, then matching goes on."""
    pieces, start = [], 0
    while start < len(word):
        piece = _match(word, start, vocab, list(range(len(word), start, -1)))
        if piece is None:
            pieces.append(UNK)
            start += 1
        else:
            pieces.append(piece)
            start += len(piece) - (len(PREFIX) if start else 0)
    return pieces


def _sentence(words: Sequence[str], method) -> list[str]:
    return [t for w in words for t in method(w)]


def _vocab(rng: random.Random, alphabet: str) -> list[str]:
    """Most single letters (plain and ##), and a few random longer pieces of either kind."""
    plain = {c for c in alphabet if rng.random() < 0.8}
    cont = {PREFIX + c for c in alphabet if rng.random() < 0.6}
    for _ in range(rng.randint(3, 5)):
        piece = "".join(rng.choice(alphabet) for _ in range(rng.randint(2, 3)))
        if rng.random() < 0.5:
            plain.add(piece)
        else:
            cont.add(PREFIX + piece)
    return sorted(plain) + sorted(cont)


#: How many of a sentence's words fail (become [UNK]), and how often: none, one, or two.
FAILING = (0, 1, 1, 2, 2)


def _teaches(word: str, vocab: Sequence[str]) -> bool:
    """A word worth encoding: it takes a ## piece, and a piece of two letters or more somewhere."""
    pieces = encode_word(word, vocab)
    return len(pieces) > 1 and any(len(p.removeprefix(PREFIX)) > 1 for p in pieces)


def problem(rng: random.Random, topic: str, seed: int) -> Problem:
    """``wordpiece``: encode a sentence of three or four words with a small vocabulary.

    None, one or two of its words fail (a candidate who expects exactly one [UNK] is caught);
    a failing word is, in most problems, a greedy dead end (another segmentation exists), else
    a word that fails after a first match. Every word that encodes takes a longer piece somewhere.
    """
    n_words = rng.choice((3, 3, 4))
    n_fail = rng.choice(FAILING)
    dead_ends = sum(rng.random() < 0.7 for _ in range(n_fail))
    for _ in range(ATTEMPTS):
        alphabet = "".join(sorted(rng.sample(LETTERS, 3)))
        vocab = _vocab(rng, alphabet)
        pool = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(3, 5))) for _ in range(60)})
        kinds: dict[str, list[str]] = {"dead end": [], "fails": [], "encodes": []}
        for w in pool:
            if encode_word(w, vocab) != [UNK]:
                if _teaches(w, vocab):
                    kinds["encodes"].append(w)
            elif backtracking(w, vocab) != [UNK]:
                kinds["dead end"].append(w)
            elif keep_found_pieces(w, vocab) != [UNK]:
                kinds["fails"].append(w)
        if (len(kinds["dead end"]) >= dead_ends and len(kinds["fails"]) >= n_fail - dead_ends
                and len(kinds["encodes"]) >= n_words - n_fail):
            words = [*rng.sample(kinds["dead end"], dead_ends), *rng.sample(kinds["fails"], n_fail - dead_ends),
                     *rng.sample(kinds["encodes"], n_words - n_fail)]
            rng.shuffle(words)
            right = [encode_word(w, vocab) for w in words]
            if n_fail or any(shortest_first(w, vocab) != r for w, r in zip(words, right)):
                break
    else:  # pragma: no cover
        raise RuntimeError("no WordPiece problem found; this is a bug in toklab.teaching.drills")
    tokens = [t for r in right for t in r]
    mistakes = (
        Mistake("Kept the pieces before the failure", _sentence(words, lambda w: keep_found_pieces(w, vocab)),
                "when no entry matches at some position, the whole word becomes a single [UNK]; "
                "the pieces found before it are dropped."),
        Mistake("Backtracked", _sentence(words, lambda w: backtracking(w, vocab)),
                "WordPiece never goes back: it keeps the longest match at each position even when that "
                "leads to a dead end, and then the whole word is [UNK]."),
        Mistake("Shortest match first", _sentence(words, lambda w: shortest_first(w, vocab)),
                "at each position take the longest entry that matches, not the shortest."),
        Mistake("[UNK] for one character", _sentence(words, lambda w: unknown_char_alone(w, vocab)),
                "a failure is not replaced character by character: the whole word becomes one [UNK]."),
        Mistake("Forgot the ## prefix", [t.removeprefix(PREFIX) for t in tokens],
                "a piece that does not start its word is written with ## (it is a different entry)."),
    )

    def hint(got: object) -> str:
        if not isinstance(got, list):
            return f"give the tokens of all {len(words)} words in order"
        return (f"{first_difference(got, tokens)}. Encode each word on its own: the longest entry at the start "
                "(plain), then the longest ## entry at each later position; if none matches, the word is [UNK]")

    lines = [f"{w}: {' '.join(r)}" + ("   (a position with no match: the whole word is [UNK])" if r == [UNK] else "")
             for w, r in zip(words, right)]
    prompt = (
        "WordPiece encoding (longest match first).\n"
        f"Vocabulary: {' '.join(vocab)} {UNK}\n"
        f"Encode the text {' '.join(words)!r} ({len(words)} words; spaces separate words).\n"
        "What are its tokens?"
    )
    return Problem(topic, seed, prompt, (Part("tokens", tokens, mistakes, hint=hint).live(),), "\n".join(lines),
                   'the tokens separated by spaces, e.g. "ab ##c [UNK]"', {"vocab": vocab, "words": words},
                   read_tokens, show_tokens)
