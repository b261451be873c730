"""The Unigram language model, the textbook way: enumeration and plain loops over tiny inputs.

A Unigram model (Kudo, 2018) stores a table of pieces, each with a
probability, and says that a segmentation ``z = (z1, ..., zk)`` of a string
has probability ``p(z1) * ... * p(zk)``. The string itself has the *marginal*
probability ``P(x)``, the sum over all of its segmentations. The functions
here compute everything by the definitions, so they are exponential or
quadratic and meant for the small examples the book works by hand:

* `segmentations` lists every segmentation; `reference_forward` sums them by
  dynamic programming; `reference_viterbi` finds the best one;
* `reference_expected_counts` is the E-step (each piece's count averaged over
  the posterior of all segmentations: soft EM, not Viterbi); `reference_m_step`
  turns expected counts into new scores (with sentencepiece's Bayesian digamma
  update and its 0.5 cut-off); `reference_em_step` is one ML EM iteration;
* `reference_prune_loss` is how much corpus log-likelihood sentencepiece
  estimates is lost if a piece is removed;
* `reference_seed_pieces` builds the trainer's oversized starting vocabulary
  from frequent substrings, level by level, in plain loops.

Their fast partners, which must agree (``tests/unigram/test_fast_vs_reference.py``):
`Unigram.forward`, `Unigram.viterbi` and `Unigram.expected_counts` (per-text
lattices), and in `toklab.unigram.trainer` the batched `expected_counts`,
`m_step`, `prune_losses` and `seed_pieces` that the trainer runs over every word at once.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any

__all__ = [
    "MIN_EXPECTED_COUNT",
    "segmentations",
    "reference_forward",
    "reference_viterbi",
    "reference_expected_counts",
    "reference_em_step",
    "digamma",
    "reference_m_step",
    "reference_prune_loss",
    "reference_seed_pieces",
]

_NEG_INF = float("-inf")

#: sentencepiece drops a piece whose expected count falls below this in the M-step.
MIN_EXPECTED_COUNT = 0.5


def segmentations(
    text: str, vocab: Iterable[str] | Mapping[str, Any]
) -> Iterator[list[str]]:
    """Every way to cut ``text`` into pieces of ``vocab``, in order of cut points.

    A string of length n has up to 2**(n-1) segmentations, so this is for
    checking the dynamic programs on small words, nothing else.
    """
    pieces = vocab if isinstance(vocab, (set, frozenset, Mapping)) else set(vocab)
    if not text:
        yield []
        return
    for end in range(1, len(text) + 1):
        if text[:end] in pieces:
            for rest in segmentations(text[end:], pieces):
                yield [text[:end], *rest]


def reference_forward(text: str, probs: Mapping[str, float]) -> list[float]:
    """The forward table: ``f[i]`` = P(text[:i]) summed over its segmentations.

    ``f[0] = 1`` and ``f[i] = sum over j < i of f[j] * p(text[j:i])``. This is
    the table the book computes by hand; `Unigram.forward` is the same
    recursion in log space (products of many probabilities underflow).
    """
    f = [1.0] + [0.0] * len(text)
    for end in range(1, len(text) + 1):
        for start in range(end):
            piece = text[start:end]
            if piece in probs:
                f[end] += f[start] * probs[piece]
    return f


def reference_viterbi(text: str, scores: Mapping[str, float]) -> list[str]:
    """The best segmentation: maximise the sum of ``scores`` (log-probabilities).

    ``best[i]`` is the best score of any segmentation of ``text[:i]``. Ties go
    to the earliest start of the last piece (strict ``>`` while starts are
    tried left to right), which is sentencepiece's rule. Raises ValueError when
    some character is covered by no piece.
    """
    n = len(text)
    best = [0.0] + [_NEG_INF] * n
    back = [0] * (n + 1)
    for end in range(1, n + 1):
        for start in range(end):
            piece = text[start:end]
            if piece in scores and best[start] + scores[piece] > best[end]:
                best[end] = best[start] + scores[piece]
                back[end] = start
    if n and best[n] == _NEG_INF:
        raise ValueError(f"{text!r} cannot be segmented with these pieces")
    pieces = []
    end = n
    while end > 0:
        pieces.append(text[back[end] : end])
        end = back[end]
    return pieces[::-1]


def reference_expected_counts(
    word_counts: Mapping[str, float], probs: Mapping[str, float]
) -> dict[str, float]:
    """The E-step by brute force: each piece's count, averaged over all segmentations.

    Every segmentation of a word gets the posterior weight P(z) / P(word);
    a piece's expected count is the sum of those weights times the number of
    times it occurs in z, times the word's count. Taking only the single best
    segmentation instead would be *hard* (Viterbi) EM, a different algorithm.
    """
    expected: Counter = Counter()
    for word, count in word_counts.items():
        segs = list(segmentations(word, probs))
        weights = [math.prod(probs[p] for p in seg) for seg in segs]
        total = sum(weights)
        if total == 0:
            raise ValueError(f"{word!r} cannot be segmented with these pieces")
        for seg, weight in zip(segs, weights):
            for piece in seg:
                expected[piece] += count * weight / total
    return dict(expected)


def reference_em_step(
    word_counts: Mapping[str, float], probs: Mapping[str, float]
) -> dict[str, float]:
    """One EM iteration: expected counts (E-step), then renormalise them (M-step).

    Returns the new probability of every piece in ``probs`` (0 for pieces no
    segmentation uses). This is plain maximum-likelihood EM; `train` uses
    sentencepiece's Bayesian variant (see `digamma`).
    """
    expected = reference_expected_counts(word_counts, probs)
    total = sum(expected.values())
    return {piece: expected.get(piece, 0.0) / total for piece in probs}


def digamma(x: float) -> float:
    """The digamma function psi(x) = d/dx log Gamma(x), for x > 0.

    Recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic
    series. sentencepiece's M-step uses it in place of the log (see `train`).
    """
    if not x > 0:
        raise ValueError(f"digamma needs x > 0, got {x!r}")
    result = 0.0
    while x < 10:
        result -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    return result + math.log(x) - 0.5 / x - inv2 * (
        1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132)))
    )


def reference_m_step(
    expected: Mapping[str, float], *, protected: Collection[str] = (), bayesian: bool = True
) -> dict[str, float]:
    """New scores from expected counts, sentencepiece's way: the M-step of `toklab.unigram.trainer`.

    A piece expected fewer than `MIN_EXPECTED_COUNT` (0.5) times leaves the
    vocabulary, unless it is ``protected`` (single characters, required pieces):
    then it is scored as if expected 0.5 times, so it keeps a finite, low
    score, even if ``expected`` leaves it out (the E-step lists only pieces
    some segmentation uses). With ``bayesian`` (sentencepiece's choice) the score is
    ``digamma(count) - digamma(total)`` instead of ``log(count / total)``: a
    variational-Bayes update whose sparse prior pushes rare pieces further down.
    """
    counts = {**expected, **{piece: 0.0 for piece in protected if piece not in expected}}
    kept = {
        piece: max(count, MIN_EXPECTED_COUNT) if piece in protected else count
        for piece, count in counts.items()
        if count >= MIN_EXPECTED_COUNT or piece in protected
    }
    total = sum(kept.values())
    if bayesian:
        return {piece: digamma(count) - digamma(total) for piece, count in kept.items()}
    return {piece: math.log(count) - math.log(total) for piece, count in kept.items()}


def reference_prune_loss(
    word_counts: Mapping[str, float],
    scores: Mapping[str, float],
    *,
    protected: Collection[str] = (),
) -> dict[str, float]:
    """For each piece pruning may remove, the log-likelihood lost without it (per word).

    1. Segment every word with Viterbi; ``freq[z]`` counts piece ``z``'s uses
       (weighted by word count), ``total`` all uses, ``N`` all words.
    2. A candidate is a piece of two or more characters, not protected, used
       at least once. Its *alternative* is its own best segmentation into other
       pieces. If the alternative scores higher than the piece itself, the
       piece is never its own Viterbi segmentation: it is left out here (the
       trainer drops it).
    3. Removing ``z`` moves its ``freq[z]`` uses onto its alternative pieces.
       With ``p(z) = freq[z] / total`` and ``p'(a) = (freq[a] + freq[z]) /
       (total + freq[z] * (len(alt) - 1))`` the loss is
       ``freq[z] / N * (log p(z) - sum over a in alt of log p'(a))``.

    The trainer keeps the candidates with the largest loss. ``scores`` are
    log-probabilities; every character of the words must be a piece.
    """
    freq: Counter = Counter()
    for word, count in word_counts.items():
        for piece in reference_viterbi(word, scores):
            freq[piece] += count
    total = sum(freq.values())
    n_words = sum(word_counts.values())
    losses = {}
    for piece, f in freq.items():
        if len(piece) < 2 or piece in protected:
            continue
        others = {p: s for p, s in scores.items() if p != piece}
        alt = reference_viterbi(piece, others)
        if sum(others[a] for a in alt) > scores[piece]:
            continue
        log_alt = sum(math.log(freq[a] + f) for a in alt)
        log_alt -= len(alt) * math.log(total + f * (len(alt) - 1))
        losses[piece] = f / n_words * ((math.log(f) - math.log(total)) - log_alt)
    return losses


def reference_seed_pieces(
    word_counts: Mapping[str, int],
    *,
    max_piece_length: int = 16,
    seed_size: int = 1_000_000,
) -> dict[str, float]:
    """The initial, oversized vocabulary, in plain loops: every character plus the most frequent substrings.

    Candidates are the substrings of length 2..``max_piece_length`` that
    occur at least twice (counted inside words, weighted by word count).
    Like sentencepiece's suffix-array seed, a candidate that is always
    followed by the same character (``"Pytho"`` when every occurrence is in
    ``"Python"``) is skipped: its longer extension has the same count and
    covers more. The ``seed_size`` candidates with the largest
    ``count * length`` (characters they cover) are kept, ties broken by the
    piece itself, and every character is added. Returns initial scores:
    ``log(value / total)`` with value = count for a character and
    count * length for a longer piece.

    Counting is level by level (apriori): a substring of length ``l`` can only
    occur twice if both its length ``l - 1`` prefix and suffix do, so only
    those positions are extended. This avoids counting the millions of
    substrings that occur once. Its fast partner is
    `toklab.unigram.trainer.seed_pieces` (numpy, every word at once), which
    returns the same dict in the same order.
    """
    if max_piece_length < 1:
        raise ValueError(f"max_piece_length must be >= 1, got {max_piece_length}")
    items = sorted((w, c) for w, c in word_counts.items() if w and c > 0)
    chars: Counter = Counter()
    for w, c in items:
        for ch in w:
            chars[ch] += c
    # positions[w] = starts i where w[i:i+l] occurs at least twice (current level l)
    positions = [[i for i, ch in enumerate(w) if chars[ch] >= 2] for w, _ in items]
    found: dict[str, int] = {}
    prev_level: dict[str, int] = {ch: n for ch, n in chars.items() if n >= 2}
    for length in range(2, max_piece_length + 1):
        level: Counter = Counter()
        candidates = []
        for (w, c), pos in zip(items, positions):
            ok = set(pos)
            here = [i for i in pos if i + 1 in ok and i + length <= len(w)]
            for i in here:
                level[w[i : i + length]] += c
            candidates.append(here)
        frequent = {s: n for s, n in level.items() if n >= 2}
        if not frequent:
            break
        # Drop the previous level's strings that never branch to the right.
        if length > 2:
            best_ext: dict[str, int] = {}
            for s, n in frequent.items():
                if n > best_ext.get(s[:-1], 0):
                    best_ext[s[:-1]] = n
            for s, n in prev_level.items():
                if best_ext.get(s, 0) == n:
                    found.pop(s, None)
        found.update(frequent)
        prev_level = frequent
        positions = [
            [i for i in here if w[i : i + length] in frequent] for (w, _), here in zip(items, candidates)
        ]
    ranked = sorted(found.items(), key=lambda kv: (-kv[1] * len(kv[0]), kv[0]))[:seed_size]
    values = {ch: float(n) for ch, n in sorted(chars.items(), key=lambda kv: (-kv[1], kv[0]))}
    values.update((s, float(n * len(s))) for s, n in ranked)
    log_total = math.log(sum(values.values())) if values else 0.0
    return {p: math.log(v) - log_total for p, v in values.items()}
