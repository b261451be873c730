"""Stage 1 of the pipeline, normalization: every way toklab rewrites text before splitting it.

- `forms`: Unicode's NFC / NFD / NFKC / NFKD (`UnicodeNormalizer`, `NORMAL_FORMS`), and
  `normalize_with_offsets`, the same forms with a map from each output character back
  to its span in the original text;
- `bert`: BERT's clean-up, CJK spacing, accent stripping and lowercasing
  (`BertNormalizer`), matching HF character for character;
- `nmt`: sentencepiece's named rules written out (`nmt_nfkc`, `normalize_rule`);
- `precompiled`: sentencepiece's compiled table read from a model (`Charsmap`);
- `tables`: a named rule compiled into such a table (`compile_rule`), so a model
  toklab trains can carry one;
- `spm`: a sentencepiece model's whole normalizer: table or rule, user-defined
  symbols kept whole, whitespace rules and ``▁`` (`SentencePieceNormalizer`,
  `whitespace_rules`), and the same as Hugging Face steps (``to_hf``);
- `hf`: Hugging Face's normalizer steps as a ``tokenizer.json`` lists them (``Nmt``,
  ``Precompiled``, ``Replace``, ``Lowercase`` ...), run with HF's rules (`HFNormalizer`).

Each normalizer object has ``normalize(text) -> str``. Normalization is where a
tokenizer can lose information for good: NFKC maps ``"Ａ①"`` to ``"A1"``.
"""

from .bert import BertNormalizer
from .forms import NORMAL_FORMS, UnicodeNormalizer, normalize_with_offsets
from .nmt import NORMALIZATIONS, nmt_nfkc, normalize_rule
from .precompiled import Charsmap
from .spm import SentencePieceNormalizer

__all__ = [
    "NORMAL_FORMS",
    "NORMALIZATIONS",
    "BertNormalizer",
    "Charsmap",
    "SentencePieceNormalizer",
    "UnicodeNormalizer",
    "nmt_nfkc",
    "normalize_rule",
    "normalize_with_offsets",
]
