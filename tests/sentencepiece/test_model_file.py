"""Reading ``.model`` files (`toklab.sentencepiece.model_file`), and the errors of the tokenizer object."""

from __future__ import annotations

from dataclasses import replace

import pytest

from toklab.sentencepiece import SentencePieceTokenizer, load
from toklab.sentencepiece.model_file import SPConfig, parse_model_proto

from .helpers import tiny_tokenizer


def test_load_model_file(sp_model, tmp_path, eval_lines):
    sp = sp_model(model_type="bpe", byte_fallback=True)
    path = tmp_path / "m.model"
    path.write_bytes(sp.serialized_model_proto())
    tok = load(path)
    assert tok.config.charsmap is not None and tok.config.model_type == "bpe"
    assert [tok.encode(ln) for ln in eval_lines[::20]] == [sp.encode(ln) for ln in eval_lines[::20]]
    # The hand-written config and the one read from the model agree.
    by_hand = SPConfig(model_type="bpe", normalization="nmt_nfkc", byte_fallback=True)
    assert replace(tok.config, charsmap=None) == by_hand
    pieces, config = parse_model_proto(sp.serialized_model_proto())
    assert [p.piece for p in pieces] == [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    assert config == tok.config


def test_errors(sp_model, tmp_path):
    garbage = tmp_path / "garbage.model"
    garbage.write_bytes(b"this is not a sentencepiece model\xff\xfe")
    with pytest.raises(ValueError, match="garbage.model"):
        load(garbage)
    blob = sp_model(model_type="unigram").serialized_model_proto()
    truncated = tmp_path / "truncated.model"
    for cut in [*range(1, 40), *range(1000, 1040), len(blob) // 2, len(blob) - 1]:
        truncated.write_bytes(blob[:cut])
        with pytest.raises(ValueError, match="truncated.model"):
            load(truncated)
    empty = tmp_path / "empty.model"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="empty.model"):
        load(empty)
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing.model")

    tok = tiny_tokenizer()
    with pytest.raises(ValueError, match=f"unknown token ID {len(tok)}: valid IDs are 0..{len(tok) - 1}"):
        tok.decode([0, len(tok)])
    with pytest.raises(ValueError, match="unknown token ID -1"):
        tok.id_to_piece(-1)
    with pytest.raises(KeyError, match="not a piece"):
        tok.token_to_id("zzz")
    assert tok.piece_to_id("zzz") == tok.unk_id  # sentencepiece's rule for its own lookup
    with pytest.raises(KeyError):
        tok.decode_pieces(["a", "zzz"])
    with pytest.raises(TypeError):
        tok.encode(b"bytes")
    with pytest.raises(ValueError, match="model_type"):
        SPConfig(model_type="word")
    with pytest.raises(ValueError, match="normalization"):
        SPConfig(normalization="nfkc_cf")
    with pytest.raises(ValueError, match="byte_fallback"):
        tiny_tokenizer(byte_fallback=True)
    with pytest.raises(ValueError, match="unknown piece"):
        SentencePieceTokenizer([("a", 0.0)], SPConfig())
    with pytest.raises(ValueError, match="twice"):
        SentencePieceTokenizer([("<unk>", 0.0, "unknown"), ("a", 0.0), ("a", -1.0)])
    with pytest.raises(ValueError, match="kind"):
        SentencePieceTokenizer([("<unk>", 0.0, "unknown"), ("a", 0.0, "special")])
    no_bos = SentencePieceTokenizer([("<unk>", 0.0, "unknown"), ("a", 0.0)], SPConfig(normalization="identity"))
    with pytest.raises(ValueError, match="<s>"):
        no_bos.encode("a", add_bos=True)
