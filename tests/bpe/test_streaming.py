"""`ByteBPE.encode_iterable`: the IDs of the joined text, lazily, with bounded memory."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab.data import corpus

from .helpers import EOT


def _chunks(text: str, cuts: list[int]) -> list[str]:
    cuts = sorted(set(c for c in cuts if 0 < c < len(text)))
    bounds = [0] + cuts + [len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


@settings(max_examples=40)
@given(data=st.data())
def test_encode_iterable_random_chunkings(tok, real, sample, data):
    r50k = real("r50k_base")[1]
    cuts = data.draw(st.lists(st.integers(0, len(sample)), max_size=40))
    # also cut inside some of the special tokens
    starts = [i for i in range(len(sample)) if sample.startswith(EOT, i)]
    for s in data.draw(st.lists(st.sampled_from(starts), max_size=3)):
        cuts.append(s + data.draw(st.integers(1, len(EOT) - 1)))
    pieces = _chunks(sample, cuts)
    assert "".join(pieces) == sample
    assert list(tok.encode_iterable(pieces, allowed_special="all")) == tok.encode(sample, allowed_special="all")
    assert list(r50k.encode_iterable(pieces, allowed_special="all")) == r50k.encode(sample, allowed_special="all")
    assert list(tok.encode_iterable(pieces, disallowed_special=())) == tok.encode(sample, disallowed_special=())


@pytest.mark.parametrize("split_at", range(1, len(EOT)))
def test_encode_iterable_special_split_across_items(tok, split_at):
    filler = corpus.load("en", 6000)  # > 4096 chars, so the stream does cut its buffer
    text = filler + EOT + " and more text" + EOT
    first, second = filler + EOT[:split_at], EOT[split_at:] + " and more text" + EOT
    ids = list(tok.encode_iterable([first, second], allowed_special="all"))
    assert ids == tok.encode(text, allowed_special="all")
    assert ids.count(tok.special_tokens[EOT]) == 2
    # with the default contract the reassembled special must still be refused
    with pytest.raises(ValueError, match=r"<\|endoftext\|>"):
        list(tok.encode_iterable([first, second]))


@pytest.mark.parametrize("fname", ["en", "zh", "code", "mixed"])
def test_encode_iterable_lines_of_corpus(fname, real, corpus_texts):
    text = corpus_texts[fname]
    for name in ("r50k_base", "o200k_base") if fname in ("code", "mixed") else ("r50k_base",):
        t = real(name)[1]
        lines = text.splitlines(keepends=True)
        assert list(t.encode_iterable(lines)) == t.encode(text), name


def test_encode_iterable_is_lazy(real, corpus_texts):
    t = real("r50k_base")[1]
    text = corpus_texts["en"]
    lines = text.splitlines(keepends=True)
    t.encode(text)  # warm the piece cache, so the measurement sees only the stream's buffer
    copies = 5
    total_chars = len(text) * copies
    assert total_chars > 4_900_000

    pulled = 0

    def stream():
        nonlocal pulled
        for _ in range(copies):
            for line in lines:
                pulled += 1
                yield line

    it = t.encode_iterable(stream())
    next(it)
    assert pulled < len(lines) // 10, "the first ID only came after most of the input was read"

    tracemalloc.start()
    try:
        count = 1 + sum(1 for _ in it)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == copies * len(t.encode(text))
    assert peak < total_chars / 5, f"peak {peak} bytes while streaming {total_chars} chars"


def test_dropout_stream_equals_dropout_encode(tok):
    """encode_iterable promises the IDs of encode("".join(texts)) with the same options.

    With a seeded dropout the stream must therefore reproduce encode's random
    segmentation, not restart the random generator at every buffered piece.
    """
    text = corpus.load("en", 20_000)
    lines = text.splitlines(keepends=True)
    whole = tok.encode(text, dropout=0.1, seed=3)
    streamed = list(tok.encode_iterable(lines, dropout=0.1, seed=3))
    assert tok.decode(streamed) == text
    assert streamed == whole
