"""The byte side of tokenizer-free models: ByT5's byte vocabulary and a next-byte n-gram model.

`ByteVocab` lays out ByT5-style IDs (specials, the 256 byte values shifted by their count,
sentinels for span corruption at the top); `span_corruption_lengths` is T5's length
arithmetic; `ByteNgramModel` is a next-byte model whose `entropies` an entropy patcher
thresholds (`toklab.lab.patching.patches`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["as_bytes", "ByteVocab", "span_corruption_lengths", "ByteNgramModel"]

_MAX_ORDER = 8  # context of up to 7 bytes: (context << 8 | next byte) fits in 64 bits


def as_bytes(data: object, name: str = "data") -> bytes:
    if isinstance(data, str):
        raise TypeError(f"{name} must be bytes, not str: pass text.encode('utf-8')")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"{name} must be bytes-like, got {type(data).__name__}")
    return bytes(data)


@dataclass(frozen=True)
class ByteVocab:
    """IDs for a byte-level model: ``specials``, then bytes 0..255, then ``sentinels``.

    Byte ``b`` has ID ``len(specials) + b``. Sentinel ``k`` (the k-th masked span in T5's
    span corruption) is counted down from the top: ID ``n_vocab - 1 - k``. The defaults
    are Hugging Face's ByT5 tokenizer: pad, EOS, UNK, 256 bytes and 125 sentinels.

    >>> v = ByteVocab()
    >>> v.n_vocab, v.encode("hi"), v.sentinel_id(0)
    (384, [107, 108, 1], 383)
    """

    specials: tuple[str, ...] = ("<pad>", "</s>", "<unk>")
    sentinels: int = 125

    def __post_init__(self) -> None:
        if len(set(self.specials)) != len(self.specials):
            raise ValueError(f"special tokens must be distinct, got {self.specials}")
        if not isinstance(self.sentinels, int) or self.sentinels < 0:
            raise ValueError(f"sentinels must be an int >= 0, got {self.sentinels!r}")

    @property
    def offset(self) -> int:
        """ID of byte 0x00: the number of special IDs before the bytes."""
        return len(self.specials)

    @property
    def n_vocab(self) -> int:
        """Specials + 256 bytes + sentinels."""
        return self.offset + 256 + self.sentinels

    def encode(self, text: str, eos: bool = True) -> list[int]:
        """The UTF-8 bytes of ``text`` shifted by `offset`, then the EOS ID
        (``"</s>"``) if ``eos``."""
        if not isinstance(text, str):
            raise TypeError(f"text must be str, got {type(text).__name__}")
        ids = [b + self.offset for b in text.encode("utf-8")]
        if eos:
            if "</s>" not in self.specials:
                raise ValueError("eos=True needs '</s>' among the special tokens")
            ids.append(self.specials.index("</s>"))
        return ids

    def sentinel_id(self, k: int) -> int:
        """ID of sentinel ``k``: ``n_vocab - 1 - k``. With ``sentinels=0`` (T5's own byte
        vocabulary) this lands on the top byte values, 0xFF downwards."""
        if not isinstance(k, int) or k < 0:
            raise ValueError(f"sentinel index must be an int >= 0, got {k!r}")
        limit = self.sentinels if self.sentinels else 256
        if k >= limit:
            raise ValueError(f"sentinel index {k} out of range: this vocabulary has room for {limit}")
        return self.n_vocab - 1 - k

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """The bytes behind ``ids``; special and sentinel IDs contribute nothing."""
        out = bytearray()
        for i in ids:
            if not isinstance(i, (int, np.integer)) or not 0 <= i < self.n_vocab:
                raise ValueError(f"ID {i!r} is not in this vocabulary (valid IDs: 0..{self.n_vocab - 1})")
            b = int(i) - self.offset
            if 0 <= b < 256:
                out.append(b)
        return bytes(out)

    def decode(self, ids: Sequence[int]) -> str:
        """`decode_bytes` as text; invalid UTF-8 (a model can emit any byte) becomes U+FFFD."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")


