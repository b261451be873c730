"""sentencepiece's BPE: no merge list, the adjacent pair whose concatenation scores highest merges.

A SentencePiece BPE model stores pieces with scores (its trainer stores ``-i`` for the
i-th merge), so the score of a piece plays the role of GPT-2's merge rank.
`reference_bpe_segment` is the plain quadratic loop; `bpe_segment` gives the same result
with a heap and a linked list (it must equal `reference_bpe_segment`); `bpe_merge` adds
sentencepiece's record of how unused pieces were made, which `SentencePieceBPE`, the
model stage of a `toklab.sentencepiece.SentencePieceTokenizer`, uses to split them back.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence

from ..base.unicode import utf8_sequence_length
from ..normalizers.spm import SentencePieceNormalizer
from .model_file import SPPiece

__all__ = ["reference_bpe_segment", "bpe_segment", "bpe_merge", "SentencePieceBPE"]


def reference_bpe_segment(
    symbols: Sequence[str], scores: Mapping[str, float]
) -> list[str]:
    """sentencepiece's BPE encoding, written plainly (quadratic; for reading, testing).

    Start from ``symbols`` (characters, and user-defined symbols kept whole).
    Repeatedly look at every adjacent pair whose concatenation is in
    ``scores``; merge the one with the highest score, the leftmost one if
    several tie. Stop when no adjacent pair forms a piece. Unlike GPT-2's
    BPE there is no merge list: a piece's score plays the role of its rank
    (sentencepiece's BPE trainer stores ``-i`` for the i-th merge).
    """
    seq = list(symbols)
    while True:
        best = None
        for i in range(len(seq) - 1):
            merged = seq[i] + seq[i + 1]
            if merged not in scores:
                continue
            if best is None or scores[merged] > scores[seq[best] + seq[best + 1]]:
                best = i
        if best is None:
            return seq
        seq[best : best + 2] = [seq[best] + seq[best + 1]]


def bpe_segment(symbols: Sequence[str], scores: Mapping[str, float]) -> list[str]:
    """The same result as `reference_bpe_segment`, with a heap of candidate pairs.

    Symbols sit in a linked list; the heap holds ``(-score, left position,
    merged length)`` for every adjacent pair that forms a piece, so the top
    is the best pair and, among equals, the leftmost. A popped entry whose
    two symbols have changed since it was pushed is stale (the stored
    length no longer matches) and is skipped; after a merge only the two new
    neighbouring pairs are pushed. Must equal `reference_bpe_segment`.
    """
    return bpe_merge(symbols, scores)[0]


def bpe_merge(
    symbols: Sequence[str], scores: Mapping[str, float], unused: frozenset[str] | set[str] = frozenset(),
    skip: Callable[[], bool] | None = None,
) -> tuple[list[str], dict[str, tuple[str, str]]]:
    """`bpe_segment`, plus the halves of each pushed pair that forms an ``unused`` piece.

    sentencepiece records ``rev_merge[piece] = (left, right)`` whenever it
    *pushes* a candidate pair whose concatenation is an unused piece (a later
    push of the same string overwrites it), and splits unused pieces back
    with that record after merging. Kept separate so the public function
    stays the plain algorithm.

    ``skip`` is BPE-dropout as sentencepiece runs it: asked once for every pair
    that is still valid when it reaches the top of the heap, and when it says
    True that pair is dropped (it comes back only if one of its two symbols
    changes, as a new pair).
    """
    sym = list(symbols)
    n = len(sym)
    rev: dict[str, tuple[str, str]] = {}
    if n < 2:
        return sym, rev
    nxt = list(range(1, n + 1))
    nxt[-1] = -1
    prv = list(range(-1, n - 1))
    heap: list[tuple[float, int, int]] = []

    def push(left: int, right: int) -> None:
        merged = sym[left] + sym[right]
        score = scores.get(merged)
        if score is not None:
            heapq.heappush(heap, (-score, left, len(merged)))
            if merged in unused:
                rev[merged] = (sym[left], sym[right])

    for i in range(n - 1):
        push(i, i + 1)
    while heap:
        _, left, size = heapq.heappop(heap)
        right = nxt[left] if sym[left] else -1
        if right < 0 or len(sym[left]) + len(sym[right]) != size:
            continue
        if skip is not None and skip():
            continue
        sym[left] += sym[right]
        sym[right] = ""
        nxt[left] = nxt[right]
        if nxt[right] >= 0:
            prv[nxt[right]] = left
        if prv[left] >= 0:
            push(prv[left], left)
        if nxt[left] >= 0:
            push(left, nxt[left])
    return [x for x in sym if x], rev


class _Undecided(Exception):
    """A dropout decision beyond the ones being replayed was asked for."""


class SentencePieceBPE:
    """sentencepiece's BPE model: symbols (user-defined ones whole), merges by score, unused pieces undone.

    ``entries`` is the vocabulary in ID order. sentencepiece merges into
    ordinary, user-defined and unused pieces; an unused piece is then split
    back into the pair it was merged from (recursively); anything that is not
    an ordinary or user-defined piece counts as unknown (measured against
    sentencepiece).
    """

    def __init__(self, entries: Sequence[SPPiece], normalizer: SentencePieceNormalizer) -> None:
        self._ids = {e.piece: i for i, e in enumerate(entries)}
        self._kinds = [e.kind for e in entries]
        self.unk_id = self._kinds.index("unknown")
        self._scores = {e.piece: e.score for e in entries if e.kind in ("normal", "user", "unused")}
        self._unused = frozenset(e.piece for e in entries if e.kind == "unused")
        self._normalizer = normalizer

    def pieces(self, normalized: str, skip: Callable[[], bool] | None = None) -> list[tuple[str, int]]:
        """``(surface, id)`` of each piece of a normalized string (unknown pieces get the unknown ID).

        ``skip``: BPE-dropout (see `bpe_merge`).
        """
        merged, rev = bpe_merge(self.symbols(normalized), self._scores, self._unused, skip)
        return self.resegment(merged, rev)

    def dropout_distribution(self, normalized: str, alpha: float) -> dict[tuple[tuple[str, int], ...], float]:
        """Every segmentation BPE-dropout with probability ``alpha`` can give, and its exact probability.

        Enumerates the decisions `bpe_merge` asks ``skip`` for: each valid pair at the
        top of the heap is dropped with probability ``alpha``, merged otherwise, and the
        run is replayed for each sequence of decisions (exponential: for short strings,
        to check sampling against).
        """
        symbols = self.symbols(normalized)
        out: dict[tuple[tuple[str, int], ...], float] = {}
        pending: list[tuple[bool, ...]] = [()]
        while pending:
            decisions = pending.pop()
            asked: list[bool] = []

            def skip() -> bool:
                if alpha <= 0 or alpha >= 1:
                    return alpha >= 1
                if len(asked) == len(decisions):
                    raise _Undecided
                asked.append(decisions[len(asked)])
                return asked[-1]

            try:
                merged, rev = bpe_merge(symbols, self._scores, self._unused, skip)
            except _Undecided:
                pending += [decisions + (True,), decisions + (False,)]
                continue
            p = 1.0
            for dropped in decisions:
                p *= alpha if dropped else 1 - alpha
            key = tuple(self.resegment(merged, rev))
            out[key] = out.get(key, 0.0) + p
        return out

    def symbols(self, normalized: str) -> list[str]:
        """What merging starts from: the characters, each user-defined symbol whole."""
        if not self._normalizer.user_symbols:
            return list(normalized)
        user_match = self._normalizer.user_match
        data = normalized.encode("utf-8")
        symbols = []
        pos = 0
        while pos < len(data):
            length = user_match(data, pos) or utf8_sequence_length(data[pos])
            symbols.append(data[pos : pos + length].decode("utf-8"))
            pos += length
        return symbols

    def resegment(self, merged: Sequence[str], rev: Mapping[str, tuple[str, str]]) -> list[tuple[str, int]]:
        """``(surface, id)`` of merged symbols, unused pieces split back by ``rev`` (`bpe_merge`'s record)."""
        out: list[tuple[str, int]] = []
        for piece in merged:
            self._resegment(piece, rev, out)
        return out

    def _resegment(self, piece: str, rev: dict[str, tuple[str, str]], out: list[tuple[str, int]]) -> None:
        pid = self._ids.get(piece, -1)
        kind = self._kinds[pid] if pid >= 0 else None
        if kind == "unused" and piece in rev:
            left, right = rev[piece]
            self._resegment(left, rev, out)
            self._resegment(right, rev, out)
        elif kind in ("normal", "user"):
            out.append((piece, pid))
        else:
            out.append((piece, self.unk_id))
