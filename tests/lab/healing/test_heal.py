"""toklab.lab.healing.heal: the kept IDs are final for every continuation (hypothesis), edge cases, generation."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toklab
from toklab.data import vocabs
from toklab.lab import healing
from toklab.lab.healing import TokenTrie, advance, heal

from .helpers import ADVERSARIAL_ALPHABET, cl100k

REAL_NAMES = ("r50k_base", "cl100k_base", "o200k_base")


_TEXT = st.lists(st.sampled_from(ADVERSARIAL_ALPHABET), min_size=1, max_size=8).map("".join)

_DETERMINISM_SCRIPT = """
import hashlib, json
import numpy as np
import toklab
from toklab.lab import batching, healing
from toklab.lab.toylm import BigramLM
tok = toklab.ByteBPE.from_tiktoken("r50k_base")
out = []
for text in ("hello fanta", "we'l", "a\\n ", "12345", " \\u6ce8"):
    out.append(healing.encode_with_unstable(tok, text))
    h = healing.heal(tok, text)
    out.append([list(h.kept), h.prefix.hex(), list(h.removed), h.complete])
ids = tok.encode("the cat sat on the mat. the dog sat on the log. " * 20)
lm = BigramLM(ids, tok.n_vocab)
out.append(list(healing.generate(tok, "the do", lm.next_log_probs, 5).ids))
packed = batching.pack([[5, 6], [7, 8, 9]], 4, eos_id=2, pad_id=0)
out.append(packed.ids.tolist())
print(hashlib.sha256(json.dumps(out).encode()).hexdigest())
"""


def test_one_token_healing_is_not_enough_but_heal_is():
    tok = cl100k()
    prompt = "Install the Debian packa"
    ids = tok.encode(prompt)
    assert tok.tokens(ids[-2:]) == [b" pack", b"a"]
    full = tok.encode(prompt + "ge now")
    assert full[: len(ids) - 1] != ids[:-1]  # one-token healing keeps " pack": wrong
    h = heal(tok, prompt)
    assert h.removed == tuple(ids[-2:]) and h.prefix == b" packa" and h.complete
    assert list(h.kept) == full[: len(h.kept)]
    one = heal(tok, prompt, max_backoff=1)
    assert one.removed == (ids[-1],) and not one.complete

def test_heal_edge_cases():
    tok = cl100k()
    with pytest.raises(ValueError, match="empty"):
        heal(tok, "")
    with pytest.raises(ValueError, match=">= 0"):
        heal(tok, "abc", max_backoff=-1)
    for bad in ("2", 1.0, True):
        with pytest.raises(TypeError, match="max_backoff"):
            heal(tok, "abc", max_backoff=bad)
    with pytest.raises(ValueError, match="disallowed"):
        heal(tok, "a <|endoftext|>")
    with pytest.raises(ValueError, match="lone surrogate"):
        heal(tok, "a\udc80")
    # more back-off than the prompt has tokens: simply no limit
    assert heal(tok, "hello", max_backoff=100) == heal(tok, "hello")
    assert heal(tok, "hello").kept == ()
    # ends with a special token: nothing is unfinished
    end = tok.special_tokens["<|endoftext|>"]
    h = heal(tok, "hi<|endoftext|>", allowed_special="all")
    assert h.kept[-1] == end and h.prefix == b"" and h.complete
    # healing switched off
    h = heal(tok, "the quick", max_backoff=0)
    assert list(h.kept) == tok.encode("the quick") and h.prefix == b"" and not h.complete
    # a special token bounds the back-off even without a safe cut after it
    h = heal(tok, "<|endoftext|>12345", allowed_special="all")
    assert h.kept == (end,) and h.prefix == b"12345"

def test_heal_custom_pattern_backs_off_the_last_stretch():
    tok = toklab.ByteBPE.from_ranks(vocabs.load("r50k_base").ranks, pattern=r"\S+|\s+")
    h = heal(tok, "ab cd")
    assert h.kept == () and h.prefix == b"ab cd"

@settings(max_examples=150)
@given(prompt=_TEXT, continuation=_TEXT, name=st.sampled_from(REAL_NAMES), backoff=st.none() | st.integers(0, 4))
def test_heal_contract(real, prompt, continuation, name, backoff):
    _, tok, _ = real(name)
    options = {"allowed_special": "all"}
    h = heal(tok, prompt, max_backoff=backoff, **options)
    ids = tok.encode(prompt, **options)
    kept = list(h.kept)
    # the kept IDs and the prefix are the prompt, split at a token boundary
    assert ids == kept + list(h.removed)
    assert tok.decode_bytes(kept) + h.prefix == prompt.encode("utf-8")
    assert backoff is None or len(h.removed) <= backoff
    full = tok.encode(prompt + continuation, **options)
    if h.complete:
        # kept is a prefix of the encoding of the prompt plus any continuation ...
        assert full[: len(kept)] == kept, (prompt, continuation)
        # ... and the canonical continuation passes the constraint, token by token
        remaining = h.prefix
        trie = TokenTrie.of(tok)
        for token_id in full[len(kept):]:
            if not remaining:
                break
            assert token_id in trie.allowed(remaining) or token_id in tok.special_tokens.values()
            remaining = advance(remaining, tok.id_to_token(token_id))
            assert remaining is not None

@pytest.mark.parametrize("name", REAL_NAMES)
def test_heal_kept_prefix_on_corpus_cuts(real, corpus_texts, name):
    _, tok, _ = real(name)
    rng = random.Random(11)
    one_token_failures = 0
    for lang in sorted(corpus_texts):
        text = corpus_texts[lang]
        for _ in range(150):
            cut = rng.randrange(100, len(text) - 100)
            prompt, rest = text[cut - rng.randint(1, 60) : cut], text[cut : cut + rng.randint(1, 30)]
            full = tok.encode(prompt + rest, disallowed_special=())
            h = heal(tok, prompt, disallowed_special=())
            assert full[: len(h.kept)] == list(h.kept), (prompt, rest)
            one = heal(tok, prompt, max_backoff=1, disallowed_special=())
            one_token_failures += full[: len(one.kept)] != list(one.kept)
    assert one_token_failures > 0  # the weakness multi-token back-off removes

def test_canonical_after():
    tok = cl100k()
    assert healing.canonical_after(tok, tok.encode("hello world"))
    assert not healing.canonical_after(tok, [tok.token_to_id(b" hel"), tok.token_to_id(b"lo")])
    assert not healing.canonical_after(tok, [tok.token_to_id(b"\xe6\xb3")])

def test_constrained_choices_are_allowed_and_generation_reproduces_the_prompt():
    tok = cl100k()
    trie = TokenTrie.of(tok)
    for remaining in (b" packa", b" unmount", b":\n\n11", b"\xe6\xb3", b"12345", b" qu"):
        choices = healing.constrained_choices(tok, remaining)
        assert choices and set(choices) <= set(trie.allowed(remaining))
    assert healing.constrained_choices(tok, b" unmount") == [tok.token_to_id(b" un")]
    assert healing.constrained_choices(tok, b"") == sorted(tok.vocab)

    def scores(ids):  # prefers short tokens: the worst case for a constraint
        out = np.zeros(tok.n_vocab)
        for i, t in tok.vocab.items():
            out[i] = -len(t)
        return out

    for prompt in ("Install the Debian packa", "The value is 12345", "unmount"):
        g = healing.generate(tok, prompt, scores, 6)
        assert tok.decode_bytes(g.ids).startswith(prompt.encode())
        assert g.prompt_ids == len(heal(tok, prompt).kept)
        plain = healing.generate(tok, prompt, scores, 2, healing=False)
        assert list(plain.ids[: plain.prompt_ids]) == tok.encode(prompt)
    with pytest.raises(ValueError, match="max_new_tokens"):
        healing.generate(tok, "x", scores, 0)

def test_results_do_not_depend_on_the_hash_seed():
    import os
    import subprocess
    import sys

    digests = set()
    for seed in ("0", "1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        res = subprocess.run([sys.executable, "-c", _DETERMINISM_SCRIPT], env=env, capture_output=True,
                             text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        digests.add(res.stdout.strip())
    assert len(digests) == 1
