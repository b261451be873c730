"""BPE by hand: learn merges from a small corpus with a tie, and encode a word with given ranks.

Both answers come from `toklab.bpe.reference_train` and `toklab.bpe.reference_encode`.
The wrong methods beside them are the ones interviews catch: breaking a tie the other
way, ignoring word counts, counting once instead of after every merge; and, for
encoding, merging the pair that is most frequent *in the input* (the rank-vs-frequency
trap), the leftmost known pair, or the longest vocabulary entry.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence

from ... import bpe
from .problem import Mistake, Part, Problem, first_difference, read_merges, read_tokens, show_merges, show_tokens

__all__ = ["random_corpus", "train_problem", "encode_problem", "encode_steps", "recount_encode",
           "leftmost_encode", "longest_match", "encoding_slips", "trained_merges", "ATTEMPTS"]

#: How many random draws a generator may make before it gives up (it never needs many).
ATTEMPTS = 5000
LETTERS = "abcdeghiklmnoprstu"

Merge = tuple[str, str]


def random_corpus(rng: random.Random, alphabet: str, words: tuple[int, int] = (3, 5),
                  length: tuple[int, int] = (3, 6), count: tuple[int, int] = (1, 5)) -> dict[str, int]:
    """A few distinct random words over ``alphabet``, each with a count."""
    n = rng.randint(*words)
    corpus: dict[str, int] = {}
    while len(corpus) < n:
        word = "".join(rng.choice(alphabet) for _ in range(rng.randint(*length)))
        corpus.setdefault(word, rng.randint(*count))
    return corpus


def _symbols(corpus: Mapping[str, int]) -> dict[tuple[str, ...], int]:
    return {tuple(w): n for w, n in corpus.items()}


def _corpus_text(corpus: Mapping[str, int]) -> str:
    return ", ".join(f"{w}: {n}" for w, n in corpus.items())


def _counts_text(counts: Mapping[Merge, int], limit: int = 6) -> str:
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ", ".join(f"({a}, {b})={n}" for (a, b), n in ranked[:limit])
    return shown + (", ..." if len(ranked) > limit else "")


# ---------------------------------------------------------------------------- training


def _train_first_seen(corpus: Mapping[str, int], k: int) -> list[Merge]:
    """WRONG on purpose: a tie goes to the pair met first in the corpus (what Counter.most_common does)."""
    words, merges = _symbols(corpus), []
    for _ in range(k):
        counts = bpe.pair_counts(words)
        if not counts:
            break
        pair = counts.most_common(1)[0][0]
        merges.append(pair)
        words = {bpe.merge_pair(w, pair): n for w, n in words.items()}
    return merges


def _rank_once(corpus: Mapping[str, int], k: int) -> list[Merge]:
    """WRONG on purpose: the k most frequent pairs of the first count, never recounted."""
    counts = bpe.pair_counts(_symbols(corpus))
    return sorted(counts, key=lambda p: (-counts[p], p))[:k]


def train_problem(rng: random.Random, topic: str, seed: int) -> Problem:
    """``bpe-train``: the first k merges of a small corpus in which some step has a tie that matters."""
    for _ in range(ATTEMPTS):
        alphabet = "".join(sorted(rng.sample(LETTERS, 3)))
        corpus, k = random_corpus(rng, alphabet), rng.choice((3, 4))
        steps: list[tuple[int, Counter, Merge]] = []
        merges = bpe.reference_train(_symbols(corpus), k, on_step=lambda s, c, p: steps.append((s, c, p)))
        tied = [s for s, c, _ in steps if sum(v == max(c.values()) for v in c.values()) > 1]
        largest = bpe.reference_train(_symbols(corpus), k, tie_break="largest")
        unweighted = bpe.reference_train(_symbols(dict.fromkeys(corpus, 1)), k)
        if len(merges) == k and tied and largest != merges and unweighted != merges:
            break
    else:  # pragma: no cover - the tests run thousands of seeds
        raise RuntimeError("no BPE training problem found; this is a bug in toklab.teaching.drills")

    def step_of(merge_list: Sequence[Merge]) -> int:
        return next(i for i, (a, b) in enumerate(zip(merge_list, merges)) if a != b) + 1

    tie_note = (f"a tie was broken the wrong way (first at step {step_of(largest)}). Among pairs with the "
                "same count take the smallest (left symbol first, compared as strings).")
    mistakes = (
        Mistake("Tie broken the wrong way", largest, tie_note),
        Mistake("Tie broken by first occurrence", _train_first_seen(corpus, k), tie_note.replace(
            "the wrong way", "by which pair appears first") + " Corpus order is not a rule a file can reproduce."),
        Mistake("Word counts ignored", unweighted,
                "each distinct word was counted once. Weight every pair by its word's count "
                f"(in {next(iter(corpus))!r}, each pair counts {corpus[next(iter(corpus))]} times)."),
        Mistake("Counted only once", _rank_once(corpus, k),
                "the merges were read off the first count. Recount after every merge: merged symbols form "
                "new pairs and old pairs lose occurrences."),
    )

    def hint(got: object) -> str:
        if not isinstance(got, list) or not got:
            return "give the merges as a list of pairs"
        if len(got) != k:
            return f"give exactly {k} merges (you gave {len(got)})"
        s = step_of(got) if got != merges else k
        _, counts, pair = steps[s - 1]
        return f"merge {s} is wrong. The counts at that step are: {_counts_text(counts)}."

    solution = "\n".join(
        f"Step {s}: {_counts_text(c)} -> merge {a}+{b} (count {c[(a, b)]}"
        + ("; a tie, so the smallest pair" if s in tied else "") + ")"
        for s, c, (a, b) in steps
    )
    prompt = (
        "BPE training by hand.\n"
        f"Corpus (word: count): {_corpus_text(corpus)}\n"
        "Every word starts as single letters (no end-of-word marker). At each step, count every adjacent "
        "pair of symbols in every word, weighted by the word's count; merge the most frequent pair everywhere "
        "(left to right, without overlaps) and record it. Break a tie by the smallest pair: compare the left "
        "symbols as strings, then the right ones, so ('a', 'bc') < ('ab', 'a') < ('b', 'a').\n"
        f"What are the first {k} merges, in order?"
    )
    return Problem(topic, seed, prompt, (Part("merges", merges, mistakes, hint=hint).live(),), solution,
                   'the merges in order, e.g. "a+b, ab+c"', {"corpus": corpus, "num_merges": k},
                   read_merges, show_merges)


# ---------------------------------------------------------------------------- encoding


def encode_steps(word: str, merges: Sequence[Merge]) -> list[tuple[list[str], Merge | None]]:
    """The symbols before each merge of `reference_encode`'s loop and the pair it merges (None at the end)."""
    rank = {p: i for i, p in enumerate(merges)}
    symbols, steps = list(word), []
    while True:
        known = [p for p in zip(symbols, symbols[1:]) if p in rank]
        if not known:
            steps.append((symbols, None))
            return steps
        pair = min(known, key=rank.__getitem__)
        steps.append((symbols, pair))
        symbols = list(bpe.merge_pair(symbols, pair))


