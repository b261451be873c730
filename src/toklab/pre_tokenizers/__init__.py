"""Stage 2 of the pipeline, pre-tokenization: where text is cut before the model sees it.

No token crosses a boundary this stage draws, so it decides what a token *can* be.

- `patterns`: the regex catalogue of OpenAI's encodings (gpt2, cl100k, o200k), `split`,
  safe cut points for streaming, and `RegexSplit`, the stage object;
- `bmp`: the catalogue patterns rewritten for the standard library's `re` (classes as
  explicit ranges read from `regex`), which `patterns.Splitter` runs on text without
  astral characters, about twice as fast;
- `bert`: BERT's whitespace-and-punctuation split (`BertPreTokenizer`) and `bert_words`,
  BERT's normalizer and pre-tokenizer fused into one pass;
- `metaspace`: sentencepiece's trainer split (`split_words`): a new word at every ``▁``,
  digits apart; and Hugging Face's ``Metaspace`` pre-tokenizer (`Metaspace`), which does
  the escaping in HF's sentencepiece-style files. The ``▁`` itself is a spelling
  (`toklab.base.pieces`), and the whitespace rules are part of sentencepiece's
  normalizer (`toklab.normalizers.spm`);
- `behaviors`: Hugging Face's ``Split`` with each of its behaviours, and the gaps a custom
  regex leaves between its matches kept as chunks.
"""

from .bert import BertPreTokenizer, bert_words
from .metaspace import Metaspace, split_words
from .patterns import PATTERNS, RegexSplit, last_safe_cut, onig_pattern, resolve, split, split_with_offsets

__all__ = [
    "PATTERNS",
    "BertPreTokenizer",
    "Metaspace",
    "RegexSplit",
    "bert_words",
    "last_safe_cut",
    "onig_pattern",
    "resolve",
    "split",
    "split_with_offsets",
    "split_words",
]
