"""Hugging Face ``tokenizer.json`` both ways: toklab's ``to_hf_json`` and `toklab.formats.hf_json.from_hf_json`.

Every comparison runs HF's own ``tokenizers.Tokenizer.from_str`` on the JSON
and requires HF's IDs on the parity sample (tests/helpers.py: a fixed slice of
the corpus holding every script and kind of run it has, as multi-line blocks and
line by line; the encoders themselves are proven on the whole corpus elsewhere)
plus adversarial text, and equal decodes. For sentencepiece
models the measured differences between the two libraries (float32 ties,
``Precompiled``'s grapheme rule, added tokens cut out of text) are asserted
precisely: each mismatch is shown to be one of them, and a toklab model that
follows HF's arithmetic (``engine="tokenizers"``) matches HF everywhere.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import unicodedata

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import toklab
from toklab import sentencepiece as tsp
from toklab.base.pieces import SPACE
from toklab.base.special import chatml
from toklab.data import corpus
from toklab.formats.hf_json import SentencePieceSegmenter, Unsupported, from_hf_json, read_document
from toklab.sentencepiece import train_sentencepiece
from toklab.sentencepiece.hf import hf_merges
from toklab.unigram import Unigram

from ..helpers import sample_blocks, sample_lines

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers  # noqa: E402

ADVERSARIAL = [
    "", " ", "   ", "\t\n", "\r\n\r\n", "\x00", "\x01\x02", "\x7f", "\u00a0", "\u3000", "\u200b", "\u200d", "\ufeff",
    SPACE, SPACE * 3, " " + SPACE, "Ａ", "①", "ﬃ", "é", "e\u0301", "\u0301", "¨", "～", "龘", "😀", "\ufffdx",
    "👨\u200d👩\u200d👧", "🇫🇷", "\U0001f3fb", "  leading", "trailing  ", "a  b", "x" * 500, "-" * 57, "=" * 80,
    "0123456789" * 5, "don't I'm we'll", "HELLO wOrLd", "中文 and English, 日本語も。한국어", "def f(x):\n    return x\n",
    "<s>", "</s>", "<unk>", "<0x41>", "[CLS] hi [SEP]", "<|endoftext|>", "a<|endoftext|>b",
]
TEXT = st.lists(st.one_of(st.sampled_from(ADVERSARIAL), st.characters(blacklist_categories=("Cs",))),
                max_size=16).map("".join)


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """The parity sample as blocks of consecutive lines, then the adversarial strings."""
    return list(sample_blocks()) + ADVERSARIAL


@pytest.fixture(scope="module")
def lines() -> list[str]:
    """The parity sample line by line (sentencepiece encodes sentences), then the adversarial strings."""
    return list(sample_lines()) + ADVERSARIAL


def hf_of(tokenizer) -> Tokenizer:
    return Tokenizer.from_str(tokenizer.to_hf_json())


# ----------------------------------------------------------------------------- byte-level BPE


@pytest.fixture(scope="module")
def trained_bpe():
    return toklab.train_bpe(corpus.load("en", max_bytes=150_000) + corpus.load("zh", max_bytes=60_000), 1500,
                            pattern="cl100k", special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"])


@pytest.mark.parametrize("name", ["trained", "cl100k_base"])
def test_byte_level_bpe_to_hf_json(name, trained_bpe, texts):
    tok = trained_bpe if name == "trained" else toklab.ByteBPE.from_tiktoken(name)
    hf = hf_of(tok)
    for text in texts:
        ids = tok.encode(text, allowed_special="all")
        assert hf.encode(text).ids == ids, text[:80]
        assert hf.decode(ids, skip_special_tokens=False) == tok.decode(ids)
    back = from_hf_json(tok.to_hf_json())
    assert isinstance(back, toklab.ByteBPE) and back.special_tokens == tok.special_tokens
    assert back.vocab == tok.vocab and back.pattern == tok.pattern


@given(TEXT)
def test_byte_level_bpe_random_text(trained_bpe, text):
    hf = _cached_hf(trained_bpe)
    ids = trained_bpe.encode(text, allowed_special="all")
    assert hf.encode(text).ids == ids
    assert hf.decode(ids, skip_special_tokens=False) == trained_bpe.decode(ids)


_HF_CACHE: dict[int, Tokenizer] = {}


def _cached_hf(tok) -> Tokenizer:
    key = id(tok)
    if key not in _HF_CACHE:
        _HF_CACHE[key] = hf_of(tok)
    return _HF_CACHE[key]


def test_pipeline_with_normalizer_template_and_added_tokens(trained_bpe, lines):
    pipe = toklab.Pipeline(trained_bpe, normalizer="NFC", bos="<|im_start|>", eos="<|im_end|>",
                           chat_template=chatml, non_special_tokens={"<|endoftext|>"})
    document = json.loads(pipe.to_hf_json())
    flags = {t["content"]: (t["special"], t["normalized"], t["lstrip"], t["rstrip"], t["single_word"])
             for t in document["added_tokens"]}
    assert flags == {"<|endoftext|>": (False, False, False, False, False),
                     "<|im_start|>": (True, False, False, False, False), "<|im_end|>": (True, False, False, False, False)}
    hf = Tokenizer.from_str(pipe.to_hf_json())
    back = from_hf_json(document)
    assert isinstance(back, toklab.Pipeline) and back.non_special_tokens == {"<|endoftext|>"}
    for text in lines:
        # HF's NFC tables are older than Python's: compare where both normalize alike (all but a few new characters).
        if hf.normalizer.normalize_str(text) != unicodedata.normalize("NFC", text):
            continue
        ids = pipe.encode(text, allowed_special="all")
        assert hf.encode(text).ids == ids == back.encode(text, allowed_special="all")
        assert hf.decode(ids, skip_special_tokens=True) == pipe.decode(ids, skip_special_tokens=True)
        assert back.decode(ids, skip_special_tokens=True) == pipe.decode(ids, skip_special_tokens=True)
    ids = pipe.encode("a<|endoftext|>b", allowed_special="all")
    assert "<|endoftext|>" in pipe.decode(ids, skip_special_tokens=True)  # kept: not special
    assert "<|im_start|>" not in pipe.decode(ids, skip_special_tokens=True)


def test_tokenizer_json_trained_by_hf_loads_into_byte_bpe(texts):
    hf_tok = tokenizers.ByteLevelBPETokenizer()
    hf_tok.train_from_iterator([corpus.load("en", max_bytes=150_000), corpus.load("code", max_bytes=80_000)],
                               vocab_size=1500, special_tokens=["<|endoftext|>"], show_progress=False)
    hf = Tokenizer.from_str(hf_tok._tokenizer.to_str())  # HF's own file: ignore_merges=false, GPT-2's regex
    tok = from_hf_json(hf.to_str())
    assert isinstance(tok, toklab.ByteBPE) and tok.pattern == "gpt2-2019"
    for text in texts:
        ids = hf.encode(text).ids
        assert tok.encode(text, allowed_special="all") == ids, text[:80]
        assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False)


# ----------------------------------------------------------------------------- WordPiece


@pytest.mark.parametrize("lowercase", [True, False])
def test_wordpiece_to_hf_json(lowercase, texts):
    wp = toklab.train_wordpiece(corpus.load("en", max_bytes=150_000) + corpus.load("zh", max_bytes=60_000), 3000,
                                lowercase=lowercase)
    hf = hf_of(wp)
    for text in texts:
        ids = wp.encode(text)
        assert hf.encode(text).ids == ids, text[:80]
        assert hf.decode(ids) == wp.decode(ids)
    back = from_hf_json(wp.to_hf_json())
    assert isinstance(back, toklab.WordPiece) and back.get_vocab() == wp.get_vocab()
    assert (back.lowercase, back.strip_accents) == (wp.lowercase, wp.strip_accents)


def test_bert_tokenizer_json_from_hf(lines):
    hf_tok = tokenizers.BertWordPieceTokenizer()
    hf_tok.train_from_iterator([corpus.load("en", max_bytes=150_000)], vocab_size=3000, show_progress=False)
    hf = Tokenizer.from_str(hf_tok._tokenizer.to_str())
    hf.post_processor = tokenizers.processors.BertProcessing(("[SEP]", hf.token_to_id("[SEP]")),
                                                             ("[CLS]", hf.token_to_id("[CLS]")))
    wp = from_hf_json(hf.to_str())
    assert isinstance(wp, toklab.WordPiece) and set(wp.special_tokens) == set(toklab.wordpiece.BERT_SPECIAL_TOKENS)
    for text in lines + ["[CLS] hello [SEP] world [MASK]", "x[PAD]y"]:
        ids = hf.encode(text).ids
        assert wp.encode(text, allowed_special="all") == ids, text[:80]
        assert wp.decode(ids, skip_special_tokens=True) == hf.decode(ids, skip_special_tokens=True)
    assert json.loads(wp.to_hf_json())["post_processor"]["type"] == "TemplateProcessing"


# ----------------------------------------------------------------------------- sentencepiece models


def train_lines(size: int = 120_000) -> list[str]:
    return [ln for name in ("en", "zh", "mixed") for ln in corpus.load(name, max_bytes=size).split("\n") if ln]


SP_MODELS = {
    "toklab-unigram": lambda: tsp.train(train_lines(), 3000, model_type="unigram"),
    "toklab-bpe-bytes": lambda: tsp.train(train_lines(), 3000, model_type="bpe", byte_fallback=True),
    "sentencepiece-unigram-bytes": lambda: tsp.SentencePieceTokenizer.from_sentencepiece(
        train_sentencepiece(train_lines(), vocab_size=3000, byte_fallback=True)),
    "sentencepiece-bpe-identity": lambda: tsp.SentencePieceTokenizer.from_sentencepiece(
        train_sentencepiece(train_lines(), vocab_size=3000, model_type="bpe", normalization_rule_name="identity",
                            remove_extra_whitespaces=False, byte_fallback=True)),
}


@functools.cache
def sp_model(name: str):
    return SP_MODELS[name]()


def hf_engine(tok) -> toklab.Pipeline:
    """``tok`` as HF runs it, read back from its JSON: HF's arithmetic, added tokens cut out of text first."""
    return from_hf_json(tok.to_hf_json())


