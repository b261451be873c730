"""Hash embeddings: CANINE's hashed code points, and BLT's hashed byte n-grams.

CANINE hashes each code point with several functions into small tables and concatenates
the rows, then downsamples (`hash_buckets`, `hash_embed`, `downsample`). BLT adds to each
byte's embedding one row per n-gram size, looked up by a hash of the n bytes that end
at that byte (`ngram_buckets`, `ngram_embed`). Both replace a vocabulary by a hash.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["mix64", "hash_buckets", "embedding_tables", "hash_embed", "downsample", "ngram_buckets", "ngram_embed", "ngram_sharing"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def mix64(z: np.ndarray) -> np.ndarray:
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
    mixed = mix64(x.astype(np.uint64)[:, None] + salts[None, :])
    return (mixed % np.uint64(num_buckets)).astype(np.int64)


def embedding_tables(num_hashes: int = 8, num_buckets: int = 16384, dim: int = 768, seed: int = 0) -> np.ndarray:
    """Randomly initialized tables, shape ``(K, B, dim // K)``: one slice of the embedding per hash."""
    if dim % num_hashes:
        raise ValueError(f"dim ({dim}) must be a multiple of num_hashes ({num_hashes})")
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, 0.02, size=(num_hashes, num_buckets, dim // num_hashes)).astype(np.float32)


def hash_embed(text: str, tables: np.ndarray, seed: int = 0) -> np.ndarray:
    """CANINE-style embeddings of ``text``'s code points, shape ``(len(text), K * d)``.

    Each code point is hashed by K functions (`hash_buckets` with B =
    ``tables.shape[1]``); function k picks a row of table k, and the K rows are
    concatenated. No vocabulary:
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


def ngram_buckets(data: bytes, n: int, num_buckets: int, seed: int = 0) -> np.ndarray:
    """Bucket of the ``n`` bytes that end at each position of ``data``.

    Position ``i`` hashes bytes ``i - n + 1 .. i``; before the start of ``data``
    the window is padded with zero bytes, so every position has an n-gram (BLT
    pads the same way). The hash is a polynomial in the bytes with an odd
    multiplier per ``(n, seed)``, modulo 2^64, scrambled by `mix64` and reduced
    modulo ``num_buckets``. It reads only bytes at or before ``i``: the embedding
    of a byte never depends on the bytes after it. Shape ``(len(data),)``.
    """
    if isinstance(data, str) or not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes-like, got {type(data).__name__}")
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 64:
        raise ValueError(f"n must be an int from 1 to 64, got {n!r}")
    if not isinstance(num_buckets, int) or num_buckets < 1:
        raise ValueError(f"num_buckets must be a positive int, got {num_buckets!r}")
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    arr = np.frombuffer(bytes(data), dtype=np.uint8).astype(np.uint64)
    padded = np.concatenate((np.zeros(n - 1, dtype=np.uint64), arr))
    multiplier = mix64(np.array([n * 0x100 + seed], dtype=np.uint64)) | np.uint64(1)
    h = np.zeros(len(arr), dtype=np.uint64)
    power = np.ones(1, dtype=np.uint64)
    for k in range(n):  # byte i - k gets multiplier**k
        h += padded[n - 1 - k : n - 1 - k + len(arr)] * power
        power = power * multiplier
    return (mix64(h + np.uint64(n)) % np.uint64(num_buckets)).astype(np.int64)


def ngram_embed(data: bytes, byte_table: np.ndarray, ngram_tables: Sequence[np.ndarray],
                sizes: Sequence[int], seed: int = 0) -> np.ndarray:
    """BLT-style byte embeddings, shape ``(len(data), d)``: each byte's row of ``byte_table``
    (256 rows) plus, for every n in ``sizes``, the row of ``ngram_tables[j]`` that the
    n-gram ending at that byte hashes to (`ngram_buckets`, with that table's row count)."""
    byte_table = np.asarray(byte_table)
    if byte_table.ndim != 2 or byte_table.shape[0] != 256:
        raise ValueError(f"byte_table must have shape (256, d), got {byte_table.shape}")
    if len(ngram_tables) != len(sizes):
        raise ValueError(f"{len(ngram_tables)} n-gram tables for {len(sizes)} sizes: need one table per size")
    arr = np.frombuffer(bytes(data), dtype=np.uint8)
    out = byte_table[arr].astype(np.float64)
    for table, n in zip(ngram_tables, sizes):
        table = np.asarray(table)
        if table.ndim != 2 or table.shape[1] != byte_table.shape[1]:
            raise ValueError(f"n-gram table for n={n} must have shape (B, {byte_table.shape[1]}), got {table.shape}")
        out += table[ngram_buckets(data, n, table.shape[0], seed)]
    return out


def ngram_sharing(data: bytes, n: int, num_buckets: int, seed: int = 0) -> tuple[int, int]:
    """``(distinct, shared)``: how many distinct n-grams ``data`` holds (windows of ``n``
    bytes inside it, no padding), and how many of them share their `ngram_buckets` bucket
    with at least one other distinct n-gram. ``n`` is at most 8 (an n-gram is packed into
    one 64-bit integer to be counted)."""
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 8:
        raise ValueError(f"n must be an int from 1 to 8, got {n!r}")
    data = bytes(data)
    if len(data) < n:
        return 0, 0
    arr = np.frombuffer(data, dtype=np.uint8).astype(np.uint64)
    packed = np.zeros(len(arr) - n + 1, dtype=np.uint64)
    for k in range(n):
        packed |= arr[k : k + len(packed)] << np.uint64(8 * k)
    buckets = ngram_buckets(data, n, num_buckets, seed)[n - 1 :]
    grams, first = np.unique(packed, return_index=True)
    _, per_bucket = np.unique(buckets[first], return_inverse=True)
    sizes = np.bincount(per_bucket)
    return len(grams), int((sizes[per_bucket] > 1).sum())
