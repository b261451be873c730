"""Token labels and boundary views."""

from __future__ import annotations

from toklab.bpe import ByteBPE
from toklab.measure import viz


def test_token_label_partial_utf8_is_hex():
    assert viz.token_label(b"\xe6\xb3") == "<E6 B3>"
    assert viz.token_label(b"\xa8") == "<A8>"
    assert viz.token_label(b"\xf0\x9f\x98") == "<F0 9F 98>"
    assert viz.token_label(b"a\xff") == "<61 FF>"


def test_token_label_text_and_whitespace():
    assert viz.token_label("注".encode("utf-8")) == "注"
    assert viz.token_label(b" hello") == "␣hello"
    assert viz.token_label(b"\n\t\r ") == "↵→␍␣"
    assert viz.token_label(b"") == ""


def test_token_labels_on_real_vocab(real):
    _, tok, _ = real("r50k_base")
    # r50k has no token for 注; its three bytes split across byte-level tokens
    labels = viz.token_labels(tok, " 注")
    assert "".join(labels) != " 注"
    assert any(lab.startswith("<") and lab.endswith(">") for lab in labels)
    assert viz.token_labels(tok, "hello world") == ["hello", "␣world"]


def test_show_boundaries(real):
    toks = {"r50k": real("r50k_base")[1], "cl100k": real("cl100k_base")[1]}
    view = viz.show_boundaries(toks, "hello world")
    assert view.rows == {"r50k": ["hello", "␣world"], "cl100k": ["hello", "␣world"]}
    text = repr(view)
    assert "r50k" in text and "hello|␣world" in text
    html = view._repr_html_()
    assert html.count("<span") == 4 and "2 tokens" in html


def test_boundaries_html_escapes():
    html = viz.boundaries_html({"<b>": ["<script>", "&"]})
    assert "<script>" not in html and "&lt;script&gt;" in html and "&amp;" in html
    assert "&lt;b&gt;" in html


def test_token_labels_passes_encode_options():
    tok = ByteBPE([], special_tokens=["<|endoftext|>"])
    labels = viz.token_labels(tok, "a<|endoftext|>", allowed_special="all")
    assert labels == ["a", "<|endoftext|>"]
