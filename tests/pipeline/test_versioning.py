"""toklab.pipeline.versioning: a fingerprint that changes with every component and nothing else."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import pytest

import toklab
from toklab.base.special import chatml
from toklab.data import corpus, vocabs
from toklab.decoders import ByteLevelDecoder
from toklab.pipeline import versioning
from toklab.sentencepiece import train_sentencepiece

from ..helpers import small_wordpiece

TEXT = corpus.load("en", 40_000)


@pytest.fixture(scope="module")
def small_bpe():
    return toklab.bpe.train([TEXT], 400, pattern="cl100k", special_tokens=["<|endoftext|>"])


def _pipe(tok, **stages):
    return toklab.Pipeline(tok, **stages)


def test_each_component_changes_only_its_own_hash(small_bpe):
    base = _pipe(small_bpe, chat_template=chatml)
    merges = small_bpe.merges
    variants = {
        "normalizer": _pipe(small_bpe, chat_template=chatml, normalizer="NFKC"),
        "pre_tokenizer": _pipe(toklab.ByteBPE(merges, pattern="gpt2", special_tokens=small_bpe.special_tokens),
                               chat_template=chatml),
        "model": _pipe(toklab.ByteBPE(merges[:-1], pattern="cl100k", special_tokens=small_bpe.special_tokens),
                       chat_template=chatml),
        "special_tokens": _pipe(toklab.ByteBPE(merges, pattern="cl100k",
                                               special_tokens=["<|endoftext|>", "<|pad|>"]), chat_template=chatml),
        "post_processor": _pipe(small_bpe, chat_template=chatml, eos="<|endoftext|>"),
        "decoder": _pipe(small_bpe, chat_template=chatml, decoder=ByteLevelDecoder(errors="strict")),
        "chat_template": _pipe(small_bpe, chat_template=lambda m, g=False: [
            (t.replace("<|im_end|>\n", "<|im_end|>\n\n"), trusted) for t, trusted in chatml(m, g)]),
    }
    assert base.model.fingerprint() == small_bpe.fingerprint()
    for component, other in variants.items():
        changed = versioning.diff(base, other)
        assert changed == [component], (component, changed)
        assert other.fingerprint() != base.fingerprint()
    same = _pipe(toklab.ByteBPE(merges, pattern="cl100k", special_tokens=["<|endoftext|>"]), chat_template=chatml)
    assert same.fingerprint() == base.fingerprint() and versioning.diff(base, same) == []


def test_library_version_is_a_component(small_bpe, monkeypatch):
    assert versioning.library_versions()["toklab"] == toklab.__version__
    before = versioning.component_hashes(small_bpe)
    newer = {**versioning.library_versions(), "toklab": toklab.__version__ + ".post1"}
    monkeypatch.setattr(versioning, "library_versions", lambda: newer)
    after = versioning.component_hashes(small_bpe)
    assert versioning.diff(before, after) == ["library"]


def test_only_the_vocabulary_saved_gives_other_ids():
    """The accident: the same ranks reloaded with another pattern."""
    spec = vocabs.load("cl100k_base")
    right = toklab.ByteBPE.from_ranks(spec.ranks, pattern=spec.pattern, special_tokens=spec.special_tokens)
    wrong = toklab.ByteBPE.from_ranks(spec.ranks, pattern="gpt2", special_tokens=spec.special_tokens)
    text = "Version 12345 of the file,  with  spaces.\n\n  Done"
    assert right.encode(text) != wrong.encode(text)
    assert versioning.diff(right, wrong) == ["pre_tokenizer"]


def test_every_tokenizer_kind_has_a_fingerprint(tmp_path):
    wp = small_wordpiece()
    sp = train_sentencepiece(TEXT, vocab_size=300, model_type="unigram")
    sp_tok = toklab.SentencePieceTokenizer.from_sentencepiece(sp)
    unigram = toklab.sentencepiece.load_unigram(sp)
    for tok in (wp, sp_tok, unigram):
        first = tok.fingerprint()
        assert first == versioning.fingerprint(tok) and len(first) == 64
        assert set(versioning.component_hashes(tok)) == set(versioning.COMPONENTS)
    sp_bpe = toklab.SentencePieceTokenizer.from_sentencepiece(
        train_sentencepiece(TEXT, vocab_size=300, model_type="bpe"))
    assert "model" in versioning.diff(sp_tok, sp_bpe)
    other_config = toklab.SentencePieceTokenizer(sp_tok.pieces, dataclasses.replace(sp_tok.config,
                                                                                    add_dummy_prefix=False))
    assert versioning.diff(sp_tok, other_config) == ["normalizer", "decoder"]


def test_manifest_records_and_names_what_changed(small_bpe, tmp_path):
    path = tmp_path / "tokenizer.manifest.json"
    written = versioning.write_manifest(small_bpe, path)
    assert written["fingerprint"] == versioning.fingerprint(small_bpe)
    versioning.check_manifest(small_bpe, path)  # matches: no error
    moved = toklab.ByteBPE(small_bpe.merges, pattern="gpt2", special_tokens=small_bpe.special_tokens)
    with pytest.raises(ValueError, match="pre_tokenizer changed"):
        versioning.check_manifest(moved, path)
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not a readable"):
        versioning.check_manifest(small_bpe, tmp_path / "bad.json")
    (tmp_path / "other.json").write_text('{"format": "x"}', encoding="utf-8")
    with pytest.raises(ValueError, match="not a toklab tokenizer manifest"):
        versioning.check_manifest(small_bpe, tmp_path / "other.json")


def test_undescribable_things_are_refused():
    with pytest.raises(TypeError, match="cannot fingerprint"):
        versioning.fingerprint(object())
    with pytest.raises(TypeError, match="cannot describe"):
        versioning.describe_value(object())
    assert versioning.describe_value({b"a": {1, 2}}) == {"map": [[{"bytes": "61"}, {"set": [1, 2]}]]}


_SCRIPT = """
import toklab
from toklab.base.special import chatml
from toklab.data import corpus, vocabs
from toklab.pipeline import versioning
tok = toklab.bpe.train([corpus.load("en", 20_000)], 300, pattern="cl100k", special_tokens=["<|endoftext|>"])
print(toklab.Pipeline(tok, normalizer="NFKC", chat_template=chatml).fingerprint())
"""


def test_fingerprint_is_the_same_across_processes_and_hash_seeds():
    prints = set()
    for seed in ("0", "1", "987"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        res = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        prints.add(res.stdout.strip())
    assert len(prints) == 1


def test_a_saved_tokenizer_records_its_fingerprint(small_bpe, tmp_path):
    path = tmp_path / "bpe.json"
    written = versioning.save(small_bpe, path)
    assert versioning.manifest_path(path) == tmp_path / "bpe.json.manifest.json"
    assert written["fingerprint"] == versioning.fingerprint(small_bpe)
    loaded = toklab.ByteBPE.load(path)
    assert versioning.fingerprint(loaded) == written["fingerprint"]
    versioning.check_manifest(loaded, versioning.manifest_path(path))
    # BERT's vocab.txt holds the vocabulary only: reloaded with other normalizer options,
    # the manifest names the component that was not saved
    wp = small_wordpiece()
    vocab_txt = tmp_path / "vocab.txt"
    versioning.save(wp, vocab_txt)
    versioning.check_manifest(toklab.WordPiece.load(vocab_txt), versioning.manifest_path(vocab_txt))
    cased = toklab.WordPiece.load(vocab_txt, lowercase=False)
    assert wp.encode("Hello World") != cased.encode("Hello World")
    with pytest.raises(ValueError, match="its normalizer changed"):
        versioning.check_manifest(cased, versioning.manifest_path(vocab_txt))
    with pytest.raises(TypeError, match="has no save"):
        versioning.save(toklab.Pipeline(small_bpe, normalizer="NFKC"), tmp_path / "pipe.json")
    assert not (tmp_path / "pipe.json.manifest.json").exists()