def span_corruption_lengths(raw_length: int, noise_density: float = 0.15, mean_span: float = 3.0) -> tuple[int, int, int]:
    """``(inputs, targets, spans)`` lengths when T5-style span corruption masks ``raw_length`` IDs.

    ``round(raw_length * noise_density)`` IDs are masked in ``round(masked / mean_span)``
    spans. The input keeps the unmasked IDs, one sentinel per span and an EOS; the target
    holds the masked IDs, one sentinel per span and an EOS.

    >>> span_corruption_lengths(1193, mean_span=20)  # ByT5: spans of 20 bytes on average
    (1024, 189, 9)
    """
    if not isinstance(raw_length, int) or raw_length < 0:
        raise ValueError(f"raw_length must be an int >= 0, got {raw_length!r}")
    if not 0.0 <= noise_density < 1.0 or mean_span <= 0:
        raise ValueError(f"need 0 <= noise_density < 1 and mean_span > 0, got {noise_density!r}, {mean_span!r}")
    masked = int(round(raw_length * noise_density))
    spans = int(round(masked / mean_span))
    return raw_length - masked + spans + 1, masked + spans + 1, spans


@dataclass(frozen=True)
class _OrderTable:
    """Counts for one context length k: sorted (context << 8 | byte) keys and their counts,
    and per context its total count and number of distinct next bytes."""

    keys: np.ndarray  # uint64, sorted
    counts: np.ndarray  # float64
    contexts: np.ndarray  # uint64, sorted
    totals: np.ndarray  # float64
    types: np.ndarray  # float64


def _context_ids(arr: np.ndarray, k: int, positions: np.ndarray) -> np.ndarray:
    """The k bytes before each position, packed into one integer (most recent byte lowest)."""
    ctx = np.zeros(len(positions), dtype=np.uint64)
    for j in range(1, k + 1):
        ctx |= arr[positions - j].astype(np.uint64) << np.uint64(8 * (j - 1))
    return ctx


