"""toklab.lab.batching: padding, attention and loss masks, packing, on random batches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab.lab import batching

EOS = 2
SEQS = st.lists(st.lists(st.integers(3, 50), max_size=12), min_size=1, max_size=6)


@settings(max_examples=200)
@given(SEQS, st.sampled_from(["right", "left"]), st.integers(0, 3))
def test_pad_keeps_every_token_and_masks_only_padding(seqs, side, extra):
    seqs = [s + [EOS] for s in seqs]  # every document ends with a real EOS
    width = max(map(len, seqs)) + extra
    batch = batching.pad(seqs, pad_id=EOS, length=width, side=side)  # PAD = EOS on purpose
    att = batch.attention_mask()
    assert batch.ids.shape == (len(seqs), width)
    for row, seq, keep in zip(batch.ids, seqs, att):
        assert row[keep].tolist() == seq
        assert (row[~keep] == EOS).all()
    # loss mask: the targets that count are exactly the real tokens after the first
    targets, mask = batch.targets(), batch.loss_mask()
    for k, seq in enumerate(seqs):
        assert targets[k][mask[k]].tolist() == seq[1:]
    # every real EOS is a target, while masking by ID removes every one of them
    assert (targets[mask] == EOS).sum() == len(seqs) - sum(len(s) == 1 for s in seqs)
    # the PAD = EOS bug: a mask built as targets != pad_id differs from the length
    # mask at exactly the real EOS targets
    buggy = targets != batch.pad_id
    assert np.array_equal(mask & ~buggy, mask & (targets == EOS))
    # (with left padding the ID mask also counts the first real token, predicted from a pad)
    assert not (buggy & ~mask & (targets != EOS)).any() or side == "left"


def test_pad_errors():
    with pytest.raises(ValueError, match="shorter than the longest"):
        batching.pad([[1, 2, 3]], 0, length=2)
    with pytest.raises(ValueError, match="empty batch"):
        batching.pad([], 0)
    with pytest.raises(ValueError, match="side"):
        batching.pad([[1]], 0, side="middle")
    with pytest.raises(ValueError, match="pad_id"):
        batching.pad([[1]], -1)
    with pytest.raises(ValueError, match="negative"):
        batching.pad([[1, -3]], 0)
    with pytest.raises(TypeError):
        batching.pad("abc", 0)
    with pytest.raises(ValueError, match="every length"):
        batching.attention_mask([5], 4)


def test_next_token_nll_counts_only_masked_targets():
    log_probs = np.log(np.array([[[0.5, 0.5], [0.25, 0.75]]]))
    targets = np.array([[0, 1]])
    assert batching.next_token_nll(log_probs, targets, np.array([[True, False]])) == pytest.approx(np.log(2))
    both = batching.next_token_nll(log_probs, targets, np.array([[True, True]]))
    assert both == pytest.approx((np.log(2) - np.log(0.75)) / 2)
    with pytest.raises(ValueError, match="no target"):
        batching.next_token_nll(log_probs, targets, np.zeros((1, 2), bool))
    with pytest.raises(ValueError, match="shapes"):
        batching.next_token_nll(log_probs, targets[:, :1], np.ones((1, 1), bool))


def _reference_block_mask(doc):
    rows, width = doc.shape
    out = np.zeros((rows, width, width), bool)
    for r in range(rows):
        for i in range(width):
            for j in range(i + 1):
                out[r, i, j] = doc[r, i] == doc[r, j] and doc[r, i] >= 0
    return out


@settings(max_examples=150)
@given(SEQS, st.integers(2, 9), st.booleans())
def test_pack_round_trip_and_masks(docs, block, with_bos):
    bos = 1 if with_bos else None
    packed = batching.pack(docs, block, eos_id=EOS, bos_id=bos, pad_id=0)
    flat_ids, flat_doc, flat_pos = (a.reshape(-1) for a in (packed.ids, packed.doc, packed.position))
    real = flat_doc >= 0
    expected = [t for d in docs for t in ([bos] if with_bos else []) + d + [EOS]]
    assert flat_ids[real].tolist() == expected
    assert not real[len(expected):].any() and real[: len(expected)].all()
    for k, d in enumerate(docs):  # positions restart at each document
        assert flat_pos[flat_doc == k].tolist() == list(range(len(d) + 1 + with_bos))
    mask = packed.attention_mask()
    assert np.array_equal(mask, _reference_block_mask(packed.doc))
    loss = packed.loss_mask()
    # every document's EOS is a target; no target crosses into another document
    targets = packed.ids[:, 1:][loss]
    # ... unless it starts a row, or its document has no token before it
    eos_at = np.flatnonzero(flat_ids == EOS)
    assert (targets == EOS).sum() == ((eos_at % block != 0) & (flat_pos[eos_at] > 0)).sum()
    src, dst = packed.doc[:, :-1][loss], packed.doc[:, 1:][loss]
    assert (src == dst).all() and (dst >= 0).all()


def test_pack_errors_and_no_silent_drop():
    with pytest.raises(ValueError, match="not a multiple"):
        batching.pack([[5, 6, 7]], 3, eos_id=EOS)
    packed = batching.pack([[5, 6]], 3, eos_id=EOS)  # 5 6 EOS fits exactly
    assert packed.ids.tolist() == [[5, 6, EOS]]
    with pytest.raises(ValueError, match="block_size"):
        batching.pack([[5]], 1, eos_id=EOS)
    with pytest.raises(ValueError, match="eos_id"):
        batching.pack([[5]], 4, eos_id=None)
    with pytest.raises(ValueError, match="rows, positions"):
        batching.block_diagonal_mask(np.zeros(4))


def test_leading_count():
    assert batching.leading_count([7, 7, 3, 7], 7) == 2
    assert batching.leading_count([], 7) == 0
    assert batching.leading_count([3, 7], 7) == 0
