"""`toklab.trace`: every stage's output for one string, for every tokenizer toklab offers.

The stages come in `toklab.pipeline.STAGES` order, each with a name and an
output; the ``ids`` stage is what the model produced, the ``post_processor``
stage is what ``encode`` returns.
"""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toklab
from toklab.base.unicode import to_proxy
from toklab.data import corpus
from toklab.decoders import WordPieceDecoder
from toklab.normalizers import BertNormalizer
from toklab.normalizers import NORMAL_FORMS as NORMALIZERS
from toklab.pipeline import STAGES, Pipeline, Stage
from toklab.post_processors import TemplateProcessing
from toklab.pre_tokenizers import BertPreTokenizer
from toklab.sentencepiece import SentencePieceTokenizer, train_sentencepiece
from toklab.unigram import Unigram
from toklab.wordpiece import WordPieceModel

from ..helpers import small_wordpiece
from .helpers import sample_texts, trained


def check_trace(pipe: Pipeline, text: str, **options) -> None:
    stages = pipe.trace(text, **options)
    assert tuple(s.name for s in stages) == STAGES
    out = {s.name: s.output for s in stages}
    assert out["input"] == text
    assert "".join(p for p, _ in out["specials"]) == text
    assert "".join(out["pre_tokenizer"]) == out["normalizer"]
    assert len(out["model"]) == len(out["pre_tokenizer"])
    for pretoken, pieces in zip(out["pre_tokenizer"], out["model"]):
        assert b"".join(pieces) == pretoken.encode("utf-8")
    flat = [p for pieces in out["model"] for p in pieces]
    assert pipe.model.tokens(out["ids"]) == flat
    assert out["post_processor"] == pipe.post_process(out["ids"])
    assert out["post_processor"] == pipe.encode(text, **options)
    assert len(stages[4]) == len(out["ids"])


def test_trace_is_consistent_on_the_corpus():
    pipe = Pipeline(trained(), normalizer="NFKC", bos="<|bos|>", eos="<|eos|>")
    for text in sample_texts():
        for line in text.splitlines(keepends=True)[:200]:
            check_trace(pipe, line)
    check_trace(pipe, "x<|im_end|>y\n", allowed_special="all")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40), st.sampled_from([None, *NORMALIZERS]))
def test_trace_is_consistent_on_random_text(text, normalizer):
    check_trace(Pipeline(trained(), normalizer=normalizer, eos="<|eos|>"), text, disallowed_special=())


def test_trace_shows_proxy_pieces():
    pipe = Pipeline(trained(), normalizer="NFKC")
    stages = {s.name: s for s in pipe.trace("Ａ① hi")}
    assert stages["normalizer"].output == "A1 hi"
    assert stages["model"].show().split(" | ")[-1].replace(" ", "") == to_proxy(b" hi")


# ---------------------------------------------------------------- every tokenizer toklab offers


def _sentencepiece_lines() -> list[str]:
    return [ln for name in ("en", "zh", "mixed") for ln in corpus.load(name, 40_000).splitlines() if ln.strip()]


@lru_cache(maxsize=None)
def _built(name: str):
    """The tokenizers toklab offers that are not real vocabularies, trained here on small slices."""
    if name == "trained-bpe":
        return trained()
    if name == "wordpiece":
        return small_wordpiece()
    if name == "bert-cls-sep":  # BERT's stages as a plain Pipeline, with its [CLS] ... [SEP] template
        vocab = _built("wordpiece").get_vocab()
        return Pipeline(
            WordPieceModel(vocab),
            normalizer=BertNormalizer(),
            pre_tokenizer=BertPreTokenizer(),
            post_processor=TemplateProcessing("[CLS] $A [SEP]", {"[CLS]": vocab["[CLS]"], "[SEP]": vocab["[SEP]"]}),
            decoder=WordPieceDecoder(),
        )
    if name == "sp-unigram":  # nmt_nfkc, no byte fallback: uncovered characters become <unk>
        sp = train_sentencepiece(_sentencepiece_lines(), vocab_size=2000, model_type="unigram")
        return SentencePieceTokenizer.from_sentencepiece(sp)
    if name == "sp-bpe":  # lossless: identity, whitespace kept, byte fallback
        sp = train_sentencepiece(
            _sentencepiece_lines(), vocab_size=2000, model_type="bpe", normalization_rule_name="identity",
            remove_extra_whitespaces=False, byte_fallback=True,
        )
        return SentencePieceTokenizer.from_sentencepiece(sp)
    if name == "pipeline-nfkc-bos-eos":
        return Pipeline(trained(), normalizer="NFKC", bos="<|bos|>", eos="<|eos|>")
    raise KeyError(name)


TOKENIZERS = [
    "r50k_base", "cl100k_base", "o200k_base", "trained-bpe", "wordpiece", "bert-cls-sep",
    "sp-unigram", "sp-bpe", "pipeline-nfkc-bos-eos",
]


@pytest.fixture(scope="module")
def tokenizer(real):
    """``tokenizer(name)``: one of `TOKENIZERS`, built once."""
    return lambda name: real(name)[1] if name.endswith("_base") else _built(name)


def _rebuild_sentencepiece(tok: SentencePieceTokenizer, text: str, flat: list[str], ids: list[int]) -> bytes:
    """The normalized text from the model stage: byte pieces as bytes, an unknown run as its own text."""
    surfaces = tok.encode_as_pieces(text)
    assert len(surfaces) == len(flat)
    out = b""
    for token, surface, i in zip(flat, surfaces, ids):
        kind = tok.kind(i)
        if kind == "byte":
            assert surface == token
            out += bytes([int(token[3:5], 16)])
        else:
            assert surface == token or (kind == "unknown" and token == tok.id_to_token(tok.unk_id))
            out += surface.encode("utf-8")
    return out


