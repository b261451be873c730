"""Bad inputs through the command line: damaged files, endless inputs, control characters, closed streams.

Each one ends in one line naming what is wrong (status 1, or 2 for a usage error),
never a traceback, a hang, memory filling up, or text sent raw to the terminal.
"""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys

import pytest
import sentencepiece as spm

from toklab import ByteBPE, formats, train_bpe
from toklab.base import files as base_files
from toklab.bpe import files
from toklab.cli import base as cli_base
from toklab.cli import training
from toklab.measure.viz import terminal_safe

SMALL_LIMIT = 1 << 20  # what the tests below let a stream give before it counts as endless


@pytest.fixture
def small_stream_limit(monkeypatch):
    monkeypatch.setattr(cli_base, "STREAM_LIMIT", SMALL_LIMIT)
    monkeypatch.setattr(training, "STREAM_LIMIT", SMALL_LIMIT)


@pytest.fixture(scope="module")
def bpe_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("bad") / "good.json"
    train_bpe("hello world, the quick brown fox " * 20, 270).save(path)
    return path


def _tampered(bpe_file, tmp_path, **fields):
    """A copy of the toklab-bpe file with ``fields`` changed (None: removed) and its checksum recomputed."""
    content = json.loads(bpe_file.read_text(encoding="utf-8"))
    del content["sha256"]
    for key, value in fields.items():
        if value is None:
            del content[key]
        else:
            content[key] = value
    path = tmp_path / "tampered.json"
    files.write(path, content)
    return path


# ----------------------------------------------------------------------------- damaged files (items 7, 10)


@pytest.mark.parametrize("fields,phrase", [
    ({"merges": 5}, "the field 'merges' must be a list of \"left right\" strings, got int 5"),
    ({"pattern": 12}, "the field 'pattern' must be a regular expression or a pattern name"),
    ({"special_tokens": {"<x>": "7"}}, "the field 'special_tokens' must be an object mapping each special token"),
    ({"vocab": {"x": "a"}}, "vocab has the key 'x', which is not an ID"),
    ({"merges": ["a"]}, "merge 0 is malformed: 'a'"),
    ({"merges": None}, "lacks the field merges a toklab-bpe file holds"),
    ({"vocab": None, "merges": None}, "lacks the fields merges, vocab"),
    ({"pattern": "(unclosed"}, "pattern does not compile"),
], ids=["merges-int", "pattern-int", "special-str", "vocab-key", "merge-line", "no-merges", "no-vocab", "bad-regex"])
def test_a_checksummed_but_malformed_toklab_bpe_file_is_named(toklab, bpe_file, tmp_path, fields, phrase):
    path = _tampered(bpe_file, tmp_path, **fields)
    result = toklab("encode", "hello", "--model", path)
    assert result.status == 1
    assert phrase in result.error() and path.name in result.error()
    with pytest.raises(ValueError, match="tampered.json"):
        ByteBPE.load(path)


def test_json_nested_too_deeply_is_named_not_a_recursion_error(toklab, tmp_path):
    for name, text in (("deep.json", "[" * 100_000 + "]" * 100_000),
                       ("deep-bpe.json", '{"format": "toklab-bpe", "x": ' + "[" * 100_000)):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        result = toklab("encode", "hello", "--model", path)
        assert result.status == 1 and name in result.error()
        with pytest.raises(ValueError, match="nested too deeply|not a valid"):
            ByteBPE.load(path)


def test_a_text_file_in_another_encoding_is_said_to_be_one(toklab, tmp_path):
    latin = tmp_path / "words.txt"
    latin.write_bytes("café crème brûlée, déjà vu\n".encode("latin-1") * 20)
    error = toklab("encode", "hello", "--model", latin).error()
    assert "byte 0xE9 at offset 3 is not UTF-8 (a text file in another encoding, such as Latin-1?" in error
    assert "protobuf" not in error and "wire type" not in error


# ----------------------------------------------------------------------------- endless inputs (item 8)


