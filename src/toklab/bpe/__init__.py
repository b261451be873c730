"""Byte-pair encoding: the textbook algorithms, the fast ones, and the tokenizer object.

The package has the shape every algorithm package here has:

- `reference`: the plain versions the book prints. `reference_train` recounts
  every adjacent pair on every step (`pair_counts`) and merges the most frequent
  (`pick_pair`, `merge_pair`); `reference_encode` replays frozen merges, earliest
  first. They work on ``str`` or ``bytes`` symbols.
- `trainer`: `train` is what you would run. Unlike `reference_train` it counts pre-tokens once
  (`pretoken_counts`), keeps pair counts up to date incrementally (touching only
  words that contain the merged pair) and finds the best pair with a lazy
  max-heap. Same merges as the reference, much faster.
- `encode`: the engine for one chunk with a rank table. Unlike `reference_encode`
  it looks up ranks of concatenations (tiktoken's rule), scanning short chunks
  and using a heap for long ones; plus BPE-dropout.
- `model`: `ByteBPE`, the tokenizer: pattern, merges, IDs, special tokens,
  cache, tiktoken parity, files (`files`: the ``toklab-bpe`` JSON format).
"""

from .encode import merge_chunk, merge_dropout, merge_long, merge_short
from .model import ByteBPE
from .reference import merge_pair, pair_counts, pick_pair, reference_encode, reference_train
from .trainer import pretoken_counts, train

__all__ = [
    "ByteBPE",
    "merge_chunk",
    "merge_dropout",
    "merge_long",
    "merge_pair",
    "merge_short",
    "pair_counts",
    "pick_pair",
    "pretoken_counts",
    "reference_encode",
    "reference_train",
    "train",
]
