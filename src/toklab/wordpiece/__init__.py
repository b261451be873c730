"""WordPiece (BERT): longest-match-first encoding over a vocabulary learned bottom-up.

The package has the shape every algorithm package here has:

- `reference`: the plain versions the book prints: `encode_word` (longest match,
  whole word to [UNK] on failure, no backtracking) and `reference_train`
  (recount every symbol and pair each step; likelihood or frequency score).
- `trainer`: unlike `reference_train`, `train_vocab` updates counts incrementally
  and keeps a lazy heap (same vocabulary); `word_counts` and `train` go from
  text to a tokenizer.
- `model`: `WordPieceModel` (unlike `encode_word`, it skips candidates longer
  than any entry and caches words) and `WordPiece`, BERT's tokenizer as a
  preset `toklab.pipeline.Pipeline` of named stages.

BERT's normalizer and pre-tokenizer are pipeline stages of their own:
`toklab.normalizers.bert` and `toklab.pre_tokenizers.bert`.
"""

from .model import BERT_SPECIAL_TOKENS, WordPiece, WordPieceModel
from .reference import encode_word, initial_vocab, reference_train, split_word
from .trainer import train, train_vocab, word_counts

__all__ = [
    "BERT_SPECIAL_TOKENS",
    "WordPiece",
    "WordPieceModel",
    "encode_word",
    "initial_vocab",
    "reference_train",
    "split_word",
    "train",
    "train_vocab",
    "word_counts",
]