@pytest.mark.parametrize("name", sorted(SP_MODELS))
def test_sentencepiece_to_hf_json(name, lines):
    tok = sp_model(name)
    hf = hf_of(tok)
    exact = hf_engine(tok)
    differ = []
    for text in lines:
        ids, ours = hf.encode(text).ids, tok.encode(text)
        if ids != ours:
            differ.append(text)
            assert ids == exact.encode(text, allowed_special="all"), text[:80]
        assert hf.decode(ours, skip_special_tokens=True) == tok.decode(ours)
    explained = []
    u64 = Unigram.from_entries([tuple(p) for p in tok.pieces], byte_fallback=False)
    for text in differ:
        ours, theirs = tok.encode_as_pieces(text), hf.encode(text).tokens
        if any(r in text for r in ("<s>", "</s>", "<unk>", "<0x")):
            explained.append("reserved")  # HF cuts added tokens out of the text first
        elif hf.normalizer.normalize_str(text) != tok.normalize(text):
            explained.append("grapheme rule")  # HF's Precompiled works per grapheme cluster
        else:
            # An exact tie: both segmentations score the same in exact arithmetic (the same pieces in another
            # order); sentencepiece's float32 rounding, HF's earliest start and its parsed scores decide.
            assert tok.config.model_type == "unigram" and sorted(ours) == sorted(theirs), text[:80]
            assert u64.log_prob(ours) == u64.log_prob(theirs), text[:80]
            explained.append("tie")
    assert len(explained) == len(differ)
    if tok.config.model_type == "bpe":
        assert set(explained) <= {"reserved", "grapheme rule"}
    assert len(differ) < 0.005 * len(lines)


