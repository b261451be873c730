"""``train``: the CLI trains what toklab's trainers train, saves what ``--model`` reads, and refuses bad input early."""

from __future__ import annotations

import pytest

from toklab import ByteBPE, SentencePieceTokenizer, WordPiece, formats, train_bpe, train_unigram, train_wordpiece
from toklab.normalizers import SentencePieceNormalizer
from toklab.sentencepiece.model_file import SPConfig


def _read(*paths) -> list[str]:
    return [p.read_text(encoding="utf-8") for p in paths]


def test_bpe_on_several_files_is_the_trainer_on_those_documents(toklab, texts, tmp_path):
    out = tmp_path / "bpe.json"
    result = toklab("train", "bpe", texts["en"], texts["code"], "--vocab-size", 420, "--pattern", "cl100k",
                    "--special", "<|endoftext|>", "-o", out)
    assert result.status == 0, result.err
    assert "420 entries (256 bytes + 163 merges + 1 special tokens)" in result.out
    assert f"use it with --model {out}" in result.out
    expected = train_bpe(_read(texts["en"], texts["code"]), 420, pattern="cl100k", special_tokens=["<|endoftext|>"])
    got = ByteBPE.load(out)
    assert got.merges == expected.merges and got.special_tokens == expected.special_tokens
    assert got.pattern == "cl100k"


def test_wordpiece_is_the_trainer_with_the_same_options(toklab, texts, tmp_path):
    out = tmp_path / "vocab.txt"
    result = toklab("train", "wordpiece", texts["en"], "--vocab-size", 700, "--cased", "--score", "frequency",
                    "-o", out)
    assert result.status == 0, result.err
    assert f"--model {out} --cased" in result.out  # vocab.txt keeps no settings: the CLI says what to pass
    expected = train_wordpiece(_read(texts["en"]), 700, lowercase=False, score="frequency")
    assert WordPiece.load(out, lowercase=False).get_vocab() == expected.get_vocab()


def test_unigram_trains_on_normalized_escaped_lines_as_sentencepiece_does(toklab, texts, tmp_path):
    out = tmp_path / "unigram.json"
    result = toklab("train", "unigram", texts["en"], texts["zh"], "--vocab-size", 1200, "--byte-fallback", "-o", out)
    assert result.status == 0, result.err
    assert "toklab-sentencepiece JSON" in result.out and "cannot write" not in result.out and "yet" not in result.out
    config = SPConfig(model_type="unigram", byte_fallback=True)
    normalizer = SentencePieceNormalizer(config)
    lines = [normalizer.normalize(line) for text in _read(texts["en"], texts["zh"]) for line in text.splitlines()]
    model = train_unigram([s for s in lines if s], 1200, special_tokens=("<s>", "</s>"), byte_fallback=True)
    expected = SentencePieceTokenizer(model.entries(), config)
    got = formats.load_sentencepiece(out)
    assert got.pieces == expected.pieces and got.config == config
    assert [p.piece for p in got.pieces[:3]] == ["<unk>", "<s>", "</s>"]
    assert got.encode("never seen: ☃") == expected.encode("never seen: ☃")  # byte fallback: nothing unknown
    assert got.unk_id not in got.encode("never seen: ☃")


def test_a_corpus_too_small_for_the_size_asked_is_said_not_hidden(toklab, tmp_path):
    tiny = tmp_path / "tiny.txt"
    tiny.write_text("aaaa", encoding="utf-8")
    result = toklab("train", "bpe", tiny, "--vocab-size", 1000, "-o", tmp_path / "t.json")
    assert result.status == 0
    assert "258 entries" in result.out and "filled only 258 of the 1,000 entries" in result.out


def test_the_progress_bar_appears_on_request(toklab, texts, tmp_path, monkeypatch):
    monkeypatch.setenv("TQDM_DELAY", "0")  # show it at once (by default only steps longer than a second show one)
    result = toklab("train", "bpe", texts["en"], "--vocab-size", 300, "-o", tmp_path / "p.json", "--progress")
    assert result.status == 0 and "BPE merges" in result.err
    quiet = toklab("train", "bpe", texts["en"], "--vocab-size", 300, "-o", tmp_path / "q.json")
    assert quiet.err == ""  # standard error is not a terminal here


def test_bad_input_is_refused_before_training_with_one_line(toklab, texts, tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("ok line\n".encode() * 1000 + "café au lait".encode("latin-1"))
    cut = tmp_path / "cut.txt"
    cut.write_bytes("ok line\n".encode() * 1000 + "世界".encode()[:-1])
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    out = tmp_path / "out.json"
    cases = [
        (("train", "bpe", bad, "--vocab-size", 300, "-o", out), 1, "byte 0xE9 at offset 8003 cannot be decoded"),
        (("train", "wordpiece", cut, "--vocab-size", 300, "-o", out), 1, "byte 0xE7 at offset 8003 starts one"),
        (("train", "bpe", tmp_path / "missing.txt", "--vocab-size", 300, "-o", out), 1, "no such file"),
        (("train", "bpe", tmp_path, "--vocab-size", 300, "-o", out), 1, "is a directory"),
        (("train", "bpe", empty, "--vocab-size", 300, "-o", out), 1, "corpus is empty"),
        (("train", "wordpiece", empty, "--vocab-size", 300, "-o", out), 1, "corpus is empty"),
        (("train", "unigram", empty, "--vocab-size", 300, "-o", out), 1, "corpus is empty"),
        (("train", "bpe", texts["en"], "--vocab-size", 100, "-o", out), 1, "at least 256"),
        (("train", "unigram", texts["zh"], "--vocab-size", 50, "-o", out), 1, "is too small"),
        (("train", "bpe", texts["en"], "--vocab-size", "300.5", "-o", out), 2, "'300.5' is not a whole number"),
        (("train", "bpe", texts["en"], "--vocab-size", 0, "-o", out), 2, "must be at least 1"),
        (("train", "bpe", texts["en"], "-o", out), 2, "--vocab-size"),
        (("train", "bpe", texts["en"], "--vocab-size", 300), 2, "-o/--output"),
        (("train", "bpe", texts["en"], "--vocab-size", 300, "-o", texts["en"]), 2, "is one of the training files"),
        (("train", "bpe", texts["en"], "--vocab-size", 300, "-o", tmp_path / "no" / "x.json"), 1, "does not exist"),
        (("train", "bpe", texts["en"], "--vocab-size", 300, "--pattern", "gpt5", "-o", out), 2, "invalid choice"),
        (("train", "bpe", texts["en"], "--vocab-size", 300, "--cased", "-o", out), 2, "unrecognized arguments"),
        (("train", "sentencepiece", texts["en"]), 2, "invalid choice: 'sentencepiece'"),
        (("train",), 2, "required: ALGORITHM"),
    ]
    for argv, status, phrase in cases:
        result = toklab(*argv)
        assert result.status == status, (argv, result)
        assert phrase in result.error(), (argv, result.err)
    assert not out.exists()


@pytest.mark.parametrize("algorithm", ["bpe", "wordpiece", "unigram"])
def test_each_algorithm_has_its_help(toklab, algorithm):
    result = toklab("train", algorithm, "--help")
    assert result.status == 0 and "--vocab-size N" in result.out and result.err == ""