def test_model_files_that_are_not_regular_files_are_refused_before_opening(toklab, tmp_path):
    assert "/dev/zero is a device, not a regular file" in toklab("encode", "hi", "--model", "/dev/zero").error()
    assert f"{tmp_path} is a directory" in toklab("encode", "hi", "--model", tmp_path).error()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    # A subprocess with a timeout: were the FIFO opened, this would block for ever with no writer.
    done = subprocess.run([sys.executable, "-m", "toklab", "encode", "hi", "--model", str(fifo)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"toklab encode: error: {fifo} is a FIFO, not a regular file: toklab reads "
                                        "tokenizer files only from ordinary files (a pipe or a device may block or "
                                        "never end)"]


def test_endless_text_inputs_stop_at_a_bound(toklab, tmp_path, small_stream_limit):
    bound = f"/dev/zero gave more than {SMALL_LIMIT:,} bytes without ending"
    assert bound in toklab("compare", "/dev/zero", "--vocab", "r50k_base").error()
    assert bound in toklab("train", "bpe", "/dev/zero", "--vocab-size", 300, "-o", tmp_path / "t.json").error()
    assert bound in toklab("train", "unigram", "/dev/zero", "--vocab-size", 300, "-o", tmp_path / "t.json").error()
    endless = "x" * (SMALL_LIMIT + 1)
    assert "standard input gave more than" in toklab("encode", "--vocab", "r50k_base", stdin=endless).error()
    assert not (tmp_path / "t.json").exists()


def test_training_reads_a_pipe_once(tmp_path):
    """A pipe is not a regular file, yet a finite one trains as the same text in a file does."""
    text = "".join(f"the quick brown fox {i} jumps over the lazy dog\n" for i in range(400))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(text, encoding="utf-8")
    out = {"file": tmp_path / "from-file.json", "pipe": tmp_path / "from-pipe.json"}
    command = [sys.executable, "-m", "toklab", "train", "bpe", "--vocab-size", "300", "-o"]
    done = subprocess.run([*command, str(out["file"]), str(corpus)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([*command, str(out["pipe"]), "/dev/stdin"], input=text, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert ByteBPE.load(out["pipe"]).merges == ByteBPE.load(out["file"]).merges


# ----------------------------------------------------------------------------- the terminal (item 9)


def test_show_makes_control_characters_visible(toklab, tmp_path):
    text = "a\x1b[31mred\x07bell\x1b]0;title\x07 \u202eevil\x9b"
    for color in ("never", "always"):
        out = toklab("show", text, "--vocab", "r50k_base", "--color", color).out
        assert "\x07" not in out and "\u202e" not in out and "\x9b" not in out
        assert "␛" in out and "␇" in out  # (r50k cuts U+202E and U+009B into bytes, shown as hex)
        if color == "never":
            assert "\x1b" not in out
        else:  # only the colours toklab itself chose
            assert re.sub(r"\x1b\[[0-9;]*m", "", out).count("\x1b") == 0
    assert terminal_safe("\u202eevil\x9b\x7f\x00") == "<U+202E>evil<U+009B>\u2421\u2400"
    odd = tmp_path / "tok\x1b[2J\x07.json"  # a file name is printed too
    train_bpe("hello world " * 30, 260).save(odd)
    named = toklab("show", "x", "--model", odd)
    assert "\x1b" not in named.out and "\x07" not in named.out


# ----------------------------------------------------------------------------- clear messages (item 10)


def test_the_output_is_checked_before_training(toklab, texts, tmp_path, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("training started although the output cannot be written")

    monkeypatch.setattr(training, "train_bpe", never)
    monkeypatch.setattr(training, "train_unigram", never)
    (tmp_path / "dir.json").mkdir()
    for out, phrase in ((tmp_path / "dir.json", "it is a directory"),
                        (tmp_path / "missing" / "t.json", f"directory {tmp_path / 'missing'} does not exist")):
        for algorithm in ("bpe", "unigram"):
            result = toklab("train", algorithm, texts["en"], "--vocab-size", 300, "-o", out)
            assert result.status == 1 and f"cannot write {out}" in result.error() and phrase in result.error()


def test_a_write_that_fails_after_training_names_the_file(toklab, texts, tmp_path, monkeypatch):
    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    out = tmp_path / "t.json"
    out.write_text("previous", encoding="utf-8")
    monkeypatch.setattr(base_files.os, "fsync", full)
    result = toklab("train", "bpe", texts["en"], "--vocab-size", 300, "-o", out)
    assert result.status == 1
    assert result.error() == (f"toklab train: error: cannot write {out}: No space left on device (the previous file, "
                              "if any, is unchanged)")
    assert out.read_text(encoding="utf-8") == "previous"


def test_train_unigram_writes_a_model_file_sentencepiece_loads(toklab, texts, tmp_path):
    out = tmp_path / "u.model"
    result = toklab("train", "unigram", texts["en"], "--vocab-size", 600, "-o", out)
    assert result.status == 0, result.err
    assert "cannot write" not in result.out and "yet" not in result.out
    assert "sentencepiece .model, which the sentencepiece library loads" in result.out
    real = spm.SentencePieceProcessor(model_file=str(out))
    text = texts["en"].read_text(encoding="utf-8")[:3000]
    _, ours = formats.load(out)
    assert ours.encode(text) == real.encode(text)


def test_train_unigram_skips_long_lines_and_says_how_many(toklab, texts, tmp_path):
    corpus = tmp_path / "long.txt"
    corpus.write_text(texts["en"].read_text(encoding="utf-8") + "x" * 50_000 + "\n" + "é" * 3000 + "\n",
                      encoding="utf-8")
    result = toklab("train", "unigram", corpus, "--vocab-size", 600, "-o", tmp_path / "u.json")
    assert result.status == 0, result.err
    assert "skipped 2 lines longer than 4,192 bytes (the longest 50,000;" in result.out
    only = tmp_path / "only.txt"
    only.write_text("y" * 5000 + "\n", encoding="utf-8")
    error = toklab("train", "unigram", only, "--vocab-size", 600, "-o", tmp_path / "v.json").error()
    assert "every line is longer than --max-sentence-length=4,192 bytes (1 skipped)" in error
    assert toklab("train", "unigram", only, "--vocab-size", 600, "--max-sentence-length", "-1",
                  "-o", tmp_path / "v.json").status == 2


# ----------------------------------------------------------------------------- closed streams (items 7, 11)


def test_a_closed_standard_output_is_an_error_not_a_silent_success(tmp_path):
    done = subprocess.run(["bash", "-c", f"{sys.executable} -m toklab encode hello --vocab r50k_base >&-"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "toklab encode: error: standard output is closed, so there is nowhere to print the result"]


def test_a_closed_standard_input_is_one_line(toklab):
    done = subprocess.run(["bash", "-c", f"{sys.executable} -m toklab encode --vocab r50k_base <&-"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stderr.strip().splitlines() == [
        "toklab encode: error: no text: standard input is closed"]
