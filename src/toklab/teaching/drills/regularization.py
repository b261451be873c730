"""Subword regularization by hand: what BPE-dropout and Unigram sampling can vary, and what they cannot.

``bpe-dropout`` gives a merge list and a word. BPE-dropout (`toklab.bpe.merge_dropout`)
skips each applicable merge, at each step and each position, with probability p; the
lowest-ranked merge not skipped is applied, and when all are skipped encoding stops. So
every segmentation of the word into tokens of the vocabulary (letters and merge results)
can come out, and nothing else: `dropout_outcomes` finds them by following every choice a
run can make. The problem asks for the tokens at p = 0, how many segmentations can come
out, and the fewest tokens among them (which can be fewer than at p = 0: skipping a merge
can let a longer token form). The wrong models beside it: dropping merges from the table
(the same merge then goes everywhere or nowhere), only splitting the p = 0 tokens back
along their merges, and every cut of the word.

``unigram-sampling`` gives a unigram model and a text. Sampling draws a segmentation z
with probability P(z)^α / Σ P(z')^α: α = 1 is the model's posterior, α = 0 is uniform over
the segmentations, large α approaches Viterbi; the segmentations that can come out are the
same for every α. It asks for the number of segmentations and the probability of the most
probable one at α = 1 and at another α.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping, Sequence

from ... import bpe, unigram
from .bpe import ATTEMPTS, LETTERS, encode_steps, encoding_slips, trained_merges
from .problem import (SIG_DIGITS, Mistake, Part, Problem, read_ints, read_numbers, read_tokens, show_number,
                      show_tokens, split_parts)
from .unigram import random_model

__all__ = ["dropout_problem", "sampling_problem", "dropout_outcomes", "table_subsets_outcomes",
           "split_back_outcomes", "sampling_probability"]

Merge = tuple[str, str]


def dropout_outcomes(word: str, merges: Sequence[Merge]) -> set[tuple[str, ...]]:
    """Every token sequence BPE-dropout (0 < p < 1) can output for ``word``.

    A run's state is its current symbols. At each step any applicable merge occurrence can
    be the one applied (all lower-ranked ones and the equal-ranked ones to its left skipped,
    it not), or the run can stop (all skipped); so the outcomes are every state reachable
    by applying merge occurrences in any order.
    """
    known = set(merges)
    start = tuple(word)
    seen, stack = {start}, [start]
    while stack:
        state = stack.pop()
        for i in range(len(state) - 1):
            if (state[i], state[i + 1]) in known:
                nxt = state[:i] + (state[i] + state[i + 1],) + state[i + 2:]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
    return seen


def table_subsets_outcomes(word: str, merges: Sequence[Merge]) -> set[tuple[str, ...]]:
    """WRONG model on purpose: dropout as deterministic BPE with some merges removed from the table."""
    return {tuple(bpe.reference_encode(list(word), [m for m, keep in zip(merges, mask) if keep]))
            for mask in itertools.product((False, True), repeat=len(merges))}


def split_back_outcomes(word: str, merges: Sequence[Merge]) -> set[tuple[str, ...]]:
    """WRONG model on purpose: the p = 0 tokens, each either kept or split back along the merges that built it."""
    # replay the p = 0 run on (token, span) items, recording which two spans each merge joined
    items = [(ch, (i, i + 1)) for i, ch in enumerate(word)]
    children: dict[tuple[int, int], tuple[tuple[int, int], tuple[int, int]]] = {}
    for _, pair in encode_steps(word, merges):
        if pair is None:
            break
        out, k = [], 0
        while k < len(items):  # every occurrence, left to right without overlaps (as bpe.merge_pair)
            if k + 1 < len(items) and (items[k][0], items[k + 1][0]) == pair:
                span = (items[k][1][0], items[k + 1][1][1])
                children[span] = (items[k][1], items[k + 1][1])
                out.append((items[k][0] + items[k + 1][0], span))
                k += 2
            else:
                out.append(items[k])
                k += 1
        items = out
    spans = [span for _, span in items]

    def cuts(span: tuple[int, int]) -> list[tuple[str, ...]]:
        whole = [(word[span[0]:span[1]],)]
        if span not in children:
            return whole
        left, right = children[span]
        return whole + [a + b for a in cuts(left) for b in cuts(right)]

    return {tuple(itertools.chain.from_iterable(choice)) for choice in itertools.product(*map(cuts, spans))}


def _merges_text(merges: Sequence[Merge]) -> str:
    return ", ".join(f"{a}+{b}" for a, b in merges)


def dropout_problem(rng: random.Random, topic: str, seed: int) -> Problem:
    """``bpe-dropout``: the p = 0 tokens, how many segmentations dropout can output, and the fewest tokens."""
    want_shorter = rng.random() < 0.4
    for _ in range(ATTEMPTS):
        alphabet = "".join(sorted(rng.sample(LETTERS, rng.choice((2, 3)))))
        merges = trained_merges(rng, alphabet, (3, 5))
        word = "".join(rng.choice(alphabet) for _ in range(rng.randint(5, 7)))
        tokens = bpe.reference_encode(list(word), merges)
        outcomes = dropout_outcomes(word, merges)
        fewest = min(map(len, outcomes))
        table = table_subsets_outcomes(word, merges)
        merged = len(encode_steps(word, merges)) - 1
        if (merged >= 2 and 4 <= len(outcomes) <= 24 and len(table) != len(outcomes)
                and (fewest < len(tokens)) == want_shorter):
            break
    else:  # pragma: no cover
        raise RuntimeError("no BPE-dropout problem found; this is a bug in toklab.teaching.drills")
    assert set(outcomes) >= table | split_back_outcomes(word, merges)
    vocab = set(word) | {a + b for a, b in merges}
    n = len(outcomes)
    token_part = Part("tokens at p = 0", tokens, encoding_slips(word, merges), hint=lambda got: (
        f"with p = 0 nothing is skipped: encode {word!r} as BPE does, lowest rank first"))
    count_part = Part("segmentations", n, (
        Mistake("Dropout as a smaller merge table", len(table),
                "BPE-dropout does not remove merges from the table: it skips each candidate at each step and "
                "each position on its own, so the same merge can apply at one place and not at another."),
        Mistake("Only splits of the p = 0 tokens", len(split_back_outcomes(word, merges)),
                "skipping a merge can let another one apply instead, giving tokens the p = 0 encoding does not "
                "contain. Any segmentation into tokens of the vocabulary can come out."),
        Mistake("Every cut of the word", 2 ** (len(word) - 1),
                "a token BPE-dropout outputs is still a token of the vocabulary (a letter or a merge result): "
                "cuts that need other strings cannot come out."),
    ), hint=lambda got: "count the segmentations of the word into tokens of the vocabulary (letters and "
                        "merge results): c_i = sum of c_j over every token word[j:i]")
    fewest_part = Part("fewest tokens", fewest, (
        Mistake("The p = 0 encoding is not the shortest", len(tokens),
                "skipping a merge can let a longer token form: look for the segmentation into vocabulary tokens "
                "with the fewest tokens."),
        Mistake("One token", 1, "only a word that is itself a token of the vocabulary comes out whole."),
    ), hint=lambda got: "the fewest tokens of any segmentation into tokens of the vocabulary")
    ranked = sorted(outcomes, key=lambda o: (len(o), o))
    shortest = [o for o in ranked if len(o) == fewest]
    counts = [1] + [0] * len(word)
    for i in range(1, len(word) + 1):
        counts[i] = sum(counts[j] for j in range(i) if word[j:i] in vocab)
    solution = (
        f"p = 0: {show_tokens(tokens)}.\n"
        f"The vocabulary: {', '.join(sorted(vocab, key=lambda t: (len(t), t)))}. Any segmentation of "
        f"{word!r} into these can come out (build each token with its merges, skip everything else, then "
        f"skip all): c0 = 1, c_i = sum of c_j over the tokens word[j:i]: "
        + ", ".join(f"c{i} = {c}" for i, c in enumerate(counts) if i) + f", so {n} segmentations.\n"
        f"Fewest tokens: {fewest} ({' or '.join(show_tokens(o) for o in shortest[:3])})"
        + (f", fewer than the {len(tokens)} at p = 0." if fewest < len(tokens) else ".")
        + "\nWhat cannot vary: the text the tokens spell, and that every token is in the vocabulary."
    )
    prompt = (
        "BPE-dropout.\n"
        f"Merges, in rank order: {_merges_text(merges)}\n"
        f"Word: {word!r}, starting from single letters.\n"
        "BPE-dropout encodes as BPE does (apply the lowest-ranked merge among the adjacent pairs, again and "
        "again), except that at every step each applicable merge, at each position, is skipped with "
        "probability p: the lowest-ranked one not skipped is applied, and when all are skipped, encoding stops.\n"
        "Give the tokens with p = 0, the number of different token sequences BPE-dropout can output for this "
        "word when 0 < p < 1, and the fewest tokens any of them has."
    )

    def read(s: str) -> tuple:
        toks, count, least = split_parts(s, 3)
        return read_tokens(toks), read_ints(count, 1)[0], read_ints(least, 1)[0]

    return Problem(topic, seed, prompt, (token_part.live(), count_part.live(), fewest_part.live()), solution,
                   'the tokens at p = 0, then ";" the number of segmentations, then ";" the fewest tokens, '
                   'e.g. "ab c ; 5 ; 2"', {"merges": merges, "word": word}, read,
                   lambda a: f"{show_tokens(a[0])} ; {a[1]} ; {a[2]}")


# ---------------------------------------------------------------------------- Unigram sampling


def sampling_probability(text: str, probs: Mapping[str, float], alpha: float,
                         segmentation: Sequence[str]) -> float:
    """P(segmentation)^α / Σ P(z)^α over every segmentation z of ``text`` (α = 0: uniform)."""
    weights = [math.prod(probs[p] for p in z) ** alpha for z in unigram.segmentations(text, probs)]
    return math.prod(probs[p] for p in segmentation) ** alpha / sum(weights)


def sampling_problem(rng: random.Random, topic: str, seed: int) -> Problem:
    """``unigram-sampling``: how many segmentations, and the chance of the best one at α = 1 and another α."""
    alpha = rng.choice((0, 2))
    for _ in range(ATTEMPTS):
        text, probs = random_model(rng)
        paths = sorted(unigram.segmentations(text, probs), key=lambda z: -math.prod(probs[p] for p in z))
        values = [math.prod(probs[p] for p in z) for z in paths]
        if 3 <= len(paths) <= 7 and values[0] > values[1] * 1.05:
            break
    else:  # pragma: no cover
        raise RuntimeError("no Unigram sampling problem found; this is a bug in toklab.teaching.drills")
    best = paths[0]
    assert best == unigram.reference_viterbi(text, {p: math.log(v) for p, v in probs.items()})
    n = len(paths)
    p1 = sampling_probability(text, probs, 1, best)
    pa = sampling_probability(text, probs, alpha, best)
    n_part = Part("segmentations", n, (
        Mistake("Every cut of the text", 2 ** (len(text) - 1),
                "a sample uses only the model's pieces: cuts into strings that are not pieces cannot come out."),
    ), hint=lambda got: "list the segmentations of the text into the model's pieces")
    p1_part = Part("P(best) at α = 1", p1, (
        Mistake("Forgot to normalize", values[0],
                "P(z) is the segmentation's probability among all strings; the sampler divides by the sum over "
                "the text's segmentations (P(x), the forward value)."),
        Mistake("Uniform", 1 / n, "that is α = 0; at α = 1 each segmentation comes out in proportion to P(z)."),
    ), numeric=True, hint=lambda got: "P(best) / sum of P(z) over every segmentation")
    if alpha == 0:
        pa_mistakes = (
            Mistake("Read α backwards", 1.0,
                    "α = 0 does not pick the best segmentation: P(z)^0 = 1 for every z, so all are equally likely. "
                    "It is large α that approaches Viterbi."),
            Mistake("Kept α = 1", p1, "raise every P(z) to the power α before normalizing."),
        )
    else:
        root = sampling_probability(text, probs, 1 / alpha, best)
        pa_mistakes = (
            Mistake("Read α as a temperature", root,
                    "α multiplies the log-probabilities (P(z)^α): α = 2 sharpens the distribution toward the best "
                    "segmentation; you used P(z)^(1/2), which flattens it."),
            Mistake("Forgot to normalize", values[0] ** alpha,
                    "divide P(best)^α by the sum of P(z)^α over every segmentation."),
            Mistake("Kept α = 1", p1, "raise every P(z) to the power α before normalizing."),
        )
    pa_part = Part(f"P(best) at α = {alpha}", pa, pa_mistakes, numeric=True,
                   hint=lambda got: f"P(best)^{alpha} / sum of P(z)^{alpha} over every segmentation")
    listing = "\n".join(f"  {' '.join(z)}: {' x '.join(f'{probs[p]:.2f}' for p in z)} = {show_number(v)}"
                        for z, v in zip(paths, values))
    total = sum(values)
    solution = (
        f"The {n} segmentations and P(z):\n{listing}\n"
        f"α = 1: {show_number(values[0])} / {show_number(total)} = {show_number(p1)}.\n"
        + (f"α = 0: every P(z)^0 = 1, so each of the {n} comes out with probability 1/{n} = {show_number(pa)}.\n"
           if alpha == 0 else
           f"α = 2: {show_number(values[0] ** 2)} / {show_number(sum(v * v for v in values))} = {show_number(pa)}: "
           "sharper than at α = 1.\n")
        + "What cannot vary: the segmentations that can come out (every one has P(z)^α > 0), and that each "
        "spells the text with the model's pieces; α only changes how often each comes out."
    )
    prompt = (
        "Subword regularization (Unigram sampling).\n"
        f"Pieces of a unigram model (their probabilities sum to 1): "
        + ", ".join(f"p({p})={v:.2f}" for p, v in probs.items()) + "\n"
        f"Text: {text!r}. P(z), the probability of a segmentation z, is the product of its pieces' "
        "probabilities. Sampling draws a segmentation z of the text with probability P(z)^α / Σ P(z')^α, the "
        "sum over every segmentation z' of the text.\n"
        f"Give the number of segmentations, and the probability that a sample is the most probable segmentation "
        f"with α = 1 and with α = {alpha}."
    )

    def read(s: str) -> tuple:
        count, a, b = split_parts(s, 3)
        return read_ints(count, 1)[0], read_numbers(a, 1)[0], read_numbers(b, 1)[0]

    return Problem(topic, seed, prompt, (n_part.live(), p1_part.live(), pa_part.live()), solution,
                   f'three numbers separated by ";": segmentations ; P(best) at α = 1 ; P(best) at α = {alpha} '
                   f'(probabilities to {SIG_DIGITS} significant digits)',
                   {"text": text, "probs": probs, "alpha": alpha}, read,
                   lambda a: f"{a[0]} ; {show_number(a[1])} ; {show_number(a[2])}")
