"""toklab: the tested package behind *Tokenization, from bytes to production*.

The package follows the tokenizer pipeline. Each stage lives in a module named
as Hugging Face ``tokenizers`` names it:

- `special`: upstream of everything, the special-token contract (allowed /
  disallowed, longest match wins) and chat templates (`special.chatml`);
- `normalizers`: stage 1 (Unicode forms with offsets, BERT's normalizer,
  sentencepiece's compiled table and rules);
- `pre_tokenizers`: stage 2 (the regex catalogue gpt2/cl100k/o200k, BERT's
  split, sentencepiece's ``▁`` and whitespace rules);
- `bpe`, `wordpiece`, `unigram`: stage 3, one package per algorithm, each with
  the same files: ``reference`` (the textbook versions), ``train``, ``model``
  and one engine (``bpe.encode``, ``unigram.lattice``);
- `post_processors`: stage 5 (BOS/EOS, [CLS]/[SEP] templates);
- `decoders`: the way back (byte level, WordPiece, sentencepiece);
- `pipeline`: `Pipeline`, any model with any stages, and `trace`, every
  stage's output for one string, for every tokenizer;
- `sentencepiece`: a sentencepiece model reimplemented from those stages, and
  `sentencepiece_model`, its ``.model`` file format;
- `vocabs`: the real vocabularies (r50k/cl100k/o200k, Qwen's ranks, Mistral's sentencepiece
  models, BERT's ID tables), hash-checked; `vocab_facts`: their five sizes, ID holes, overlaps
  and token classes (§4);
- `extension`: adding tokens to a trained vocabulary, with its regression test and embedding
  resize (§4); `tinylm`: a small numpy next-token model the chapters train in seconds;
- `unicode`: UTF-8 facts, GPT-2's byte-to-character table, graphemes, coordinates;
- `metrics`: fertility with declared units, UNK rate, bits per byte;
- `patching`: tokenizer-free input (§6): a next-byte model, fixed and entropy patches,
  CANINE-style hash embeddings;
- production traps (§5): `numbers` (digit cuts and place value), `indentation`
  (code whitespace), `glitch` (partial-UTF-8 and unreachable tokens, norm
  indicators) with `toylm` (two tiny numpy models for the demos), `healing`
  (tiktoken's ``encode_with_unstable``, token healing, a token trie), `batching`
  (attention vs loss masks, packing), `offsets` (spans in the original text, as HF
  ``tokenizers`` and sentencepiece report them; tiktoken's ``decode_with_offsets``),
  `versioning` (fingerprints, manifests, saving with a manifest);
- `corpus`: the bundled multilingual corpus; `viz`: token-boundary views;
- `exercises`: checkers for the book's coding exercises; `book`: chapter helpers;
- `drills`: fresh practice problems for interviews, each with a checker that names the likely
  mistake (§8); `sanity`: the eight invariants of the from-scratch demos D01-D08 as one check
  (the appendix); `tour`: the package's map of itself and its reference-fast pairs (§7);
- `cli`: ``python -m toklab`` (encode, decode, show, train, compare, exercises, check,
  grade, drill, sanity), one registry of subcommands.

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
from .pipeline.compose import Pipeline, trace
from .sentencepiece.tokenizer import SentencePieceTokenizer
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
