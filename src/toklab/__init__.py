"""toklab: the tested package behind *Tokenization, from bytes to production*.

The tokenizer library follows the pipeline, each stage in a package named as Hugging
Face ``tokenizers`` names it (`normalizers`, `pre_tokenizers`, `post_processors`,
`decoders`), `pipeline` composing any model with any stages, and one package per
algorithm with the same files (`bpe`, `wordpiece`, `unigram`: ``reference``, ``trainer``,
``model`` and one engine). `sentencepiece` rebuilds a whole library from those parts.
Above the library sit the book's own tools: file formats and measures, the chapters'
experiments (`lab`), the teaching tools, and the command line.

The package, in layers from the bottom (`toklab.teaching.package_map.LAYERS`):

- `base` (ground floor): Facts and contracts every other layer uses; imports nothing
  from toklab.
- `data` (real data): Real text and real vocabularies, hash-checked: what the book and
  the tests measure against.
- `normalizers` (stage 1): Stage 1 of the pipeline, normalization: every way toklab
  rewrites text before splitting it.
- `pre_tokenizers` (stage 2): Stage 2 of the pipeline, pre-tokenization: where text is
  cut before the model sees it.
- `post_processors` (stage 5, and back): Stage 5 of the pipeline, post-processing:
  special tokens around the whole sequence.
- `decoders` (stage 5, and back): The pipeline backwards: from a model's tokens to text.
- `pipeline` (all stages together): All stages together: `Pipeline` composes any model
  with any stages, and what follows a token through them.
- `bpe` (stage 3: the algorithms): Byte-pair encoding: the textbook algorithms, the fast
  ones, and the tokenizer object.
- `wordpiece` (stage 3: the algorithms): WordPiece (BERT): longest-match-first encoding
  over a vocabulary learned bottom-up.
- `unigram` (stage 3: the algorithms): The Unigram language model (Kudo, 2018): a
  probability for every piece, Viterbi to segment.
- `sentencepiece` (a library rebuilt): SentencePiece reimplemented: the tokenizer, its
  BPE, its trainer, its file, and the bridges to other libraries.
- `formats` (files, measures): Tokenizer files: recognising a file's format, toklab's
  own JSON formats, Hugging Face's ``tokenizer.json``.
- `measure` (files, measures): Measuring tokenizers and looking at their output.
- `lab` (the chapters' experiments): The chapters' experiments: what happens to tokens
  in production (§4-§6), built on the library.
- `teaching` (the teaching tools): The book's teaching tools, on top of everything else:
  exercises, drills, invariants, the book's helpers.
- `cli` (the command line): ``python -m toklab``: the command line, one module per group
  of subcommands.

A module imports only from a lower layer or from inside its own package, and every
module imports on its own (``tests/test_layout.py``).

The trainers are `toklab.train_bpe`, `toklab.train_wordpiece` and
`toklab.train_unigram` (the ``train`` function of each algorithm package).

The four tokenizers share one API: ``encode``, ``decode``, ``token_to_id``,
``id_to_token``, ``len()``, ``vocab`` (ID -> token), ``get_vocab()`` (token ->
ID), a file format, and `trace`. An unknown ID raises ValueError naming it and
the valid range; an unknown token string raises KeyError naming it.
"""

__version__ = "0.1.0"

from .bpe import ByteBPE
from .bpe import train as train_bpe
from .pipeline import Pipeline, trace
from .sentencepiece import SentencePieceTokenizer
from .unigram import Unigram
from .unigram import train as train_unigram
from .wordpiece import WordPiece
from .wordpiece import train as train_wordpiece

__all__ = [
    "ByteBPE",
    "Pipeline",
    "SentencePieceTokenizer",
    "Unigram",
    "WordPiece",
    "trace",
    "train_bpe",
    "train_unigram",
    "train_wordpiece",
    "__version__",
]
