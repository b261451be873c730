"""Encoding one pre-tokenized chunk with a rank table: the fast partners of `reference_encode`.

tiktoken's rule: inside a chunk, merge the adjacent pair whose *concatenation*
has the lowest rank, leftmost on ties, until no adjacent pair forms a token.
For vocabularies produced by BPE training this is the same as replaying the
learned merges in order (a token's rank is always higher than the ranks of the
two tokens it was made from), so both functions must equal `reference_encode`
on such vocabularies; ``tests/bpe/test_fast_vs_reference.py`` checks it.

`merge_short` is the quadratic scan, fastest on the short chunks that make up
most text; `merge_long` keeps a heap and a linked list and wins from `SHORT`
bytes up (measured on cl100k). `merge_dropout` is BPE-dropout. `recover_split`
finds the two parts of a token in a rank table (tiktoken files store no merges).
"""

from __future__ import annotations

import heapq
import random
import sys
from collections.abc import Mapping

__all__ = ["SHORT", "merge_short", "merge_long", "merge_chunk", "merge_dropout", "recover_split", "RankBelow"]

#: Below this many bytes the quadratic scan beats the heap (measured on cl100k).
SHORT = 8

# Stands for "no such token" in `merge_short`'s pair ranks: above every rank.
_NONE = sys.maxsize


def merge_short(piece: bytes, ranks: Mapping[bytes, int]) -> list[bytes]:
    """Lowest-rank adjacent concatenation first, leftmost on ties (quadratic; short chunks).

    Keeps the rank of every adjacent pair in a list, so a merge looks up only
    the two pairs it changes, and `min` / `list.index` (leftmost) find the next
    merge; parts are slices of `piece` between the kept cut positions.
    """
    n = len(piece)
    if n < 2:
        return [piece] if n else []
    get = ranks.get
    cuts = list(range(n + 1))
    pair = [get(piece[i : i + 2], _NONE) for i in range(n - 1)]
    while pair:
        best = min(pair)
        if best == _NONE:
            break
        i = pair.index(best)
        del cuts[i + 1]
        del pair[i]
        if i < len(pair):
            pair[i] = get(piece[cuts[i] : cuts[i + 2]], _NONE)
        if i:
            pair[i - 1] = get(piece[cuts[i - 1] : cuts[i + 1]], _NONE)
    return [piece[cuts[k] : cuts[k + 1]] for k in range(len(cuts) - 1)]


def merge_long(piece: bytes, ranks: Mapping[bytes, int]) -> list[bytes]:
    """`merge_short` in O(n log n): a linked list of parts and a heap of candidate merges.

    Heap entries are (rank, start position); an entry is stale if its parts
    have changed since it was pushed, which we detect by recomputing the rank.
    Positions are original byte offsets, so ties still go to the leftmost pair.
    """
    n = len(piece)
    parts: list[bytes | None] = [piece[i : i + 1] for i in range(n)]
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    get = ranks.get
    heap = []
    for i in range(n - 1):
        r = get(parts[i] + parts[i + 1])
        if r is not None:
            heap.append((r, i))
    heapq.heapify(heap)
    while heap:
        r, i = heapq.heappop(heap)
        part = parts[i]
        j = nxt[i]
        if part is None or j >= n or get(part + parts[j]) != r:
            continue
        merged = part + parts[j]
        parts[i] = merged
        parts[j] = None
        k = nxt[j]
        nxt[i] = k
        if k < n:
            prv[k] = i
            rk = get(merged + parts[k])
            if rk is not None:
                heapq.heappush(heap, (rk, i))
        h = prv[i]
        if h >= 0:
            rh = get(parts[h] + merged)
            if rh is not None:
                heapq.heappush(heap, (rh, h))
    return [p for p in parts if p is not None]


def merge_chunk(piece: bytes, ranks: Mapping[bytes, int]) -> list[bytes]:
    """`merge_short` below `SHORT` bytes, `merge_long` from there on (same result, measured speed)."""
    return merge_short(piece, ranks) if len(piece) < SHORT else merge_long(piece, ranks)


def merge_dropout(piece: bytes, ranks: Mapping[bytes, int], p: float, rng: random.Random) -> list[bytes]:
    """BPE-dropout (Provilkov et al.): at every step each candidate merge is skipped with probability p."""
    parts = [piece[i : i + 1] for i in range(len(piece))]
    while len(parts) > 1:
        best_rank = None
        best_i = 0
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and rng.random() >= p and (best_rank is None or r < best_rank):
                best_rank = r
                best_i = i
        if best_rank is None:
            break
        parts[best_i : best_i + 2] = [parts[best_i] + parts[best_i + 1]]
    return parts


def recover_split(token: bytes, ranks: Mapping[bytes, int], rank: int) -> tuple[bytes, bytes]:
    """The two tokens that ``token`` was made from: BPE on its bytes using only lower ranks."""
    limited = RankBelow(ranks, rank)
    parts = merge_chunk(token, limited)
    if len(parts) != 2:
        raise ValueError(f"token {token!r} (rank {rank}) is not the merge of two lower-ranked tokens")
    return parts[0], parts[1]


class RankBelow:
    """A read-only view of a rank table that hides ranks >= a limit."""

    __slots__ = ("ranks", "limit")

    def __init__(self, ranks: Mapping[bytes, int], limit: int) -> None:
        self.ranks = ranks
        self.limit = limit

    def get(self, key: bytes, default=None):
        r = self.ranks.get(key)
        return r if r is not None and r < self.limit else default
