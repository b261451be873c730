"""Batches for training a causal language model: padding, the two masks, packing.

Special tokens do three different jobs in training, and each job has its own
mask:

- **PAD** fills a row up to the batch's length. Padded positions must be hidden
  from attention *and* excluded from the loss.
- **EOS** ends a document. It is a real token the model must learn to predict,
  so it stays in the loss; that is how a model learns to stop.
- **BOS** starts a document (and a packed document inside a longer row).

The attention mask says which positions a query may look at; the loss mask says
which next-token targets count. They are different arrays: with next-token
prediction the targets are the inputs shifted by one, and in a packed row the
target that crosses from one document into the next is masked from the loss
while the EOS before it is not.

Both masks are built from the *lengths* of the rows (or the document index of
each position), never by comparing IDs with ``pad_id``: when PAD and EOS share
an ID, ``ids != pad_id`` also removes every real EOS (the classic PAD = EOS
bug, which the book shows on a batch).

Arrays are numpy: IDs ``int64``, masks ``bool``. Shapes: ``B`` rows, ``T``
positions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Batch",
    "pad",
    "attention_mask",
    "loss_mask",
    "next_token_nll",
    "Packed",
    "pack",
    "block_diagonal_mask",
    "leading_count",
]


def _check_id(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be a non-negative int token ID, got {value!r}")
    return int(value)


def _check_seqs(seqs: Sequence[Sequence[int]]) -> list[list[int]]:
    if isinstance(seqs, (str, bytes)) or not isinstance(seqs, Sequence):
        raise TypeError(f"expected a sequence of token-ID sequences, got {type(seqs).__name__}")
    out = []
    for k, seq in enumerate(seqs):
        ids = [int(i) for i in seq]
        if any(i < 0 for i in ids):
            raise ValueError(f"sequence {k} holds a negative token ID: {ids}")
        out.append(ids)
    return out


@dataclass(frozen=True)
class Batch:
    """Padded rows and their true lengths. ``side`` is where the padding went."""

    ids: np.ndarray
    lengths: np.ndarray
    pad_id: int
    side: str = "right"

    def attention_mask(self) -> np.ndarray:
        """``(B, T)``: True at real tokens, False at padding."""
        return attention_mask(self.lengths, self.ids.shape[1], side=self.side)

    def inputs(self) -> np.ndarray:
        """``(B, T-1)``: the IDs the model reads (all but the last position)."""
        return self.ids[:, :-1]

    def targets(self) -> np.ndarray:
        """``(B, T-1)``: the ID to predict at each input position (the next one)."""
        return self.ids[:, 1:]

    def loss_mask(self) -> np.ndarray:
        """``(B, T-1)``: True where the target is a real token (EOS included)."""
        return loss_mask(self.lengths, self.ids.shape[1], side=self.side)


def pad(
    seqs: Sequence[Sequence[int]], pad_id: int, *, length: int | None = None, side: str = "right"
) -> Batch:
    """Stack token sequences into one ``(B, T)`` array, filling with ``pad_id``.

    ``T`` is the longest sequence, or ``length`` (which must fit every sequence:
    nothing is cut off silently). ``side="left"`` pads in front, as batched
    generation needs so that every row's last real token is in the last column.
    """
    pad_id = _check_id("pad_id", pad_id)
    if side not in ("right", "left"):
        raise ValueError(f"side must be 'right' or 'left', got {side!r}")
    rows = _check_seqs(seqs)
    if not rows:
        raise ValueError("cannot pad an empty batch (no sequences)")
    longest = max(len(r) for r in rows)
    width = longest if length is None else length
    if width < longest:
        raise ValueError(f"length={length} is shorter than the longest sequence ({longest} tokens)")
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    for k, row in enumerate(rows):
        if not row:
            continue
        if side == "right":
            ids[k, : len(row)] = row
        else:
            ids[k, width - len(row) :] = row
    lengths = np.array([len(r) for r in rows], dtype=np.int64)
    return Batch(ids, lengths, pad_id, side)


def _check_lengths(lengths: Sequence[int] | np.ndarray, width: int) -> np.ndarray:
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.ndim != 1:
        raise ValueError(f"lengths must be one number per row, got shape {lengths.shape}")
    if width < 0 or (lengths < 0).any() or (lengths > width).any():
        raise ValueError(f"every length must be in 0..{width}, got {lengths.tolist()}")
    return lengths


def attention_mask(lengths: Sequence[int] | np.ndarray, width: int, *, side: str = "right") -> np.ndarray:
    """``(B, width)`` bool: position ``t`` of row ``b`` holds a real token."""
    lengths = _check_lengths(lengths, width)
    positions = np.arange(width)[None, :]
    if side == "right":
        return positions < lengths[:, None]
    if side == "left":
        return positions >= width - lengths[:, None]
    raise ValueError(f"side must be 'right' or 'left', got {side!r}")


def loss_mask(
    lengths: Sequence[int] | np.ndarray, width: int, *, side: str = "right"
) -> np.ndarray:
    """``(B, width-1)`` bool: the next-token target at input position ``t`` is real.

    Target ``t`` is token ``t + 1``. It counts when both it and the token that
    predicts it are real, which by length is: with right padding ``t + 1 <
    length``. The last real token (an EOS, typically) is a target; nothing is
    predicted from it.
    """
    real = attention_mask(lengths, width, side=side)
    return real[:, 1:] & real[:, :-1]


def next_token_nll(log_probs: np.ndarray, targets: np.ndarray, mask: np.ndarray) -> float:
    """Mean negative log-likelihood of ``targets`` over the positions where ``mask`` is True.

    ``log_probs`` is ``(B, T, V)`` (log-softmax outputs), ``targets`` and ``mask``
    ``(B, T)``. The mean is over counted targets, the usual token-level loss.
    """
    log_probs = np.asarray(log_probs)
    targets = np.asarray(targets)
    mask = np.asarray(mask, dtype=bool)
    if log_probs.shape[:2] != targets.shape or targets.shape != mask.shape:
        raise ValueError(
            f"shapes disagree: log_probs {log_probs.shape}, targets {targets.shape}, mask {mask.shape}"
        )
    if not mask.any():
        raise ValueError("the mask selects no target: the loss is undefined")
    picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    return float(-picked[mask].mean())


@dataclass(frozen=True)
class Packed:
    """Documents packed end to end into rows of one fixed length.

    ``ids`` ``(N, T)``; ``doc`` ``(N, T)``: the index of the document each position
    belongs to, -1 for padding at the end of the last row; ``position`` ``(N, T)``:
    the token's offset inside its own document (what position embeddings should
    see, so a document is encoded the same wherever it lands in a row).
    """

    ids: np.ndarray
    doc: np.ndarray
    position: np.ndarray

    def attention_mask(self) -> np.ndarray:
        """``(N, T, T)`` block-diagonal causal mask: see `block_diagonal_mask`."""
        return block_diagonal_mask(self.doc)

    def loss_mask(self) -> np.ndarray:
        """``(N, T-1)``: the target belongs to the same document as the token predicting it.

        A document's EOS is a target (predicted from its last token); the first
        token of the next document, which nothing in the row may condition on,
        is not.
        """
        same = self.doc[:, 1:] == self.doc[:, :-1]
        return same & (self.doc[:, 1:] >= 0)


def pack(
    docs: Sequence[Sequence[int]],
    block_size: int,
    *,
    eos_id: int,
    bos_id: int | None = None,
    pad_id: int | None = None,
) -> Packed:
    """Concatenate documents (each as ``[BOS] doc EOS``) and cut into rows of ``block_size``.

    A document that does not fit in the rest of a row continues in the next one
    (its positions keep counting). The last row is filled with ``pad_id`` (doc
    -1), or dropped when ``pad_id`` is None; a document left out that way is
    reported, never lost silently: this raises if the last row would be dropped
    with real tokens in it.
    """
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 2:
        raise ValueError(f"block_size must be an int >= 2, got {block_size!r}")
    eos_id = _check_id("eos_id", eos_id)
    bos = [] if bos_id is None else [_check_id("bos_id", bos_id)]
    rows = _check_seqs(docs)
    stream: list[int] = []
    doc_of: list[int] = []
    pos_of: list[int] = []
    for k, row in enumerate(rows):
        tokens = bos + row + [eos_id]
        stream += tokens
        doc_of += [k] * len(tokens)
        pos_of += range(len(tokens))
    rest = len(stream) % block_size
    if rest:
        if pad_id is None:
            raise ValueError(
                f"the packed stream has {len(stream)} tokens, not a multiple of block_size={block_size}; "
                f"pass pad_id to pad the last row (dropping it would lose {rest} real tokens)"
            )
        fill = block_size - rest
        stream += [_check_id("pad_id", pad_id)] * fill
        doc_of += [-1] * fill
        pos_of += [0] * fill
    shape = (len(stream) // block_size, block_size)
    return Packed(
        np.array(stream, dtype=np.int64).reshape(shape),
        np.array(doc_of, dtype=np.int64).reshape(shape),
        np.array(pos_of, dtype=np.int64).reshape(shape),
    )


def block_diagonal_mask(doc: np.ndarray) -> np.ndarray:
    """``(N, T, T)`` bool: query ``i`` may attend to key ``j`` iff ``j <= i``
    in the same document.

    ``doc`` is ``(N, T)`` document indices, -1 for padding (which attends to
    nothing and is attended by nothing). Without it, packing lets a document
    read the end of the one before it.
    """
    doc = np.asarray(doc)
    if doc.ndim != 2:
        raise ValueError(f"doc must be (rows, positions), got shape {doc.shape}")
    width = doc.shape[1]
    causal = np.tril(np.ones((width, width), dtype=bool))
    same = doc[:, :, None] == doc[:, None, :]
    real = (doc >= 0)[:, :, None]
    return causal[None] & same & real


def leading_count(ids: Sequence[int], token_id: int) -> int:
    """How many times ``token_id`` repeats at the start of ``ids`` (2 = a duplicate BOS)."""
    n = 0
    for i in ids:
        if i != token_id:
            break
        n += 1
    return n
