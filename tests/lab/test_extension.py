"""toklab.lab.extension: old IDs and encodings frozen, lexical tokens produced, embeddings resized."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toklab
from toklab.data import corpus
from toklab.lab import extension as ext


@pytest.fixture(scope="module")
def cl100k():
    return toklab.ByteBPE.from_tiktoken("cl100k_base")


@pytest.fixture(scope="module")
def small():
    return toklab.bpe.train(corpus.load("en", 200_000), 600, special_tokens=["<|endoftext|>"])


@pytest.fixture(scope="module")
def corpus_lines():
    return [line for name in corpus.CORPUS for line in corpus.load(name).split("\n")]


SPECIALS = ["<|tool_call|>", "<|/tool_call|>"]
LEXICAL = [" debconf", "软件包", " preseed"]


def test_special_addition_changes_no_encoding_of_the_whole_corpus(cl100k, corpus_lines):
    new = ext.extend(cl100k, SPECIALS, special=True)
    assert new.special_tokens["<|tool_call|>"] == cl100k.n_vocab  # next ID after the largest (100277)
    assert new.special_tokens["<|/tool_call|>"] == cl100k.n_vocab + 1
    report = ext.regression(cl100k, new, corpus_lines)
    assert report.n_texts == len(corpus_lines)
    assert report.ok and report.changed == [] and report.with_added == []
    assert new.merges == cl100k.merges and new.vocab == cl100k.vocab
    # atomic, allowed only on request, never from ordinary text
    assert new.encode("a<|tool_call|>b", allowed_special={"<|tool_call|>"}) == [
        *cl100k.encode("a"), cl100k.n_vocab, *cl100k.encode("b")]
    with pytest.raises(ValueError):
        new.encode("<|tool_call|>")
    assert new.encode_ordinary("<|tool_call|>") == cl100k.encode_ordinary("<|tool_call|>")


def test_lexical_addition_changes_only_where_the_token_joins_old_parts(cl100k, corpus_lines):
    new = ext.extend(cl100k, LEXICAL, special=False)
    assert new.merges[: len(cl100k.merges)] == cl100k.merges
    assert all(new.vocab[i] == t for i, t in cl100k.vocab.items())
    added, specials = ext.added_tokens(cl100k, new)
    assert specials == {}
    # 软件包 = 软 件 包 in cl100k: the intermediate 软件 becomes a token too
    assert sorted(added.values()) == sorted(t.encode() for t in [" debconf", "软件", "软件包", " preseed"])
    seg = ext.old_segmentation(cl100k, new)
    for i, old_ids in seg.items():
        assert cl100k.decode_bytes(old_ids) == new.id_to_token(i)
    report = ext.regression(cl100k, new, corpus_lines)
    assert report.ok and report.changed and report.changed == report.with_added
    for tok in LEXICAL:
        assert new.encode_ordinary(tok) == [new.token_to_id(tok.encode())]
    assert new.encode_ordinary("run dpkg-reconfigure debconf now") != cl100k.encode_ordinary(
        "run dpkg-reconfigure debconf now")


def test_extension_is_deterministic(small):
    a = ext.extend(small, [" tokenizer"], special=False)
    b = ext.extend(small, [" tokenizer"], special=False)
    assert a.fingerprint() == b.fingerprint()


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abc tokenizer软件包 \n.")), max_size=80))
def test_round_trip_and_expansion_on_random_text(text):
    base = _small_for_property()
    new = ext.extend(base, [" tokenizer", "软件包"], special=False)
    ids = new.encode_ordinary(text)
    assert new.decode(ids) == text
    seg = ext.old_segmentation(base, new)
    assert [j for i in ids for j in seg.get(i, [i])] == base.encode_ordinary(text)


_SMALL: list = []


def _small_for_property():
    if not _SMALL:
        _SMALL.append(toklab.bpe.train(corpus.load("en", 100_000), 400))
    return _SMALL[0]


def test_bad_input_is_refused_with_a_clear_message(small, cl100k):
    with pytest.raises(ValueError, match="already a token"):
        ext.extend(small, [" the"], special=False)
    with pytest.raises(ValueError, match="already a special token"):
        ext.extend(small, ["<|endoftext|>"], special=True)
    with pytest.raises(ValueError, match="already an ordinary token"):
        ext.extend(small, [" the"], special=True)
    with pytest.raises(ValueError, match="empty string"):
        ext.extend(small, [""], special=True)
    with pytest.raises(ValueError, match="no tokens"):
        ext.extend(small, [], special=False)
    with pytest.raises(ValueError, match="listed twice"):
        ext.extend(small, ["<|a|>", "<|a|>"], special=True)
    with pytest.raises(ValueError, match="pre-tokenizer splits"):
        ext.extend(small, [" New York"], special=False)
    with pytest.raises(TypeError):
        ext.extend(small, [b"bytes"], special=True)
    with pytest.raises(TypeError):
        ext.extend(small, ["<|x|>"])  # special= is required: the caller must choose


def test_id_collision_is_detected(small):
    other = toklab.bpe.train(corpus.load("zh", 100_000), 600, special_tokens=["<|endoftext|>"])
    with pytest.raises(ValueError, match="ID collision"):
        ext.added_tokens(small, other)
    with pytest.raises(ValueError, match="ID collision"):
        ext.regression(small, other, ["x"])
    emb = np.zeros((len(small), 4))
    with pytest.raises(ValueError, match="ID collision"):
        ext.resize_embeddings(small, other, emb)


def test_resize_tied_untied_and_optimizer_state(small):
    new = ext.extend(small, [" tokenizer"], special=False)
    new = ext.extend(new, ["<|tool|>"], special=True)
    rng = np.random.default_rng(0)
    d = 8
    emb = rng.normal(size=(small.n_vocab, d))
    before = emb.copy()
    desc = {"<|tool|>": "call a tool"}
    tied = ext.resize_embeddings(small, new, emb, descriptions=desc)
    assert tied.lm_head is tied.embedding
    r = ext.resize_embeddings(small, new, emb, lm_head=emb, descriptions=desc)
    assert r.lm_head is r.embedding
    assert tied.embedding.shape == (new.n_vocab, d)
    np.testing.assert_array_equal(emb, before)  # input untouched
    np.testing.assert_array_equal(tied.embedding[: small.n_vocab], emb)
    seg = ext.old_segmentation(small, new)
    for i, src in seg.items():
        np.testing.assert_allclose(tied.embedding[i], emb[src].mean(axis=0))
    tool = new.special_tokens["<|tool|>"]
    np.testing.assert_allclose(tied.embedding[tool], emb[small.encode_ordinary("call a tool")].mean(axis=0))
    assert tied.sources[tool] == small.encode_ordinary("call a tool")

    head = rng.normal(size=(small.n_vocab, d))
    state = {k: {"m": rng.normal(size=a.shape), "v": rng.random(a.shape)} for k, a in [("embedding", emb), ("lm_head", head)]}
    un = ext.resize_embeddings(small, new, emb, lm_head=head, descriptions=desc, optimizer_state=state)
    assert un.lm_head is not un.embedding and un.lm_head.shape == (new.n_vocab, d)
    for i, src in un.sources.items():
        np.testing.assert_allclose(un.lm_head[i], head[src].mean(axis=0))
    for name in ("embedding", "lm_head"):
        for key in ("m", "v"):
            grown = un.optimizer_state[name][key]
            np.testing.assert_array_equal(grown[: small.n_vocab], state[name][key])
            assert not grown[small.n_vocab :].any()


def test_resize_keeps_padding_rows(small):
    new = ext.extend(small, ["<|tool|>"], special=True)
    padded = np.arange((small.n_vocab + 10) * 2, dtype=float).reshape(-1, 2)  # padded like nanoGPT's 50,304
    r = ext.resize_embeddings(small, new, padded, descriptions={"<|tool|>": "tool"})
    assert r.embedding.shape == padded.shape
    np.testing.assert_array_equal(r.embedding[small.n_vocab + 1 :], padded[small.n_vocab + 1 :])


def test_resize_bad_input(small):
    new = ext.extend(small, ["<|tool|>"], special=True)
    emb = np.zeros((small.n_vocab, 4))
    with pytest.raises(ValueError, match="needs a description"):
        ext.resize_embeddings(small, new, emb)
    with pytest.raises(ValueError, match="description of '<|tool|>' is empty"):
        ext.resize_embeddings(small, new, emb, descriptions={"<|tool|>": "  "})
    with pytest.raises(ValueError, match="not added specials"):
        ext.resize_embeddings(small, new, emb, descriptions={"<|tool|>": "x", "<|other|>": "y"})
    with pytest.raises(ValueError, match="rows"):
        ext.resize_embeddings(small, new, emb[:-1], descriptions={"<|tool|>": "x"})
    with pytest.raises(ValueError, match="2-D"):
        ext.resize_embeddings(small, new, emb[0], descriptions={"<|tool|>": "x"})
    with pytest.raises(ValueError, match="optimizer_state"):
        ext.resize_embeddings(small, new, emb, descriptions={"<|tool|>": "x"}, optimizer_state={"embedding": {"m": emb[:2]}})


def test_same_result_under_any_hash_seed():
    import os
    import subprocess
    import sys

    code = (
        "import toklab; from toklab.data import corpus; from toklab.lab import extension as ext\n"
        "tok = toklab.bpe.train(corpus.load('en', 50_000), 350)\n"
        "new = ext.extend(tok, [' tokenizer', ' vocabulary'], special=False)\n"
        "new = ext.extend(new, ['<|a|>', '<|b|>'], special=True)\n"
        "print(new.fingerprint(), sorted(ext.old_segmentation(tok, new).items()))\n"
    )
    outs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outs) == 1


def test_mean_of_all_rows_init(small):
    new = ext.extend(small, [" tokenizer"], special=False)
    new = ext.extend(new, ["<|tool|>"], special=True)
    rng = np.random.default_rng(1)
    emb = rng.normal(size=(small.n_vocab + 5, 6))  # 5 padding rows, left out of the mean
    head = rng.normal(size=emb.shape)
    r = ext.resize_embeddings(small, new, emb, lm_head=head, init="mean")
    added = [i for i in range(small.n_vocab, new.n_vocab)]
    for i in added:
        np.testing.assert_allclose(r.embedding[i], emb[: small.n_vocab].mean(axis=0))
        np.testing.assert_allclose(r.lm_head[i], head[: small.n_vocab].mean(axis=0))
        assert list(r.sources[i]) == list(range(small.n_vocab))
    np.testing.assert_array_equal(r.embedding[: small.n_vocab], emb[: small.n_vocab])
    # the reason for this init: exp(h . mean) <= mean(exp(h . e_i)) (Jensen), so under
    # any hidden state the k new tokens share at most k/(n + k) of the probability
    tied = ext.resize_embeddings(small, new, emb[: small.n_vocab], init="mean").embedding
    h = rng.normal(size=(200, 6)) * 3
    logits = h @ tied.T
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    k, n = len(added), small.n_vocab
    assert (p[:, added].sum(axis=1) <= k / (n + k) + 1e-12).all()


def test_init_bad_input(small):
    new = ext.extend(small, ["<|tool|>"], special=True)
    emb = np.zeros((small.n_vocab, 4))
    with pytest.raises(ValueError, match="init must be one of"):
        ext.resize_embeddings(small, new, emb, init="random")
    with pytest.raises(ValueError, match="only with init='parts'"):
        ext.resize_embeddings(small, new, emb, init="mean", descriptions={"<|tool|>": "x"})