def recount_encode(word: str, merges: Sequence[Merge]) -> list[str]:
    """WRONG on purpose: merges the known pair that occurs most often in the input (ties: lower rank)."""
    rank = {p: i for i, p in enumerate(merges)}
    symbols = list(word)
    while True:
        counts = Counter(p for p in zip(symbols, symbols[1:]) if p in rank)
        if not counts:
            return symbols
        pair = min(counts, key=lambda p: (-counts[p], rank[p]))
        symbols = list(bpe.merge_pair(symbols, pair))


def leftmost_encode(word: str, merges: Sequence[Merge]) -> list[str]:
    """WRONG on purpose: merges the leftmost adjacent pair that is in the table, whatever its rank."""
    known = set(merges)
    symbols = list(word)
    while True:
        at = next((i for i in range(len(symbols) - 1) if (symbols[i], symbols[i + 1]) in known), None)
        if at is None:
            return symbols
        symbols[at:at + 2] = [symbols[at] + symbols[at + 1]]


def longest_match(word: str, vocab: set[str]) -> list[str]:
    """WRONG for BPE on purpose: the longest vocabulary entry at each position (WordPiece's rule)."""
    out, i = [], 0
    while i < len(word):
        j = max(j for j in range(i + 1, len(word) + 1) if word[i:j] in vocab or j == i + 1)
        out.append(word[i:j])
        i = j
    return out


