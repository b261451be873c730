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
* `space_patch_starts` -- SpaceByte's patching: a patch starts at a space-like byte
  (not a letter, digit or UTF-8 continuation byte) that follows a non-space-like one.
* `hash_buckets`, `hash_embed`, `downsample` -- a CANINE-style input layer: each code
  point hashed by several hash functions into buckets, one small embedding table per
  hash function, slices concatenated; then mean-pooling by a fixed rate.
* `ngram_buckets`, `ngram_embed`, `ngram_sharing` -- BLT's hash n-gram embeddings: each
  byte's embedding plus one row per n-gram size, found by hashing the n bytes that end at
  that byte; and how many distinct n-grams of a text share a row.
* `ToyBLT`, `blt_flops`, `token_model_flops`, `megabyte_flops` -- a toy BLT (local
  encoder, latent transformer, local decoder) run in numpy with random weights, and the
  FLOPs per byte of BLT-, MegaByte- and subword-style models counted from their shapes.
* `perturb`, `changed_units`, `noise_sensitivity` -- typos, case changes and character
  noise, and how many bytes and how many subword tokens each one changes.

Every patching function returns patches whose concatenation is exactly the input.
Everything is deterministic: no Python ``hash()``, no unseeded randomness.

Files: `byte_model` (ByteVocab, span_corruption_lengths, ByteNgramModel), `patches`
(fixed, entropy and space patching, boundary kinds), `hashing` (CANINE's and BLT's hash
embeddings), `blt` (the toy BLT and FLOP counts), `robustness` (noise, bytes against tokens).
"""

from .blt import (
    BLT_ENTROPY_HF_DEFAULT,
    BLT_HF_DEFAULT,
    BLTShape,
    BLTTrace,
    StackShape,
    ToyBLT,
    blt_flops,
    causal_pairs,
    megabyte_flops,
    token_model_flops,
)
from .byte_model import ByteNgramModel, ByteVocab, span_corruption_lengths
from .hashing import (
    downsample,
    embedding_tables,
    hash_buckets,
    hash_embed,
    mix64,
    ngram_buckets,
    ngram_embed,
    ngram_sharing,
)
from .patches import (
    BOUNDARY_KINDS,
    RULES,
    boundary_kinds,
    byte_kind,
    entropy_patches,
    fixed_patches,
    is_spacelike,
    patch_starts,
    space_patch_starts,
    split_at,
    threshold_for_mean_size,
)
from .robustness import NOISE_KINDS, NoiseResult, changed_units, noise_sensitivity, perturb

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
    "mix64",
    "ngram_buckets",
    "ngram_embed",
    "ngram_sharing",
    "is_spacelike",
    "space_patch_starts",
    "StackShape",
    "BLTShape",
    "BLT_HF_DEFAULT",
    "BLT_ENTROPY_HF_DEFAULT",
    "causal_pairs",
    "blt_flops",
    "token_model_flops",
    "megabyte_flops",
    "ToyBLT",
    "BLTTrace",
    "NOISE_KINDS",
    "perturb",
    "changed_units",
    "NoiseResult",
    "noise_sensitivity",
]
