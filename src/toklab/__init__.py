"""toklab: the tested package behind *Tokenization, from bytes to production*.

Modules follow the tokenization pipeline:

- `unicode`: UTF-8 facts, GPT-2's byte-to-character table, normalization with offsets
- `pretokenize`: the regex catalogue (gpt2, cl100k, o200k) and splitting
- `special`: the special-token contract (allowed / disallowed, longest match wins)
- `bpe`: byte-level BPE training and encoding, fast and reference versions
- `wordpiece`: WordPiece training, longest-match-first encoding, BERT pre-tokenization
- `unigram`: the Unigram language model: EM training, Viterbi, n-best, sampling
- `sentencepiece`: a SentencePiece-style front end (▁, dummy prefix, byte fallback)
- `tokenizer`: the whole pipeline as one object, with a stage-by-stage trace
- `vocabs`: the real r50k_base / cl100k_base / o200k_base vocabularies, hash-checked
- `metrics`: fertility with declared units, UNK rate, bits per byte
- `corpus`: the bundled multilingual corpus; `viz`: token-boundary views
- `exercises`: checkers for the book's coding exercises; `book`: chapter set-up
"""

__version__ = "0.1.0"

from .bpe import ByteBPE
from .sentencepiece import SentencePieceTokenizer
from .tokenizer import Pipeline
from .unigram import Unigram
from .wordpiece import WordPiece

__all__ = ["ByteBPE", "Pipeline", "SentencePieceTokenizer", "Unigram", "WordPiece", "__version__"]
