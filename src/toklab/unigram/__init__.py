"""The Unigram language model (Kudo, 2018): a probability for every piece, Viterbi to segment.

The package has the shape every algorithm package here has:

- `reference`: the plain versions the book prints, by enumeration and textbook
  loops: `segmentations`, `reference_forward`, `reference_viterbi`, the E-step
  `reference_expected_counts`, the M-step `reference_m_step`, one EM iteration
  `reference_em_step`, the pruning loss `reference_prune_loss` and the seed
  vocabulary `reference_seed_pieces`.
- `model`: `Unigram`. Unlike the reference functions it works in log space on
  a lattice of prefix lookups, assigns IDs, scores unknown characters and byte
  fallback like sentencepiece, and offers n-best and sampling.
- `lattice`: the engine, per text in pure Python and for many words at once in numpy.
- `astar`: sentencepiece's own n-best search (A* from the end, its heap order), so
  n-best lists equal the library's, ties included.
- `trainer`: sentencepiece's trainer (seed vocabulary, EM, pruning), batched over
  every word on the numpy lattice; same results as the reference steps.

Reading a sentencepiece ``.model`` into a `Unigram`, and measuring this trainer against
sentencepiece's, belong to `toklab.sentencepiece` (`load_unigram`,
`compare_with_sentencepiece`), which sits above the algorithms.
"""

from .model import UNK_PENALTY, Unigram
from .reference import (
    MIN_EXPECTED_COUNT,
    digamma,
    reference_em_step,
    reference_expected_counts,
    reference_forward,
    reference_m_step,
    reference_prune_loss,
    reference_seed_pieces,
    reference_viterbi,
    segmentations,
)
from .trainer import expected_counts, seed_pieces, train

__all__ = [
    "MIN_EXPECTED_COUNT",
    "UNK_PENALTY",
    "Unigram",
    "digamma",
    "expected_counts",
    "reference_em_step",
    "reference_expected_counts",
    "reference_forward",
    "reference_m_step",
    "reference_prune_loss",
    "reference_seed_pieces",
    "reference_viterbi",
    "seed_pieces",
    "segmentations",
    "train",
]
