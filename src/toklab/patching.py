"""Tokenizer-free input: a next-byte model, byte patches, and hash embeddings (§6).

Byte-level models replace the tokenizer's vocabulary with the 256 byte values, and the
hierarchical ones group bytes into *patches* so that the big model runs once per patch
instead of once per byte. This module holds the small, exact pieces of that story:

* `ByteVocab` -- a ByT5-style vocabulary: special IDs first, then the 256 byte values
  shifted by their count, then sentinel IDs for span corruption at the top.
* `span_corruption_lengths` -- T5's span-corruption length arithmetic (how long the
  corrupted input and the target are for a given raw length).
* `ByteNgramModel` -- a next-byte language model over raw bytes: an n-gram with
  interpolated absolute discounting, trained with numpy in seconds. Its `entropies`
  are the per-byte uncertainty an entropy patcher thresholds.
* `fixed_patches` -- MegaByte's patching: every ``size`` bytes, whatever they hold.
* `entropy_patches` / `patch_starts` -- BLT's patching: a patch starts where the
  next-byte entropy is above a threshold (``rule="global"``) or rises over the previous
  byte's by more than a threshold (``rule="monotonic"``).
* `threshold_for_mean_size` -- the threshold that gives a target mean patch size, so
  that patchers (and rules) are compared at the same number of big-model steps.
* `boundary_kinds` -- what kind of byte a patch starts on (word start, digit, space,
  punctuation, non-ASCII, inside a character, ...), for measuring where boundaries fall.
* `hash_buckets`, `hash_embed`, `downsample` -- a CANINE-style input layer: each code
  point hashed by several hash functions into buckets, one small embedding table per
  hash function, slices concatenated; then mean-pooling by a fixed rate.

Every patching function returns patches whose concatenation is exactly the input.
Everything is deterministic: no Python ``hash()``, no unseeded randomness.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "ByteVocab",
    "span_corruption_lengths",
    "RULES",
    "BOUNDARY_KINDS",
    "ByteNgramModel",
    "fixed_patches",
    "patch_starts",
    "entropy_patches",
    "split_at",
    "threshold_for_mean_size",
    "boundary_kinds",
    "byte_kind",
    "hash_buckets",
    "hash_embed",
    "embedding_tables",
    "downsample",
]

#: The two boundary rules of BLT's entropy patching.
RULES: tuple[str, ...] = ("global", "monotonic")

#: Categories `byte_kind` assigns, in display order.
BOUNDARY_KINDS: tuple[str, ...] = (
    "word start",
    "mid-word",
    "digit",
    "space",
    "punctuation",
    "non-ASCII start",
    "inside a character",
    "control",
)

_MAX_ORDER = 8  # context of up to 7 bytes: (context << 8 | next byte) fits in 64 bits


def _as_bytes(data: object, name: str = "data") -> bytes:
    if isinstance(data, str):
        raise TypeError(f"{name} must be bytes, not str: pass text.encode('utf-8')")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"{name} must be bytes-like, got {type(data).__name__}")
    return bytes(data)


# --------------------------------------------------------------------------- byte vocabulary


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
        """The UTF-8 bytes of ``text`` shifted by `offset`, and the EOS ID (``"</s>"``) if ``eos``."""
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


# --------------------------------------------------------------------------- next-byte model


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
    def train(cls, data: bytes, order: int = 5, discount: float = 0.75) -> "ByteNgramModel":
        """Count the training bytes for every context length from 0 to ``order - 1``."""
        data = _as_bytes(data)
        if not isinstance(order, int) or isinstance(order, bool) or not 1 <= order <= _MAX_ORDER:
            raise ValueError(f"order must be an int from 1 to {_MAX_ORDER}, got {order!r}")
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
                tables.append(_OrderTable(empty, np.zeros(0), empty, np.zeros(0), np.zeros(0)))
                continue
            ctx = _context_ids(arr, k, positions)
            keys = (ctx << np.uint64(8)) | arr[positions].astype(np.uint64)
            keys, counts = np.unique(keys, return_counts=True)
            key_ctx = keys >> np.uint64(8)
            contexts, first, types = np.unique(key_ctx, return_index=True, return_counts=True)
            totals = np.add.reduceat(counts, first)
            tables.append(
                _OrderTable(keys, counts.astype(np.float64), contexts, totals.astype(np.float64), types.astype(np.float64))
            )
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
        arr = np.frombuffer(_as_bytes(data), dtype=np.uint8)
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
        data = _as_bytes(data)
        if not data:
            raise ValueError("bits_per_byte of empty data is undefined")
        return float(self.surprisals(data).mean())


# --------------------------------------------------------------------------- patches


def split_at(data: bytes, starts: Sequence[int] | np.ndarray) -> list[bytes]:
    """Cut ``data`` into the patches that begin at ``starts`` (sorted, first one 0).

    >>> split_at(b"hello world", [0, 5, 6])
    [b'hello', b' ', b'world']
    """
    data = _as_bytes(data)
    starts = [int(s) for s in starts]
    if not data:
        if starts:
            raise ValueError(f"empty data has no patch starts, got {starts}")
        return []
    if not starts or starts[0] != 0:
        raise ValueError("the first patch must start at 0")
    if any(b <= a for a, b in zip(starts, starts[1:])) or starts[-1] >= len(data):
        raise ValueError(f"patch starts must be strictly increasing and < {len(data)}, got {starts}")
    ends = starts[1:] + [len(data)]
    return [data[a:b] for a, b in zip(starts, ends)]


def fixed_patches(data: bytes, size: int) -> list[bytes]:
    """MegaByte-style patches: consecutive runs of ``size`` bytes; the last may be shorter.

    >>> fixed_patches(b"abcdefghij", 4)
    [b'abcd', b'efgh', b'ij']
    """
    data = _as_bytes(data)
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size <= 0:
        raise ValueError(f"patch size must be a positive int, got {size!r}")
    return [data[i : i + size] for i in range(0, len(data), size)]


def _check_entropies(entropies: object, n: int | None) -> np.ndarray:
    e = np.asarray(entropies, dtype=np.float64)
    if e.ndim != 1:
        raise ValueError(f"entropies must be one-dimensional, got shape {e.shape}")
    if n is not None and len(e) != n:
        raise ValueError(f"entropies has {len(e)} values but data has {n} bytes: one value per byte is needed")
    if not np.isfinite(e).all():
        bad = int(np.flatnonzero(~np.isfinite(e))[0])
        raise ValueError(f"entropies must be finite; entropies[{bad}] = {e[bad]}")
    return e


def _boundary_score(e: np.ndarray, rule: str) -> np.ndarray:
    """The value compared with the threshold at positions 1..n-1."""
    if rule == "global":
        return e[1:]
    if rule == "monotonic":
        return e[1:] - e[:-1]
    raise ValueError(f"unknown rule {rule!r}; choose one of {', '.join(RULES)}")


def patch_starts(entropies: Sequence[float] | np.ndarray, threshold: float, rule: str = "global") -> np.ndarray:
    """Where entropy patches start: position 0, and every ``i >= 1`` where

    * ``rule="global"``: ``entropies[i] > threshold`` (the next byte is hard to predict);
    * ``rule="monotonic"``: ``entropies[i] - entropies[i - 1] > threshold`` (the
      uncertainty jumps up, whatever its level).

    ``entropies[i]`` is the entropy of the prediction *for* byte ``i`` (see
    `ByteNgramModel.entropies`), so a boundary is decided before byte ``i`` is seen.

    >>> patch_starts([3.0, 0.5, 0.2, 2.9, 0.1], threshold=1.0).tolist()
    [0, 3]
    >>> patch_starts([3.0, 0.5, 0.2, 2.9, 0.1], threshold=1.0, rule="monotonic").tolist()
    [0, 3]
    """
    e = _check_entropies(entropies, None)
    threshold = float(threshold)
    if np.isnan(threshold):
        raise ValueError("threshold must not be NaN")
    score = _boundary_score(e, rule)
    if len(e) == 0:
        return np.zeros(0, dtype=np.intp)
    return np.concatenate(([0], np.flatnonzero(score > threshold) + 1)).astype(np.intp)


def entropy_patches(data: bytes, entropies: Sequence[float] | np.ndarray, threshold: float, rule: str = "global") -> list[bytes]:
    """BLT-style patches of ``data``: cut before every byte `patch_starts` selects.

    >>> entropy_patches(b"the cat", [5.0, 1.0, 0.4, 2.5, 3.1, 0.9, 0.2], threshold=2.0)
    [b'the', b' ', b'cat']
    """
    data = _as_bytes(data)
    e = _check_entropies(entropies, len(data))
    return split_at(data, patch_starts(e, threshold, rule))


def threshold_for_mean_size(entropies: Sequence[float] | np.ndarray, mean_size: float, rule: str = "global") -> float:
    """A threshold whose patches have the mean size closest to ``mean_size`` bytes.

    With n bytes and p patches the mean size is n / p, and p - 1 is the number of
    positions whose score (entropy, or its rise) is above the threshold, so the answer
    lies between two consecutive distinct scores. Ties can make some patch counts
    unreachable; the nearest reachable mean wins (the larger threshold on an exact tie).
    The threshold returned is the midpoint between the two scores, as far as possible
    from both, so a tiny change in how the entropies are computed does not move a
    boundary (above the largest score: that score; below the smallest: it minus 1).
    """
    e = _check_entropies(entropies, None)
    score = _boundary_score(e, rule)  # validates rule
    n = len(e)
    if n == 0:
        raise ValueError("entropies is empty: no threshold to tune")
    mean_size = float(mean_size)
    if not mean_size >= 1.0:
        raise ValueError(f"mean_size must be >= 1 byte, got {mean_size!r}")
    if len(score) == 0:  # one byte: one patch whatever the threshold
        return 0.0
    values = np.unique(score)  # ascending distinct scores
    # any threshold in [values[j], values[j + 1]) leaves above[j] scores above it
    above = len(score) - np.searchsorted(np.sort(score), values, side="right")
    cand_t = np.concatenate(((values[:-1] + values[1:]) / 2, [values[-1]], [values[0] - 1.0]))
    cand_boundaries = np.concatenate((above[:-1], [0], [len(score)]))
    err = np.abs(n / (cand_boundaries + 1) - mean_size)
    best = np.flatnonzero(err == err.min())
    return float(cand_t[best[np.argmax(cand_t[best])]])


# --------------------------------------------------------------------------- where boundaries fall


def byte_kind(data: bytes, i: int) -> str:
    """What byte ``i`` of ``data`` is, as one of `BOUNDARY_KINDS`.

    A letter is a "word start" when the byte before it is not a letter, digit or
    UTF-8 byte (or it is the first byte), otherwise "mid-word"; bytes 0x80-0xBF are
    "inside a character" (UTF-8 continuation bytes); 0xC0-0xFF "non-ASCII start".
    """
    b = data[i]
    if b >= 0xC0:
        return "non-ASCII start"
    if b >= 0x80:
        return "inside a character"
    ch = chr(b)
    if ch.isalpha():
        prev = data[i - 1] if i > 0 else None
        if prev is not None and (prev >= 0x80 or chr(prev).isalnum()):
            return "mid-word"
        return "word start"
    if ch.isdigit():
        return "digit"
    if ch in " \t\n\r\x0b\x0c":
        return "space"
    if 0x21 <= b <= 0x7E:
        return "punctuation"
    return "control"


def boundary_kinds(data: bytes, starts: Sequence[int] | np.ndarray) -> Counter:
    """How many of the patch ``starts`` fall on each kind of byte (see `byte_kind`)."""
    data = _as_bytes(data)
    counts: Counter = Counter({kind: 0 for kind in BOUNDARY_KINDS})
    for i in starts:
        i = int(i)
        if not 0 <= i < len(data):
            raise ValueError(f"start {i} is outside data of {len(data)} bytes")
        counts[byte_kind(data, i)] += 1
    return counts


# --------------------------------------------------------------------------- CANINE-style input

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix64(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finalizer: a bijection of 64-bit words that spreads every input bit
    over the whole output (uint64 arithmetic wraps modulo 2^64, as intended)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def hash_buckets(code_points: Sequence[int] | np.ndarray, num_hashes: int = 8, num_buckets: int = 16384, seed: int = 0) -> np.ndarray:
    """Bucket of every code point under each of ``num_hashes`` hash functions, shape ``(n, K)``.

    Hash function k is ``mix64(x + (k + 1 + K * seed) * 0x9E3779B97F4A7C15) mod B``, where
    ``mix64`` is the splitmix64 finalizer: every function scrambles the code point
    differently, so two code points that share a bucket under one function (probability
    about 1/B) are unlikely to share it under the others (about 1/B^K for all K).
    """
    x = np.asarray(code_points)
    if x.ndim != 1:
        raise ValueError(f"code_points must be one-dimensional, got shape {x.shape}")
    if x.size and (not np.issubdtype(x.dtype, np.integer) or x.min() < 0 or x.max() > 0x10FFFF):
        raise ValueError("code points must be integers from 0 to 0x10FFFF")
    if not isinstance(num_hashes, int) or num_hashes < 1:
        raise ValueError(f"num_hashes must be a positive int, got {num_hashes!r}")
    if not isinstance(num_buckets, int) or num_buckets < 1:
        raise ValueError(f"num_buckets must be a positive int, got {num_buckets!r}")
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    salts = (np.arange(1, num_hashes + 1, dtype=np.uint64) + np.uint64(num_hashes * seed)) * _GOLDEN
    mixed = _mix64(x.astype(np.uint64)[:, None] + salts[None, :])
    return (mixed % np.uint64(num_buckets)).astype(np.int64)


def embedding_tables(num_hashes: int = 8, num_buckets: int = 16384, dim: int = 768, seed: int = 0) -> np.ndarray:
    """Randomly initialized tables, shape ``(K, B, dim // K)``: one slice of the embedding per hash."""
    if dim % num_hashes:
        raise ValueError(f"dim ({dim}) must be a multiple of num_hashes ({num_hashes})")
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, 0.02, size=(num_hashes, num_buckets, dim // num_hashes)).astype(np.float32)


def hash_embed(text: str, tables: np.ndarray, seed: int = 0) -> np.ndarray:
    """CANINE-style embeddings of ``text``'s code points, shape ``(len(text), K * d)``.

    Each code point is hashed by K functions (`hash_buckets` with B = ``tables.shape[1]``);
    function k picks a row of table k, and the K rows are concatenated. No vocabulary:
    every one of the 1,114,112 code points gets an embedding.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}")
    tables = np.asarray(tables)
    if tables.ndim != 3:
        raise ValueError(f"tables must have shape (K, B, d), got {tables.shape}")
    k, b, d = tables.shape
    buckets = hash_buckets(np.array([ord(c) for c in text], dtype=np.int64), k, b, seed)
    if len(text) == 0:
        return np.zeros((0, k * d), dtype=tables.dtype)
    return np.concatenate([tables[j][buckets[:, j]] for j in range(k)], axis=1)


def downsample(x: np.ndarray, rate: int = 4) -> np.ndarray:
    """Mean of every ``rate`` consecutive rows (the last group may be shorter): length ``ceil(n / rate)``.

    CANINE shortens the character sequence by its downsampling rate with a strided
    convolution before the deep stack; a mean is the parameter-free stand-in.
    """
    x = np.asarray(x)
    if not isinstance(rate, int) or isinstance(rate, bool) or rate <= 0:
        raise ValueError(f"rate must be a positive int, got {rate!r}")
    if x.ndim != 2:
        raise ValueError(f"x must have shape (n, d), got {x.shape}")
    n = len(x)
    if n == 0:
        return x.copy()
    starts = np.arange(0, n, rate)
    sums = np.add.reduceat(x, starts, axis=0)
    sizes = np.minimum(starts + rate, n) - starts
    return sums / sizes[:, None]
