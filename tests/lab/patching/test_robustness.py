"""`toklab.lab.patching.robustness`: noise that is reproducible, and a count of what it changed."""

from __future__ import annotations

import random

import pytest

from toklab.lab import patching as P


def test_changed_units_counts_the_new_units():
    assert P.changed_units(b"kitten", b"kitten") == 0
    assert P.changed_units(b"kitten", b"sitten") == 1
    assert P.changed_units(b"kitten", b"kiten") == 0  # a deletion leaves nothing new
    assert P.changed_units(b"kitten", b"kittens") == 1
    assert P.changed_units([1, 2, 3], [1, 9, 9, 3]) == 2
    assert P.changed_units([], [4, 5]) == 2


def test_perturb_kinds():
    text = "The quick brown fox jumps over the lazy dog, twice."
    assert P.perturb(text, "uppercase") == text.upper()
    rc = P.perturb(text, "random case", rng=random.Random(3))
    assert rc.lower() == text.lower() and rc != text
    typo = P.perturb(text, "typo", rate=1.0, rng=random.Random(1))
    assert typo.count(" ") == text.count(" ")  # words stay words
    for a, b in zip(text.split(" "), typo.split(" ")):
        assert abs(len(a) - len(b)) <= 1  # one edit per word
    noisy = P.perturb(text, "character noise", rate=0.3, rng=random.Random(2))
    assert noisy != text
    assert P.perturb(text, "character noise", rate=0.0) == text
    # the same generator state gives the same noise
    assert P.perturb(text, "typo", rng=random.Random(7)) == P.perturb(text, "typo", rng=random.Random(7))


def test_perturb_errors():
    with pytest.raises(ValueError, match="unknown noise kind"):
        P.perturb("a", "shout")
    with pytest.raises(ValueError, match="rate"):
        P.perturb("a", "typo", rate=1.5)
    with pytest.raises(TypeError, match="str"):
        P.perturb(b"a", "typo")


def test_noise_sensitivity_bytes_against_characters():
    lines = ["the cat sat on the mat", "a second line of plain words"]
    r = P.noise_sensitivity(lines, lambda s: list(s.encode()), "uppercase")
    # with one ID per byte the two counts agree; upper case changes every letter
    assert r.bytes_changed == r.tokens_changed == sum(c.isalpha() for c in "".join(lines))
    assert r.token_growth == 1.0 and r.byte_share == r.token_share
    words = P.noise_sensitivity(lines, lambda s: [hash(w) % 1000 for w in s.split(" ")], "typo", rate=1.0)
    assert words.tokens_changed == words.tokens_after  # every word touched: every word-token new
    with pytest.raises(ValueError, match="no text"):
        P.noise_sensitivity([""], lambda s: [], "typo")
