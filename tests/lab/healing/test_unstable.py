"""toklab.lab.healing.unstable: encode_with_unstable gives tiktoken's stable tokens and the same set of completions."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toklab
from toklab.lab import healing
from toklab.lab.healing import encode_with_unstable, merge_bytes

from .helpers import ADVERSARIAL_ALPHABET, ADVERSARIAL_CASES, cl100k, random_prefixes

REAL_NAMES = ("r50k_base", "cl100k_base", "o200k_base")


def _same(ours, theirs) -> bool:
    stable, completions = theirs
    return ours == (stable, sorted(list(c) for c in completions))

@pytest.mark.parametrize("name", REAL_NAMES)
def test_encode_with_unstable_equals_tiktoken_on_corpus_prefixes(real, corpus_texts, name):
    _, tok, enc = real(name)
    for text in random_prefixes(corpus_texts, 12, seed=REAL_NAMES.index(name)):
        ours = encode_with_unstable(tok, text, allowed_special="all")
        assert _same(ours, enc.encode_with_unstable(text, allowed_special="all")), text

@pytest.mark.parametrize("name", REAL_NAMES)
def test_encode_with_unstable_equals_tiktoken_on_adversarial_text(real, name):
    _, tok, enc = real(name)
    rng = random.Random(7)
    cases = ADVERSARIAL_CASES + [
        "".join(rng.choice(ADVERSARIAL_ALPHABET) for _ in range(rng.randint(1, 10))) for _ in range(50)
    ]
    for text in cases:
        # The two option sets differ only where the text spells a special token: elsewhere
        # nothing is special and nothing is refused under either, so one of them suffices.
        option_sets = ({"allowed_special": "all"}, {"disallowed_special": ()})
        for options in option_sets if "<|" in text else option_sets[:1]:
            ours = encode_with_unstable(tok, text, **options)
            assert _same(ours, enc.encode_with_unstable(text, **options)), (text, options)

def test_disallowed_special_raises_like_tiktoken(real):
    _, tok, enc = real("cl100k_base")
    text = "ok <|endoftext|> then"
    with pytest.raises(ValueError):
        enc.encode_with_unstable(text)
    with pytest.raises(ValueError, match="disallowed"):
        encode_with_unstable(tok, text)
    # allowed: the special token ends the unstable part; nothing follows it here
    assert encode_with_unstable(tok, "x<|endoftext|>", allowed_special="all") == (
        [tok.encode("x")[0], tok.special_tokens["<|endoftext|>"]], [])

def test_surrogates_and_types_are_refused(real):
    _, tok, enc = real("cl100k_base")
    with pytest.raises(ValueError):  # tiktoken: UnicodeEncodeError, a ValueError
        enc.encode_with_unstable("ab\ud800")
    with pytest.raises(ValueError, match="lone surrogate"):
        encode_with_unstable(tok, "ab\ud800")
    with pytest.raises(TypeError, match="str"):
        encode_with_unstable(tok, b"bytes")

@settings(max_examples=40)
@given(st.lists(st.sampled_from(ADVERSARIAL_ALPHABET), max_size=6).map("".join))
def test_encode_with_unstable_keeps_tiktokens_contract(text):
    tok = cl100k()
    data = text.encode("utf-8")
    stable, completions = encode_with_unstable(tok, text, disallowed_special=())
    assert data.startswith(tok.decode_bytes(stable))
    for seq in completions:
        assert tok.decode_bytes(stable + seq).startswith(data)
    if data != tok.decode_bytes(stable):  # something is unstable: its own tokens are a completion
        own = tok.encode(text, disallowed_special=())[len(stable):]
        assert own in completions

def test_merge_bytes_equals_segment_on_text(real, corpus_texts):
    _, tok, _ = real("cl100k_base")
    priority = tok.merge_ranks
    rng = random.Random(3)
    for name, text in sorted(corpus_texts.items()):
        chunks = toklab.pre_tokenizers.split(text[:20_000], tok.pattern)
        for chunk in rng.sample(chunks, 200):
            assert [tok.token_to_id(p) for p in merge_bytes(chunk.encode(), priority)] == tok.segment(chunk)
    assert merge_bytes(b"", priority) == []
    assert b"".join(merge_bytes(b"\xe6\xb3 x", priority)) == b"\xe6\xb3 x"


def test_merge_ranks_order_pairs_as_the_merges_do():
    """merge_bytes may rank pairs by `merge_ranks` or by position in `merges`: the same order."""
    tok = toklab.train_bpe("low lower lowest newer newest wider " * 20, 300)
    by_merges = {a + b: k for k, (a, b) in enumerate(tok.merges)}
    assert sorted(by_merges, key=by_merges.get) == sorted(tok.merge_ranks, key=tok.merge_ranks.get)
    for data in (b"lowest newer", b"\xe6\xb3 wider", b""):
        assert merge_bytes(data, by_merges) == merge_bytes(data, tok.merge_ranks)


# ---------------------------------------------------------------- healing

def test_stable_tokens_equal_encode_with_unstable(real, corpus_texts):
    _, tok, _ = real("cl100k_base")
    for text in random_prefixes(corpus_texts, 10, seed=5) + ADVERSARIAL_CASES:
        assert healing.stable_tokens(tok, text, disallowed_special=()) == \
            encode_with_unstable(tok, text, disallowed_special=())[0]
