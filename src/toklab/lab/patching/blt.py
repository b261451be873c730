"""A toy Byte Latent Transformer in numpy, and the FLOPs per byte of byte, patch and token models.

BLT has three parts: a small *local encoder* that reads bytes (with hashed n-gram
embeddings) and pools each patch into one vector, a big *latent transformer* that runs
once per patch, and a small *local decoder* that turns patch vectors back into next-byte
predictions. `ToyBLT` runs all three with random weights on real bytes, so the shapes
can be printed, and counts the multiply-adds it performs as it goes; `blt_flops` is the
same count from the shapes alone, and a test holds the two equal. `token_model_flops` and
`megabyte_flops` count a subword model and a MegaByte-style model the same way, so all
three can be compared per byte of the same text.

A FLOP here is one multiply or one add of a matrix product (a product of an (m, k) and
a (k, n) matrix is 2mkn FLOPs). Attention is counted for the query-key pairs its mask
lets through (what a kernel that skips masked pairs does); table look-ups, norms,
softmax and other element-wise work are not counted, as in the usual 2N-per-token rule.

The toy's byte-to-patch and patch-to-byte cross-attention follow the idea of BLT's, not
its every detail (BLT has several query vectors per patch, windowed attention and
cross-attention in every decoder layer).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .hashing import ngram_embed
from .patches import split_at

__all__ = [
    "StackShape",
    "BLTShape",
    "BLT_HF_DEFAULT",
    "BLT_ENTROPY_HF_DEFAULT",
    "causal_pairs",
    "blt_flops",
    "token_model_flops",
    "megabyte_flops",
    "ToyBLT",
    "BLTTrace",
]


@dataclass(frozen=True)
class StackShape:
    """A stack of pre-norm transformer layers: ``layers`` deep, ``width`` wide, with a gated
    (SwiGLU) feed-forward layer of hidden width ``ff``; its causal self-attention sees the
    last ``window`` positions (None: all of them)."""

    layers: int
    width: int
    ff: int
    window: int | None = None

    def __post_init__(self) -> None:
        for name in ("layers", "width", "ff") + (("window",) if self.window is not None else ()):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")

    def pairs(self, n: int) -> int:
        """Query-key pairs of causal self-attention over ``n`` positions, within the window."""
        if self.window is None or self.window >= n:
            return causal_pairs(n)
        return causal_pairs(self.window) + (n - self.window) * self.window

    def matmul_flops_per_position(self) -> int:
        """Weight-matrix FLOPs per position: q, k, v, o (4 d^2) and the gated FFN (3 d ff), doubled."""
        return 2 * self.layers * (4 * self.width * self.width + 3 * self.width * self.ff)

    def attention_flops(self, visible_pairs: int) -> int:
        """Scores and weighted sum, ``2 d`` each per visible (query, key) pair, in every layer."""
        return 4 * self.layers * self.width * visible_pairs

    def flops(self, positions: int, visible_pairs: int | None = None) -> int:
        """FLOPs over ``positions``; attention over ``visible_pairs`` (default: causal, `pairs`)."""
        visible = self.pairs(positions) if visible_pairs is None else visible_pairs
        return positions * self.matmul_flops_per_position() + self.attention_flops(visible)


def causal_pairs(n: int) -> int:
    """Query-key pairs under a causal mask over ``n`` positions: ``n (n + 1) / 2``."""
    return n * (n + 1) // 2


@dataclass(frozen=True)
class BLTShape:
    """The sizes of a BLT: local encoder, latent (global) transformer, local decoder (same
    width as the encoder), the n-gram sizes of the hash embeddings and their table size."""

    encoder: StackShape
    latent: StackShape
    decoder: StackShape
    ngram_sizes: tuple[int, ...] = (3, 4, 5, 6, 7, 8)
    ngram_buckets: int = 500_002
    heads: int = 4

    def __post_init__(self) -> None:
        if self.decoder.width != self.encoder.width:
            raise ValueError("the local decoder must be as wide as the local encoder")
        for stack in (self.encoder, self.latent):
            if stack.width % self.heads:
                raise ValueError(f"width {stack.width} is not a multiple of {self.heads} heads")


#: The sizes in the defaults of Hugging Face's port of BLT (``BltConfig``): encoder 1 x 1024,
#: latent 25 x 2048, decoder 9 x 1024, n-grams of 3 to 8 bytes in 500,002 buckets. The
#: 512-byte attention window of the local models is the one in BLT's own code's
#: configurations (its entropy model's, and its local models' in the debug configuration).
BLT_HF_DEFAULT = BLTShape(StackShape(1, 1024, 2816, window=512), StackShape(25, 2048, 5632),
                          StackShape(9, 1024, 2816, window=512), heads=16)
#: The entropy model in the same defaults (``BltPatcherConfig``): 14 layers x 768, FFN 2048.
BLT_ENTROPY_HF_DEFAULT = StackShape(14, 768, 2048, window=512)


def _lengths(patch_lengths: Sequence[int]) -> list[int]:
    lengths = [int(x) for x in patch_lengths]
    if not lengths or min(lengths) < 1:
        raise ValueError("need at least one patch, and every patch at least one byte long")
    return lengths


def blt_flops(shape: BLTShape, patch_lengths: Sequence[int]) -> dict[str, int]:
    """FLOPs of one forward pass of a `ToyBLT` with this shape over patches of these lengths.

    Keys: ``encoder`` (the local encoder's layers over the bytes), ``pooling`` (each patch's
    query attends to its own bytes), ``latent`` (once per patch), ``unpooling`` (each byte
    attends to the patches finished before its own), ``decoder``, ``output`` (256 logits
    per byte). Embeddings are look-ups: no FLOPs.
    """
    lengths = _lengths(patch_lengths)
    n, p = sum(lengths), len(lengths)
    dl, dg = shape.encoder.width, shape.latent.width
    before = sum(length * (j + 1) for j, length in enumerate(lengths))  # keys each byte's query sees
    return {
        "encoder": shape.encoder.flops(n),
        "pooling": 2 * p * dl * dg + 4 * n * dl * dg + 4 * dg * n + 2 * p * dg * dg,
        "latent": shape.latent.flops(p),
        "unpooling": 2 * n * dl * dl + 4 * p * dg * dl + 4 * dl * before + 2 * n * dl * dl,
        "decoder": shape.decoder.flops(n),
        "output": 2 * n * dl * 256,
    }


def token_model_flops(stack: StackShape, vocab_size: int, n_tokens: int) -> dict[str, int]:
    """FLOPs of a subword decoder over ``n_tokens``: its layers, and the logits over the vocabulary."""
    if n_tokens < 1 or vocab_size < 1:
        raise ValueError("need at least one token and one vocabulary entry")
    return {"layers": stack.flops(n_tokens), "output": 2 * n_tokens * stack.width * vocab_size}


def megabyte_flops(global_stack: StackShape, local_stack: StackShape, n_bytes: int, patch_size: int) -> dict[str, int]:
    """FLOPs of a MegaByte-style model over ``n_bytes`` with fixed patches of ``patch_size``.

    The global model runs once per patch (its input is the patch's bytes, embedded and
    concatenated: a look-up); each patch's output is projected to ``patch_size`` inputs of
    the local model, which runs once per byte attending only inside its patch, and
    predicts 256 logits per byte.
    """
    if n_bytes < 1 or patch_size < 1:
        raise ValueError("need at least one byte and a patch size of at least 1")
    full, rest = divmod(n_bytes, patch_size)
    patches = full + (rest > 0)
    local_pairs = full * causal_pairs(patch_size) + causal_pairs(rest)
    dg, dl = global_stack.width, local_stack.width
    return {
        "global": global_stack.flops(patches),
        "global to local": 2 * n_bytes * dg * dl,
        "local": local_stack.flops(n_bytes, local_pairs),
        "output": 2 * n_bytes * dl * 256,
    }


class _Counter:
    """Runs matrix products and adds up their FLOPs under the current part's name."""

    def __init__(self) -> None:
        self.flops: dict[str, int] = {}
        self.part = ""

    def mm(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        self.flops[self.part] = self.flops.get(self.part, 0) + 2 * a.shape[0] * a.shape[1] * b.shape[1]
        return a @ b

    def attend(self, q: np.ndarray, k: np.ndarray, v: np.ndarray, visible: np.ndarray, heads: int) -> np.ndarray:
        """Multi-head attention of queries ``q`` over keys ``k`` where ``visible`` is True."""
        d = q.shape[1]
        self.flops[self.part] = self.flops.get(self.part, 0) + 4 * d * int(visible.sum())
        hd = d // heads
        out = np.empty_like(q)
        for h in range(heads):
            cols = slice(h * hd, (h + 1) * hd)
            scores = np.where(visible, q[:, cols] @ k[:, cols].T / math.sqrt(hd), -np.inf)
            weights = np.exp(scores - scores.max(axis=1, keepdims=True))
            out[:, cols] = (weights / weights.sum(axis=1, keepdims=True)) @ v[:, cols]
        return out


def _rms(x: np.ndarray) -> np.ndarray:
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6)


