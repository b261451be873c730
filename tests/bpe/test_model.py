"""The ByteBPE object: lookups and their errors, special tokens, rank tables, repr."""

from __future__ import annotations

import pytest

from toklab.bpe import ByteBPE

from .helpers import EOT


@pytest.mark.parametrize("bad", [10**9, -1, 256 + 600 + 2])
def test_decode_unknown_id_names_it(tok, bad):
    with pytest.raises(ValueError, match=rf"unknown token ID {bad}\b"):
        tok.decode([1, 2, bad])
    with pytest.raises(ValueError, match=str(bad)):
        tok.decode_bytes([bad])
    with pytest.raises(ValueError, match=str(bad)):
        tok.token_bytes(bad)


def test_decode_bytes_of_an_iterator_with_unknown_id(tok):
    """decode_bytes accepts any iterable of IDs; a bad ID must give the same clear error."""
    assert tok.decode_bytes(iter([104, 105])) == b"hi"
    with pytest.raises(ValueError, match=r"unknown token ID 1000000000 at position 1"):
        tok.decode_bytes(iter([104, 10**9]))
    with pytest.raises(ValueError, match=r"unknown token ID -1\b"):
        tok.decode_bytes(i for i in [-1])


@pytest.mark.parametrize("gap", [100256, 100261, 100275])
def test_decode_gap_id_in_cl100k(gap, real):
    _, t, _ = real("cl100k_base")
    assert gap < t.n_vocab
    with pytest.raises(ValueError, match=rf"\b{gap}\b"):
        t.decode([100257, gap])
    assert t.decode([100257]) == EOT


def test_special_tokens_list_vs_dict(tok):
    merges = tok.merges
    base = 256 + len(merges)
    as_list = ByteBPE(merges, special_tokens=["<|x|>", "<|y|>", "<|x|>"])
    assert as_list.special_tokens == {"<|x|>": base, "<|y|>": base + 1}
    as_dict = ByteBPE(merges, special_tokens={"<|x|>": 5000, "<|y|>": 5001})
    assert as_dict.special_tokens == {"<|x|>": 5000, "<|y|>": 5001}
    text = "a<|y|>b<|x|>"
    ids_l = as_list.encode(text, allowed_special="all")
    ids_d = as_dict.encode(text, allowed_special="all")
    assert ids_l[-1] == base and base + 1 in ids_l
    assert ids_d[-1] == 5000 and 5001 in ids_d
    assert [i for i in ids_l if i < base] == [i for i in ids_d if i < base]
    assert as_list.decode(ids_l) == as_dict.decode(ids_d) == text
    assert as_dict.n_vocab == 5002 and len(as_dict) == base + 2
    with pytest.raises(ValueError, match=str(base + 5)):
        as_dict.decode([base + 5])
    with pytest.raises(ValueError, match="share an ID"):
        ByteBPE(merges, special_tokens={"<|x|>": 5000, "<|y|>": 5000})
    with pytest.raises(ValueError, match="already uses"):
        ByteBPE(merges, special_tokens={"<|x|>": 65})


def test_overlapping_specials_longest_wins(tok):
    t = ByteBPE(tok.merges, special_tokens=["<|a|>", "<|a|>b"])
    short, long_ = t.special_tokens["<|a|>"], t.special_tokens["<|a|>b"]
    ids = t.encode("x<|a|>by<|a|>z<|a|>", allowed_special="all")
    assert ids.count(long_) == 1 and ids.count(short) == 2
    assert ids.index(long_) < ids.index(short)
    assert t.decode(ids) == "x<|a|>by<|a|>z<|a|>"
    # only the short one allowed: the long one is disallowed and must be refused
    with pytest.raises(ValueError, match=r"<\|a\|>b"):
        t.encode("x<|a|>by", allowed_special={"<|a|>"})


def test_from_ranks_recovers_merges(tok):
    back = ByteBPE.from_ranks(tok.mergeable_ranks(), pattern=tok.pattern, special_tokens=tok.special_tokens)
    assert back.merges == tok.merges


def test_r50k_merges_are_consistent(real):
    spec, t, _ = real("r50k_base")
    merges = t.merges
    assert len(merges) == 50_000
    ranks = spec.ranks
    for k, (a, b) in enumerate(merges):
        r = ranks[a + b]
        assert ranks[a] < r and ranks[b] < r
        assert r == 256 + k
    assert merges[0] == (b" ", b"t")  # GPT-2's first merge: "Ġ t"


def test_repr_and_len(tok):
    r = repr(tok)
    assert "gpt2" in r and "merges=600" in r and "special_tokens=2" in r
    assert len(tok) == 256 + 600 + 2