@pytest.mark.parametrize("name", sorted(SP_MODELS))
def test_sentencepiece_round_trip_through_tokenizer_json(name, lines):
    tok = sp_model(name)
    text = tok.to_hf_json()
    back = from_hf_json(text)
    assert isinstance(back, toklab.Pipeline) and isinstance(back.model, SentencePieceSegmenter)
    assert back.model.tokenizer.config.engine == "tokenizers"
    hf = Tokenizer.from_str(text)
    # What HF itself writes back after reading the file (its parsed scores): the same as toklab's copy.
    assert json.loads(back.to_hf_json()) == json.loads(hf.to_str())
    for line in lines:
        ids = hf.encode(line).ids
        assert back.encode(line, allowed_special="all") == ids, line[:80]
    for line in lines[::7]:
        ids = hf.encode(line).ids
        assert back.decode(ids, skip_special_tokens=True) == hf.decode(ids, skip_special_tokens=True)


@given(TEXT)
def test_sentencepiece_random_text_equals_hf_with_hf_arithmetic(text):
    tok = _small_sp()
    hf = _cached_hf(tok)
    assert hf.encode(text).ids == _SMALL[1].encode(text, allowed_special="all")


_SMALL: list = []


def _small_sp():
    if not _SMALL:
        tok = tsp.train(train_lines(40_000), 1500, model_type="unigram", byte_fallback=True, character_coverage=0.995)
        _SMALL.extend([tok, hf_engine(tok)])
    return _SMALL[0]


