"""ID-for-ID parity with tiktoken on the three real OpenAI vocabularies.

`real(name)` (tests/conftest.py) gives toklab's ``ByteBPE.from_tiktoken(name)``
and a genuine ``tiktoken.Encoding`` built from the same SHA-256-checked rank
file, pattern and special tokens, so nothing is downloaded and every
difference is a difference in the encoder.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab.bpe import merge_long
from toklab.bpe import encode as bpe_encode
from toklab.data import corpus

from .helpers import PAD

NAMES = ("r50k_base", "cl100k_base", "o200k_base")
EOT = "<|endoftext|>"

ADVERSARIAL = {
    "empty": "",
    "one space": " ",
    "spaces": "     ",
    "tabs": "\t\t\t",
    "mixed ws": " \t \t  \t",
    "trailing spaces": "hello world   ",
    "trailing mixed": "hello\t \n \t",
    "leading spaces": "   hello",
    "inner spaces": "a   b    c",
    "newlines": "\n\n\n",
    "space newline": " \n \n",
    "para": "one\n\ntwo\n\n\nthree\n",
    "crlf": "line one\r\nline two\r\n\r\nline four\r\n",
    "cr only": "a\rb\r\rc\r",
    "mixed eol": "x \r\n\n\r y\n\r\n",
    "contractions lower": "it's don't I'm we'll they've you're he'd",
    "contractions upper": "IT'S DON'T I'M WE'LL THEY'VE YOU'RE HE'D",
    "contractions mixed": "I'M you'Re it'S We'Ll tHEY'vE",
    "curly apostrophe": "it’s don’t I’M",
    "digits 1000": ("1234567890" * 100),
    "digits spaced": "1 22 333 4444 55555 666666 1,234,567.89",
    "digit letter": "abc123def4567ghi 3.14159e-10 0x1F",
    "emoji zwj": "👨‍👩‍👧‍👦 👩🏽‍💻 🏳️‍🌈 👁️‍🗨️",
    "flags": "🇫🇷🇯🇵🇺🇸🇨🇳 🏴󠁧󠁢󠁳󠁣󠁴󠁿",
    "skin tones": "👍🏻👍🏼👍🏽👍🏾👍🏿 👋🏿",
    "keycaps": "1️⃣ #️⃣ *️⃣ ❤️ ❤",
    "combining e": "cafe\u0301 café e\u0301\u0301\u0301",
    "devanagari": "नमस्ते दुनिया, हिन्दी में लिखा गया पाठ",
    "cjk": "注意力机制是深度学习中的一种方法。北京大学，日本語のテキスト、한국어 문장",
    "arabic hebrew": "مرحبا بالعالم שלום עולם",
    "thai": "สวัสดีชาวโลก",
    "camel": "CamelCaseWords HTTPServer getHTTPResponseCode XMLHttpRequest iPhone",
    "code": "def f(x):\n\treturn x**2  # ok\n\n    if a != b:\n        pass\n",
    "url": "https://example.com/a/b?c=d&e=f#g //comment /* block */",
    "unicode spaces": "a\u00a0b\u2003c\u3000d\u200be\ufeff",
    "zero width": "a\u200bb\u200cc\u200dd\u2060e",
    "punct runs": "!!!???...---***///\\\\\\|||",
    "math": "∀x∈ℝ: x² ≥ 0 ⇒ √(x²) = |x|",
    "fullwidth": "ＡＢＣ１２３！",
    "special-like": "<|endoftext |> <|endoftex|> <| endoftext|>",
    "long word": "Pneumonoultramicroscopicsilicovolcanoconiosis" * 3,
    "nul and controls": "a\x00b\x01\x7f\x1b[0m",
}
# Runs far past every length threshold of the encoder (SHORT, the piece cache's 200
# characters): each is one long chunk, or thousands of equal chunks.
BIG = {
    "30KB letter": "a" * 30_000,
    "30KB spaces": " " * 30_000,
    "30KB digits": "7" * 30_000,
    "30KB newlines": "\n" * 30_000,
    "30KB han": "注" * 10_000,
}


@pytest.mark.parametrize("name", NAMES)
def test_real_sizes(name, real):
    expected = {
        "r50k_base": (50_256, 1, 50_257),
        "cl100k_base": (100_256, 5, 100_277),
        "o200k_base": (199_998, 2, 200_019),
    }[name]
    spec, tok, enc = real(name)
    assert (len(spec.ranks), len(spec.special_tokens), tok.n_vocab) == expected
    assert (len(tok.vocab), len(tok.special_tokens)) == expected[:2]
    assert len(tok) == expected[0] + expected[1]
    assert enc.n_vocab == tok.n_vocab
    assert enc.special_tokens_set == set(tok.special_tokens)
    for s, i in tok.special_tokens.items():
        assert enc.encode_single_token(s) == i


def test_hello_facts(real):
    cl = real("cl100k_base")
    r50 = real("r50k_base")
    assert cl[1].encode("hello") == [15339] == cl[2].encode("hello")
    assert r50[1].encode("hello") == [31373] == r50[2].encode("hello")
    assert r50[1].encode("hello world") == [31373, 995] == r50[2].encode("hello world")
    # cl100k: "hello world" is not the r50k IDs
    assert cl[1].encode("hello world") == cl[2].encode("hello world") != [31373, 995]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("fname", ["en", "zh", "code", "mixed"])
def test_whole_corpus_parity(name, fname, real, corpus_texts):
    _, tok, enc = real(name)
    text = corpus_texts[fname]
    ids = tok.encode(text)
    assert ids == enc.encode(text)
    assert tok.decode(ids) == text
    assert tok.decode_bytes(ids) == enc.decode_bytes(ids) == text.encode("utf-8")


def _check(tok, enc, text):
    ids = tok.encode(text)
    assert ids == enc.encode(text)
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text) == ids
    assert tok.decode(ids) == text
    assert tok.decode_bytes(ids) == enc.decode_bytes(ids)
    assert [tok.token_bytes(i) for i in ids] == enc.decode_tokens_bytes(ids)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("case", sorted(ADVERSARIAL))
def test_adversarial_parity(name, case, real):
    _, tok, enc = real(name)
    _check(tok, enc, ADVERSARIAL[case])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("case", sorted(BIG))
def test_big_run_parity(name, case, real):
    _, tok, enc = real(name)
    _check(tok, enc, BIG[case])


@pytest.mark.parametrize("name", NAMES)
def test_200_kb_without_spaces_uses_heap_merge(name, real, monkeypatch):
    """200 KB of lowercase letters is a single chunk; it must go through the O(n log n) path."""
    _, tok, enc = real(name)
    rng = random.Random(7)
    text = "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=200_000))
    long_sizes: list[int] = []
    short_sizes: list[int] = []
    real_long, real_short = bpe_encode.merge_long, bpe_encode.merge_short

    def spy_long(piece, ranks):
        long_sizes.append(len(piece))
        return real_long(piece, ranks)

    def spy_short(piece, ranks):
        short_sizes.append(len(piece))
        return real_short(piece, ranks)

    monkeypatch.setattr(bpe_encode, "merge_long", spy_long)
    monkeypatch.setattr(bpe_encode, "merge_short", spy_short)
    ids = tok.encode(text)
    assert long_sizes == [200_000]
    assert short_sizes == []
    assert ids == enc.encode(text)
    assert tok.decode(ids) == text


@pytest.mark.parametrize("name", NAMES)
def test_chunk_dispatch_by_length(name, real, monkeypatch):
    """Chunks shorter than bpe_encode.SHORT bytes use the quadratic scan, longer ones the heap."""
    _, tok, enc = real(name)
    calls: list[tuple[str, int]] = []
    real_long, real_short = bpe_encode.merge_long, bpe_encode.merge_short

    def spy_long(piece, ranks):
        calls.append(("long", len(piece)))
        return real_long(piece, ranks)

    def spy_short(piece, ranks):
        calls.append(("short", len(piece)))
        return real_short(piece, ranks)

    monkeypatch.setattr(bpe_encode, "merge_long", spy_long)
    monkeypatch.setattr(bpe_encode, "merge_short", spy_short)
    # words that are not single tokens, of every length from 2 to 211 bytes (too
    # long for the piece cache past 200, so those are encoded afresh each time)
    words = ["qz" + ("xkqwzv" * 40)[:k] for k in range(0, 210)]
    text = " ".join(words)
    assert tok.encode(text) == enc.encode(text)
    assert calls, "no chunk needed merging"
    for kind, n in calls:
        assert kind == ("short" if n < bpe_encode.SHORT else "long"), (kind, n, bpe_encode.SHORT)
    assert {k for k, _ in calls} == {"short", "long"}


_PIECES = [
    " ", "  ", "\t", "\n", "\r\n", "\n\n", "a", "Hello", "world", "I", "'", "'s", "'M", "'ll", "'RE",
    "0", "12", "12345", ".", ",", "!", "-", "->", "é", "e\u0301", "注", "中文", "한", "ñ", "ß",
    "😀", "👍🏽", "\u200d", "\ufe0f", "🇯🇵", "\u00a0", "\u3000", "ँ", "क्ष", "CamelCase", "HTTP", "x_y",
]
text_strategy = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=150),
    st.lists(st.sampled_from(_PIECES), max_size=60).map("".join),
)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=300)
@given(text=text_strategy)
def test_random_text_parity(name, real, text):
    _, tok, enc = real(name)
    if any(special in text for special in enc.special_tokens_set):
        # Both libraries refuse a disallowed special in text, and agree once it is plain text.
        with pytest.raises(ValueError):
            tok.encode(text)
        with pytest.raises(ValueError):
            enc.encode(text)
        assert tok.encode(text, disallowed_special=()) == enc.encode(text, disallowed_special=())
        return
    _check(tok, enc, text)


# The first code point of blocks/ranges assigned in recent Unicode versions
# (e.g. U+323B0 CJK Extension J, U+3D000 in plane 3, U+1E6C0, U+10940, U+11DB0,
# U+16EA0, U+18D80) plus a few long-assigned controls. Letters, marks and digits
# steer every pre-tokenizer pattern, so our regex engine's Unicode tables must
# classify them exactly as tiktoken's engine does, or chunks (and IDs) differ.
_UNICODE_PROBES = [
    0x558, 0x58B, 0x5C8, 0x88F, 0xB53, 0xC5C, 0xCDC, 0x1ACF, 0x208F, 0x209D, 0xA7CE, 0xA7F1, 0xAB6C,
    0x107BB, 0x10940, 0x10EC5, 0x10ED9, 0x11B0A, 0x11B60, 0x11DB0, 0x11DE0, 0x1246F, 0x12550, 0x16EA0,
    0x16FF2, 0x187F8, 0x18CD6, 0x18D80, 0x18E00, 0x191A0, 0x1B123, 0x1D250, 0x1D6A6, 0x1DF2B, 0x1E6C0,
    0x2B73A, 0x2CEA2, 0x323B0, 0x33000, 0x3D000,
    # long-assigned controls (Latin, Greek, Han, Ext B, Unicode 15's Kawi, Unicode 16's Todhri)
    0xE9, 0x3B1, 0x4E2D, 0x20BB7, 0x11F00, 0x105C0,
]


def _probe_text(cp: int) -> str:
    c = chr(cp)
    return f"{c}/A x{c}b 1{c}2 {c}\u0301 {c}'s {c}{c} ({c})"


@pytest.mark.parametrize("name", NAMES)
def test_unicode_property_tables_agree_with_tiktoken(name, real):
    _, tok, enc = real(name)
    stride = list(range(0x80, 0x40000, 251))
    bad = []
    for cp in _UNICODE_PROBES + stride:
        if 0xD800 <= cp <= 0xDFFF:
            continue
        text = _probe_text(cp)
        if tok.encode(text) != enc.encode(text):
            bad.append(f"U+{cp:04X}")
    assert not bad, f"{len(bad)} code points tokenize differently from tiktoken, e.g. {bad[:12]}"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "text", ["a\ud800b", "\udfff", "x\ud83d", "\ud83d\ude00", "\ude00\ud83d", "ok \udcff\udcfe ok"]
)
def test_lone_surrogates_become_replacement_char(name, text, real):
    _, tok, enc = real(name)
    ids = tok.encode(text)
    assert ids == enc.encode(text)
    fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert ids == tok.encode(fixed)
    assert "\ufffd" in fixed or fixed == "😀"


@pytest.mark.parametrize("name", NAMES)
def test_special_tokens_match_tiktoken(name, real):
    _, tok, enc = real(name)
    for s in tok.special_tokens:
        text = f"before {s} after{s}{s}\n{s}"
        ids = tok.encode(text, allowed_special="all")
        assert ids == enc.encode(text, allowed_special="all")
        assert ids.count(tok.special_tokens[s]) == 4
        assert tok.decode(ids) == text
        ids_one = tok.encode(text, allowed_special={s})
        assert ids_one == enc.encode(text, allowed_special={s}) == ids
        # disallowed (the default): both refuse, and our message names the token
        with pytest.raises(ValueError, match=repr(s).replace("|", r"\|")):
            tok.encode(text)
        with pytest.raises(ValueError):
            enc.encode(text)
        # encoded as ordinary text when neither allowed nor disallowed
        plain = tok.encode(text, disallowed_special=())
        assert plain == enc.encode(text, disallowed_special=()) == enc.encode_ordinary(text)
        assert tok.special_tokens[s] not in plain
        assert tok.decode(plain) == text


def test_partial_allowance_cl100k(real):
    _, tok, enc = real("cl100k_base")
    text = "<|fim_prefix|>def f():<|fim_suffix|>\n<|fim_middle|><|endofprompt|>"
    allowed = {"<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"}
    with pytest.raises(ValueError, match=r"<\|endofprompt\|>"):
        tok.encode(text, allowed_special=allowed)
    with pytest.raises(ValueError):
        enc.encode(text, allowed_special=allowed)
    ids = tok.encode(text, allowed_special=allowed, disallowed_special=())
    assert ids == enc.encode(text, allowed_special=allowed, disallowed_special=())
    assert 100276 not in ids and {100258, 100259, 100260} <= set(ids)
    with pytest.raises(ValueError, match="not registered"):
        tok.encode("x", allowed_special={"<|not_a_special|>"})


@pytest.mark.parametrize("name", NAMES)
def test_decode_partial_utf8_like_tiktoken(name, real):
    _, tok, enc = real(name)
    ids = tok.encode("注意")
    for k in range(len(ids) + 1):
        assert tok.decode(ids[:k]) == enc.decode(ids[:k])
        assert tok.decode_bytes(ids[:k]) == enc.decode_bytes(ids[:k])


@pytest.mark.parametrize("name", NAMES)
def test_encode_batch(name, real):
    _, tok, enc = real(name)
    texts = list(ADVERSARIAL.values())
    assert tok.encode_batch(texts) == enc.encode_batch(texts)


# --------------------------------------------- export: ByteBPE.to_tiktoken


def test_to_tiktoken_matches_on_corpus(tok, sample):
    enc = tok.to_tiktoken("toklab-test")
    assert enc.n_vocab == tok.n_vocab
    for name in corpus.CORPUS:
        text = corpus.load(name, 80_000)[40_000:]
        assert enc.encode(text) == tok.encode(text), name
    assert enc.encode(sample, allowed_special="all") == tok.encode(sample, allowed_special="all")
    assert enc.encode(sample, disallowed_special=()) == tok.encode(sample, disallowed_special=())
    ids = tok.encode(sample, allowed_special={PAD}, disallowed_special=())
    assert enc.encode(sample, allowed_special={PAD}, disallowed_special=()) == ids
    assert tok.special_tokens[PAD] in ids and tok.special_tokens[EOT] not in ids


@settings(max_examples=200)
@given(
    text=st.one_of(
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=120),
        st.lists(st.sampled_from(["the", " ", "\n", "注意", EOT, PAD, "12345", "'s", "😀", "def", "("]), max_size=40).map(
            "".join
        ),
    )
)
def test_to_tiktoken_matches_on_random_text(tok, exported, text):
    enc = exported
    assert enc.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
    assert enc.encode(text, disallowed_special=()) == tok.encode(text, disallowed_special=())


# ------------------------------- one long chunk against tiktoken's own BPE


@pytest.mark.parametrize("unit", ["a", " ", "ab", "the ", "注", "7", "=-"])
def test_merge_long_equals_tiktoken_on_100kb_runs(unit, trained, real):
    """100 KB single chunks: the heap merge against tiktoken's own BPE on the same ranks."""
    data = (unit * 100_000).encode("utf-8")[:100_000]
    for tok, enc in ((trained["gpt2"], trained["gpt2"].to_tiktoken()), (real("cl100k_base")[1], real("cl100k_base")[2])):
        ranks = tok.mergeable_ranks()
        ids = [ranks[p] for p in merge_long(data, ranks)]
        assert ids == enc._encode_single_piece(data)
        assert b"".join(tok.tokens(ids)) == data