def encoding_slips(word: str, merges: Sequence[Merge]) -> tuple[Mistake, Mistake]:
    """What the two classic wrong encoders make of ``word``: counting pairs, and the leftmost known pair."""
    return (
        Mistake("Frequency instead of rank", recount_encode(word, merges),
                "you merged the pair that occurs most often in this word. Encoding counts nothing: "
                "it applies the applicable merge with the lowest rank, again and again."),
        Mistake("Leftmost pair instead of lowest rank", leftmost_encode(word, merges),
                "you merged the leftmost pair that is in the table. The lowest rank wins wherever it is."),
    )


def _merges_text(merges: Sequence[Merge]) -> str:
    return "\n".join(f"  rank {r}: {a}+{b}" for r, (a, b) in enumerate(merges))


def trained_merges(rng: random.Random, alphabet: str, k: tuple[int, int]) -> list[Merge]:
    """A merge list as training makes one (so every merged symbol's parts exist earlier)."""
    while True:
        corpus = random_corpus(rng, alphabet, words=(3, 5), length=(4, 7))
        n = rng.randint(*k)
        merges = bpe.reference_train(_symbols(corpus), n)
        if len(merges) == n and any(len(a) > 1 or len(b) > 1 for a, b in merges):
            return merges


def encode_problem(rng: random.Random, topic: str, seed: int) -> Problem:
    """``bpe-encode``: a word whose most frequent known pair is not its lowest-ranked one."""
    for _ in range(ATTEMPTS):
        alphabet = "".join(sorted(rng.sample(LETTERS, 3)))
        merges = trained_merges(rng, alphabet, (4, 6))
        word = "".join(rng.choice(alphabet) for _ in range(rng.randint(6, 9)))
        tokens = bpe.reference_encode(list(word), merges)
        merged = len(encode_steps(word, merges)) - 1
        if len(tokens) >= 2 and merged >= 3 and recount_encode(word, merges) != tokens:
            break
    else:  # pragma: no cover
        raise RuntimeError("no BPE encoding problem found; this is a bug in toklab.teaching.drills")
    vocab = set(alphabet) | {a + b for a, b in merges}
    steps = encode_steps(word, merges)
    assert steps[-1][0] == tokens  # the worked solution replays reference_encode exactly
    rank = {p: i for i, p in enumerate(merges)}
    mistakes = encoding_slips(word, merges) + (
        Mistake("Longest match instead of merges", longest_match(word, vocab),
                "you took the longest vocabulary entry at each position (WordPiece's rule). BPE replays "
                "the merges by rank, and the result need not contain the longest tokens."),
    )

    def hint(got: object) -> str:
        if not isinstance(got, list) or "".join(map(str, got)) != word:
            return f"the tokens must spell the word {word!r} exactly, in order"
        return (f"{first_difference(got, tokens)}. Replay the merges: find every adjacent pair in the table, merge "
                "the one with the lowest rank, repeat")

    lines = []
    for symbols, pair in steps:
        if pair is None:
            lines.append(f"{' '.join(symbols)}: no adjacent pair is in the table, done.")
        else:
            known = sorted({p for p in zip(symbols, symbols[1:]) if p in rank}, key=rank.__getitem__)
            options = ", ".join(f"{a}+{b} (rank {rank[(a, b)]})" for a, b in known)
            lines.append(f"{' '.join(symbols)}: pairs in the table {options} -> merge {pair[0]}+{pair[1]}")
    prompt = (
        "BPE encoding with frozen ranks.\n"
        f"Merges, in the order they were learned:\n{_merges_text(merges)}\n"
        f"Encode the word {word!r}, starting from single letters.\n"
        "What are its tokens?"
    )
    return Problem(topic, seed, prompt, (Part("tokens", tokens, mistakes, hint=hint).live(),), "\n".join(lines),
                   'the tokens separated by spaces, e.g. "ab c"', {"merges": merges, "word": word},
                   read_tokens, show_tokens)