def llama_style_json(tok) -> str:
    """A ``tokenizer.json`` written the way HF's Llama converter writes one (legacy normalizer, byte fallback)."""
    vocab = {p.piece: i for i, p in enumerate(tok.pieces)}
    hf = Tokenizer(models.BPE(vocab, hf_merges(tok.pieces), unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    hf.normalizer = normalizers.Sequence([normalizers.Prepend(SPACE), normalizers.Replace(" ", SPACE)])
    hf.decoder = decoders.Sequence([decoders.Replace(SPACE, " "), decoders.ByteFallback(), decoders.Fuse(),
                                    decoders.Strip(" ", 1, 0)])
    hf.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in ("<unk>", "<s>", "</s>")])
    return hf.to_str()


def test_llama_style_tokenizer_json(lines):
    sp = train_sentencepiece(train_lines(), vocab_size=3000, model_type="bpe", normalization_rule_name="identity",
                             remove_extra_whitespaces=False, byte_fallback=True)
    text = llama_style_json(tsp.SentencePieceTokenizer.from_sentencepiece(sp))
    hf = Tokenizer.from_str(text)
    back = from_hf_json(text)
    assert back.model.tokenizer.config.unk_surface == "<unk>"  # HF's Llama decoder prints the piece
    for line in lines:
        ids = hf.encode(line).ids
        assert back.encode(line, allowed_special="all") == ids, line[:80]
        if not any(t in line for t in ("<s>", "</s>", "<unk>")):
            assert ids == sp.encode(line)  # and sentencepiece's own IDs
    for line in lines[::9]:
        ids = hf.encode(line).ids
        assert back.decode(ids, skip_special_tokens=True) == hf.decode(ids, skip_special_tokens=True)
    assert back.model.tokenizer.to_model_proto()  # BPE without a table: the same in sentencepiece, so writable


# ----------------------------------------------------------------------------- what is refused, by name


def _document(tok) -> dict:
    return json.loads(tok.to_hf_json())


@pytest.fixture(scope="module")
def small_docs(trained_bpe):
    wp = toklab.WordPiece(["[UNK]", "[CLS]", "[SEP]", "a", "b", "##b", "ab"])
    return {"bpe": _document(trained_bpe), "wordpiece": _document(wp), "sp": _document(_small_sp())}