def check_any_trace(tok, text: str, **options) -> dict:
    """What `toklab.trace` promises for any tokenizer; returns the outputs by stage name."""
    stages = toklab.trace(tok, text, **options)
    assert tuple(s.name for s in stages) == STAGES
    assert all(isinstance(s, Stage) for s in stages)
    out = {s.name: s.output for s in stages}
    assert out["input"] == text
    assert "".join(piece for piece, _ in out["specials"]) == text
    assert isinstance(out["normalizer"], str)
    assert all(isinstance(p, str) and p for p in out["pre_tokenizer"])
    assert len(out["model"]) == len(out["pre_tokenizer"]) and all(out["model"])
    flat = [t for pieces in out["model"] for t in pieces]
    ids = out["ids"]
    assert len(stages[STAGES.index("model")]) == len(flat) == len(ids)
    # the model stage's tokens are the tokens of the IDs stage, one for one
    assert [tok.id_to_token(i) for i in ids] == flat
    assert [tok.token_to_id(t) for t in flat] == ids
    encoded = tok.encode(text, **options)
    assert out["post_processor"] == encoded
    if getattr(tok, "post_processor", None) is None and not (options.get("add_bos") or options.get("add_eos")):
        assert ids == encoded
    # the concatenated model tokens decode as the IDs do, and give back the normalized text
    assert tok.decoder.decode(flat) == tok.decode(ids)
    if isinstance(tok, SentencePieceTokenizer):
        assert out["pre_tokenizer"] == ([out["normalizer"]] if out["normalizer"] else [])
        assert _rebuild_sentencepiece(tok, text, flat, ids) == out["normalizer"].encode("utf-8")
    elif flat and isinstance(flat[0], bytes):  # byte-level BPE, alone or in a Pipeline
        assert "".join(out["pre_tokenizer"]) == out["normalizer"]
        for pretoken, pieces in zip(out["pre_tokenizer"], out["model"]):
            assert b"".join(pieces) == pretoken.encode("utf-8")
    elif isinstance(tok, Pipeline) and isinstance(tok.model, WordPieceModel):
        assert out["pre_tokenizer"] == tok.pre_tokenize(out["normalizer"])
        unk, prefix = tok.model.unk_token, tok.model.prefix
        for pretoken, pieces in zip(out["pre_tokenizer"], out["model"]):
            if pieces != [unk]:
                assert all(p.startswith(prefix) for p in pieces[1:])
                assert pieces[0] + "".join(p[len(prefix):] for p in pieces[1:]) == pretoken
    return out


@pytest.mark.parametrize("name", TOKENIZERS)
def test_trace_of_every_tokenizer_on_the_corpus(name, tokenizer):
    tok = tokenizer(name)
    texts = [ln for text in sample_texts() for ln in text.splitlines(keepends=True)[:150]]
    texts.append(corpus.load("mixed", 8000))  # many lines at once: newlines and CRLF inside one input
    seen = set()
    for text in texts:
        out = check_any_trace(tok, text)
        seen.update(out["ids"])
    assert len(seen) > 300  # the corpus lines exercise a good part of the vocabulary
    # ...including the paths where a token is not the text: unknowns, byte pieces, [UNK]
    if name == "sp-unigram":
        assert tok.unk_id in seen
    if name == "sp-bpe":
        assert any(tok.kind(i) == "byte" for i in seen)
    if name in ("wordpiece", "bert-cls-sep"):
        assert tok.model.unk_id in seen


_FRAGMENTS = [
    " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u200b", "\ufeff", "\u2581", "##", "[UNK]", "<s>", "<unk>",
    "<0x41>", "Ａ①", "ﬃ", "e\u0301", "\u0301", "İ", "ß", "龘", "北京", "😀", "👨\u200d👩\u200d👧", "12345", "don't",
]
_TEXT = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=40),
    st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.characters(blacklist_categories=("Cs",))), max_size=20).map(
        "".join
    ),
)


@pytest.mark.parametrize("name", TOKENIZERS)
@settings(max_examples=100)
@given(text=_TEXT)
def test_trace_of_every_tokenizer_on_random_text(name, tokenizer, text):
    check_any_trace(tokenizer(name), text)


def test_trace_ids_stage_is_before_the_post_processor():
    pipe = _built("pipeline-nfkc-bos-eos")
    out = check_any_trace(pipe, "Ａ① hello")
    assert out["normalizer"] == "A1 hello"
    specials = pipe.special_tokens
    assert out["post_processor"] == [specials["<|bos|>"], *out["ids"], specials["<|eos|>"]]
    bert = _built("bert-cls-sep")
    out = check_any_trace(bert, "Hello, World!")
    vocab = bert.model.get_vocab()
    assert out["pre_tokenizer"] == ["hello", ",", "world", "!"]
    assert out["post_processor"] == [vocab["[CLS]"], *out["ids"], vocab["[SEP]"]]
    assert bert.decode(out["post_processor"]) == bert.decode(out["ids"])


@pytest.mark.parametrize("name", ["sp-unigram", "sp-bpe"])
def test_trace_of_sentencepiece_with_bos_and_eos(name):
    tok = _built(name)
    text = corpus.load("en", 2000).splitlines()[0]
    out = check_any_trace(tok, text, add_bos=True, add_eos=True)
    bos, eos = tok.token_to_id("<s>"), tok.token_to_id("</s>")
    assert out["ids"] == tok.encode(text)  # control symbols never come from text
    assert out["post_processor"] == [bos, *out["ids"], eos] == tok.encode(text, add_bos=True, add_eos=True)


def test_trace_names_what_it_cannot_trace():
    with pytest.raises(TypeError, match="Unigram has no pipeline to trace"):
        toklab.trace(Unigram({"a": -1.0}), "a")
