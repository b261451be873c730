"""toklab.sentencepiece.alignment.sentencepiece_offsets: the spans sentencepiece itself reports."""

from __future__ import annotations

import dataclasses
from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toklab
from toklab.data import corpus
from toklab.sentencepiece import train_sentencepiece

from ..helpers import sample_lines

TRAIN = corpus.load("en", 60_000) + corpus.load("zh", 20_000) + corpus.load("code", 20_000)

#: Models that stress every branch: byte fallback (unknown characters become <0xXX>
#: pieces), unknown runs without it, BPE, user-defined symbols, and the whitespace options.
OPTIONS = {
    "unigram-bytes": dict(model_type="unigram", byte_fallback=True),
    "unigram-unk": dict(model_type="unigram"),
    "bpe-bytes": dict(model_type="bpe", byte_fallback=True),
    "user-symbols": dict(model_type="unigram", user_defined_symbols=["<sep>", "->", "\u2581x"]),
    "keep-whitespace": dict(model_type="unigram", remove_extra_whitespaces=False, add_dummy_prefix=False),
    "identity": dict(model_type="unigram", normalization_rule_name="identity", byte_fallback=True),
}


@lru_cache(maxsize=None)
def model(name):
    sp = train_sentencepiece(TRAIN, vocab_size=800, character_coverage=0.98, **OPTIONS[name])
    return sp, toklab.SentencePieceTokenizer.from_sentencepiece(sp)


def _same_as_sentencepiece(sp, tok, text):
    ours = tok.encode_with_offsets(text)
    chars = sp.encode(text, return_type="offset_mapping")
    data = sp.encode(text, return_type="offset_mapping", return_bytes=True)
    assert list(ours.ids) == chars["ids"] == tok.encode(text), text
    assert list(ours.offsets) == chars["offsets"], text
    assert list(ours.byte_offsets) == data["offsets"], text


HARD = ["", "   ", "  Hello   world  ", "\ufb03ce \uff21 cafe\u0301", "x\u9f98y", "a\tb\nc", "\uff21\uff22\uff11\uff12",
        "\u2028 x", "\u2581x\u2581", " \u2581 ", "<s> </s> <sep>a->b", "\u9f98\u9f98\u9f98 \U0001f642\U0001f642",
        "e\u0301\u0301 \u0130 \u00df", "\x00\x01\x7f tab\t\tend\n", "\u3000\u3000\u6ce8\u610f"]


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_offsets_equal_sentencepiece_on_the_parity_sample(name):
    """Every line of the parity sample (tests/helpers.py) for the two byte-fallback models,
    a third of them for the rest."""
    sp, tok = model(name)
    step = 1 if name in ("unigram-bytes", "bpe-bytes") else 3
    for text in HARD + list(sample_lines()[::step]):
        _same_as_sentencepiece(sp, tok, text)


_TEXT = st.lists(st.sampled_from(list("ab A1 \n\t.,-\\") + [
    "\u00e9", "e\u0301", "\u0301", "\u6ce8", "\u9f98", "\U0001f642", "\u200d", "\u00a0", "\u3000", "\u2028",
    "\ufb03", "\uff21", "\u0130", "\x00", "\x7f", "\u2581", "<sep>", "->", "<s>", "  "]), max_size=14).map("".join)


@settings(max_examples=300)
@given(text=_TEXT, name=st.sampled_from(sorted(OPTIONS)))
def test_offsets_equal_sentencepiece_on_adversarial_text(text, name):
    sp, tok = model(name)
    _same_as_sentencepiece(sp, tok, text)


def test_conventions_bos_eos_and_errors():
    sp, tok = model("unigram-bytes")
    text = "x\u9f98 y"
    enc = tok.encode_with_offsets(text, add_bos=True, add_eos=True)
    assert list(enc.ids) == tok.encode(text, add_bos=True, add_eos=True)
    assert enc.offsets[0] == enc.offsets[-1] == (0, 0)
    body = enc.offsets[1:-1]
    assert body[2:5] == ((1, 1), (1, 1), (1, 2))  # 龘's three byte pieces: the last one covers it
    assert text[slice(*body[-2])] == " "  # the ▁ made from the space
    surrogate = tok.encode_with_offsets("a\ud800")  # U+FFFD in its place: one code point, the same spans
    replaced = tok.encode_with_offsets("a\ufffd")
    assert list(surrogate.ids) == list(replaced.ids) and surrogate.offsets == replaced.offsets
    with pytest.raises(TypeError, match="str"):
        tok.encode_with_offsets(b"a")
    rule_only = toklab.SentencePieceTokenizer(tok.pieces, dataclasses.replace(tok.config, charsmap=None))
    with pytest.raises(TypeError, match="compiled charsmap"):
        rule_only.encode_with_offsets("a")


_UNIGRAM_TEXT = st.lists(st.sampled_from(list("ab A1 \n.,") + ["the", " token", "\u6ce8", "\u9f98", "\U0001f642",
                                                               "\ufb03", "\uff21", "e\u0301", "\u00e9", "~~"]),
                         max_size=12).map("".join)


@settings(max_examples=200)
@given(text=_UNIGRAM_TEXT, name=st.sampled_from(["unigram-bytes", "unigram-unk"]),
       form=st.sampled_from([None, "NFKC"]), pattern=st.sampled_from([None, "cl100k"]))
def test_unigram_in_a_pipeline_spans_its_viterbi_pieces(text, name, form, pattern):
    sp, _ = model(name)
    unigram = toklab.sentencepiece.load_unigram(sp)
    pre = toklab.pre_tokenizers.RegexSplit(pattern) if pattern else None
    pipe = toklab.Pipeline(unigram, normalizer=form, pre_tokenizer=pre)
    enc = pipe.encode_with_offsets(text)
    assert list(enc.ids) == pipe.encode(text)
    assert [a for a, _ in enc.offsets] == sorted(a for a, _ in enc.offsets)
    assert all(0 <= a < b <= len(text) for a, b in enc.offsets)
    if form is None:  # no normalization: known pieces spell their span, unknown runs are covered
        for i, (a, b) in zip(enc.ids, enc.offsets):
            if unigram.kind(i) == "normal":
                assert text[a:b] == unigram.id_to_token(i)
        if unigram.byte_fallback:  # byte pieces: their exact bytes, in order
            data = text.encode("utf-8")
            for i, (x, y) in zip(enc.ids, enc.byte_offsets):
                if unigram.kind(i) == "byte":
                    assert y == x + 1 and unigram.id_to_token(i) == f"<0x{data[x]:02X}>"


def test_a_unigram_model_inside_a_pipeline_unknown_runs():
    sp, _ = model("unigram-unk")
    unigram = toklab.sentencepiece.load_unigram(sp)
    text = "a\u9f98\u9f98\u9f98b"
    enc = toklab.Pipeline(unigram).encode_with_offsets(text)
    unk = [span for i, span in zip(enc.ids, enc.offsets) if i == unigram.unk_id]
    assert unk == [(1, 4)]  # one unknown ID for the run, spanning all of it
