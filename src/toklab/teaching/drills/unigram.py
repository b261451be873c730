"""Unigram by hand: the best segmentation (Viterbi) and the forward table, on random models.

The answers come from `toklab.unigram.reference_viterbi` (on the logs of the
probabilities) and `toklab.unigram.reference_forward`. Each problem's best path is
unique by a clear margin, and greedy longest-match segmentation does not find it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

from ... import unigram
from .bpe import ATTEMPTS, LETTERS
from .problem import (SIG_DIGITS, Mistake, Part, Problem, read_numbers, read_tokens, show_number, show_tokens,
                      split_parts)

__all__ = ["random_model", "viterbi_problem", "forward_problem", "viterbi_values", "greedy_longest"]


def random_model(rng: random.Random) -> tuple[str, dict[str, float]]:
    """A text of 4-6 letters and a unigram model over its letters and a few of its substrings.

    The probabilities are whole hundredths that sum to 1 (a distribution, as a trained model's
    are), each at least 0.02: the stick of 100 hundredths is cut at random points.
    """
    alphabet = "".join(rng.sample(LETTERS, rng.choice((2, 3))))
    text = "".join(rng.choice(alphabet) for _ in range(rng.randint(4, 6)))
    pieces = set(text)
    substrings = sorted({text[i:j] for i in range(len(text)) for j in range(i + 2, min(i + 4, len(text)) + 1)})
    pieces |= set(rng.sample(substrings, min(len(substrings), rng.randint(3, 5))))
    ordered = sorted(pieces, key=lambda p: (len(p), p))
    spare = 100 - 2 * len(ordered)
    cuts = sorted(rng.randint(0, spare) for _ in range(len(ordered) - 1))
    shares = [b - a for a, b in zip([0, *cuts], [*cuts, spare])]
    return text, {p: (2 + k) / 100 for p, k in zip(ordered, shares)}


def _path_prob(pieces: Sequence[str], probs: Mapping[str, float]) -> float:
    return math.prod(probs[p] for p in pieces)


def viterbi_values(text: str, probs: Mapping[str, float]) -> list[float]:
    """The best path's probability into every position (WRONG as a forward table: a max, not a sum)."""
    scores = {p: math.log(v) for p, v in probs.items()}
    return [1.0] + [_path_prob(unigram.reference_viterbi(text[:i], scores), probs) for i in range(1, len(text) + 1)]


def greedy_longest(text: str, probs: Mapping[str, float]) -> list[str]:
    """WRONG on purpose: the longest piece at each position, as WordPiece would do."""
    out, i = [], 0
    while i < len(text):
        j = max(j for j in range(i + 1, len(text) + 1) if text[i:j] in probs)
        out.append(text[i:j])
        i = j
    return out


def _probs_text(probs: Mapping[str, float]) -> str:
    return ", ".join(f"p({p})={v:.2f}" for p, v in probs.items())


def _forward_lines(text: str, probs: Mapping[str, float], f: Sequence[float]) -> list[str]:
    lines = ["f0 = 1"]
    for i in range(1, len(text) + 1):
        terms = [f"f{j}*p({text[j:i]})" for j in range(i) if text[j:i] in probs]
        lines.append(f"f{i} = {' + '.join(terms)} = {show_number(f[i])}")
    return lines


def _segmentations(text: str, probs: Mapping[str, float]) -> list[tuple[float, list[str]]]:
    return sorted(((_path_prob(s, probs), s) for s in unigram.segmentations(text, probs)), key=lambda x: -x[0])


