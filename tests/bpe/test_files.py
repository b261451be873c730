"""The ``toklab-bpe`` file format (`toklab.bpe.files`): round trips, fingerprints, damaged files."""

from __future__ import annotations

import json

import pytest

from toklab.bpe import ByteBPE

from .helpers import EOT


def test_save_load_round_trip(tok, sample, tmp_path):
    path = tmp_path / "tok.json"
    tok.save(path)
    back = ByteBPE.load(path)
    assert back.merges == tok.merges
    assert back.vocab == tok.vocab
    assert back.special_tokens == tok.special_tokens
    assert back.pattern == tok.pattern
    assert back.fingerprint() == tok.fingerprint()
    assert back.encode(sample, allowed_special="all") == tok.encode(sample, allowed_special="all")
    payload = json.loads(path.read_text(encoding="utf-8"))
    assert payload["sha256"] == tok.fingerprint()
    assert payload["format"] == "toklab-bpe"
    # merges are stored readably in GPT-2's proxy alphabet
    assert all(len(line.split(" ")) == 2 for line in payload["merges"])


def test_save_load_real_vocab(real, tmp_path, corpus_texts):
    """r50k's IDs are not 'bytes then merges', so the file must carry the vocab too."""
    _, t, enc = real("r50k_base")
    path = tmp_path / "r50k.json"
    t.save(path)
    back = ByteBPE.load(path)
    text = corpus_texts["mixed"][:50_000]
    assert back.encode(text) == t.encode(text) == enc.encode(text)
    assert back.fingerprint() == t.fingerprint()
    assert back.n_vocab == 50_257


def test_fingerprint_changes_with_content(tok):
    other = ByteBPE(tok.merges[:-1], pattern=tok.pattern, special_tokens=list(tok.special_tokens))
    assert other.fingerprint() != tok.fingerprint()
    other = ByteBPE(tok.merges, pattern="cl100k", special_tokens=list(tok.special_tokens))
    assert other.fingerprint() != tok.fingerprint()
    other = ByteBPE(tok.merges, pattern=tok.pattern, special_tokens=[EOT])
    assert other.fingerprint() != tok.fingerprint()
    same = ByteBPE(tok.merges, pattern=tok.pattern, special_tokens=list(tok.special_tokens))
    assert same.fingerprint() == tok.fingerprint()


def test_tampered_file_fails_sha256(tok, tmp_path):
    path = tmp_path / "tok.json"
    tok.save(path)
    payload = json.loads(path.read_text(encoding="utf-8"))
    payload["merges"][10], payload["merges"][11] = payload["merges"][11], payload["merges"][10]
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=1), encoding="utf-8")
    with pytest.raises(ValueError, match="SHA-256"):
        ByteBPE.load(path)


def test_truncated_file_raises(tok, tmp_path):
    path = tmp_path / "tok.json"
    tok.save(path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(ValueError, match="truncated"):
        ByteBPE.load(path)


def test_wrong_format_and_version_raise(tok, tmp_path):
    path = tmp_path / "tok.json"
    tok.save(path)
    good = json.loads(path.read_text(encoding="utf-8"))
    for field, value, msg in [("format", "hf-tokenizer", "format"), ("version", 99, "version")]:
        bad = dict(good, **{field: value})
        path.write_text(json.dumps(bad), encoding="utf-8")
        with pytest.raises(ValueError, match=msg):
            ByteBPE.load(path)
    path.write_text("[1, 2, 3]", encoding="utf-8")
    with pytest.raises(ValueError, match="format"):
        ByteBPE.load(path)
    no_hash = dict(good)
    del no_hash["sha256"]
    path.write_text(json.dumps(no_hash), encoding="utf-8")
    with pytest.raises(ValueError, match="sha256"):
        ByteBPE.load(path)
