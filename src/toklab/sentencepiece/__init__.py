"""sentencepiece."""

from .tokenizer import SentencePieceBPE, SentencePieceTokenizer, bpe_merge, bpe_segment, load, reference_bpe_segment, train

__all__ = ["reference_bpe_segment", "bpe_segment", "bpe_merge", "SentencePieceBPE", "SentencePieceTokenizer", "load",
           "train"]
