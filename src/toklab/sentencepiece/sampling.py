"""n-best and subword regularization for a sentencepiece model, with sentencepiece's API and rules.

sentencepiece offers more than the one best segmentation (`SentencePieceTokenizer`'s
methods call these functions):

- **n-best** (``nbest_encode_as_ids``): the ``n`` most probable segmentations of a
  Unigram model, best first, found by sentencepiece's own A* search
  (`toklab.unigram.astar.nbest`, ties in its heap order), so the lists equal the
  library's. A BPE model has no n-best, as in sentencepiece.
- **sampling** (``encode(..., enable_sampling=True, alpha=..., nbest_size=...)``): for
  a Unigram model, ``nbest_size < 0`` draws from every segmentation with probability
  ``∝ P(z) ** alpha`` (forward filtering, backward sampling), ``nbest_size > 1`` from
  the n-best list with probabilities ``∝ exp(alpha * score)``; for a BPE model,
  BPE-dropout: each merge is skipped with probability ``alpha`` when its turn comes
  (``nbest_size`` is ignored, as in sentencepiece). As sentencepiece's Python API,
  sampling with ``nbest_size`` 0 or 1 is refused, and ``nbest_size`` is at most 512.

sentencepiece's random generator is its own (``set_random_generator_seed``); ``seed``
here is an int or a `random.Random`, so the *distribution* of samples is sentencepiece's
(``tests/sentencepiece/test_sampling.py`` checks both libraries' frequencies against the
exact probabilities), not the sequence.
"""

from __future__ import annotations

import math
import random
from typing import Any

from ..unigram import astar, lattice
from ..unigram.model import Unigram

__all__ = ["MAX_SAMPLING_NBEST", "MAX_NBEST", "check_sampling", "nbest_segments", "sample_segment", "rng_of"]

#: sentencepiece refuses to sample from more than this many segmentations.
MAX_SAMPLING_NBEST = 512
#: sentencepiece's n-best search returns at most this many.
MAX_NBEST = 1024

Segment = list[tuple[str, int]]  # (surface, id) per piece, before unknown runs are merged


def rng_of(seed: int | random.Random | None) -> random.Random:
    """``seed`` itself if it is a generator, else a new one seeded with it."""
    return seed if isinstance(seed, random.Random) else random.Random(seed)


def check_sampling(nbest_size: Any, alpha: Any) -> None:
    """sentencepiece's rules for sampling arguments: ValueError (or TypeError) naming the one that breaks them."""
    if isinstance(nbest_size, bool) or not isinstance(nbest_size, int):
        raise TypeError(f"nbest_size must be an int, got {type(nbest_size).__name__}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not math.isfinite(alpha):
        raise ValueError(f"alpha must be a finite number, got {alpha!r}")
    if nbest_size in (0, 1):
        raise ValueError('sampling needs nbest_size > 1 (sample among the n best) or nbest_size < 0 (sample among '
                         f'all segmentations), got {nbest_size}; nbest_size is ignored by BPE-dropout')
    if nbest_size > MAX_SAMPLING_NBEST:
        raise ValueError(f"nbest_size must be at most {MAX_SAMPLING_NBEST} for sampling, got {nbest_size}")


def _path_segment(text: str, path: lattice.Path) -> Segment:
    return [(text[i:j], pid) for i, j, pid in path]


def nbest_segments(tokenizer: Any, normalized: str, n: int) -> list[tuple[Segment, float]]:
    """The ``n`` best segmentations of normalized text with their scores, best first (Unigram models only).

    sentencepiece's rules: ``n`` is clamped to 1..1024, ``n = 1`` is the plain encoding,
    empty text has one empty segmentation.
    """
    model = tokenizer.model
    if not isinstance(model, Unigram):
        raise ValueError("n-best segmentations are only defined for a Unigram model; this is a BPE model "
                         "(sentencepiece: NBestEncode is not available for the current model)")
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"nbest_size must be an int, got {type(n).__name__}")
    n = max(1, min(n, MAX_NBEST))
    if not normalized:
        return [([], 0.0)]
    if n == 1:
        return [(_path_segment(normalized, lattice.best_path(model.table, normalized)[0]), 0.0)]
    if model.float32:
        found = astar.nbest(model.table, normalized, n)
    else:  # Hugging Face's arithmetic (float64, earliest start wins a tie): the k-best Viterbi agrees with it
        found = lattice.nbest_paths(model.table, normalized, n)
    return [(_path_segment(normalized, path), score) for path, score in found]


def sample_segment(tokenizer: Any, normalized: str, nbest_size: int, alpha: float, rng: random.Random) -> Segment:
    """One sampled segmentation of normalized text (see the module docstring for the rules)."""
    model = tokenizer.model
    if not normalized:
        return []
    if not isinstance(model, Unigram):
        if alpha <= 0:
            return model.pieces(normalized)
        return model.pieces(normalized, skip=(lambda: True) if alpha >= 1 else (lambda: rng.random() < alpha))
    if nbest_size < 0:
        path = lattice.sample_paths(model.table, normalized, 1, alpha, rng)[0]
        return _path_segment(normalized, path)
    best = nbest_segments(tokenizer, normalized, nbest_size)
    logs = [alpha * score for _, score in best]
    top = max(logs)
    return best[lattice.draw([math.exp(x - top) for x in logs], rng)][0]
