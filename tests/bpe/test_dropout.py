"""BPE-dropout: random, repeatable with a seed, always decodable, specials kept whole."""

from __future__ import annotations

from toklab.data import corpus

from .helpers import EOT


def test_dropout(tok):
    text = corpus.load("en", 3000) + corpus.load("zh", 1500)
    normal = tok.encode(text)
    assert tok.encode(text, dropout=0.0) == normal
    assert tok.encode(text, dropout=0.0, seed=5) == normal
    a = tok.encode(text, dropout=0.1, seed=1)
    assert a == tok.encode(text, dropout=0.1, seed=1)
    b = tok.encode(text, dropout=0.1, seed=2)
    assert a != b
    assert a != normal
    for seed in range(5):
        for p in (0.05, 0.3, 0.9):
            ids = tok.encode(text, dropout=p, seed=seed)
            assert tok.decode(ids) == text
    only_bytes = tok.encode(text, dropout=1.0, seed=0)
    assert only_bytes == list(text.encode("utf-8"))
    assert all(len(t) == 1 for t in tok.tokens(only_bytes))


def test_dropout_keeps_specials(tok):
    text = "hello" + EOT + "world"
    ids = tok.encode(text, allowed_special="all", dropout=0.5, seed=3)
    assert tok.special_tokens[EOT] in ids
    assert tok.decode(ids) == text


def test_dropout_on_real_vocab_gives_bytes_only(real):
    _, t, _ = real("cl100k_base")
    ids = t.encode("tokenization 注意", dropout=1.0, seed=0)
    assert [t.token_bytes(i) for i in ids] == [bytes([b]) for b in "tokenization 注意".encode("utf-8")]
