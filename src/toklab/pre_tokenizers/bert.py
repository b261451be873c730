"""BERT's pre-tokenizer (HF ``pre_tokenizers.BertPreTokenizer``), and BERT's two stages fused.

Whitespace splits, and every punctuation character stands alone:
``"Hey friend!  How are you?!?"`` -> ``Hey, friend, !, How, are, you, ?, !, ?``.
Punctuation is ASCII's 32 symbols plus every Unicode punctuation character (with
HF's Unicode tables, see `toklab.normalizers.bert`), so ``"e-mail"`` gives three
words and ``"don't"`` gives ``don, ', t``.

`bert_words` runs the BERT normalizer and this pre-tokenizer in one pass over
the text (the split is one more per-character rule in the normalizer's
``str.translate`` tables). Must equal ``pre_tokenize(normalize(text))``; a test
ties the two on the whole corpus.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..normalizers.bert import BertNormalizer, CharTable, char_tables, is_punctuation, is_whitespace, run_tables

__all__ = ["split_rule", "clear_cache", "pre_tokenize", "bert_words", "BertPreTokenizer"]


def split_rule(ch: str) -> str:
    """Whitespace -> a space; punctuation -> itself between spaces (split on " " afterwards)."""
    return " " if is_whitespace(ch) else f" {ch} " if is_punctuation(ch) else ch


_PRETOKEN = CharTable(split_rule)


def clear_cache() -> None:
    """Empty the lazily filled character table (it keeps every character ever seen)."""
    _PRETOKEN.clear()


def pre_tokenize(text: str) -> list[str]:
    """BERT's pre-tokenizer on already normalized text: whitespace splits, punctuation stands alone."""
    return [w for w in text.translate(_PRETOKEN).split(" ") if w]


def bert_words(text: str, normalizer: BertNormalizer) -> list[str]:
    """``pre_tokenize(normalizer.normalize(text))`` in one pass (same result, fewer passes)."""
    tables = char_tables(*normalizer.flags, extra=split_rule)
    return [w for w in run_tables(text, tables).split(" ") if w]


@dataclass(frozen=True)
class BertPreTokenizer:
    """`pre_tokenize` as a pipeline stage."""

    def pre_tokenize(self, text: str) -> list[str]:
        return pre_tokenize(text)

    def to_hf(self):
        from tokenizers import pre_tokenizers

        return pre_tokenizers.BertPreTokenizer()
