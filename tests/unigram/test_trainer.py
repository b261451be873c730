"""`toklab.unigram.train`: seed vocabulary, the trained model's properties, options, determinism, errors."""

from __future__ import annotations

import math

import pytest

from toklab.unigram import seed_pieces, train

from .helpers import tiny_corpus


def test_seed_pieces():
    seed = seed_pieces({"python": 3, "pythons": 1, "xy": 1}, max_piece_length=16)
    assert set("pythonsx") <= set(seed)
    assert "python" in seed and "pythons" not in seed  # "pythons" occurs once
    assert "pyth" not in seed  # always followed by "o": "pytho" covers more with the same count
    assert "xy" not in seed
    assert abs(sum(math.exp(v) for v in seed.values()) - 1.0) < 1e-12
    # value = count * length for substrings, count for characters
    assert abs(seed["python"] - seed["p"] - math.log(6)) < 1e-12
    small = seed_pieces({"abcabc": 5}, max_piece_length=2)
    assert max(map(len, small)) == 2


def test_train_small_corpus_properties():
    lines = tiny_corpus()
    history: list = []
    model = train(lines, 300, special_tokens=["<s>", "</s>"], protected=["\u2581Python"], history=history)
    again = train(lines, 300, special_tokens=["<s>", "</s>"], protected=["\u2581Python"])
    assert model.vocab == again.vocab and model.pieces == again.pieces  # deterministic
    assert len(model) == 300
    assert list(model.vocab.values())[:3] == ["<unk>", "<s>", "</s>"]
    chars = {ch for ln in lines for ch in ln}
    assert chars <= set(model.pieces)
    assert "\u2581Python" in model.pieces
    assert all("\u2581" not in p[1:] for p in model.pieces)  # no piece spans two words
    assert all(len(p) <= 16 for p in model.pieces)
    scores = list(model.pieces.values())
    assert scores == sorted(scores, reverse=True)
    for ln in lines[:50]:
        assert "".join(model.viterbi(ln)) == ln
        assert model.unk_id not in model.encode(ln)
    assert history[0]["round"] == 1 and "log_likelihood" in history[0]
    assert any("pruned_to" in h for h in history)


def test_train_options_and_inputs():
    words = {"\u2581low": 5, "\u2581lower": 2, "\u2581newest": 6, "\u2581widest": 3}
    model = train(words, 30, required_chars="xyz", byte_fallback=False)
    assert {"x", "y", "z"} <= set(model.pieces)
    assert len(model) <= 30
    bf = train(words, 300, byte_fallback=True)
    assert bf.viterbi("\u2581lo中")[-3:] == ["<0xE4>", "<0xB8>", "<0xAD>"]  # 中 = E4 B8 AD
    assert len(bf) <= 300 and bf.vocab[1] == "<0x00>"
    # a plain string is cut into lines; split=None keeps sentences whole
    assert train("ab\u2581ab\nab", 10).pieces.keys() >= {"a", "b"}
    whole = train(["aaaa\u2581aaaa"] * 3, 10, split=None)
    assert any("\u2581" in p[1:] for p in whole.pieces)
    ml = train(words, 30, bayesian=False)
    assert set("lowernstid\u2581") <= set(ml.pieces)


_HASH_SCRIPT = r"""
import hashlib, json
from toklab.data import corpus
from toklab.unigram import train
lines = []
for name in sorted(corpus.CORPUS):
    lines += [ln.replace(" ", "\u2581") for ln in corpus.load(name, 15_000).split("\n") if ln]
lines += ["ab\u2581ba\u2581cd\u2581dc"] * 20  # exact ties
m = train(lines, 1500, special_tokens=["<s>"])
print(hashlib.sha256(json.dumps([list(m.vocab.values()), list(m.pieces.values())]).encode()).hexdigest())
"""


def test_training_identical_across_hash_seeds():
    import os
    import subprocess
    import sys

    prints = set()
    for seed in ("0", "1", "4242"):
        res = subprocess.run([sys.executable, "-c", _HASH_SCRIPT], env=dict(os.environ, PYTHONHASHSEED=seed),
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        prints.add(res.stdout.strip())
    assert len(prints) == 1


def test_train_errors_and_degenerate_corpora():
    with pytest.raises(ValueError, match="empty"):
        train([], 10)
    with pytest.raises(ValueError, match="empty"):
        train(["", ""], 10)
    one = train(["a"], 10)
    assert list(one.vocab.values()) == ["<unk>", "a"] and one.viterbi("aa") == ["a", "a"]
    rep = train(["aaaa"] * 5, 10)
    assert rep.viterbi("aaaa")[0] != "a" and "a" in rep.pieces
    with pytest.raises(ValueError, match=r"too small.*vocab_size >= 5"):
        train(["abcd"], 4)  # <unk> + 4 characters
    with pytest.raises(ValueError, match="too small"):
        train(["ab"], 5, special_tokens=["<s>", "</s>"], required_chars="z")
    with pytest.raises(ValueError, match="vocab_size"):
        train(["ab"], 0)
    with pytest.raises(ValueError, match="shrink"):
        train(["ab"], 10, shrink=1.0)
    with pytest.raises(ValueError, match="distinct"):
        train(["ab"], 10, special_tokens=["<unk>"])
    with pytest.raises(TypeError):
        train([b"ab"], 10)


def test_one_huge_line_is_skipped_as_sentencepiece_skips_it():
    """200,000 characters without a space, and a megabyte of one character: seconds, not minutes and gigabytes."""
    from toklab.base.checks import LongSentenceWarning

    lines = tiny_corpus()
    huge = ["qwertyuiopasdfghjklzxcvbnm" * 7_700, "x" * 1_000_000]
    with pytest.warns(LongSentenceWarning, match=r"skipped 2 sentences longer than max_sentence_length=4,192 UTF-8 "
                                                 r"bytes \(the longest had 1,000,000\)"):
        model = train([lines[0], huge[0], *lines[1:], huge[1]], 400)
    assert model.entries() == train(lines, 400).entries()  # as if they were never there
    short = [ln for ln in lines if len(ln.encode("utf-8")) <= 60]
    with pytest.warns(LongSentenceWarning, match=f"skipped {len(lines) - len(short)} sentences"):
        assert train(lines, 300, max_sentence_length=60).entries() == train(short, 300).entries()
    with pytest.raises(ValueError, match="max_sentence_length must be >= 1"):
        train(lines, 300, max_sentence_length=0)
