"""toklab.healing: encode_with_unstable against tiktoken, the token trie, token healing.

`encode_with_unstable` must give tiktoken's stable tokens and the same *set* of
completions on the three real vocabularies, for random prefixes of every corpus
file and for adversarial strings. `heal` is checked as a contract with
hypothesis: the kept IDs are a prefix of the encoding of the prompt followed by
any continuation, and the canonical continuation passes the constraint.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toklab
from toklab import healing
from toklab.healing import TokenTrie, advance, encode_with_unstable, heal, merge_bytes

REAL_NAMES = ("r50k_base", "cl100k_base", "o200k_base")

# Characters that stress every branch: whitespace of all kinds (White_Space and
# not), CR/LF, digits, apostrophes, combining marks, CJK, emoji pieces, a special.
ADVERSARIAL_ALPHABET = list("ab xyzAB'\n\r\t 0123456789.,!?-_/#(){}\"") + [
    "\u00a0", "\u3000", "\u0085", "\u2028", "\u00e9", "e\u0301", "\u6ce8", "\u610f", "\U0001f642",
    "\u200d", "\ufe0f", "\u0430", "\x1c", "\x0b", "\x0c", "<|endoftext|>", "  ", "    ", "\n\n",
    "\r\n", "\u0301", "\U0001f468", "ing", " the", "'s", "'LL", "\ufffd",
]

ADVERSARIAL_CASES = [
    "", "hello fanta", "hello ", "a\n ", "12345", "<|endoftext|>", "x<|endoftext|>y", "  \n",
    " \u6ce8", "a\r\n", " \u00a0", "x \u3000", "don'", "I'", "\n\n\n", "\t\t", "x  ", "1 2 3 ",
    "http://", "#", "   ", "we'l", " we'l", "\U0001f468\u200d", "caf\u00e9", "cafe\u0301", "\u0301",
]


def _same(ours, theirs) -> bool:
    stable, completions = theirs
    return ours == (stable, sorted(list(c) for c in completions))


def _random_prefixes(texts: dict[str, str], n_each: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for name in sorted(texts):
        text = texts[name]
        for _ in range(n_each):
            end = rng.randrange(1, len(text))
            out.append(text[max(0, end - rng.randint(1, 48)) : end])
    return out


@pytest.mark.parametrize("name", REAL_NAMES)
def test_encode_with_unstable_equals_tiktoken_on_corpus_prefixes(real, corpus_texts, name):
    _, tok, enc = real(name)
    for text in _random_prefixes(corpus_texts, 12, seed=REAL_NAMES.index(name)):
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
        for options in ({"allowed_special": "all"}, {"disallowed_special": ()}):
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
    tok = _cl100k()
    data = text.encode("utf-8")
    stable, completions = encode_with_unstable(tok, text, disallowed_special=())
    assert data.startswith(tok.decode_bytes(stable))
    for seq in completions:
        assert tok.decode_bytes(stable + seq).startswith(data)
    if data != tok.decode_bytes(stable):  # something is unstable: its own tokens are a completion
        own = tok.encode(text, disallowed_special=())[len(stable):]
        assert own in completions


_CL100K = []


def _cl100k():
    if not _CL100K:
        _CL100K.append(toklab.ByteBPE.from_tiktoken("cl100k_base"))
    return _CL100K[0]


# ---------------------------------------------------------------- the trie


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


def test_merge_bytes_equals_segment_on_text(real, corpus_texts):
    _, tok, _ = real("cl100k_base")
    priority = {a + b: k for k, (a, b) in enumerate(tok.merges)}
    rng = random.Random(3)
    for name, text in sorted(corpus_texts.items()):
        chunks = toklab.pretokenize.split(text[:20_000], tok.pattern)
        for chunk in rng.sample(chunks, 200):
            assert [tok.token_to_id(p) for p in merge_bytes(chunk.encode(), priority)] == tok.segment(chunk)
    assert merge_bytes(b"", priority) == []
    assert b"".join(merge_bytes(b"\xe6\xb3 x", priority)) == b"\xe6\xb3 x"


# ---------------------------------------------------------------- healing


def test_one_token_healing_is_not_enough_but_heal_is():
    tok = _cl100k()
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
    tok = _cl100k()
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
    tok = toklab.ByteBPE.from_ranks(toklab.vocabs.load("r50k_base").ranks, pattern=r"\S+|\s+")
    h = heal(tok, "ab cd")
    assert h.kept == () and h.prefix == b"ab cd"


_TEXT = st.lists(st.sampled_from(ADVERSARIAL_ALPHABET), min_size=1, max_size=8).map("".join)


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
    tok = _cl100k()
    assert healing.canonical_after(tok, tok.encode("hello world"))
    assert not healing.canonical_after(tok, [tok.token_to_id(b" hel"), tok.token_to_id(b"lo")])
    assert not healing.canonical_after(tok, [tok.token_to_id(b"\xe6\xb3")])


def test_constrained_choices_are_allowed_and_generation_reproduces_the_prompt():
    tok = _cl100k()
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


def test_stable_tokens_equal_encode_with_unstable(real, corpus_texts):
    _, tok, _ = real("cl100k_base")
    for text in _random_prefixes(corpus_texts, 10, seed=5) + ADVERSARIAL_CASES:
        assert healing.stable_tokens(tok, text, disallowed_special=()) == \
            encode_with_unstable(tok, text, disallowed_special=())[0]


_DETERMINISM_SCRIPT = """
import hashlib, json
import numpy as np
import toklab
from toklab import batching, healing
from toklab.toylm import BigramLM
tok = toklab.ByteBPE.from_tiktoken("r50k_base")
out = []
for text in ("hello fanta", "we'l", "a\\n ", "12345", " \\u6ce8"):
    out.append(healing.encode_with_unstable(tok, text))
    h = healing.heal(tok, text)
    out.append([list(h.kept), h.prefix.hex(), list(h.removed), h.complete])
ids = tok.encode("the cat sat on the mat. the dog sat on the log. " * 20)
lm = BigramLM(ids, tok.n_vocab)
out.append(list(healing.generate(tok, "the do", lm.log_probs, 5).ids))
packed = batching.pack([[5, 6], [7, 8, 9]], 4, eos_id=2, pad_id=0)
out.append(packed.ids.tolist())
print(hashlib.sha256(json.dumps(out).encode()).hexdigest())
"""


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
