"""Small models, worked-example tables and corpus slices shared by the Unigram test files."""

from __future__ import annotations

from hypothesis import strategies as st

from toklab.data import corpus

ABAB = {"a": 0.15, "b": 0.15, "ab": 0.40, "aba": 0.20, "bab": 0.10}
ALPHABET = "abc"


@st.composite
def small_models(draw):
    extra = draw(st.lists(st.text(ALPHABET, min_size=2, max_size=4), max_size=8, unique=True))
    pieces = sorted(set(ALPHABET) | set(extra))
    weights = draw(st.lists(st.integers(1, 20), min_size=len(pieces), max_size=len(pieces)))
    total = sum(weights)
    probs = {p: w / total for p, w in zip(pieces, weights)}
    words = draw(st.dictionaries(st.text(ALPHABET, min_size=1, max_size=7), st.integers(1, 5), min_size=1, max_size=4))
    return probs, words


def tiny_corpus():
    text = corpus.load("en", max_bytes=20_000)
    return [ln.replace(" ", "\u2581") for ln in text.split("\n") if ln]