def _edit(document: dict, path: list, value) -> dict:
    document = json.loads(json.dumps(document))
    node = document
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return document


REFUSED = [
    ("bpe", ["truncation"], {"max_length": 8}, "truncation"),
    ("bpe", ["padding"], {"pad_id": 0}, "padding"),
    ("bpe", ["model", "dropout"], 0.1, "dropout"),
    ("bpe", ["model", "byte_fallback"], True, "byte_fallback"),
    ("bpe", ["pre_tokenizer"], {"type": "Whitespace"}, "Whitespace"),
    ("bpe", ["pre_tokenizer"], {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                                "use_regex": True}, "add_prefix_space"),
    ("bpe", ["normalizer"], {"type": "Lowercase"}, "Lowercase"),
    ("bpe", ["decoder"], {"type": "Fuse"}, "Fuse"),
    ("bpe", ["post_processor"], {"type": "Foo"}, "Foo"),
    ("bpe", ["added_tokens", 0, "lstrip"], True, "lstrip"),
    ("bpe", ["added_tokens", 0, "rstrip"], True, "rstrip"),
    ("bpe", ["added_tokens", 0, "single_word"], True, "single_word"),
    ("bpe", ["model", "type"], "WordLevel", "WordLevel"),
    ("wordpiece", ["normalizer"], {"type": "NFC"}, "NFC"),
    ("wordpiece", ["pre_tokenizer"], {"type": "Whitespace"}, "Whitespace"),
    ("wordpiece", ["decoder"], {"type": "WordPiece", "prefix": "@@", "cleanup": True}, "WordPiece"),
    ("sp", ["pre_tokenizer"], {"type": "Sequence", "pretokenizers": [{"type": "Whitespace"}, {
        "type": "Metaspace", "replacement": SPACE, "prepend_scheme": "first", "split": False}]}, "Whitespace"),
    ("sp", ["normalizer"], {"type": "NFKC"}, "NFKC"),
    ("sp", ["decoder"], {"type": "WordPiece", "prefix": "##", "cleanup": True}, "WordPiece"),
    ("sp", ["model", "unk_id"], None, "unk_id"),
]


@pytest.mark.parametrize("family,path,value,named", REFUSED, ids=[f"{r[0]}-{r[3]}" for r in REFUSED])
def test_unsupported_components_are_refused_by_name(small_docs, family, path, value, named):
    with pytest.raises(Unsupported, match=named):
        from_hf_json(_edit(small_docs[family], path, value))


def test_normalized_added_token_is_refused_only_where_it_matters(small_docs, trained_bpe):
    plain = _edit(small_docs["bpe"], ["added_tokens", 0, "normalized"], True)
    assert from_hf_json(plain).encode("x<|endoftext|>", allowed_special="all")[-1] == \
        trained_bpe.special_tokens["<|endoftext|>"]  # no normalizer: matching before or after it is the same
    with pytest.raises(Unsupported, match="normalized=true"):
        from_hf_json(_edit(plain, ["normalizer"], {"type": "NFC"}))


