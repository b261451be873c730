"""Hugging Face's ``Metaspace`` pre-tokenizer, both ways: files from HF's trainers, T5-, ALBERT- and Llama-style files.

Each file is run by HF's own ``tokenizers.Tokenizer.from_str`` and by
`toklab.formats.hf_json.from_hf_json`, and the IDs must be equal on the parity sample
(tests/helpers.py) and on adversarial text, for every ``prepend_scheme`` (always, first,
never) and ``split`` (true, false), with and without a ``WhitespaceSplit`` before it,
with added tokens at the start and in the middle of the text (the ``first`` scheme
prefixes only the piece that starts the input). Decodes must be equal too, and the
toklab pipeline written back with ``to_hf_json`` must give HF the same IDs again.
The stage itself, `toklab.pre_tokenizers.metaspace.Metaspace`, is checked against HF's
on its own first.
"""

from __future__ import annotations

import functools
import json

import pytest

from toklab import Pipeline
from toklab import sentencepiece as tsp
from toklab.base.pieces import SPACE
from toklab.data import corpus
from toklab.decoders import DecoderChain
from toklab.formats.hf_json import Unsupported, from_hf_json
from toklab.normalizers.hf import HFNormalizer
from toklab.pre_tokenizers.metaspace import Metaspace
from toklab.sentencepiece import train_sentencepiece

from ..helpers import sample_lines

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Tokenizer, pre_tokenizers  # noqa: E402

SCHEMES = [(scheme, split) for scheme in ("always", "first", "never") for split in (True, False)]
ODD = ["", " ", "   ", "a", " a", "a ", "  two  spaces  ", SPACE, SPACE + "x", "x" + SPACE * 2 + "y", "\t\ttab\n",
       "\u3000wide space", "é\u0301", "Ａ①ﬃ", "龘😀", "<unk>", "<s>", "x<s>y", "<s> x", "</s>", "hello</s> world",
       "<s><s>", "x" * 300, "don't  stop", "\x00\x01\x7f", "\ufeffBOM", "\u200bzero width", "\r\n\r\n"]


def lines(step: int = 4) -> list[str]:
    return list(sample_lines())[::step] + ODD


def hf_pre_tokenizer(scheme: str, split: bool, whitespace: bool):
    meta = pre_tokenizers.Metaspace(prepend_scheme=scheme, split=split)
    return pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), meta]) if whitespace else meta


@pytest.mark.parametrize("scheme,split", SCHEMES)
@pytest.mark.parametrize("whitespace", [False, True])
def test_the_stage_splits_as_hf_does(scheme, split, whitespace):
    hf = hf_pre_tokenizer(scheme, split, whitespace)
    ours = Metaspace(prepend_scheme=scheme, split=split, whitespace_split=whitespace)
    for text in lines(step=20):
        assert ours.pre_tokenize(text) == [p for p, _ in hf.pre_tokenize_str(text)], text[:60]
    assert json.loads(ours.to_hf().__getstate__()) == json.loads(hf.__getstate__())
    with pytest.raises(ValueError, match="prepend_scheme"):
        Metaspace(prepend_scheme="sometimes")
    with pytest.raises(ValueError, match="one character"):
        Metaspace(replacement="__")


@functools.cache
def hf_unigram() -> str:
    """A Unigram trained by HF's own trainer, as its SentencePieceUnigramTokenizer writes it (Nmt, NFKC, Metaspace)."""
    from tokenizers.implementations import SentencePieceUnigramTokenizer

    train = [ln for name in ("en", "zh") for ln in corpus.load(name, max_bytes=60_000).split("\n") if ln]
    tok = SentencePieceUnigramTokenizer()
    tok.train_from_iterator(train, vocab_size=1200, show_progress=False, special_tokens=["<unk>", "<s>", "</s>"],
                            unk_token="<unk>")
    return tok.to_str()


