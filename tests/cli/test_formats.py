"""``--model FILE``: every format toklab reads is recognised by its content, anything else is named and refused."""

from __future__ import annotations

import gzip
import json

import pytest
import sentencepiece as spm
from hypothesis import given
from hypothesis import strategies as st

from toklab import ByteBPE, SentencePieceTokenizer, WordPiece, formats
from toklab.data import corpus, vocabs
from toklab.sentencepiece import load as load_model_file
from toklab.sentencepiece.model_file import SPConfig

MIXED = corpus.load("mixed", 20_000)


@pytest.fixture(scope="module")
def files(tmp_path_factory, trained):
    """One file of each readable format (and a few that are not) in one folder."""
    folder = tmp_path_factory.mktemp("formats")
    ranks = vocabs.r50k_path()
    out = {
        "toklab-bpe": trained["bpe"],
        "toklab-sentencepiece": trained["unigram"],
        "wordpiece": trained["wordpiece"],
        "sentencepiece": vocabs.wheel_file("mistral-v1"),
        "tiktoken": ranks,
    }
    hf_json = folder / "tokenizer.json"
    hf_json.write_text(WordPiece.load(trained["wordpiece"]).to_hf_json(), encoding="utf-8")
    out["hf-tokenizer"] = hf_json
    gz = folder / "r50k_base.tiktoken.gz"
    gz.write_bytes(gzip.compress(ranks.read_bytes()))
    out["tiktoken.gz"] = gz
    return out


@pytest.mark.parametrize("fmt", ["toklab-bpe", "toklab-sentencepiece", "wordpiece", "sentencepiece", "tiktoken",
                                 "tiktoken.gz", "hf-tokenizer"])
def test_each_format_is_recognised_from_its_content(files, fmt, tmp_path):
    path = files[fmt]
    assert formats.detect(path) == fmt.removesuffix(".gz")
    renamed = tmp_path / ("model.gz" if fmt.endswith(".gz") else "model.bin")  # the name does not decide
    renamed.write_bytes(path.read_bytes())
    assert formats.detect(renamed) == fmt.removesuffix(".gz")


def test_loaded_files_encode_like_the_libraries_that_wrote_them(files, trained):
    _, bpe = formats.load(files["toklab-bpe"])
    assert bpe.encode(MIXED) == ByteBPE.load(trained["bpe"]).encode(MIXED)
    _, wp = formats.load(files["wordpiece"], wordpiece_options={"lowercase": False})
    assert isinstance(wp, WordPiece) and not wp.lowercase
    assert wp.encode(MIXED) == WordPiece.load(files["wordpiece"], lowercase=False).encode(MIXED)
    _, mistral = formats.load(files["sentencepiece"])
    real = spm.SentencePieceProcessor(model_file=str(files["sentencepiece"]))
    assert mistral.encode(MIXED) == real.encode(MIXED)
    _, r50k = formats.load(files["tiktoken.gz"])
    assert r50k.encode(MIXED) == ByteBPE.from_tiktoken("r50k_base").encode(MIXED)


def test_the_cli_encodes_a_real_sentencepiece_model_as_sentencepiece_does(toklab, files):
    text = "Tokenizers split text; 分词器把文本切开。"
    result = toklab("encode", text, "--model", files["sentencepiece"], "--json")
    real = spm.SentencePieceProcessor(model_file=str(files["sentencepiece"]))
    assert json.loads(result.out) == real.encode(text)
    assert toklab("decode", result.out, "--model", files["sentencepiece"], "-n").out == real.decode(real.encode(text))


def test_the_cli_encodes_a_tokenizer_json_as_hugging_face_does(toklab, files):
    from tokenizers import Tokenizer

    real = Tokenizer.from_file(str(files["hf-tokenizer"]))
    for text in (MIXED[:2000], "Héllo, WORLD!  unaffable 分词器 🙂\tend"):
        result = toklab("encode", text, "--model", files["hf-tokenizer"], "--json")
        assert result.status == 0, result.err
        assert json.loads(result.out) == real.encode(text).ids


def test_sentencepiece_json_round_trip_keeps_every_piece_and_setting(trained, tmp_path):
    tok = formats.load_sentencepiece(trained["unigram"])
    again = tmp_path / "again.json"
    formats.save_sentencepiece(tok, again)
    back = formats.load_sentencepiece(again)
    assert back.pieces == tok.pieces and back.config == tok.config
    assert again.read_text(encoding="utf-8") == trained["unigram"].read_text(encoding="utf-8")
    assert back.encode(MIXED) == tok.encode(MIXED)


