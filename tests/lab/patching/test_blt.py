"""`toklab.lab.patching.blt`: the toy BLT runs, is causal, and costs exactly what `blt_flops` says."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab.lab import patching as P

SMALL = P.BLTShape(P.StackShape(1, 16, 24, window=7), P.StackShape(2, 32, 40), P.StackShape(2, 16, 24, window=7),
                   ngram_sizes=(3, 5), ngram_buckets=97, heads=4)
TOY = P.ToyBLT.init(SMALL, seed=1)


@st.composite
def data_and_starts(draw):
    data = draw(st.binary(min_size=1, max_size=60))
    inner = draw(st.sets(st.integers(1, max(1, len(data) - 1)), max_size=20)) if len(data) > 1 else set()
    return data, [0] + sorted(inner)


@settings(max_examples=40, deadline=None)
@given(data_and_starts())
def test_counted_flops_equal_the_formula_and_shapes_follow_the_patches(case):
    data, starts = case
    trace = TOY.forward(data, starts)
    lengths = [len(p) for p in P.split_at(data, starts)]
    assert trace.flops == P.blt_flops(SMALL, lengths)
    assert trace.shapes["bytes"] == (len(data),)
    assert trace.shapes["patches"] == trace.shapes["latent outputs"] == (len(starts), 32)
    assert trace.shapes["next-byte logits"] == (len(data), 256)
    assert np.isfinite(trace.logits).all()


def test_logits_at_a_byte_depend_only_on_the_bytes_up_to_it():
    data = bytearray(b"the sdc disk, 4 GB, is also entirely available;")
    starts = [0, 4, 5, 8, 12, 16, 20, 30]
    before = TOY.forward(bytes(data), starts).logits
    for k in (3, 4, 17, 30, len(data) - 1):
        changed = bytearray(data)
        changed[k] ^= 0x20
        after = TOY.forward(bytes(changed), starts).logits
        np.testing.assert_array_equal(after[:k], before[:k])
        assert not np.allclose(after[k], before[k])


def test_stack_flops_are_twice_the_weights_per_position_plus_attention():
    stack = P.StackShape(3, 8, 12)
    weights = sum(a.size for name, a in TOY.params.items() if name.startswith("lat0."))
    assert weights == 4 * 32 * 32 + 3 * 32 * 40  # q, k, v, o and the gated FFN of one latent layer
    assert stack.matmul_flops_per_position() == 2 * 3 * (4 * 64 + 3 * 96)
    assert stack.flops(5, P.causal_pairs(5)) == 5 * stack.matmul_flops_per_position() + 4 * 3 * 8 * 15
    assert P.causal_pairs(0) == 0 and P.causal_pairs(4) == 10
    for window in (1, 3, 10):
        windowed = P.StackShape(1, 8, 8, window=window)
        for n in (0, 1, 5, 12):
            assert windowed.pairs(n) == sum(min(i + 1, window) for i in range(n))


def test_token_and_megabyte_counts_by_hand():
    s = P.StackShape(2, 4, 8)
    t = P.token_model_flops(s, vocab_size=10, n_tokens=3)
    assert t == {"layers": 3 * 2 * 2 * (64 + 96) + 4 * 2 * 4 * 6, "output": 2 * 3 * 4 * 10}
    g, loc = P.StackShape(1, 8, 8), P.StackShape(1, 4, 4)
    m = P.megabyte_flops(g, loc, n_bytes=10, patch_size=4)  # patches of 4, 4, 2
    assert m["global"] == g.flops(3, 6)
    assert m["local"] == loc.flops(10, 10 + 10 + 3)
    assert m["global to local"] == 2 * 10 * 8 * 4 and m["output"] == 2 * 10 * 4 * 256
    # the global model's share per byte falls as the patch grows; the local model's attention grows
    per_byte = {p: P.megabyte_flops(g, loc, 4096, p) for p in (1, 8, 64)}
    assert per_byte[1]["global"] > per_byte[8]["global"] > per_byte[64]["global"]
    assert per_byte[1]["local"] < per_byte[8]["local"] < per_byte[64]["local"]


def test_hf_default_shape_and_errors():
    assert P.BLT_HF_DEFAULT.latent == P.StackShape(25, 2048, 5632)
    assert P.BLT_HF_DEFAULT.ngram_sizes == (3, 4, 5, 6, 7, 8) and P.BLT_HF_DEFAULT.ngram_buckets == 500_002
    with pytest.raises(ValueError, match="positive int"):
        P.StackShape(0, 8, 8)
    with pytest.raises(ValueError, match="as wide"):
        P.BLTShape(P.StackShape(1, 8, 8), P.StackShape(1, 8, 8), P.StackShape(1, 16, 8))
    with pytest.raises(ValueError, match="heads"):
        P.BLTShape(P.StackShape(1, 6, 8), P.StackShape(1, 8, 8), P.StackShape(1, 6, 8), heads=4)
    with pytest.raises(ValueError, match="at least one"):
        P.blt_flops(SMALL, [])
    with pytest.raises(ValueError, match="empty"):
        TOY.forward(b"", [])
    with pytest.raises(ValueError, match="first patch"):
        TOY.forward(b"abc", [1])
    with pytest.raises(ValueError, match="at least one"):
        P.megabyte_flops(P.StackShape(1, 8, 8), P.StackShape(1, 8, 8), 0, 4)


def test_same_seed_same_model():
    a = P.ToyBLT.init(SMALL, seed=5).forward(b"abc def", [0, 3]).logits
    b = P.ToyBLT.init(SMALL, seed=5).forward(b"abc def", [0, 3]).logits
    np.testing.assert_array_equal(a, b)