@dataclass(frozen=True)
class ByteNgramModel:
    """A next-byte model: interpolated absolute discounting over contexts of 0..order-1 bytes.

    ``P_k(b | h) = max(c(h, b) - D, 0) / c(h) + D * T(h) / c(h) * P_{k-1}(b | h')``, where
    ``h`` is the last k bytes, ``h'`` the last k-1, ``c`` counts from the training bytes,
    ``T(h)`` the number of distinct bytes seen after ``h`` and ``D`` the discount. A context
    never seen (``c(h) = 0``) passes the lower order through unchanged; the recursion ends
    in the uniform distribution over 256 bytes, so every byte has non-zero probability.
    The model is causal: the prediction for byte ``i`` uses only bytes before ``i``.

    >>> m = ByteNgramModel.train(b"abababab", order=2)
    >>> p = m.predict(b"ab")  # row 1: what follows "a"?
    >>> round(float(p[1, ord("b")]), 3), round(float(p[1, ord("a")]), 3)
    (0.889, 0.076)
    """

    order: int
    discount: float
    n_train: int
    _tables: tuple[_OrderTable, ...] = field(repr=False, compare=False)

    @classmethod
    def train(cls, data: bytes, order: int = 5,
              discount: float = 0.75) -> "ByteNgramModel":
        """Count the training bytes for every context length from 0 to ``order - 1``."""
        data = as_bytes(data)
        bad_order = not isinstance(order, int) or isinstance(order, bool)
        if bad_order or not 1 <= order <= _MAX_ORDER:
            raise ValueError(f"order must be an int from 1 to {_MAX_ORDER}, "
                             f"got {order!r}")
        if not 0.0 < discount < 1.0:
            raise ValueError(f"discount must be in (0, 1), got {discount!r}")
        if not data:
            raise ValueError("cannot train on empty data")
        arr = np.frombuffer(data, dtype=np.uint8)
        tables = []
        for k in range(order):
            positions = np.arange(k, len(arr))
            if len(positions) == 0:  # training text shorter than the context
                empty = np.zeros(0, dtype=np.uint64)
                none = np.zeros(0)
                tables.append(_OrderTable(empty, none, empty, none, none))
                continue
            ctx = _context_ids(arr, k, positions)
            keys = (ctx << np.uint64(8)) | arr[positions].astype(np.uint64)
            keys, counts = np.unique(keys, return_counts=True)
            key_ctx = keys >> np.uint64(8)
            contexts, first, types = np.unique(key_ctx, return_index=True,
                                               return_counts=True)
            totals = np.add.reduceat(counts, first)
            as_float = (a.astype(np.float64) for a in (counts, totals, types))
            counts_f, totals_f, types_f = as_float
            tables.append(_OrderTable(keys, counts_f, contexts, totals_f, types_f))
        return cls(order, float(discount), len(arr), tuple(tables))

    def _predict_chunk(self, arr: np.ndarray, start: int, stop: int) -> np.ndarray:
        """Distributions for positions start..stop-1 of ``arr`` (context from ``arr``)."""
        n = stop - start
        probs = np.full((n, 256), 1.0 / 256.0)
        d = self.discount
        for k, table in enumerate(self._tables):
            first = max(start, k)  # positions with a full k-byte context
            if first >= stop or len(table.contexts) == 0:
                continue
            positions = np.arange(first, stop)
            ctx = _context_ids(arr, k, positions)
            idx = np.searchsorted(table.contexts, ctx)
            idx_c = np.minimum(idx, len(table.contexts) - 1)
            seen = table.contexts[idx_c] == ctx
            if not seen.any():
                continue
            rows = positions[seen] - start
            ctx_seen = ctx[seen]
            total = table.totals[idx_c[seen]]
            types = table.types[idx_c[seen]]
            # interpolate: the lower-order distribution gets the discounted mass
            lower_weight = d * types / total
            probs[rows] *= lower_weight[:, None]
            lo = np.searchsorted(table.keys, ctx_seen << np.uint64(8))
            hi = np.searchsorted(table.keys, (ctx_seen << np.uint64(8)) | np.uint64(255), side="right")
            lengths = hi - lo
            row_of = np.repeat(rows, lengths)
            key_idx = np.repeat(lo - np.cumsum(np.concatenate(([0], lengths[:-1]))), lengths) + np.arange(lengths.sum())
            next_byte = (table.keys[key_idx] & np.uint64(255)).astype(np.intp)
            probs[row_of, next_byte] += (table.counts[key_idx] - d) / np.repeat(total, lengths)
        return probs

    def _chunks(self, data: bytes, chunk: int = 4096):
        arr = np.frombuffer(as_bytes(data), dtype=np.uint8)
        for start in range(0, len(arr), chunk):
            stop = min(start + chunk, len(arr))
            yield arr, start, stop, self._predict_chunk(arr, start, stop)

    def predict(self, data: bytes) -> np.ndarray:
        """Next-byte distributions, shape ``(len(data), 256)``: row ``i`` is P(byte i | bytes before i)."""
        parts = [p for _, _, _, p in self._chunks(data)]
        return np.concatenate(parts) if parts else np.zeros((0, 256))

    def entropies(self, data: bytes) -> np.ndarray:
        """Entropy in bits of each prediction: ``H_i = -sum_b P(b | data[:i]) log2 P(b | data[:i])``.

        This is the model's uncertainty *before* it sees byte ``i``; it does not depend
        on byte ``i`` itself. (BLT's released code uses natural logarithms: divide a
        threshold in nats by ``ln 2`` to compare.)
        """
        out = []
        for _, _, _, p in self._chunks(data):
            out.append(-(p * np.log2(p)).sum(axis=1))
        return np.concatenate(out) if out else np.zeros(0)

    def surprisals(self, data: bytes) -> np.ndarray:
        """``-log2 P(byte i | bytes before i)`` for every byte: what coding the byte costs."""
        out = []
        for arr, start, stop, p in self._chunks(data):
            out.append(-np.log2(p[np.arange(stop - start), arr[start:stop]]))
        return np.concatenate(out) if out else np.zeros(0)

    def bits_per_byte(self, data: bytes) -> float:
        """Mean surprisal in bits per byte on ``data`` (8.0 is the uniform model)."""
        data = as_bytes(data)
        if not data:
            raise ValueError("bits_per_byte of empty data is undefined")
        return float(self.surprisals(data).mean())
