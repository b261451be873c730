"""BERT's ``vocab.txt``: round trips, Hugging Face's reader and writer, and damaged files."""

from __future__ import annotations

import pytest
from tokenizers import Tokenizer, models

from toklab.wordpiece import WordPiece

from .helpers import ours_small


def test_save_load_round_trip_and_hf_compatibility(tmp_path):
    vocab = ours_small()
    tok = WordPiece(vocab, lowercase=False)
    path = tmp_path / "vocab.txt"
    tok.save(path)
    assert path.read_text(encoding="utf-8") == "".join(t + "\n" for t in vocab)
    back = WordPiece.load(path, lowercase=False)
    assert back.vocab == tok.vocab and back.lowercase is False
    assert models.WordPiece.read_file(str(path)) == tok.get_vocab()
    hf = Tokenizer(models.WordPiece(tok.get_vocab(), unk_token="[UNK]"))
    hf.model.save(str(tmp_path), "hf")
    assert WordPiece.load(tmp_path / "hf-vocab.txt").vocab == tok.vocab


@pytest.mark.parametrize(
    "content, message",
    [
        ("[UNK]\na\nb\na\n", "line 4 repeats token 'a' from line 2"),
        ("[UNK]\n\nb\n", "line 2 is empty"),
        ("", "empty"),
        ("just some notes\nabout tokenizers\n", "vocab.txt: unk_token '\\[UNK\\]' is not in the vocabulary"),
    ],
)
def test_load_rejects_bad_files(tmp_path, content, message):
    path = tmp_path / "vocab.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message) as info:
        WordPiece.load(path)
    assert str(path) in str(info.value)  # every message names the file


def test_load_rejects_invalid_utf8_naming_the_line(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"[UNK]\nok\nbad\xff\n")
    with pytest.raises(ValueError, match="line 3 is not valid UTF-8"):
        WordPiece.load(path)


def test_load_accepts_crlf(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"[UNK]\r\na\r\n##b\r\n")
    assert WordPiece.load(path).get_vocab() == {"[UNK]": 0, "a": 1, "##b": 2}
