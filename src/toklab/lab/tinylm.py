"""A tiny next-token model in numpy, to see what new embedding rows do before and after training.

The model predicts token t+1 from token t: ``h = tanh(E[x] @ W)``, ``logits = h @ E.T``.
The embedding ``E`` (one row per token ID) is tied: the same rows embed the input and
score the output, as in GPT-2. That is all §4's vocabulary-extension experiment needs:
a model whose rows were trained on an old vocabulary, into which `toklab.lab.extension`
puts mean-initialised rows for new tokens. Training is plain Adam on full-softmax
cross-entropy; ``rows`` restricts the update to some embedding rows (continued training
of the new rows only, everything else frozen). Deterministic for a given seed.

The matrices are tiny (a few hundred rows), so BLAS threads only add overhead, and on a
busy machine far more than that (measured: 8x slower with two threads than with one on
a loaded 2-core machine). `train` and `nll` therefore run with BLAS limited to one thread
(``threadpoolctl``), which also keeps the summation order, and so the results, the same
whatever the machine's core count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

__all__ = ["TinyLM"]


@dataclass
class TinyLM:
    """``E``: (V, d) tied embedding; ``W``: (d, d); ``adam``: Adam moments per parameter."""

    E: np.ndarray
    W: np.ndarray
    adam: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    steps: int = 0

    @classmethod
    def create(cls, vocab_size: int, dim: int = 64, seed: int = 0) -> "TinyLM":
        rng = np.random.default_rng(seed)
        E = rng.normal(0, 0.1, size=(vocab_size, dim)).astype(np.float32)
        W = rng.normal(0, 1 / np.sqrt(dim), size=(dim, dim)).astype(np.float32)
        return cls(E, W)

    def _forward(self, x: np.ndarray):
        h = np.tanh(self.E[x] @ self.W)
        logits = h @ self.E.T
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        return h, p

    def nll(self, ids: Sequence[int], batch: int = 4096) -> float:
        """Total negative log-likelihood (nats) of ``ids[1:]`` given each previous token."""
        ids = np.asarray(ids)
        total = 0.0
        with threadpool_limits(limits=1, user_api="blas"):
            for s in range(0, len(ids) - 1, batch):
                x, y = ids[s : s + batch][: len(ids) - 1 - s], ids[s + 1 : s + 1 + batch]
                _, p = self._forward(x)
                total -= float(np.log(p[np.arange(len(y)), y]).sum())
        return total

    def prob(self, prev: Sequence[int], nxt: Sequence[int]) -> np.ndarray:
        """P(next = nxt[i] | previous = prev[i]) for each i."""
        with threadpool_limits(limits=1, user_api="blas"):
            _, p = self._forward(np.asarray(prev))
        return p[np.arange(len(nxt)), np.asarray(nxt)]

    def train(
        self,
        ids: Sequence[int],
        steps: int,
        *,
        batch: int = 256,
        lr: float = 0.01,
        rows: Sequence[int] | None = None,
        seed: int = 0,
    ) -> list[float]:
        """Adam on random (token, next token) pairs; returns the loss of each step.

        With ``rows``, only those embedding rows change (W and every other row frozen).
        """
        ids = np.asarray(ids)
        if len(ids) < 2:
            raise ValueError("need at least two token IDs to train on")
        with threadpool_limits(limits=1, user_api="blas"):
            return self._train(ids, steps, batch, lr, rows, seed)

    def _train(self, ids, steps, batch, lr, rows, seed) -> list[float]:
        rng = np.random.default_rng(seed)
        params = {"E": self.E} if rows is not None else {"E": self.E, "W": self.W}
        for name, a in params.items():
            self.adam.setdefault(name, {"m": np.zeros_like(a), "v": np.zeros_like(a)})
        mask = None
        if rows is not None:
            mask = np.zeros((self.E.shape[0], 1))
            mask[list(rows)] = 1.0
        losses = []
        b1, b2, eps = 0.9, 0.999, 1e-8
        for _ in range(steps):
            pos = rng.integers(0, len(ids) - 1, size=batch)
            x, y = ids[pos], ids[pos + 1]
            h, p = self._forward(x)
            losses.append(float(-np.log(p[np.arange(batch), y]).mean()))
            d_logits = p
            d_logits[np.arange(batch), y] -= 1
            d_logits /= batch
            grads = {"E": d_logits.T @ h}  # output side of the tied rows
            d_h = d_logits @ self.E
            d_pre = d_h * (1 - h**2)
            np.add.at(grads["E"], x, d_pre @ self.W.T)  # input side
            grads["W"] = self.E[x].T @ d_pre
            self.steps += 1
            for name, a in params.items():
                g = grads[name] if mask is None or name != "E" else grads[name] * mask
                m, v = self.adam[name]["m"], self.adam[name]["v"]
                m *= b1
                m += (1 - b1) * g
                v *= b2
                v += (1 - b2) * g * g
                step = lr * (m / (1 - b1**self.steps)) / (np.sqrt(v / (1 - b2**self.steps)) + eps)
                if mask is not None and name == "E":
                    step *= mask
                a -= step
        return losses
