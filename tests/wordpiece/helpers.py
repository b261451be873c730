"""Hugging Face objects, cached training runs and constants shared by the WordPiece test files.

The HF side is built exactly as BERT pipelines build it: ``models.WordPiece``
with ``normalizers.BertNormalizer`` and ``pre_tokenizers.BertPreTokenizer``, no
post-processor, compared on ``encode(..., add_special_tokens=False).ids``.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

from toklab import wordpiece as wp
from toklab.data import corpus
from toklab.wordpiece import WordPiece

SPECIALS = list(wp.BERT_SPECIAL_TOKENS)
VOCAB_SIZE = 8000
NAMES = ("en", "zh", "code", "mixed")


# f(a)=10, f(##b)=10, f(a ##b)=6 and f(q)=2, f(##u)=10, f(q ##u)=2; every other
# pair is rarer than 6 and scores below 0.1.
SCORE_EXAMPLE = {
    "ab": 6, "a": 4, "cb": 4, "c": 46,
    "qu": 2, "du": 2, "eu": 2, "fu": 2, "gu": 2, "d": 48, "e": 48, "f": 48, "g": 48,
}  # fmt: skip


VOCAB_D03 = ["[UNK]", "a", "##b", "##bc"]


def hf_bert(vocab: list[str], *, lowercase: bool, strip_accents=None, max_chars: int = 100) -> Tokenizer:
    tok = Tokenizer(
        models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]", max_input_chars_per_word=max_chars)
    )
    tok.normalizer = normalizers.BertNormalizer(
        lowercase=lowercase, strip_accents=strip_accents, handle_chinese_chars=True, clean_text=True
    )
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    return tok


def hf_vocab_list(tok: Tokenizer) -> list[str]:
    items = sorted(tok.get_vocab().items(), key=lambda kv: kv[1])
    assert [i for _, i in items] == list(range(len(items)))
    return [t for t, _ in items]


@lru_cache(maxsize=None)
def docs() -> tuple[str, ...]:
    return tuple(corpus.load(name) for name in NAMES)


@lru_cache(maxsize=None)
def paragraphs() -> tuple[str, ...]:
    return tuple(p for d in docs() for p in d.split("\n\n") if p)


@lru_cache(maxsize=None)
def counts(lowercase: bool) -> Counter:
    return wp.word_counts(docs(), lowercase=lowercase)


@lru_cache(maxsize=None)
def hf_trained(lowercase: bool) -> list[str]:
    """HF WordPieceTrainer's vocabulary on the whole corpus, in ID order."""
    tok = hf_bert(["[UNK]"], lowercase=lowercase)
    trainer = trainers.WordPieceTrainer(vocab_size=VOCAB_SIZE, special_tokens=SPECIALS, show_progress=False)
    tok.train_from_iterator(list(docs()), trainer)
    return hf_vocab_list(tok)


@lru_cache(maxsize=None)
def ours_trained(lowercase: bool) -> list[str]:
    """Our likelihood-scored vocabulary on the whole corpus."""
    return wp.train_vocab(counts(lowercase), VOCAB_SIZE, special_tokens=SPECIALS)


def hf_train_words(words: dict[str, int], vocab_size: int, specials: list[str] = ["[UNK]"]) -> list[str]:
    """HF WordPieceTrainer on given word counts (words fed as whitespace-separated text)."""
    tok = Tokenizer(models.WordPiece({"[UNK]": 0}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials, show_progress=False)
    tok.train_from_iterator([" ".join([w] * c) for w, c in words.items()], trainer)
    return hf_vocab_list(tok)


@lru_cache(maxsize=None)
def ours_small() -> list[str]:
    return wp.train_vocab(wp.word_counts(corpus.load("en", 20_000), lowercase=False), 700, special_tokens=SPECIALS)


@lru_cache(maxsize=None)
def trained_small(lowercase: bool) -> WordPiece:
    return wp.train([corpus.load(n, 15_000) for n in NAMES], 1500, lowercase=lowercase)
