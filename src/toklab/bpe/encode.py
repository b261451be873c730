"""Encoding one pre-tokenized chunk with a rank table: the fast partners of `reference_encode`.

tiktoken's rule: inside a chunk, merge the adjacent pair whose *concatenation*
has the lowest rank, leftmost on ties, until no adjacent pair forms a token.
For vocabularies produced by BPE training this is the same as replaying the
learned merges in order (a token's rank is always higher than the ranks of the
two tokens it was made from), so both functions must equal `reference_encode`
on such vocabularies; ``tests/bpe/test_fast_vs_reference.py`` checks it.

`merge_short` is the quadratic scan, fastest on the short chunks that make up
most text; `merge_long` keeps a heap and a linked list and wins from `SHORT`
bytes up (measured on cl100k, below). `merge_dropout` is BPE-dropout. `recover_split`
finds the two parts of a token in a rank table (tiktoken files store no merges).

Cutting a chunk where no merge can ever cross (`Cuts`, `PieceCache`): every
part BPE holds is a single byte or a token of the rank table, because two
parts are joined only when their concatenation is a token. So if no token
spans a position of the chunk, nothing is ever merged across it, and BPE on
the two sides separately gives exactly the parts BPE gives on the whole
chunk. (The sides never compete either: a merge on one side changes no pair
on the other, so each side sees its merges in its own lowest-rank, leftmost
order.) That matters for text without spaces: a line of Chinese is a single
pre-token of a hundred bytes or more, nearly every line is a new one, and
merging it byte by byte was the slowest part of a first encode. Most of its
character boundaries are spanned by no token, so it falls apart into pieces
of one or two characters that recur everywhere and are merged once each.

`Cuts` indexes, for every token that holds a non-ASCII byte, each character
boundary inside it as a pair (what is left of it, what is right of it): a
whole character as ``str``, or the bytes of a character that the token only
starts or ends inside of. A boundary in text counts as spanned when the
characters on its two sides match such a pair; anything further out is
ignored, which can only keep extra pieces together, never cut where a token
spans. A boundary between two ASCII characters always counts as spanned, so
ASCII-only tokens need no index. ``tests/bpe/test_cuts.py`` checks by brute
force (every occurrence of every token in the text) that no cut is crossed
by a token, and that merging the pieces gives the IDs of merging the whole
chunk.
"""

from __future__ import annotations

import heapq
import random
import sys
from collections.abc import Iterable, Mapping

__all__ = [
    "SHORT", "CUT_BYTES", "merge_short", "merge_long", "merge_chunk", "merge_dropout", "recover_split", "RankBelow",
    "Cuts", "PieceCache", "boundary_pairs",
]

#: Below this many bytes the quadratic scan beats the heap. Measured on cl100k,
#: on 300 random valid-UTF-8 slices of the mixed benchmark corpus per length:
#: the scan takes 0.86x the heap's time at 16 bytes, 0.96x at 32, 1.07x at 48,
#: 1.6x at 128; on a whole first encode 24 was fastest of 8, 16, 24, 32, 48.
SHORT = 24

#: Non-ASCII chunks from this many bytes up are cut into pieces (`Cuts`) before
#: merging; shorter ones are merged whole, as cutting costs more than it saves
#: (first encode with cl100k: 4 and 8 about equal, 12 and up slower).
CUT_BYTES = 8

# Stands for "no such token" in `merge_short`'s pair ranks: above every rank.
_NONE = sys.maxsize


def merge_short(piece: bytes, ranks: Mapping[bytes, int]) -> list[bytes]:
    """Lowest-rank adjacent concatenation first, leftmost on ties (quadratic: short).

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
    """`merge_short` in O(n log n): a linked list of parts, a heap of candidate merges.

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


def merge_dropout(
    piece: bytes, ranks: Mapping[bytes, int], p: float, rng: random.Random
) -> list[bytes]:
    """BPE-dropout (Provilkov et al.): skip each candidate merge with probability p."""
    parts = [piece[i : i + 1] for i in range(len(piece))]
    while len(parts) > 1:
        best_rank = None
        best_i = 0
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is None or rng.random() < p:
                continue  # not a token, or dropped this step
            if best_rank is None or r < best_rank:
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

def _char_length(lead: int) -> int:
    """Bytes in the UTF-8 character this byte starts; 0 if it cannot start one."""
    if lead < 0x80:
        return 1
    if lead >= 0xF8 or lead < 0xC0:
        return 0
    return 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


def _is_continuation(byte: int) -> bool:
    return 0x80 <= byte < 0xC0


