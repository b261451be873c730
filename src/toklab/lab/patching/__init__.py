"""Tokenizer-free input: a next-byte model, byte patches, and hash embeddings (§6).

Byte-level models replace the tokenizer's vocabulary with the 256 byte values, and the
hierarchical ones group bytes into *patches* so that the big model runs once per patch
instead of once per byte. This module holds the small, exact pieces of that story:

* `ByteVocab` -- a ByT5-style vocabulary: special IDs first, then the 256 byte values
  shifted by their count, then sentinel IDs for span corruption at the top.
* `span_corruption_lengths` -- T5's span-corruption length arithmetic (how long the
  corrupted input and the target are for a given raw length).
* `ByteNgramModel` -- a next-byte language model over raw bytes: an n-gram with
  interpolated absolute discounting, trained with numpy in seconds. Its `entropies`
  are the per-byte uncertainty an entropy patcher thresholds.
* `fixed_patches` -- MegaByte's patching: every ``size`` bytes, whatever they hold.
* `entropy_patches` / `patch_starts` -- BLT's patching: a patch starts where the
  next-byte entropy is above a threshold (``rule="global"``) or rises over the previous
  byte's by more than a threshold (``rule="monotonic"``).
* `threshold_for_mean_size` -- the threshold that gives a target mean patch size, so
  that patchers (and rules) are compared at the same number of big-model steps.
* `boundary_kinds` -- what kind of byte a patch starts on (word start, digit, space,
  punctuation, non-ASCII, inside a character, ...), for measuring where boundaries fall.
* `hash_buckets`, `hash_embed`, `downsample` -- a CANINE-style input layer: each code
  point hashed by several hash functions into buckets, one small embedding table per
  hash function, slices concatenated; then mean-pooling by a fixed rate.

Every patching function returns patches whose concatenation is exactly the input.
Everything is deterministic: no Python ``hash()``, no unseeded randomness.

Files: `byte_model` (ByteVocab, span_corruption_lengths, ByteNgramModel), `patches`
(fixed and entropy patching, boundary kinds), `hashing` (CANINE-style hash embeddings).
"""

from .byte_model import ByteNgramModel, ByteVocab, span_corruption_lengths
from .hashing import downsample, embedding_tables, hash_buckets, hash_embed
from .patches import (
    BOUNDARY_KINDS,
    RULES,
    boundary_kinds,
    byte_kind,
    entropy_patches,
    fixed_patches,
    patch_starts,
    split_at,
    threshold_for_mean_size,
)

__all__ = [
    "ByteVocab",
    "span_corruption_lengths",
    "RULES",
    "BOUNDARY_KINDS",
    "ByteNgramModel",
    "fixed_patches",
    "patch_starts",
    "entropy_patches",
    "split_at",
    "threshold_for_mean_size",
    "boundary_kinds",
    "byte_kind",
    "hash_buckets",
    "hash_embed",
    "embedding_tables",
    "downsample",
]
