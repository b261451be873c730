"""Glitch-token candidates: what a vocabulary file and a model's weights reveal.

A *glitch token* is in the vocabulary but (almost) absent from the model's
training data, so its embedding is never (or barely) trained. Two kinds can be
found from the tokenizer alone, before looking at any model:

- **partial UTF-8** tokens (`partial_utf8_tokens`): their bytes are not valid
  UTF-8 on their own (a piece of a multi-byte character). They occur only next
  to the tokens that complete the character.
- tokens **unreachable alone** (`not_self_encoding`): the token's own text
  encodes to other IDs, because the pre-tokenizer splits it or BPE merges it
  differently. Such a token may still occur inside longer text;
  `find_context` searches for a witness.

On a model, the tokens the training data never contained can be ranked by an
indicator computed from the weights, such as the norm of each input-embedding
row (`embedding_norms`, `lowest`); `toklab.lab.toylm.EmbeddingLM` shows why that
works.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "partial_utf8_tokens",
    "not_self_encoding",
    "find_context",
    "token_counts",
    "embedding_norms",
    "lowest",
]

#: Characters tried on either side of a token by `find_context`: ASCII letters in
#: both cases, digits, punctuation, space, tab, CR and LF.
CONTEXT_CHARS: str = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    " \t\r\n!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
)


def partial_utf8_tokens(tokenizer: Any) -> list[int]:
    """IDs of the ordinary tokens whose bytes alone are not valid UTF-8, sorted."""
    out = []
    for i, token in tokenizer.vocab.items():
        try:
            token.decode("utf-8")
        except UnicodeDecodeError:
            out.append(i)
    return sorted(out)


def not_self_encoding(tokenizer: Any) -> list[int]:
    """IDs of the valid-UTF-8 tokens whose own text does not encode to just themselves, sorted.

    Land and Bartolo (2024) call these *unreachable*; strictly they are
    unreachable *alone*: `find_context` may still find a longer text whose
    encoding contains the token.
    """
    out = []
    for i, token in tokenizer.vocab.items():
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if tokenizer.encode_ordinary(text) != [i]:
            out.append(i)
    return sorted(out)


def find_context(tokenizer: Any, token_id: int, chars: Iterable[str] = CONTEXT_CHARS, *, width: int = 2) -> str | None:
    """A short text whose encoding contains ``token_id``, or None if none was found.

    Tries the token's own text with up to ``width`` characters from ``chars`` on
    each side (every combination of one to ``width`` characters after it, one
    before it, and one on both sides). None means only that no witness is that
    short, not that the token is unreachable.
    """
    token = tokenizer.id_to_token(token_id)
    try:
        core = token.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"token {token_id} ({token!r}) is not valid UTF-8 alone; give a character it belongs to") from None
    chars = list(dict.fromkeys(chars))
    candidates = [core + a for a in chars] + [a + core for a in chars]
    candidates += [a + core + b for a in chars for b in chars]
    if width >= 2:
        candidates += [core + a + b for a in chars for b in chars]
    for text in candidates:
        if token_id in tokenizer.encode_ordinary(text):
            return text
    return None


def token_counts(ids: Sequence[int], n_vocab: int) -> np.ndarray:
    """How often each ID occurs in ``ids`` (length ``n_vocab``); 0 marks an unseen token."""
    arr = np.asarray(ids, dtype=np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= n_vocab):
        raise ValueError(f"an ID in ids is outside 0..{n_vocab - 1}")
    return np.bincount(arr, minlength=n_vocab)


def embedding_norms(matrix: np.ndarray) -> np.ndarray:
    """The L2 norm of each row (one row per token) of an embedding matrix."""
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"expected a (tokens, dim) matrix, got shape {matrix.shape}")
    return np.linalg.norm(matrix, axis=1)


def lowest(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` smallest values, smallest first (ties by index)."""
    values = np.asarray(values)
    if not 0 <= k <= values.size:
        raise ValueError(f"k must be in 0..{values.size}, got {k}")
    return np.argsort(values, kind="stable")[:k]
