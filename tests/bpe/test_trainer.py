"""`toklab.bpe.train` as a user meets it: vocabulary layout, special tokens, errors, stopping."""

from __future__ import annotations

import pytest

from toklab import bpe
from toklab.bpe import ByteBPE
from toklab.data import corpus

from .helpers import EOT, PAD


def test_special_tokens_are_never_merged_into(slices):
    _, en = slices["en"]
    docs = [en[i : i + 400] for i in range(0, 30_000, 400)]
    assert not any(s in en for s in ("<|", "|>", "endoftext"))
    text = EOT.join(docs)
    counts = bpe.pretoken_counts(text, special_tokens=[EOT])
    assert not any(("<|" in p or "|>" in p or "endoftext" in p) for p in counts)
    tok = bpe.train(text, 256 + 300 + 1, special_tokens=[EOT])
    for token in tok.vocab.values():
        assert b"<|" not in token and b"|>" not in token and b"endof" not in token and b"oftext" not in token
    # the special itself is one ID, the last one
    eot_id = tok.special_tokens[EOT]
    assert eot_id == 256 + 300
    ids = tok.encode(text, allowed_special="all")
    assert ids.count(eot_id) == len(docs) - 1
    assert tok.decode(ids) == text
    # without the special registered, "<|" is the most frequent pair around it and gets merged
    plain = bpe.train(text, 256 + 300)
    assert any(b"endof" in t or b"<|" in t or b"|>" in t for t in plain.vocab.values())


def test_vocab_layout(slices):
    _, text = slices["mixed"]
    specials = ["<|endoftext|>", "<|pad|>", "<|im_start|>"]
    vocab_size = 256 + 321 + len(specials)
    tok = bpe.train(text, vocab_size, special_tokens=specials)
    merges = tok.merges
    assert len(merges) == 321
    assert len(tok.vocab) + len(tok.special_tokens) == vocab_size
    assert len(tok) == vocab_size == tok.n_vocab
    assert all(tok.vocab[b] == bytes([b]) for b in range(256))
    assert all(tok.vocab[256 + k] == a + b for k, (a, b) in enumerate(merges))
    assert tok.special_tokens == {s: 256 + 321 + i for i, s in enumerate(specials)}
    assert sorted(tok.vocab) == list(range(256 + 321))
    # each merge joins two tokens that already existed
    for k, (a, b) in enumerate(merges):
        enc = {t: i for i, t in tok.vocab.items()}
        assert enc[a] < 256 + k and enc[b] < 256 + k


def test_training_errors():
    with pytest.raises(ValueError, match=r"vocab_size=100 is too small.*256"):
        bpe.train("some text here", 100)
    with pytest.raises(ValueError, match=r"vocab_size=257 is too small.*258"):
        bpe.train("some text here", 257, special_tokens=[EOT, PAD])
    with pytest.raises(ValueError, match="empty"):
        bpe.train("", 300)
    with pytest.raises(ValueError, match="empty"):
        bpe.train(EOT + EOT, 300, special_tokens=[EOT])
    with pytest.raises(ValueError, match="empty"):
        bpe.train([], 300)
    with pytest.raises(ValueError, match=r"'gtp2'.*known names"):
        bpe.train("some text", 300, pattern="gtp2")
    with pytest.raises(ValueError, match="gtp2"):
        ByteBPE([], pattern="gtp2")
    with pytest.raises(ValueError, match="dropout"):
        ByteBPE([]).encode("x", dropout=1.5)


def test_smallest_vocab_and_progress_bar():
    t = bpe.train("some text here", 256 + 1, special_tokens=[EOT])
    assert t.merges == [] and t.special_tokens == {EOT: 256} and t.n_vocab == 257
    text = corpus.load("en", 20_000)
    quiet = bpe.train(text, 400)
    assert bpe.train(text, 400, progress=True).merges == quiet.merges


def test_training_stops_when_nothing_left_to_merge():
    # pre-tokens: "ab" x1, " ab" x2 -> (a,b) 3, then (" ", "ab") 2, then no pair is left
    t = bpe.train("ab ab ab", 10_000)
    assert t.merges == [(b"a", b"b"), (b" ", b"ab")]
    assert len(t.vocab) == 256 + len(t.merges)


def test_training_text_with_lone_surrogate_is_rejected_with_a_clear_error():
    with pytest.raises(ValueError, match="lone surrogate"):
        bpe.train("hello a\ud800b world", 300)