def viterbi_problem(rng: random.Random, topic: str, seed: int) -> Problem:
    """``unigram-viterbi``: the most probable segmentation and its probability."""
    for _ in range(ATTEMPTS):
        text, probs = random_model(rng)
        ranked = _segmentations(text, probs)
        best = unigram.reference_viterbi(text, {p: math.log(v) for p, v in probs.items()})
        clear = len(ranked) > 2 and ranked[0][0] > ranked[1][0] * (1 + 1e-6)
        if clear and best == ranked[0][1] and greedy_longest(text, probs) != best:
            break
    else:  # pragma: no cover
        raise RuntimeError("no Unigram Viterbi problem found; this is a bug in toklab.teaching.drills")
    p_best = _path_prob(best, probs)
    marginal = unigram.reference_forward(text, probs)[-1]
    fewest = min(ranked, key=lambda x: (len(x[1]), -x[0]))[1]
    seg_part = Part("segmentation", best, (
        Mistake("Greedy longest match", greedy_longest(text, probs),
                "taking the longest piece at each position is WordPiece's rule. Viterbi compares the "
                "products of whole paths."),
        Mistake("Fewest pieces", fewest,
                "fewer pieces is not the same as more probable: compare the products of the probabilities."),
    ), hint=lambda got: (f"the pieces must spell {text!r} and be pieces of the model" if
                         not isinstance(got, list) or "".join(map(str, got)) != text else
                         "another segmentation has a larger product; list the paths into each position"))
    prob_part = Part("probability", p_best, (
        Mistake("That is P(x), not the best path", marginal,
                "the sum over every segmentation is the marginal likelihood (forward). The best path's "
                "probability is the product of its pieces' probabilities."),
        Mistake("Added the probabilities", sum(probs[p] for p in best),
                "a path's probability is the product of its pieces' probabilities, not their sum."),
    ), numeric=True, hint=lambda got: "multiply the probabilities of the best path's pieces")
    top = "\n".join(f"  {' '.join(s)}: {' x '.join(f'{probs[p]:.2f}' for p in s)} = {show_number(v)}"
                    for v, s in ranked[:4])
    solution = (f"The most probable segmentations:\n{top}\n"
                f"Best: {' '.join(best)} with probability {show_number(p_best)} "
                f"(P(x) over all {len(ranked)} segmentations is {show_number(marginal)}).")
    prompt = (
        "Unigram segmentation (Viterbi).\n"
        f"Pieces of a unigram model (their probabilities sum to 1): {_probs_text(probs)}\n"
        f"Text: {text!r}. A segmentation's probability is the product of its pieces' probabilities.\n"
        "What is the most probable segmentation, and its probability?"
    )

    def read(s: str) -> tuple[list[str], float]:
        pieces, prob = split_parts(s, 2)
        return read_tokens(pieces), read_numbers(prob, 1)[0]

    return Problem(topic, seed, prompt, (seg_part.live(), prob_part.live()), solution,
                   f'the pieces, then ";" and the probability to {SIG_DIGITS} significant digits, e.g. "ab ab ; 0.1600"',
                   {"text": text, "probs": probs}, read, lambda ans: f"{show_tokens(ans[0])} ; {show_number(ans[1])}")


def forward_problem(rng: random.Random, topic: str, seed: int) -> Problem:
    """``unigram-forward``: the forward values f1..fn (f_i = P(text[:i]) summed over segmentations)."""
    for _ in range(ATTEMPTS):
        text, probs = random_model(rng)
        f = unigram.reference_forward(text, probs)
        v = viterbi_values(text, probs)
        if not math.isclose(f[-1], v[-1], rel_tol=0.01):
            break
    else:  # pragma: no cover
        raise RuntimeError("no Unigram forward problem found; this is a bug in toklab.teaching.drills")
    n = len(text)
    no_fj = [sum(probs[text[j:i]] for j in range(i) if text[j:i] in probs) for i in range(1, n + 1)]
    part = Part("forward values", f[1:], (
        Mistake("Max instead of sum", v[1:],
                "you kept only the best path into each position: that is Viterbi. Forward adds the "
                "probabilities of every path."),
        Mistake("Dropped f_j", no_fj,
                "each term is f_j x p(piece): the probability of reaching position j times the piece from j to i."),
    ), numeric=True, hint=lambda got: (f"give {n} values, f1 to f{n}" if not isinstance(got, list) or len(got) != n
                                       else "f_i sums f_j x p(text[j:i]) over every piece that ends at i"))
    prompt = (
        "Unigram forward algorithm.\n"
        f"Pieces of a unigram model (their probabilities sum to 1): {_probs_text(probs)}\n"
        f"Text: {text!r}. Let f0 = 1 and f_i = the total probability of all segmentations of the first i "
        "letters, summed over the pieces that end at position i: f_i = sum of f_j * p(text[j:i]).\n"
        f"What are f1 to f{n}?"
    )
    return Problem(topic, seed, prompt, (part.live(),), "\n".join(_forward_lines(text, probs, f)),
                   f'{n} numbers separated by spaces, f1 first, to {SIG_DIGITS} significant digits',
                   {"text": text, "probs": probs}, lambda s: read_numbers(s, n),
                   lambda ans: " ".join(show_number(x) for x in ans))
