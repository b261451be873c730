"""toklab.lab.healing.trie: the sorted-list trie answers like a brute-force scan."""

from __future__ import annotations

import pytest

import toklab
from toklab.lab.healing import TokenTrie, advance

REAL_NAMES = ("r50k_base", "cl100k_base", "o200k_base")


def test_trie_queries_equal_brute_force():
    tok = toklab.ByteBPE.from_tiktoken("r50k_base")
    trie = TokenTrie.of(tok)
    assert TokenTrie.of(tok) is trie and len(trie) == len(tok.vocab)
    items = list(tok.vocab.items())
    for prefix in (b"", b" qu", b"\xff", b"\xe6", b"\xe6\xb3", b" the", b"zzzzzzzz", b"\n"):
        assert sorted(trie.extending(prefix)) == sorted(i for i, t in items if t.startswith(prefix))
        children = {}
        for t in tok.vocab.values():
            if t.startswith(prefix) and len(t) > len(prefix):
                children[t[len(prefix)]] = children.get(t[len(prefix)], 0) + 1
        assert trie.children(prefix) == children
    data = b" understanding"
    assert trie.prefixes_of(data) == [tok.token_to_id(data[:k]) for k in range(1, len(data) + 1)
                                      if data[:k] in trie]
    allowed = trie.allowed(b" qu")
    assert allowed == sorted(i for i, t in items if advance(b" qu", t) is not None)
    assert trie.allowed(b"") == sorted(tok.vocab)
    assert trie.token_bytes(trie.token_id(b" qu")) == b" qu"
    with pytest.raises(KeyError, match="not an ordinary token"):
        trie.token_id(b"\x00\x00\x00\x00\x00")
    with pytest.raises(KeyError):
        trie.token_bytes(tok.special_tokens["<|endoftext|>"])

def test_trie_refuses_duplicate_and_empty_tokens():
    with pytest.raises(ValueError, match="both have the bytes"):
        TokenTrie({0: b"a", 1: b"a"})
    with pytest.raises(ValueError, match="empty"):
        TokenTrie({0: b"", 1: b"a"})

def test_advance():
    assert advance(b" qu", b" quick") == b""
    assert advance(b" qu", b" qu") == b""
    assert advance(b" qu", b" q") == b"u"
    assert advance(b" qu", b"qu") is None
    assert advance(b"", b"x") == b""
