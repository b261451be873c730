"""Three tiny numpy language models for the chapters' experiments. Not for real use.

`BigramLM`
    next-token log-probabilities from counted token pairs, smoothed towards the
    unigram distribution. It has seen only canonical tokenizations, which is
    exactly what makes it useful for showing token healing (§5.3): after a token that
    canonical text rarely contains it has almost nothing to go on.
`EmbeddingLM`
    the smallest trainable next-token model with the two matrices that matter
    for glitch tokens (§5.2): an input embedding ``E`` (one row per token) and a
    separate (untied) unembedding ``U``, trained with Adam on softmax
    cross-entropy. A token that never occurs as an input gets no gradient, so
    its row of ``E`` keeps its initial value exactly; a token that never occurs
    as a target still gets a gradient in ``U`` (every softmax pushes its logit
    down), and all such tokens are pushed the same way.
`TiedLM`
    ``h = tanh(E[x] @ W)``, ``logits = h @ E.T``, to see what new embedding rows do
    before and after training (§4.3): the embedding is *tied*, the same rows embed the
    input and score the output, as in GPT-2, so every row gets a gradient from the
    softmax. That is all the vocabulary-extension experiment needs: a model whose rows
    were trained on an old vocabulary, into which `toklab.lab.extension` puts
    mean-initialised rows for new tokens. ``fit(rows=...)`` restricts the update to some
    embedding rows (continued training of the new rows only, everything else frozen).

One vocabulary for all three: ``n_vocab`` is the number of token IDs; ``nll(ids)`` is
the negative log-likelihood in nats of ``ids[1:]``, each token given the one before it;
the two trainable models ``fit(ids, steps=..., batch_size=..., lr=..., seed=...)`` with
Adam on random (previous, next) pairs and return the loss of each step;
``BigramLM.next_log_probs(context)`` scores every next token, the callback
`toklab.lab.healing.generate` takes. Deterministic for a given seed.

The matrices are tiny (a few hundred rows), so BLAS threads only add overhead, and on a
busy machine far more than that (measured: 8x slower with two threads than with one on
a loaded 2-core machine). The models therefore run numpy with one BLAS thread
(``threadpoolctl``), which also keeps the summation order, and so the results, the same
whatever the machine's core count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

__all__ = ["BigramLM", "EmbeddingLM", "TiedLM"]


def _ids_array(ids: Sequence[int], n_vocab: int) -> np.ndarray:
    arr = np.asarray(ids, dtype=np.int64)
    if arr.ndim != 1:
        raise ValueError(f"ids must be a flat sequence of token IDs, got shape {arr.shape}")
    if arr.size and (arr.min() < 0 or arr.max() >= n_vocab):
        bad = int(arr[(arr < 0) | (arr >= n_vocab)][0])
        raise ValueError(f"token ID {bad} is outside 0..{n_vocab - 1}")
    return arr


class BigramLM:
    """P(next | previous) from pair counts, interpolated with the unigram distribution.

    ``P(b | a) = (count(a, b) + alpha * P(b)) / (count(a) + alpha)`` with
    ``P(b)`` the add-one unigram probability, so every token keeps a small,
    non-zero probability.
    """

    def __init__(self, ids: Sequence[int], n_vocab: int, *, alpha: float = 1.0) -> None:
        if n_vocab <= 0 or alpha <= 0:
            raise ValueError(f"n_vocab and alpha must be positive, got {n_vocab} and {alpha}")
        arr = _ids_array(ids, n_vocab)
        if arr.size < 2:
            raise ValueError("need at least two token IDs to count a pair")
        self.n_vocab = n_vocab
        self.alpha = float(alpha)
        unigram = np.bincount(arr, minlength=n_vocab).astype(np.float64) + 1.0
        self.unigram = unigram / unigram.sum()
        keys, counts = np.unique(arr[:-1] * n_vocab + arr[1:], return_counts=True)
        self._prev = keys // n_vocab
        self._next = keys % n_vocab
        self._counts = counts.astype(np.float64)
        self._starts = np.searchsorted(self._prev, np.arange(n_vocab + 1))
        self._keys = keys
        self._row_totals = np.bincount(self._prev, weights=self._counts, minlength=n_vocab)

    def pair_count(self, a: int, b: int) -> int:
        """How often token ``b`` followed token ``a`` in the training IDs."""
        lo, hi = self._starts[a], self._starts[a + 1]
        k = lo + np.searchsorted(self._next[lo:hi], b)
        return int(self._counts[k]) if k < hi and self._next[k] == b else 0

    def next_log_probs(self, context: Sequence[int]) -> np.ndarray:
        """Log-probabilities of every next token given the last ID of ``context``."""
        if not len(context):
            return np.log(self.unigram)
        a = int(context[-1])
        if not 0 <= a < self.n_vocab:
            raise ValueError(f"token ID {a} is outside 0..{self.n_vocab - 1}")
        lo, hi = self._starts[a], self._starts[a + 1]
        probs = self.alpha * self.unigram
        probs[self._next[lo:hi]] += self._counts[lo:hi]
        return np.log(probs / (self._counts[lo:hi].sum() + self.alpha))

    def nll(self, ids: Sequence[int]) -> float:
        """Negative log-likelihood (nats) of ``ids[1:]``, each token given the one before it.

        Vectorized; equals ``-sum(next_log_probs(ids[:k])[ids[k]] for k >= 1)``.
        """
        arr = _ids_array(ids, self.n_vocab)
        if arr.size < 2:
            raise ValueError("need at least two token IDs to score a pair")
        a, b = arr[:-1], arr[1:]
        keys = a * self.n_vocab + b
        k = np.searchsorted(self._keys, keys)
        k_ok = np.minimum(k, len(self._keys) - 1)
        pair = np.where(self._keys[k_ok] == keys, self._counts[k_ok], 0.0)
        probs = (pair + self.alpha * self.unigram[b]) / (self._row_totals[a] + self.alpha)
        return float(-np.log(probs).sum())


class EmbeddingLM:
    """logits = E[previous] @ U + b, trained with Adam (optionally AdamW) on next-token pairs."""

    def __init__(self, n_vocab: int, dim: int = 32, *, seed: int = 0, scale: float = 0.02) -> None:
        if n_vocab <= 0 or dim <= 0:
            raise ValueError(f"n_vocab and dim must be positive, got {n_vocab} and {dim}")
        rng = np.random.default_rng(seed)
        self.n_vocab = n_vocab
        self.E = rng.normal(0.0, scale, (n_vocab, dim))
        self.U = rng.normal(0.0, scale, (dim, n_vocab))
        self.b = np.zeros(n_vocab)
        #: The initial values, kept to show which rows training never touched.
        self.E0, self.U0 = self.E.copy(), self.U.copy()
        #: How often each token was drawn as an input (previous token) by `fit`.
        self.input_counts = np.zeros(n_vocab, dtype=np.int64)
        self._moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in self._params().items()}
        self._step = 0

    def _params(self) -> dict[str, np.ndarray]:
        return {"E": self.E, "U": self.U, "b": self.b}

    def _log_probs(self, prev: Sequence[int]) -> np.ndarray:
        """``(len(prev), n_vocab)`` log-probabilities of the next token after each ID."""
        x = _ids_array(prev, self.n_vocab)
        with threadpool_limits(limits=1):
            logits = self.E[x] @ self.U + self.b
        logits -= logits.max(axis=1, keepdims=True)
        return logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))

    def nll(self, ids: Sequence[int]) -> float:
        """Negative log-likelihood (nats) of ``ids[1:]``, each token given the one before it."""
        arr = _ids_array(ids, self.n_vocab)
        lp = self._log_probs(arr[:-1])
        return float(-lp[np.arange(arr.size - 1), arr[1:]].sum())

    def fit(
        self,
        ids: Sequence[int],
        *,
        steps: int,
        batch_size: int = 256,
        lr: float = 1e-2,
        weight_decay: float = 0.0,
        seed: int = 0,
    ) -> list[float]:
        """Train on random (previous, next) pairs of ``ids``; returns the loss of each step.

        ``weight_decay`` > 0 is AdamW's decoupled decay: every parameter is also
        multiplied by ``1 - lr * weight_decay`` at every step, gradient or not.
        """
        if weight_decay < 0:
            raise ValueError(f"weight_decay must be >= 0, got {weight_decay}")
        arr = _ids_array(ids, self.n_vocab)
        if arr.size < 2:
            raise ValueError("need at least two token IDs to train on a pair")
        with threadpool_limits(limits=1):
            return self._fit(arr, steps, batch_size, lr, weight_decay, seed)

    def _fit(
        self,
        arr: np.ndarray,
        steps: int,
        batch_size: int,
        lr: float,
        weight_decay: float,
        seed: int,
    ) -> list[float]:
        rng = np.random.default_rng(seed)
        beta1, beta2, eps = 0.9, 0.999, 1e-8
        losses = []
        for _ in range(steps):
            pos = rng.integers(0, arr.size - 1, batch_size)
            x, y = arr[pos], arr[pos + 1]
            self.input_counts += np.bincount(x, minlength=self.n_vocab)
            h = self.E[x]
            logits = h @ self.U + self.b
            logits -= logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=1, keepdims=True)
            losses.append(float(-np.log(p[np.arange(batch_size), y]).mean()))
            d = p
            d[np.arange(batch_size), y] -= 1.0
            d /= batch_size
            grads = {"U": h.T @ d, "b": d.sum(axis=0), "E": np.zeros_like(self.E)}
            np.add.at(grads["E"], x, d @ self.U.T)  # only rows that were inputs
            self._step += 1
            for name, param in self._params().items():
                m, v = self._moments[name]
                g = grads[name]
                m *= beta1
                m += (1 - beta1) * g
                v *= beta2
                v += (1 - beta2) * g * g
                m_hat = m / (1 - beta1**self._step)
                v_hat = v / (1 - beta2**self._step)
                if weight_decay:
                    param *= 1 - lr * weight_decay
                param -= lr * m_hat / (np.sqrt(v_hat) + eps)
        return losses


@dataclass
class TiedLM:
    """``h = tanh(E[x] @ W)``, ``logits = h @ E.T``: one tied embedding ``E`` (V, d) embeds inputs and scores outputs.

    ``W`` is (d, d); ``adam`` holds the Adam moments per parameter and ``steps`` counts the
    updates, so a copy with resized rows (`toklab.lab.extension.resize_embeddings`) can go
    on training where the original stopped.
    """

    E: np.ndarray
    W: np.ndarray
    adam: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    steps: int = 0

    @classmethod
    def create(cls, n_vocab: int, dim: int = 64, seed: int = 0) -> "TiedLM":
        """A fresh model: float32 rows drawn from N(0, 0.1²), ``W`` from N(0, 1/dim)."""
        rng = np.random.default_rng(seed)
        E = rng.normal(0, 0.1, size=(n_vocab, dim)).astype(np.float32)
        W = rng.normal(0, 1 / np.sqrt(dim), size=(dim, dim)).astype(np.float32)
        return cls(E, W)

    def _forward(self, x: np.ndarray):
        h = np.tanh(self.E[x] @ self.W)
        logits = h @ self.E.T
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        return h, p

    @property
    def n_vocab(self) -> int:
        return self.E.shape[0]

    def nll(self, ids: Sequence[int], batch_size: int = 4096) -> float:
        """Negative log-likelihood (nats) of ``ids[1:]``, each token given the one before it.

        Computed ``batch_size`` pairs at a time (the memory of one softmax over the vocabulary each).
        """
        ids = np.asarray(ids)
        total = 0.0
        with threadpool_limits(limits=1, user_api="blas"):
            for s in range(0, len(ids) - 1, batch_size):
                x, y = ids[s : s + batch_size][: len(ids) - 1 - s], ids[s + 1 : s + 1 + batch_size]
                _, p = self._forward(x)
                total -= float(np.log(p[np.arange(len(y)), y]).sum())
        return total

    def prob(self, prev: Sequence[int], nxt: Sequence[int]) -> np.ndarray:
        """P(next = nxt[i] | previous = prev[i]) for each i."""
        with threadpool_limits(limits=1, user_api="blas"):
            _, p = self._forward(np.asarray(prev))
        return p[np.arange(len(nxt)), np.asarray(nxt)]

    def fit(
        self,
        ids: Sequence[int],
        *,
        steps: int,
        batch_size: int = 256,
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
            return self._fit(ids, steps, batch_size, lr, rows, seed)

    def _fit(self, ids, steps, batch, lr, rows, seed) -> list[float]:
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