@functools.cache
def t5_style() -> str:
    """A sentencepiece Unigram written as HF's converter writes T5's: Precompiled + Replace(' {2,}'), Metaspace."""
    sp = train_sentencepiece([ln for ln in corpus.load("en", max_bytes=80_000).split("\n") if ln], vocab_size=1000)
    doc = json.loads(tsp.SentencePieceTokenizer.from_sentencepiece(sp).to_hf_json())
    precompiled = next(s for s in doc["normalizer"]["normalizers"] if s["type"] == "Precompiled")
    doc["normalizer"] = {"type": "Sequence", "normalizers": [
        precompiled, {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]}
    doc["pre_tokenizer"] = {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "always", "split": True}
    doc["decoder"] = {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "always", "split": True}
    return json.dumps(doc)


@functools.cache
def llama_style() -> str:
    """A sentencepiece BPE with byte fallback as HF's newer Llama conversion writes it: no normalizer,
    Metaspace(first, split=false), and the decoder Replace, ByteFallback, Fuse, Strip."""
    train = [ln for name in ("en", "zh") for ln in corpus.load(name, max_bytes=60_000).split("\n") if ln]
    sp = train_sentencepiece(train, vocab_size=1500, model_type="bpe", normalization_rule_name="identity",
                             remove_extra_whitespaces=False, byte_fallback=True)
    doc = json.loads(tsp.SentencePieceTokenizer.from_sentencepiece(sp).to_hf_json())
    doc["normalizer"] = None
    doc["pre_tokenizer"] = {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "first", "split": False}
    doc["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": SPACE}, "content": " "}, {"type": "ByteFallback"},
        {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    return json.dumps(doc)


FILES = {"hf-unigram": hf_unigram, "t5-style": t5_style, "llama-style": llama_style}


def variant(name: str, scheme: str, split: bool, whitespace: bool = False) -> str:
    doc = json.loads(FILES[name]())
    for key in ("pre_tokenizer", "decoder"):
        for step in [doc[key]] + doc[key].get("decoders", []):
            if step.get("type") == "Metaspace":
                step.update(prepend_scheme=scheme, split=split)
    if whitespace:
        doc["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                                                                        doc["pre_tokenizer"]]}
    return json.dumps(doc)


def assert_same_as_hf(text_json: str, sample: list[str]) -> Pipeline:
    hf = Tokenizer.from_str(text_json)
    ours = from_hf_json(text_json)
    assert isinstance(ours, Pipeline) and isinstance(ours.pre_tokenizer, Metaspace)
    back = Tokenizer.from_str(ours.to_hf_json())
    for text in sample:
        ids = hf.encode(text).ids
        assert ours.encode(text, allowed_special="all") == ids, text[:80]
        assert ours.decode(ids, skip_special_tokens=True) == hf.decode(ids, skip_special_tokens=True), text[:80]
        assert ours.decode(ids) == hf.decode(ids, skip_special_tokens=False), text[:80]
        assert back.encode(text).ids == ids, text[:80]
    return ours


@pytest.mark.parametrize("name", sorted(FILES))
def test_real_style_files_give_hfs_ids(name):
    ours = assert_same_as_hf(FILES[name](), lines(step=2))
    assert ours.trace("a b")[-1].output == ours.encode("a b")


@pytest.mark.parametrize("scheme,split", SCHEMES)
@pytest.mark.parametrize("name", ["hf-unigram", "llama-style"])
def test_every_prepend_scheme_and_split_gives_hfs_ids(name, scheme, split):
    assert_same_as_hf(variant(name, scheme, split), lines(step=6))


@pytest.mark.parametrize("scheme", ["always", "first"])
def test_whitespace_split_before_metaspace_gives_hfs_ids(scheme):
    assert_same_as_hf(variant("t5-style", scheme, True, whitespace=True), lines(step=6))


def test_first_prefixes_only_the_piece_that_starts_the_input():
    ours = from_hf_json(variant("hf-unigram", "first", True))
    first = ours.trace("hi there", allowed_special="all")[3].output
    after = ours.trace("<s>hi there", allowed_special="all")[3].output
    assert first[0] == SPACE + "hi" and after[:2] == ["<s>", "hi"]


def test_stages_refuse_what_they_cannot_run_by_name():
    doc = json.loads(hf_unigram())
    for path, value, named in [
        (["pre_tokenizer"], {"type": "Sequence", "pretokenizers": [{"type": "Whitespace"}, doc["pre_tokenizer"]]},
         "Whitespace"),
        (["normalizer"], {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                          "strip_accents": None, "lowercase": True}, "BertNormalizer"),
        (["decoder"], {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": True}, "CTC"),
        (["decoder"], {"type": "Replace", "pattern": {"Regex": "x"}, "content": "y"}, "regexes"),
        (["pre_tokenizer", "prepend_scheme"], "sometimes", "prepend_scheme"),
    ]:
        bad = json.loads(json.dumps(doc))
        node = bad
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        with pytest.raises(Unsupported, match=named):
            from_hf_json(bad)
    with pytest.raises(ValueError, match="Foo"):
        HFNormalizer.from_steps([{"type": "Foo"}])
    with pytest.raises(ValueError, match="Bar"):
        DecoderChain(({"type": "Bar"},))
