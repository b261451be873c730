"""WordPiece, the textbook way: longest-match-first encoding and likelihood-scored training.

WordPiece builds its vocabulary bottom-up like BPE, but the artifact is only a
vocabulary (no merge list), and encoding never replays training: each word is
cut greedily, longest vocabulary entry first (`encode_word`). From the start of
the word take the longest vocabulary entry (pieces after the first carry the
``##`` continuation prefix), continue from where it ended, and if no entry
matches at some position the *whole word* becomes the unknown token. There is
no backtracking: with ``{a, ab, ##bc}`` the word ``abc`` takes ``ab`` and then
fails on ``c``, although ``a`` + ``##bc`` would have worked.

**Training.** A word is first cut into characters, the first one plain and
every later one with ``##`` (``"abc"`` -> ``a ##b ##c``). Each step merges
one adjacent pair everywhere and adds the merged string to the vocabulary
(``a`` + ``##b`` -> ``ab``; ``##b`` + ``##c`` -> ``##bc``). Two scores pick
the pair:

- ``score="likelihood"`` (default): f(xy) / (f(x) * f(y)), where f counts
  pair and symbol occurrences in the current segmentation of the corpus,
  weighted by word frequency. This is the score usually given for WordPiece
  (log of it = PMI up to a constant). It rewards pairs whose parts rarely
  occur apart: with f(ab)=6, f(a)=f(b)=10 and f(qu)=2, f(q)=2, f(u)=10,
  BPE merges (a, b) (6 > 2) but WordPiece merges (q, u) (0.1 > 0.06).
- ``score="frequency"``: f(xy), as BPE. **This is what HF ``tokenizers``'
  ``WordPieceTrainer`` does**: it is a thin wrapper around its
  ``BpeTrainer`` with ``continuing_subword_prefix="##"``, converted to a
  WordPiece vocabulary at the end; no likelihood score is computed anywhere.
  With the same order of initial symbols (see below), ``score="frequency"``
  reproduces HF's vocabulary token for token and ID for ID
  (``tests/wordpiece/test_parity_hf.py`` checks it on the bundled corpus).

**Tie rule** (both scores): the highest score wins; among equal scores the
pair that occurs more often; then the pair whose left part has the smaller
vocabulary ID, then the smaller right-part ID. IDs are assigned in creation
order: special tokens, then characters by code point, then their ``##``
forms by code point, then merged strings in the order they were made. For
``score="frequency"`` this is exactly HF's rule (highest count, then the
smallest pair of IDs). HF, however, assigns the IDs of the ``##`` forms in
the iteration order of a Rust ``HashMap``, which is seeded randomly in each
process, so HF's own vocabulary changes from run to run wherever a tie
involves them (measured: 4-15 of 8,000 tokens differ between two runs on the
bundled corpus). Pass ``initial=`` with HF's order to reproduce a given HF run.

The likelihood score is compared as a Python float (the correctly rounded
value of the exact fraction, so the order never inverts; two different
fractions closer than one part in 2**53 count as a tie and fall to the
next rule). Training stops at ``vocab_size`` entries or when no pair
occurs at least ``min_frequency`` times. A merge whose string is already in
the vocabulary reuses that entry's ID and does not grow it, as in HF. With
words split into single characters this happens only when a special token
spells the merged string, or when words contain the prefix characters
(``#`` + ``###`` gives ``##``); BERT's pre-tokenizer isolates ``#``, so
neither occurs with its specials. (A string such as ``abc`` cannot be built
as ``ab`` + ``##c`` in one word and ``a`` + ``##bc`` in another: until it
exists, no merge has crossed its edges, so the merges inside it happened in
the global order in every word.) When it does happen, HF and this module
part ways: HF's trainer never clears the count of a pair it has merged, so
a pair rebuilt later by a reused ID comes back with its old count added,
and is merged only in some words; here counts are exact. Found by a
property test on words such as ``"a#a"``; it cannot arise after BERT's
pre-tokenizer.

`reference_train` recounts everything every step; `toklab.wordpiece.trainer.train_vocab`
is the fast version and must return the same list. The validation both share is
in `prepare`, so the printed body of `reference_train` is the algorithm.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

__all__ = ["Score", "encode_word", "split_word", "initial_vocab", "prepare", "join", "merge_symbols", "reference_train"]

Score = Literal["likelihood", "frequency"]


def encode_word(
    word: str,
    vocab: Mapping[str, object] | set[str] | Sequence[str],
    *,
    unk_token: str = "[UNK]",
    prefix: str = "##",
    max_input_chars_per_word: int = 100,
) -> list[str]:
    """Cut one word longest-match-first; any failure makes the whole word ``unk_token``.

    At each position try the longest remaining substring first and shorten it
    one character at a time until it is in the vocabulary (with ``prefix``
    unless it starts the word). If nothing matches, return ``[unk_token]``
    for the whole word: the pieces found so far are dropped, because a partial
    answer would silently misrepresent the word. Words longer than
    ``max_input_chars_per_word`` characters are ``[unk_token]`` without a search.
    """
    if len(word) > max_input_chars_per_word:
        return [unk_token]
    pieces: list[str] = []
    start = 0
    while start < len(word):
        piece = None
        end = len(word)
        while end > start:
            candidate = word[start:end] if start == 0 else prefix + word[start:end]
            if candidate in vocab:
                piece = candidate
                break
            end -= 1
        if piece is None:
            return [unk_token]  # no backtracking: the whole word fails
        pieces.append(piece)
        start = end
    return pieces


def split_word(word: str, prefix: str = "##") -> list[str]:
    """A word as training starts it: first character plain, every later one prefixed.

    ``"abc"`` -> ``["a", "##b", "##c"]``.
    """
    return [word[0]] + [prefix + ch for ch in word[1:]]


def initial_vocab(words: Iterable[str], special_tokens: Sequence[str] = (), prefix: str = "##") -> list[str]:
    """The vocabulary before the first merge, in ID order.

    Special tokens (in the given order, duplicates dropped), then every
    character of the corpus by code point, then the ``prefix`` form of every
    character that occurs after a word's first position, by code point. Every
    character gets a plain entry even if it never starts a word, as in HF.
    """
    chars: set[str] = set()
    continued: set[str] = set()
    for word in words:
        chars.update(word)
        continued.update(word[1:])
    vocab = list(dict.fromkeys(special_tokens))
    seen = set(vocab)
    for token in sorted(chars) + [prefix + ch for ch in sorted(continued)]:
        if token not in seen:
            seen.add(token)
            vocab.append(token)
    return vocab


def prepare(
    words: Mapping[str, int],
    vocab_size: int,
    special_tokens: Sequence[str],
    score: str,
    min_frequency: int,
    prefix: str,
    initial: Sequence[str] | None,
) -> tuple[list[str], dict[str, int], list[tuple[str, int]]]:
    """Validate the arguments; return the initial vocabulary, its index and the words in a fixed order."""
    if score not in ("likelihood", "frequency"):
        raise ValueError(f"score must be 'likelihood' or 'frequency', got {score!r}")
    if not prefix:
        raise ValueError("prefix must be a non-empty string such as '##'")
    items = sorted((w, c) for w, c in words.items() if w and c > 0)
    if not items:
        raise ValueError("the training corpus is empty (no words left after normalization and pre-tokenization)")
    if initial is None:
        vocab = initial_vocab((w for w, _ in items), special_tokens, prefix)
    else:
        vocab = list(initial)
        if len(set(vocab)) != len(vocab):
            dup = next(t for t, n in Counter(vocab).items() if n > 1)
            raise ValueError(f"initial vocabulary lists {dup!r} twice")
        given = set(vocab)
        missing = [t for t in initial_vocab((w for w, _ in items), special_tokens, prefix) if t not in given]
        if missing:
            raise ValueError(f"initial vocabulary lacks {len(missing)} required entries, e.g. {missing[:5]!r}")
    n_special = len(dict.fromkeys(special_tokens))
    if vocab_size < len(vocab):
        raise ValueError(
            f"vocab_size={vocab_size} is too small: the {n_special} special tokens and "
            f"{len(vocab) - n_special} characters (plain and {prefix!r}-prefixed) of the corpus "
            f"already need {len(vocab)} entries; use vocab_size >= {len(vocab)}"
        )
    if min_frequency < 0:
        raise ValueError(f"min_frequency must be >= 0, got {min_frequency}")
    return vocab, {t: i for i, t in enumerate(vocab)}, items


def join(left: str, right: str, prefix: str) -> str:
    """The string a merge creates: the right part loses its continuation prefix."""
    return left + (right[len(prefix) :] if right.startswith(prefix) else right)


def merge_symbols(word: list[int], a: int, b: int, new: int) -> list[int]:
    """Replace each non-overlapping (a, b), scanning left to right (``a a a`` -> ``aa a``)."""
    out: list[int] = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and word[i] == a and word[i + 1] == b:
            out.append(new)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


def reference_train(
    words: Mapping[str, int],
    vocab_size: int,
    *,
    special_tokens: Sequence[str] = (),
    score: Score = "likelihood",
    min_frequency: int = 1,
    prefix: str = "##",
    initial: Sequence[str] | None = None,
) -> list[str]:
    """Learn a WordPiece vocabulary (in ID order) from word counts; recounts each step.

    ``words`` maps pre-tokenized words to counts, e.g. ``{"low": 5, "lower": 2}``.
    Each step counts every symbol and every adjacent pair (weighted by word
    count), scores the pairs that occur at least ``min_frequency`` times, and
    merges the best one everywhere (tie rule in the module docstring).
    """
    vocab, index, items = prepare(
        words, vocab_size, special_tokens, score, min_frequency, prefix, initial
    )
    corpus = [([index[s] for s in split_word(w, prefix)], c) for w, c in items]
    while len(vocab) < vocab_size:
        symbols: Counter = Counter()
        pairs: Counter = Counter()
        for word, c in corpus:
            for s in word:
                symbols[s] += c
            for pair in zip(word, word[1:]):
                pairs[pair] += c
        eligible = [p for p, n in pairs.items() if n >= min_frequency]
        if not eligible:
            break

        def rank(p: tuple[int, int]) -> tuple:  # larger is better
            n = pairs[p]
            value = n if score == "frequency" else n / (symbols[p[0]] * symbols[p[1]])
            return (value, n, -p[0], -p[1])

        a, b = max(eligible, key=rank)
        token = join(vocab[a], vocab[b], prefix)
        if token not in index:
            index[token] = len(vocab)
            vocab.append(token)
        corpus = [(merge_symbols(word, a, b, index[token]), c) for word, c in corpus]
    return vocab
