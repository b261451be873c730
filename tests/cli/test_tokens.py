"""``encode``, ``decode`` and ``show``: the IDs are toklab's (and tiktoken's), text round-trips, bad input is one line."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toklab import formats
from toklab.cli.tokens import PALETTE, colored_rows, parse_ids
from toklab.measure import viz

NAMES = ("r50k_base", "cl100k_base", "o200k_base")
SAMPLE = "Hello, wörld! 你好 🙂\n\tdef f(x): return x**2  # 12345"


@pytest.mark.parametrize("name", NAMES)
def test_encode_gives_tiktokens_ids_and_decode_gives_the_text_back(toklab, real, name):
    _, _, enc = real(name)
    result = toklab("encode", SAMPLE, "--vocab", name)
    assert result.status == 0 and result.err == ""
    ids = [int(i) for i in result.out.split()]
    assert ids == enc.encode(SAMPLE)
    back = toklab("decode", *ids, "--vocab", name, "-n")
    assert back.status == 0 and back.out == SAMPLE


def test_text_from_stdin_is_encoded_exactly_as_given(toklab, real):
    _, tok, _ = real("cl100k_base")
    text = "line one\nline two\n"  # the trailing newline is part of the text
    result = toklab("encode", "--vocab", "cl100k_base", "--json", stdin=text)
    assert json.loads(result.out) == tok.encode(text)
    assert toklab("encode", "-", "--vocab", "cl100k_base", "--json", stdin=text).out == result.out
    back = toklab("decode", "--vocab", "cl100k_base", "-n", stdin=result.out)
    assert back.out == text


def test_decode_reads_ids_in_the_usual_spellings(toklab):
    for spelling in ("9906 11 1917", "9906,11,1917", "[9906, 11, 1917]", "9906\n11\n1917\n"):
        assert toklab("decode", "--vocab", "cl100k_base", stdin=spelling).out == "Hello, world\n"


@given(st.lists(st.integers(min_value=0, max_value=10**6), max_size=20), st.sampled_from([" ", ",", ", ", "\n"]))
def test_parse_ids_reads_back_what_it_is_given(ids, sep):
    assert parse_ids(sep.join(map(str, ids))) == ids
    assert parse_ids(json.dumps(ids)) == ids


def test_special_tokens_are_refused_unless_the_user_says_what_they_mean(toklab, real):
    _, tok, _ = real("cl100k_base")
    text = "end<|endoftext|>"
    refused = toklab("encode", text, "--vocab", "cl100k_base")
    assert refused.status == 1 and refused.out == ""
    line = refused.error()
    assert "'<|endoftext|>'" in line and "--allow-special" in line and "--special-as-text" in line
    allowed = toklab("encode", text, "--vocab", "cl100k_base", "--allow-special", "--json")
    assert json.loads(allowed.out) == tok.encode(text, allowed_special="all")
    assert 100257 in json.loads(allowed.out)
    as_text = toklab("encode", text, "--vocab", "cl100k_base", "--special-as-text", "--json")
    assert json.loads(as_text.out) == tok.encode_ordinary(text)
    both = toklab("encode", text, "--vocab", "cl100k_base", "--allow-special", "--special-as-text")
    assert both.status == 2
    both.error()


def test_bad_input_is_one_line_and_a_nonzero_status(toklab):
    cases = [
        (("encode", "hi"), 2, "choose a tokenizer"),
        (("encode", "hi", "--vocab", "gpt4"), 2, "invalid choice: 'gpt4'"),
        (("encode", "hi", "--vocab", "r50k_base", "--vocab", "o200k_base"), 2, "give one tokenizer"),
        (("encode", "hi", "--vocab", "r50k_base", "--cased"), 2, "apply to a WordPiece vocab.txt"),
        (("decode", "1", "x2", "--vocab", "r50k_base"), 1, "'x2' (item 2) is not a token ID"),
        (("decode", "1.5", "--vocab", "r50k_base"), 1, "is not a token ID"),
        (("decode", "50257", "--vocab", "r50k_base"), 1, "unknown token ID 50257"),
        (("decode", "--vocab", "r50k_base", "--", "-3"), 1, "unknown token ID -3"),
        (("show", "hi", "--color", "pink", "--vocab", "r50k_base"), 2, "invalid choice: 'pink'"),
        (("frobnicate",), 2, "invalid choice: 'frobnicate'"),
    ]
    for argv, status, phrase in cases:
        result = toklab(*argv)
        assert result.status == status, (argv, result)
        assert phrase in result.error(), (argv, result.err)


def test_stdin_must_be_utf8_and_a_terminal_is_not_read(toklab):
    bad = toklab("encode", "--vocab", "r50k_base", stdin=b"caf\xe9 au lait")
    assert bad.status == 1 and "byte 0xE9 at offset 3" in bad.error()
    waiting = toklab("encode", "--vocab", "r50k_base", tty=True)
    assert waiting.status == 1 and "pipe it into standard input" in waiting.error()
    surrogate = toklab("encode", "caf\udce9", "--vocab", "r50k_base")  # how Python passes a non-UTF-8 argv byte
    assert surrogate.status == 1 and "not valid UTF-8" in surrogate.error()


def test_show_plain_is_the_boundary_view_of_toklab_viz(toklab, real):
    text = "unbelievable 12345 世界"
    result = toklab("show", text, "--vocab", "r50k_base", "--vocab", "o200k_base")
    assert result.status == 0
    tokenizers = {name: real(name)[1] for name in ("r50k_base", "o200k_base")}
    assert result.out == repr(viz.show_boundaries(tokenizers, text)) + "\n"
    r50k, o200k = result.out.splitlines()
    assert "<E4 B8>" in r50k  # a token holding part of a character is shown as its bytes
    assert "␣世界" in o200k and "\x1b[" not in result.out


def test_show_colours_each_token_when_asked_or_on_a_terminal(toklab, real, monkeypatch):
    text = "a b c d e f g"
    result = toklab("show", text, "--vocab", "cl100k_base", "--color", "always")
    labels = viz.token_labels(real("cl100k_base")[1], text)
    assert result.out == colored_rows({"cl100k_base": labels}) + "\n"
    assert result.out.count("\x1b[0m") == len(labels) == 7
    for k in range(len(labels)):
        assert f"48;5;{PALETTE[k % len(PALETTE)]}m" in result.out
    assert "|" not in result.out
    assert "\x1b[" not in toklab("show", text, "--vocab", "cl100k_base", "--color", "never").out
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in toklab("show", text, "--vocab", "cl100k_base").out


def test_the_same_tokenizer_twice_gets_two_rows(toklab):
    result = toklab("show", "hello", "--vocab", "r50k_base", "--vocab", "r50k_base")
    assert len(result.out.splitlines()) == 2


@pytest.mark.parametrize("kind", ["bpe", "wordpiece", "unigram"])
def test_trained_files_encode_decode_and_show(toklab, trained, kind):
    model = trained[kind]
    _, tokenizer = formats.load(model)
    text = "The cat sat on the mat, 你好"
    ids = toklab("encode", text, "--model", model, "--json")
    assert ids.status == 0, ids.err
    assert json.loads(ids.out) == tokenizer.encode(text)
    back = toklab("decode", *json.loads(ids.out), "--model", model, "-n")
    assert back.out == tokenizer.decode(tokenizer.encode(text))
    if kind == "bpe":
        assert back.out == text
    shown = toklab("show", text, "--model", model)
    assert shown.out.startswith(model.name) and f"{len(json.loads(ids.out))}" in shown.out