def boundary_pairs(token: bytes) -> Iterable[tuple[str | bytes, str | bytes]]:
    """(left, right) for each character boundary inside ``token`` that valid UTF-8 text could hold.

    A side is the whole character next to the boundary (``str``) when the
    token holds all of it, else the bytes of it the token holds (a tail of
    continuation bytes on the left, a head starting with a lead byte on the
    right). Boundaries next to byte sequences that no valid text contains are
    skipped, since such a token can never span anything.
    """
    n = len(token)
    for k in range(1, n):
        width = _char_length(token[k])
        if width == 0:
            continue
        start = k - 1
        while start >= 0 and _is_continuation(token[start]):
            start -= 1
        if start < 0:
            if k > 3:
                continue
            left: str | bytes = token[:k]
        else:
            if _char_length(token[start]) != k - start:
                continue
            try:
                left = token[start:k].decode("utf-8")
            except UnicodeDecodeError:
                continue
        if width <= n - k:
            try:
                right: str | bytes = token[k : k + width].decode("utf-8")
            except UnicodeDecodeError:
                continue
        else:
            right = token[k:]
        yield left, right


class Cuts:
    """Which character boundaries of a text no token of ``tokens`` spans, and the pieces between them."""

    def __init__(self, tokens: Iterable[bytes]) -> None:
        pairs: set[tuple[str | bytes, str | bytes]] = set()
        for token in tokens:
            if not token.isascii():
                pairs.update(boundary_pairs(token))
        follows: dict[str | bytes, set] = {}
        for left, right in pairs:
            follows.setdefault(left, set()).add(right)
        self._follows = follows
        self._rights = {right for _, right in pairs}
        self._ascii = frozenset(map(chr, range(128)))
        # One memo per character, so the loops below look each character up once:
        # (the right keys that may follow it, empty for most characters; the keys
        # it shows as a right side).
        self._keys: dict[str, tuple[frozenset, tuple]] = {}

    def _keys_of(self, char: str) -> tuple[frozenset, tuple]:
        data = char.encode("utf-8")
        found = set(self._ascii) if char < "\x80" else set()
        for key in (char, *(data[-i:] for i in range(1, len(data)))):
            found.update(self._follows.get(key, ()))
        heads = (char,) + tuple(data[:i] for i in range(1, len(data)) if data[:i] in self._rights)
        self._keys[char] = keys = (frozenset(found), heads)
        return keys

    def spanned(self, left: str, right: str) -> bool:
        """Whether a token may span the boundary between characters ``left`` and ``right``."""
        follow = (self._keys.get(left) or self._keys_of(left))[0]
        return not follow.isdisjoint((self._keys.get(right) or self._keys_of(right))[1])

    def pieces(self, chunk: str) -> list[str]:
        """``chunk`` cut at every character boundary that no token spans."""
        # `spanned` written out: this loop runs once per character of every new chunk.
        out: list[str] = []
        get, keys_of = self._keys.get, self._keys_of
        start = i = 0
        follow = (get(chunk[:1]) or keys_of(chunk[:1]))[0] if chunk else frozenset()
        for right in chunk[1:]:
            i += 1
            keys = get(right) or keys_of(right)
            if follow and not follow.isdisjoint(keys[1]):
                follow = keys[0]
                continue
            out.append(chunk[start:i])
            start = i
            follow = keys[0]
        out.append(chunk[start:])
        return out


class PieceCache(dict):
    """Piece -> the IDs BPE gives its bytes alone; looking up a missing piece merges it.

    A piece is a run of characters between two cuts, so merging it alone gives
    the parts it gets inside its chunk. Unlike a chunk, a piece that is a token
    is not looked up whole first (tiktoken does that for chunks only). Pieces
    longer than ``max_chars`` are merged every time rather than kept. The
    `Cuts` of the rank table are indexed on first use.
    """

    __slots__ = ("encoder", "ranks", "max_chars", "_cuts")

    def __init__(self, encoder: Mapping[bytes, int], ranks: Mapping[bytes, int], max_chars: int) -> None:
        super().__init__()
        self.encoder, self.ranks, self.max_chars = encoder, ranks, max_chars
        self._cuts: Cuts | None = None

    @property
    def cuts(self) -> Cuts:
        if self._cuts is None:
            self._cuts = Cuts(self.ranks)
        return self._cuts

    def __missing__(self, piece: str) -> tuple[int, ...]:
        encoder = self.encoder
        # a tuple, as in ByteBPE's chunk cache: the garbage collector can stop tracking it
        ids = tuple([encoder[p] for p in merge_chunk(piece.encode("utf-8"), self.ranks)])
        if len(piece) <= self.max_chars:
            self[piece] = ids
        return ids

    def encode(self, chunk: str) -> list[int]:
        """BPE on ``chunk`` (without tiktoken's whole-chunk lookup): its pieces' IDs, concatenated."""
        # `Cuts.pieces` with each piece's IDs taken where it is cut off, rather than
        # from a list of pieces (measured: about a seventh less time on new Chinese text).
        cuts = self.cuts
        get, keys_of, piece = cuts._keys.get, cuts._keys_of, self.__getitem__
        out: list[int] = []
        start = i = 0
        follow = (get(chunk[:1]) or keys_of(chunk[:1]))[0] if chunk else frozenset()
        for right in chunk[1:]:
            i += 1
            keys = get(right) or keys_of(right)
            if follow and not follow.isdisjoint(keys[1]):
                follow = keys[0]
                continue
            out += piece(chunk[start:i])
            start = i
            follow = keys[0]
        out += piece(chunk[start:])
        return out