def _silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


@dataclass(frozen=True)
class BLTTrace:
    """What `ToyBLT.forward` computed: each stage's array shape, its FLOPs by part, the logits."""

    shapes: dict[str, tuple[int, ...]]
    flops: dict[str, int]
    logits: np.ndarray = field(repr=False)


@dataclass(frozen=True)
class ToyBLT:
    """A BLT of the given shape with random weights (seeded): real computation, untrained.

    >>> toy = ToyBLT.init(BLTShape(StackShape(1, 16, 32), StackShape(1, 32, 64),
    ...                            StackShape(1, 16, 32), ngram_sizes=(3,), ngram_buckets=64))
    >>> toy.forward(b"hello world", [0, 5, 6]).shapes["patches"]
    (3, 32)
    """

    shape: BLTShape
    params: dict[str, np.ndarray] = field(repr=False, compare=False)

    @classmethod
    def init(cls, shape: BLTShape, seed: int = 0) -> "ToyBLT":
        rng = np.random.default_rng(seed)
        dl, dg = shape.encoder.width, shape.latent.width

        def w(rows: int, cols: int) -> np.ndarray:
            return rng.normal(0.0, 1.0 / math.sqrt(rows), size=(rows, cols))

        params: dict[str, np.ndarray] = {"bytes": rng.normal(0.0, 1.0, size=(256, dl))}
        for n in shape.ngram_sizes:
            params[f"ngram{n}"] = rng.normal(0.0, 1.0, size=(shape.ngram_buckets, dl))
        for name, stack in (("enc", shape.encoder), ("lat", shape.latent), ("dec", shape.decoder)):
            d = stack.width
            for i in range(stack.layers):
                for m in "qkvo":
                    params[f"{name}{i}.{m}"] = w(d, d)
                params[f"{name}{i}.up"], params[f"{name}{i}.gate"] = w(d, stack.ff), w(d, stack.ff)
                params[f"{name}{i}.down"] = w(stack.ff, d)
        params |= {"pool.q": w(dl, dg), "pool.k": w(dl, dg), "pool.v": w(dl, dg), "pool.o": w(dg, dg),
                   "start": rng.normal(0.0, 1.0, size=(1, dg)),
                   "unpool.q": w(dl, dl), "unpool.k": w(dg, dl), "unpool.v": w(dg, dl), "unpool.o": w(dl, dl),
                   "out": w(dl, 256)}
        return cls(shape, params)

    @property
    def n_params(self) -> int:
        return sum(int(a.size) for a in self.params.values())

    def _stack(self, c: _Counter, name: str, stack: StackShape, x: np.ndarray) -> np.ndarray:
        i = np.arange(len(x))
        visible = (i[None, :] <= i[:, None]) & (i[:, None] - i[None, :] < (stack.window or len(x)))
        p = self.params
        for i in range(stack.layers):
            h = _rms(x)
            q, k, v = (c.mm(h, p[f"{name}{i}.{m}"]) for m in "qkv")
            x = x + c.mm(c.attend(q, k, v, visible, self.shape.heads), p[f"{name}{i}.o"])
            h = _rms(x)
            x = x + c.mm(_silu(c.mm(h, p[f"{name}{i}.gate"])) * c.mm(h, p[f"{name}{i}.up"]), p[f"{name}{i}.down"])
        return x

    def forward(self, data: bytes, starts: Sequence[int]) -> BLTTrace:
        """Run the model on ``data`` cut into patches that begin at ``starts`` (first one 0).

        Causal: the logits at byte i (the prediction of byte i + 1) depend only on bytes
        0..i, given the patch starts.
        """
        lengths = [len(x) for x in split_at(data, starts)]
        if not lengths:
            raise ValueError("data is empty: nothing to run the model on")
        s, p, c = self.shape, self.params, _Counter()
        n, n_patches = sum(lengths), len(lengths)
        patch_of = np.repeat(np.arange(n_patches), lengths)
        shapes: dict[str, tuple[int, ...]] = {"bytes": (n,)}

        x = ngram_embed(data, p["bytes"], [p[f"ngram{k}"] for k in s.ngram_sizes], s.ngram_sizes)
        shapes["byte embeddings"] = x.shape
        c.part = "encoder"
        h = self._stack(c, "enc", s.encoder, x)
        shapes["encoder states"] = h.shape

        c.part = "pooling"  # each patch's query: its bytes' max, attending to those bytes
        pooled = np.stack([h[patch_of == j].max(axis=0) for j in range(n_patches)])
        own = patch_of[None, :] == np.arange(n_patches)[:, None]
        q = c.mm(pooled, p["pool.q"])
        att = c.attend(q, c.mm(h, p["pool.k"]), c.mm(h, p["pool.v"]), own, s.heads)
        patches = q + c.mm(att, p["pool.o"])
        shapes["patches"] = patches.shape

        c.part = "latent"
        g = self._stack(c, "lat", s.latent, patches)
        shapes["latent outputs"] = g.shape

        c.part = "unpooling"  # byte in patch j reads the start vector and patches 0..j-1
        done = np.concatenate((p["start"], g[:-1]))
        finished = np.arange(n_patches)[None, :] <= patch_of[:, None]
        q = c.mm(h, p["unpool.q"])
        y = h + c.mm(c.attend(q, c.mm(done, p["unpool.k"]), c.mm(done, p["unpool.v"]), finished, s.heads),
                     p["unpool.o"])
        c.part = "decoder"
        y = self._stack(c, "dec", s.decoder, y)
        c.part = "output"
        logits = c.mm(_rms(y), p["out"])
        shapes["next-byte logits"] = logits.shape
        return BLTTrace(shapes, c.flops, logits)
