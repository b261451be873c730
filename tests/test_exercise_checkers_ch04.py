"""§4's exercise checkers accept a correct answer and reject a typical mistake.

(Kept apart from tests/test_exercise_checkers.py while the package is being re-laid out.)
"""

from __future__ import annotations

import numpy as np
import pytest

from toklab import extension as ext
from toklab.bpe import ByteBPE
from toklab.exercises import ch04_1, ch04_2, ch04_3


def _rejects(check, fn) -> None:
    with pytest.raises(AssertionError):
        check(fn)


def test_ch04_1_truncate():
    def truncate(tok, size):
        n = size - 256
        if not 0 <= n <= len(tok.merges):
            raise ValueError(size)
        return ByteBPE(tok.merges[:n], pattern=tok.pattern)

    ch04_1.check_truncate(truncate)
    # the classic slip: the last merges instead of the first
    _rejects(ch04_1.check_truncate, lambda tok, size: ByteBPE(tok.merges[len(tok.merges) - (size - 256):], pattern=tok.pattern))
    # forgetting the 256 byte tokens: one merge per token
    _rejects(ch04_1.check_truncate, lambda tok, size: ByteBPE(tok.merges[:size], pattern=tok.pattern))


def test_ch04_2_token_premium():
    def premium(encode, texts, reference):
        ref = len(encode(texts[reference]))
        if not ref:
            raise ValueError("empty reference")
        return {loc: len(encode(t)) / ref for loc, t in texts.items()}

    ch04_2.check_token_premium(premium)

    def per_byte(encode, texts, reference):  # compares compression, not cost
        ref = len(encode(texts[reference])) / max(len(texts[reference].encode()), 1)
        if not ref:
            raise ValueError("empty reference")
        return {loc: len(encode(t)) / len(t.encode()) / ref for loc, t in texts.items()}

    _rejects(ch04_2.check_token_premium, per_byte)


def test_ch04_3_mean_init():
    def mean_init(old, new, emb):
        out = np.zeros((new.n_vocab, emb.shape[1]))
        out[: emb.shape[0]] = emb
        for i, parts in ext.old_segmentation(old, new).items():
            out[i] = emb[parts].mean(axis=0)
        return out

    ch04_3.check_mean_init(mean_init)

    def mean_of_all(old, new, emb):
        out = np.zeros((new.n_vocab, emb.shape[1]))
        out[: emb.shape[0]] = emb
        out[emb.shape[0]:] = emb.mean(axis=0)
        return out

    _rejects(ch04_3.check_mean_init, mean_of_all)

    def in_place(old, new, emb):
        grown = mean_init(old, new, emb)
        emb[0] = 0.0
        return grown

    _rejects(ch04_3.check_mean_init, in_place)