def test_merges_toklab_cannot_follow_are_refused():
    # (b, c) before (a, b): HF never makes "abc" from a + bc, merging by the rank of "abc" (toklab, tiktoken) would.
    from toklab.base.unicode import to_proxy

    document = json.loads(Tokenizer(models.BPE({"a": 0}, [])).to_str())
    document["model"]["vocab"] = {to_proxy(bytes([b])): b for b in range(256)} | {"bc": 256, "ab": 257, "abc": 258}
    document["model"]["merges"] = [["b", "c"], ["a", "b"], ["ab", "c"]]
    document["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                 "use_regex": True}
    document["decoder"] = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
    with pytest.raises(Unsupported, match=r"merge 2 \(b'ab', b'c'\)"):
        from_hf_json(document)
    document["model"]["merges"] = [["a", "b"], ["b", "c"], ["ab", "c"]]
    tok = from_hf_json(document)
    assert tok.encode("abc") == Tokenizer.from_str(json.dumps(document)).encode("abc").ids == [258]


def test_files_and_bad_documents(tmp_path, trained_bpe):
    path = tmp_path / "tokenizer.json"
    path.write_text(trained_bpe.to_hf_json(), encoding="utf-8")
    assert from_hf_json(path).vocab == trained_bpe.vocab == from_hf_json(str(path)).vocab
    with pytest.raises(FileNotFoundError):
        from_hf_json(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text('{"model": {', encoding="utf-8")
    with pytest.raises(ValueError, match="broken.json is not a valid tokenizer.json file"):
        from_hf_json(broken)
    deep = tmp_path / "deep.json"
    deep.write_text('{"model": ' + "[" * 100_000, encoding="utf-8")
    with pytest.raises(ValueError, match="nested too deeply"):
        from_hf_json(deep)
    document = json.loads(trained_bpe.to_hf_json())
    for key, value, phrase in (("vocab", None, "lacks the field 'vocab'"), ("merges", 5, "wrong type or shape")):
        bad = json.loads(json.dumps(document))
        if value is None:
            del bad["model"][key]
        else:
            bad["model"][key] = value
        with pytest.raises(ValueError, match=phrase):
            from_hf_json(bad)
    with pytest.raises(ValueError, match="not a tokenizer.json"):
        from_hf_json('{"vocab": {}}')
    with pytest.raises(ValueError, match="not a tokenizer.json"):
        from_hf_json('{"model": 3}')
    with pytest.raises(TypeError, match="got bytes"):
        from_hf_json(b"{}")
    with pytest.raises(TypeError, match="got int 42"):
        from_hf_json(42)
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{")
    with pytest.raises(ValueError, match="not UTF-8"):
        read_document(binary)


def test_writers_refuse_what_hf_cannot_hold():
    pieces = [("<unk>", 0.0, "unknown"), ("<tag>", 0.0, "user"), (SPACE, -1.0), ("a", -2.0)]
    with pytest.raises(ValueError, match="user piece '<tag>'"):
        tsp.SentencePieceTokenizer(pieces, tsp.SPConfig(normalization="identity")).to_hf_json()
    unused = [("<unk>", 0.0, "unknown"), ("ab", 0.0, "unused"), (SPACE, -1.0), ("a", -2.0), ("b", -3.0)]
    with pytest.raises(ValueError, match="unused piece 'ab'"):
        tsp.SentencePieceTokenizer(unused, tsp.SPConfig(normalization="identity")).to_hf_json()
    by_rule = tsp.SentencePieceTokenizer([("<unk>", 0.0, "unknown"), ("a", -1.0)], tsp.SPConfig())
    with pytest.raises(ValueError, match="compiled table"):
        by_rule.to_hf_json()
    holes = [("<unk>", 0.0, "unknown"), ("ab", -1.0), ("a", -2.0)]  # "b" is no piece: HF could not merge into "ab"
    with pytest.raises(ValueError, match="'b', which is not a piece"):
        tsp.SentencePieceTokenizer(holes, tsp.SPConfig(model_type="bpe", normalization="identity")).to_hf_json()


def test_a_hf_engine_model_is_converted_explicitly_before_it_is_written():
    _small_sp()
    tok = _SMALL[1].model.tokenizer
    with pytest.raises(ValueError, match="engine='sentencepiece'"):
        tok.to_model_proto()
    converted = tsp.SentencePieceTokenizer(tok.pieces, dataclasses.replace(tok.config, engine="sentencepiece"))
    back = tsp.SentencePieceTokenizer.from_model_proto(converted.to_model_proto()).pieces
    assert [(p.piece, p.kind) for p in back] == [(p.piece, p.kind) for p in tok.pieces]
    assert all(abs(b.score - p.score) <= 1e-6 * abs(p.score) for b, p in zip(back, tok.pieces))  # float32 now
