"""SentencePiece reimplemented: the tokenizer, its BPE, its trainer, its file, and the bridges to other libraries.

SentencePiece is a framework around two algorithms: one front end (its normalizer,
``▁``, byte fallback) feeding a Unigram (`toklab.unigram`) or a scored BPE model. This
package composes it from toklab's stages and algorithms and checks it, ID for ID,
against the real library:

- `tokenizer`: `SentencePieceTokenizer` (normalize, segment, IDs, decode, trace, save),
  `load` a ``.model`` file as a tokenizer, `load_unigram` as a bare `toklab.unigram.Unigram`,
  `train` from raw text;
- `bpe`: sentencepiece's BPE, which merges by piece score instead of a merge list
  (`reference_bpe_segment`, `bpe_segment`, `SentencePieceBPE`);
- `trainer`: the trainer from raw text (normalization, ``▁``, character coverage,
  Unigram or BPE, user and control symbols, byte fallback);
- `sampling`: n-best and subword regularization with sentencepiece's rules (Unigram
  n-best by its A* search, sampling from the lattice or the n best, BPE-dropout);
- `model_file`: the ``.model`` file, a serialized ``ModelProto`` read and written without
  protobuf (`SPPiece`, `SPConfig`, `parse_model_proto`, `serialize_model_proto`);
- `alignment`: offsets as sentencepiece reports them (`sentencepiece_offsets`);
- `hf`: the same model in Hugging Face ``tokenizers``' terms, both ways;
- `compare`: the real library trained in memory (`train_sentencepiece`), and our Unigram
  trainer against its own (`compare_with_sentencepiece`).

The package sits above the algorithms: what the stages below need of sentencepiece's
conventions (``▁``, ``<0xXX>``, piece kinds) lives in `toklab.base.pieces`.
"""

from .bpe import SentencePieceBPE, bpe_merge, bpe_segment, reference_bpe_segment
from .compare import SENTENCEPIECE_OPTIONS, SentencePieceComparison, compare_with_sentencepiece, train_sentencepiece
from .model_file import SPConfig, SPPiece
from .tokenizer import SentencePieceTokenizer, load, load_unigram, train

__all__ = [
    "SENTENCEPIECE_OPTIONS",
    "SPConfig",
    "SPPiece",
    "SentencePieceBPE",
    "SentencePieceComparison",
    "SentencePieceTokenizer",
    "bpe_merge",
    "bpe_segment",
    "compare_with_sentencepiece",
    "load",
    "load_unigram",
    "reference_bpe_segment",
    "train",
    "train_sentencepiece",
]
