"""Training is a pure function of its input: no hash seed, process count or source type leaks in."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections import Counter

import pytest

from toklab import bpe
from toklab.bpe import trainer
from toklab.data import corpus

EOT = "<|endoftext|>"

# A corpus with many exact ties (repeated short documents) so that any
# dependence on set/dict iteration order would show up in the merge order.
_SCRIPT = textwrap.dedent(
    """
    import sys
    from toklab import bpe
    from toklab.data import corpus
    docs = [corpus.load(n, 30_000) for n in sorted(corpus.CORPUS)]
    text = "<|endoftext|>".join(docs) + "<|endoftext|>" + "ab ba cd dc ef fe " * 50
    out = []
    for tie in ("smallest", "largest"):
        tok = bpe.train(text, 256 + 400 + 1, special_tokens=["<|endoftext|>"], tie_break=tie)
        tok.save(sys.argv[1] + "." + tie + ".json")
        out.append(tok.fingerprint())
    print(" ".join(out))
    """
)


def _train_in_subprocess(seed: str, dest) -> str:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    res = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(dest)], env=env, capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


def test_identical_across_hash_seeds(tmp_path):
    prints = {}
    files = {}
    for seed in ("0", "1", "12345"):
        dest = tmp_path / f"seed{seed}"
        prints[seed] = _train_in_subprocess(seed, dest)
        files[seed] = [(tmp_path / f"seed{seed}.{t}.json").read_bytes() for t in ("smallest", "largest")]
    assert len(set(prints.values())) == 1, prints
    assert files["0"] == files["1"] == files["12345"]
    smallest, largest = prints["0"].split()
    assert smallest != largest  # the two tie-breaks give different tokenizers
    # and the parent process (random hash seed unless the caller set one) agrees
    docs = [corpus.load(n, 30_000) for n in sorted(corpus.CORPUS)]
    text = EOT.join(docs) + EOT + "ab ba cd dc ef fe " * 50
    here = bpe.train(text, 256 + 400 + 1, special_tokens=[EOT])
    assert here.fingerprint() == smallest


@pytest.fixture(scope="module")
def multi_doc_file(tmp_path_factory):
    """~400 KB: slices of every corpus file joined by special tokens, written with CRLF intact."""
    text = EOT.join(corpus.load(n, 100_000) for n in corpus.CORPUS) + EOT + "tail text 123"
    path = tmp_path_factory.mktemp("det") / "train.txt"
    path.write_bytes(text.encode("utf-8"))
    return path, text


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_file_chunking_does_not_change_counts(pattern, multi_doc_file, monkeypatch):
    """A file is read in pieces cut at safe points; with tiny pieces the counts must not change."""
    path, text = multi_doc_file
    whole = bpe.pretoken_counts(text, pattern, special_tokens=[EOT])
    for size in (4096, 25_000):
        monkeypatch.setattr(trainer, "BLOCK_CHARS", size)
        assert bpe.pretoken_counts(path, pattern, special_tokens=[EOT]) == whole, size
        # str sources are chunked the same way when counted in parallel
        assert list(trainer.text_blocks(text, pattern, [EOT])) != [text]
        assert "".join(trainer.text_blocks(text, pattern, [EOT])) == text
        pieces = [bpe.pretoken_counts(p, pattern, [EOT]) for p in trainer.text_blocks(text, pattern, [EOT])]
        assert sum(pieces, Counter()) == whole


def test_file_chunking_without_specials(multi_doc_file, monkeypatch, tmp_path):
    _, text = multi_doc_file
    text = text.replace(EOT, "\n")
    path = tmp_path / "plain.txt"
    path.write_bytes(text.encode("utf-8"))
    monkeypatch.setattr(trainer, "BLOCK_CHARS", 3000)
    assert bpe.pretoken_counts(path, "gpt2") == bpe.pretoken_counts(text, "gpt2")


def test_identical_across_processes_and_sources(multi_doc_file, monkeypatch):
    path, text = multi_doc_file
    monkeypatch.setattr(trainer, "BLOCK_CHARS", 60_000)  # several chunks for the workers
    kwargs = dict(special_tokens=[EOT], pattern="cl100k")
    results = {
        ("file", None): bpe.train(path, 256 + 300 + 1, processes=None, **kwargs),
        ("file", 1): bpe.train(path, 256 + 300 + 1, processes=1, **kwargs),
        ("file", 2): bpe.train(path, 256 + 300 + 1, processes=2, **kwargs),
        ("str", None): bpe.train(text, 256 + 300 + 1, processes=None, **kwargs),
        ("str", 2): bpe.train(text, 256 + 300 + 1, processes=2, **kwargs),
    }
    prints = {k: t.fingerprint() for k, t in results.items()}
    assert len(set(prints.values())) == 1, prints
    assert len(results[("str", None)].merges) == 300
    # a path given as os.PathLike is read as a file, never treated as text
    assert results[("file", None)].merges == results[("str", None)].merges


def test_pretoken_counts_processes(multi_doc_file, monkeypatch):
    path, text = multi_doc_file
    monkeypatch.setattr(trainer, "BLOCK_CHARS", 50_000)
    one = bpe.pretoken_counts(text, "o200k", [EOT])
    assert bpe.pretoken_counts(path, "o200k", [EOT], processes=2) == one
    assert bpe.pretoken_counts(text, "o200k", [EOT], processes=2) == one


def test_missing_file_source_raises(tmp_path):
    with pytest.raises(ValueError, match="not a file"):
        bpe.train(tmp_path / "nope.txt", 300)


def test_non_str_documents_raise():
    with pytest.raises(TypeError, match="str"):
        bpe.train([b"bytes are not text"], 300)
