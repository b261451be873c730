"""Tricky inputs, trainer configurations and a hand-made vocabulary shared by the sentencepiece tests."""

from __future__ import annotations

from hypothesis import strategies as st

from toklab.base.pieces import SPACE
from toklab.pre_tokenizers.metaspace import split_words as metaspace_split_words
from toklab.sentencepiece import SentencePieceTokenizer
from toklab.sentencepiece.model_file import SPConfig, SPPiece


def mismatches(sp, tok, lines):
    return [ln for ln in lines if sp.encode(ln) != tok.encode(ln)]


def split_words(text, config):
    return metaspace_split_words(text, split_by_whitespace=config.split_by_whitespace, split_digits=config.split_digits)


TRICKY = [
    " ", "  ", "\t", "\n", "\r\n", "\x00", "\x01", "\x7f", "\u00a0", "\u3000", "\u200b", "\u200d", "\ufeff",
    SPACE, "Ａ", "①", "ﬃ", "é", "e\u0301", "\u0301", "¨", "～", "龘", "😀", "👨\u200d👩\u200d👧", "\ufe0f",
    "<s>", "</s>", "<unk>", "<0x41>", "<tag>", "ab", "2024", "中文", "ă\u0301", "\u0651\u064e", "\U0001f3fb",
]


TEXT = st.lists(
    st.one_of(st.sampled_from(TRICKY), st.characters(blacklist_categories=("Cs",))), max_size=24
).map("".join)


ORACLE_CONFIGS = {
    "unigram-nmt-bf-user": dict(model_type="unigram", byte_fallback=True, user_defined_symbols=["<tag>", "ab", "Ａ"],
                                control_symbols=["<ctl>"]),
    "bpe-nmt-user": dict(model_type="bpe", user_defined_symbols=["<tag>", "ab", "Ａ"], control_symbols=["<ctl>"]),
    "unigram-identity-keepws": dict(model_type="unigram", normalization_rule_name="identity",
                                    remove_extra_whitespaces=False, add_dummy_prefix=False),
    "bpe-identity-bf-keepws": dict(model_type="bpe", normalization_rule_name="identity", byte_fallback=True,
                                   remove_extra_whitespaces=False),
    "bpe-nfkc-bf": dict(model_type="bpe", normalization_rule_name="nfkc", byte_fallback=True),
}


def tiny_tokenizer(**config) -> SentencePieceTokenizer:
    """A small hand-made vocabulary: enough to test the front end without training."""
    pieces = [SPPiece("<unk>", 0.0, "unknown"), SPPiece("<s>", 0.0, "control"), SPPiece("</s>", 0.0, "control")]
    pieces += [SPPiece(p, -float(i)) for i, p in enumerate([SPACE, "a", "b", SPACE + "a", SPACE + "b", "ab"])]
    return SentencePieceTokenizer(pieces, SPConfig(**config))