def test_sentencepiece_json_holds_a_real_model_with_its_compiled_table(files, tmp_path):
    mistral = load_model_file(files["sentencepiece"])
    path = tmp_path / "mistral.json"
    formats.save_sentencepiece(mistral, path)
    back = formats.load_sentencepiece(path)
    assert back.config == mistral.config  # the charsmap (compiled normalization table) included
    assert back.pieces == mistral.pieces
    assert back.encode(MIXED) == mistral.encode(MIXED)


@pytest.fixture(scope="module")
def unigram_pair(tmp_path_factory):
    """A Unigram model with byte fallback, and the same model after a save and a load."""
    from toklab.unigram import train

    entries = train(["▁" + w for w in MIXED.split()], 500, byte_fallback=True).entries()
    tok = SentencePieceTokenizer(entries, SPConfig(byte_fallback=True))
    path = tmp_path_factory.mktemp("unigram") / "u.json"
    formats.save_sentencepiece(tok, path)
    return tok, formats.load_sentencepiece(path)


@given(text=st.text(max_size=60))
def test_a_saved_and_reloaded_unigram_model_encodes_any_text_the_same(unigram_pair, text):
    tok, back = unigram_pair
    assert back.encode(text) == tok.encode(text)


def test_a_tampered_or_truncated_sentencepiece_json_is_refused(trained, tmp_path):
    text = trained["unigram"].read_text(encoding="utf-8")
    edited = tmp_path / "edited.json"
    edited.write_text(text.replace('"<s>"', '"<S>"', 1), encoding="utf-8")
    with pytest.raises(ValueError, match="fails its SHA-256 check"):
        formats.load_sentencepiece(edited)
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(ValueError, match="truncated or not JSON"):
        formats.load_sentencepiece(cut)
    data = json.loads(text)
    data["version"] = 9
    other = tmp_path / "v9.json"
    other.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="format version 9"):
        formats.load_sentencepiece(other)


def test_files_toklab_does_not_read_are_named_and_refused(tmp_path, files):
    from tokenizers import Tokenizer, models, pre_tokenizers

    hf = Tokenizer(models.WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    cases = {
        "tokenizer.json": (hf.to_str(), "tokenizer.json toklab cannot load: model WordLevel is not implemented"),
        "other.json": ('{"format": "something-else"}', "format field 'something-else'"),
        "list.json": ("[1, 2, 3]", "JSON but not a tokenizer file"),
        "broken.json": ('{"format": "toklab-bpe", ', "does not parse"),
        "m.vocab": ("<unk>\t0\n<s>\t0\n▁the\t-3.1\n", "sentencepiece .vocab file"),
        "notes.txt": ("just some notes\nabout tokenizers\n", "would need a line holding the unknown token '[UNK]'"),
        "empty.txt": ("", "is empty"),
    }
    for name, (content, phrase) in cases.items():
        path = tmp_path / name
        path.write_text(content, encoding="utf-8")
        with pytest.raises(formats.FormatError) as info:
            formats.load(path)
        assert phrase in str(info.value), (name, str(info.value))
    junk = tmp_path / "junk.model"
    junk.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(formats.FormatError, match="binary file but not a sentencepiece .model"):
        formats.load(junk)
    fake_gz = tmp_path / "notes.gz"
    fake_gz.write_bytes(gzip.compress(b"hello"))
    with pytest.raises(formats.FormatError, match="gzip-compressed but not a tiktoken rank file"):
        formats.load(fake_gz)
    with pytest.raises(formats.FormatError, match="no such file"):
        formats.load(tmp_path / "missing.json")
    with pytest.raises(formats.FormatError, match="is a directory"):
        formats.load(tmp_path)


def test_a_damaged_toklab_bpe_file_is_one_line_on_the_command_line(toklab, trained, tmp_path):
    data = json.loads(trained["bpe"].read_text(encoding="utf-8"))
    data["merges"] = data["merges"][:-1]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    result = toklab("encode", "hi", "--model", bad)
    assert result.status == 1 and "fails its SHA-256 check" in result.error()


def test_wordpiece_options_need_a_vocab_txt_and_unk_token_finds_one(toklab, tmp_path, trained):
    bert = tmp_path / "bert-vocab.txt"  # blingfire's table spells the specials in lower case
    bert.write_text("".join(t + "\n" for t in vocabs.bert_vocab()), encoding="utf-8")
    assert toklab("encode", "hi", "--model", bert).status == 1
    ok = toklab("encode", "Tokenizers", "--model", bert, "--unk-token", "[unk]")
    assert ok.status == 0
    assert [int(i) for i in ok.out.split()] == WordPiece(vocabs.bert_vocab(), unk_token="[unk]").encode("Tokenizers")
    misplaced = toklab("encode", "hi", "--model", trained["bpe"], "--cased")
    assert misplaced.status == 2 and "none was given" in misplaced.error()
