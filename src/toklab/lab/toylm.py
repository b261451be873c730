"""Two tiny numpy language models for the book's demonstrations. Not for real use.

`BigramLM`
    next-token log-probabilities from counted token pairs, smoothed towards the
    unigram distribution. It has seen only canonical tokenizations, which is
    exactly what makes it useful for showing token healing: after a token that
    canonical text rarely contains it has almost nothing to go on.
`EmbeddingLM`
    the smallest trainable next-token model with the two matrices that matter
    for glitch tokens: an input embedding ``E`` (one row per token) and a
    separate (untied) unembedding ``U``, trained with Adam on softmax
    cross-entropy. A token that never occurs as an input gets no gradient, so
    its row of ``E`` keeps its initial value exactly; a token that never occurs
    as a target still gets a gradient in ``U`` (every softmax pushes its logit
    down), and all such tokens are pushed the same way.

`toklab.lab.tinylm` (§4) is a different model on purpose: its embedding is *tied* (the
same rows embed inputs and score outputs), so every row gets a gradient from the
softmax and no row stays untouched; `EmbeddingLM` keeps the two matrices apart to
show the input side alone. Like `tinylm`, it runs numpy with one BLAS thread
(``threadpoolctl``): faster on these small matrices, and the same sums on every machine.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from threadpoolctl import threadpool_limits

__all__ = ["BigramLM", "EmbeddingLM"]


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

    def log_probs(self, context: Sequence[int]) -> np.ndarray:
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


    def total_nll(self, ids: Sequence[int]) -> float:
        """Negative log-likelihood (nats) of ``ids[1:]``, each token given the one before it.

        Vectorized; equals ``-sum(log_probs(ids[:k])[ids[k]] for k >= 1)``.
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

    def log_probs(self, prev: Sequence[int]) -> np.ndarray:
        """``(len(prev), n_vocab)`` log-probabilities of the next token after each ID."""
        x = _ids_array(prev, self.n_vocab)
        with threadpool_limits(limits=1):
            logits = self.E[x] @ self.U + self.b
        logits -= logits.max(axis=1, keepdims=True)
        return logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))

    def loss(self, ids: Sequence[int]) -> float:
        """Mean next-token cross-entropy (nats) over consecutive pairs of ``ids``."""
        arr = _ids_array(ids, self.n_vocab)
        lp = self.log_probs(arr[:-1])
        return float(-lp[np.arange(arr.size - 1), arr[1:]].mean())

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

    def _fit(self, arr: np.ndarray, steps: int, batch_size: int, lr: float, weight_decay: float,
             seed: int) -> list[float]:
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
