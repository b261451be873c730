"""The Unigram lattice: the dynamic programs over "position i to j is a piece" edges.

Everything a Unigram model computes is one of three dynamic programs over the
*lattice* of a string (an edge from ``i`` to ``j`` when ``x[i:j]`` is a piece):
Viterbi (max-product) finds the best segmentation, which is how text is
encoded; forward (sum-product) gives ``P(x)``, and forward-backward each
piece's expected count, the E-step of training; forward-filtering
backward-sampling draws a segmentation with probability ``∝ P(z) ** alpha``.

Two engines run them:

* per text, in pure Python (`PieceTable`, `text_edges`, `best_path`,
  `forward_log`, `nbest_paths`, `sample_paths`, `text_expected_counts`), for
  `toklab.unigram.Unigram`; `best_path` adds scores in float32 when asked,
  as sentencepiece's C++ encoder does;
* for many words at once, in numpy (`Lattice`, `Sweep`), for the trainer:
  every word's lattice in flat arrays, one numpy step per position. When
  pieces are pruned it only masks edges; it never scans the text again.

Both must equal the plain versions in `toklab.unigram.reference`.
"""

from __future__ import annotations

import math
import random
import struct
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..sentencepiece_model import byte_piece

__all__ = [
    "FLT_MIN",
    "round32",
    "PieceTable",
    "text_edges",
    "best_path",
    "path_pieces",
    "path_ids",
    "forward_log",
    "nbest_paths",
    "sample_paths",
    "draw",
    "text_expected_counts",
    "Sweep",
    "Lattice",
    "piece_lookup",
]

_NEG_INF = float("-inf")
_F32 = struct.Struct("<f")
#: C++ ``FLT_MIN``: the smallest positive normal float.
FLT_MIN = 1.1754943508222875e-38

Edge = tuple[int, int, float]  # (end, piece id, score) of an edge starting at some position
Path = list[tuple[int, int, int]]  # (start, end, piece id) per piece


def round32(x: float) -> float:
    """``x`` rounded to the nearest single-precision float (what a C++ ``float`` stores).

    Adding two floats in double precision and rounding once to single gives
    exactly the single-precision sum (53 >= 2 * 24 + 2 bits, so the double
    rounding is harmless).
    """
    return _F32.unpack(_F32.pack(x))[0]


@dataclass(frozen=True)
class PieceTable:
    """What the per-text lattice needs from a model.

    ``match`` maps every prefix of a matchable piece to the piece's ID if it is
    itself a piece, else to -1, so scanning ``text[i:j]`` for growing ``j``
    stops at the first substring that is no prefix at all. ``scores[id]`` is
    the score used inside the lattice; a character no piece covers gets a
    one-character edge with ``unk_id`` and ``unk_score``.
    """

    match: Mapping[str, int]
    scores: Sequence[float]
    unk_id: int
    unk_score: float
    float32: bool = False


def text_edges(table: PieceTable, text: str) -> list[list[Edge]]:
    """``edges[i]`` = every ``(end, id, score)`` of a piece starting at ``i``, by increasing end.

    A position where no one-character piece starts also gets a
    one-character unknown edge, so every string has a segmentation.
    """
    match, scores, n = table.match, table.scores, len(text)
    out: list[list[Edge]] = []
    for i in range(n):
        here = []
        single = False
        for j in range(i + 1, n + 1):
            pid = match.get(text[i:j])
            if pid is None:
                break
            if pid >= 0:
                here.append((j, pid, scores[pid]))
                single = single or j == i + 1
        if not single:
            here.insert(0, (i + 1, table.unk_id, table.unk_score))
        out.append(here)
    return out


def best_path(table: PieceTable, text: str) -> tuple[Path, float]:
    """Viterbi over the lattice: ``[(start, end, id), ...]`` and its score.

    Same loop order and tie rule as sentencepiece's optimized encoder:
    starts left to right, and a later candidate replaces the current best
    only if strictly better, so ties go to the earliest start of the last
    piece (the longest final piece). Must equal `reference_viterbi`
    wherever every character is covered (in double precision).
    """
    match, scores, n = table.match, table.scores, len(text)
    unk_id, unk_score = table.unk_id, table.unk_score
    rnd = round32 if table.float32 else None
    best = [0.0] + [_NEG_INF] * n
    start_of = [-1] * (n + 1)
    id_of = [-1] * (n + 1)
    for i in range(n):
        base = best[i]
        single = False
        j = i + 1
        while j <= n:
            pid = match.get(text[i:j])
            if pid is None:
                break
            if pid >= 0:
                s = base + scores[pid]
                if rnd:
                    s = rnd(s)
                if s > best[j]:
                    best[j], start_of[j], id_of[j] = s, i, pid
                if j == i + 1:
                    single = True
            j += 1
        if not single:
            s = base + unk_score
            if rnd:
                s = rnd(s)
            if s > best[i + 1]:
                best[i + 1], start_of[i + 1], id_of[i + 1] = s, i, unk_id
    path = []
    end = n
    while end > 0:
        path.append((start_of[end], end, id_of[end]))
        end = start_of[end]
    return path[::-1], best[n]


def path_pieces(model, text: str, path: Path) -> list[str]:
    """A path's pieces as strings (``model``: a `Unigram`); unknown runs merged, or spelled as bytes."""
    unk_id, byte_fallback = model.unk_id, model.byte_fallback
    out: list[str] = []
    prev_unk = False
    for start, end, pid in path:
        is_unk = pid == unk_id
        if is_unk and byte_fallback:
            out.extend(byte_piece(b) for b in text[start:end].encode("utf-8"))
        elif is_unk and prev_unk:
            out[-1] += text[start:end]
        else:
            out.append(text[start:end])
        prev_unk = is_unk
    return out


def path_ids(model, text: str, path: Path) -> list[int]:
    """A path's IDs (``model``: a `Unigram`); an unknown run is one ID, or its bytes' IDs."""
    unk_id, byte_fallback = model.unk_id, model.byte_fallback
    out: list[int] = []
    prev_unk = False
    for start, end, pid in path:
        is_unk = pid == unk_id
        if is_unk and byte_fallback:
            out.extend(model.token_to_id(byte_piece(b)) for b in text[start:end].encode("utf-8"))
        elif not (is_unk and prev_unk):
            out.append(pid)
        prev_unk = is_unk
    return out


def forward_log(edges: list[list[Edge]], n: int, theta: float = 1.0) -> list[float]:
    """The forward table in log space, edge scores scaled by ``theta`` (log-sum-exp per position).

    With ``theta=1`` must equal the logs of `reference_forward`'s table.
    """
    incoming: list[list[tuple[int, float]]] = [[] for _ in range(n + 1)]
    for i, here in enumerate(edges):
        for j, _pid, s in here:
            incoming[j].append((i, theta * s))
    alpha = [0.0] + [_NEG_INF] * n
    for j in range(1, n + 1):
        terms = [alpha[i] + s for i, s in incoming[j]]
        m = max(terms)
        alpha[j] = m + math.log(sum(math.exp(t - m) for t in terms))
    return alpha


def nbest_paths(table: PieceTable, text: str, n: int) -> list[tuple[Path, float]]:
    """The ``n`` best paths with their scores, best first (a k-best Viterbi).

    Every position keeps its ``n`` best partial paths. Equal scores are
    ordered like `best_path` breaks ties (earliest start of the last piece
    first), so the first result is always the Viterbi path.
    """
    size = len(text)
    incoming: list[list[tuple[int, int, float]]] = [[] for _ in range(size + 1)]
    for i, here in enumerate(text_edges(table, text)):
        for j, pid, s in here:
            incoming[j].append((i, pid, s))
    # kbest[j] = list of (score, start, rank in kbest[start], id), best first
    kbest: list[list[tuple[float, int, int, int]]] = [[(0.0, -1, -1, -1)]] + [[] for _ in range(size)]
    for j in range(1, size + 1):
        cands = [(prev[0] + s, i, r, pid) for i, pid, s in incoming[j] for r, prev in enumerate(kbest[i])]
        cands.sort(key=lambda c: (-c[0], c[1], c[2]))
        kbest[j] = cands[:n]
    results = []
    for score, i, r, pid in kbest[size]:
        path = []
        end = size
        while end > 0:
            path.append((i, end, pid))
            end = i
            _, i, r, pid = kbest[end][r]
        results.append((path[::-1], score))
    return results


def draw(weights: Sequence[float], rng: random.Random) -> int:
    """An index drawn with probability proportional to ``weights``."""
    u = rng.random() * sum(weights)
    acc = 0.0
    for idx, w in enumerate(weights):
        acc += w
        if u < acc:
            return idx
    return len(weights) - 1


def sample_paths(table: PieceTable, text: str, k: int, alpha: float, rng: random.Random) -> list[Path]:
    """``k`` paths drawn with probability ``∝ P(z) ** alpha`` (forward filtering, backward sampling).

    Forward filtering with scores scaled by ``alpha``, then a walk back from
    the end that picks the last piece with probability
    ``exp(fwd[start] + alpha * score - fwd[end])``.
    """
    n = len(text)
    edges = text_edges(table, text)
    fwd = forward_log(edges, n, alpha)
    incoming: list[list[tuple[int, int, float]]] = [[] for _ in range(n + 1)]
    for i, here in enumerate(edges):
        for j, pid, s in here:
            incoming[j].append((i, pid, s))
    out = []
    for _ in range(k):
        path = []
        end = n
        while end > 0:
            cands = incoming[end]
            weights = [math.exp(fwd[i] + alpha * s - fwd[end]) for i, _pid, s in cands]
            i, pid, _s = cands[draw(weights, rng)]
            path.append((i, end, pid))
            end = i
        out.append(path[::-1])
    return out


def text_expected_counts(table: PieceTable, words: Iterable[tuple[str, float]]) -> dict[int, float]:
    """Expected count of each piece ID under the posterior over segmentations (forward-backward).

    For every edge ``i -> j`` with piece ``z`` the posterior probability of
    using it is ``exp(alpha[i] + score(z) + beta[j] - log P(word))``; summing
    over edges gives each piece's expected count, times the word's count.
    """
    expected: dict[int, float] = {}
    for word, count in words:
        n = len(word)
        if n == 0:
            continue
        edges = text_edges(table, word)
        alpha = forward_log(edges, n)
        beta = [_NEG_INF] * n + [0.0]
        for i in range(n - 1, -1, -1):
            terms = [s + beta[j] for j, _pid, s in edges[i]]
            m = max(terms)
            beta[i] = m + math.log(sum(math.exp(t - m) for t in terms))
        log_z = alpha[n]
        for i, here in enumerate(edges):
            for j, pid, s in here:
                expected[pid] = expected.get(pid, 0.0) + count * math.exp(alpha[i] + s + beta[j] - log_z)
    return expected


# --------------------------------------------------------------------------
# Many lattices at once (numpy): the trainer's engine
# --------------------------------------------------------------------------


class Sweep:
    """Edges sorted for one direction of dynamic programming over many lattices.

    ``node`` is the node each edge updates (its end for a left-to-right sweep,
    its start for right-to-left), ``other`` the node it reads, ``depth`` the
    position of ``node`` inside its word. Edges are sorted by depth, and
    within a depth the edges of one node are contiguous (a *group*), with
    ``other`` increasing. All words advance together: one numpy step per
    depth updates that position in every word.
    """

    def __init__(self, node, other, pid, depth, reverse: bool) -> None:
        self.node, self.other, self.pid, self.depth, self.reverse = node, other, pid, depth, reverse
        n = len(node)
        flag = np.ones(n, dtype=bool)
        if n:
            flag[1:] = node[1:] != node[:-1]
        starts = np.flatnonzero(flag)
        self.group_node = node[starts]
        self.group_of = (np.cumsum(flag) - 1).astype(np.int64)
        top = int(depth.max()) if n else 0
        edge_bounds = np.searchsorted(depth, np.arange(top + 2))
        group_bounds = np.searchsorted(starts, edge_bounds)
        steps = []
        for d in range(top + 1):
            a, b = int(edge_bounds[d]), int(edge_bounds[d + 1])
            if a < b:
                ga, gb = int(group_bounds[d]), int(group_bounds[d + 1])
                steps.append((a, b, ga, gb, starts[ga:gb] - a))
        self.steps = steps[::-1] if reverse else steps

    def subset(self, mask) -> "Sweep":
        """The same sweep without the masked-out edges (order is kept, so no re-sorting)."""
        return Sweep(self.node[mask], self.other[mask], self.pid[mask], self.depth[mask], self.reverse)

    def logsumexp(self, values, edge_score) -> None:
        """values[node] = log sum over the node's edges of exp(values[other] + edge_score)."""
        for a, b, ga, gb, local in self.steps:
            v = values[self.other[a:b]] + edge_score[a:b]
            if b - a == gb - ga:  # one edge per node: nothing to add up
                values[self.group_node[ga:gb]] = v
                continue
            m = np.maximum.reduceat(v, local)
            e = np.exp(v - m[self.group_of[a:b] - ga])
            values[self.group_node[ga:gb]] = m + np.log(np.add.reduceat(e, local))

    def maximum(self, values, edge_score):
        """values[node] = max over edges of values[other] + edge_score; returns the argmax edge per node.

        Among equal maxima the first edge of the group wins, i.e. the
        smallest ``other``: for a left-to-right sweep the earliest start of
        the last piece, as in `Unigram.viterbi`.
        """
        back = np.full(len(values), -1, dtype=np.int64)
        big = np.iinfo(np.int64).max
        for a, b, ga, gb, local in self.steps:
            v = values[self.other[a:b]] + edge_score[a:b]
            nodes = self.group_node[ga:gb]
            if b - a == gb - ga:
                values[nodes] = v
                back[nodes] = np.arange(a, b)
                continue
            m = np.maximum.reduceat(v, local)
            hit = v == m[self.group_of[a:b] - ga]
            back[nodes] = np.minimum.reduceat(np.where(hit, np.arange(a, b), big), local)
            values[nodes] = m
        return back


class Lattice:
    """The lattices of many words as flat arrays: the trainer's engine.

    Node ``base[w] + k`` is position ``k`` of word ``w``; an edge ``(src,
    dst, pid)`` is an occurrence of piece ``pid`` from ``src`` to ``dst``.
    The edges are found once, by the same prefix-dict scan as
    `text_edges`; when pieces are pruned the lattice only drops edges
    (`keep`), it never scans text again. ``whole=False`` leaves out the edge
    spanning a whole word (used to find each piece's best *other*
    segmentation).
    """

    def __init__(self, words: Sequence[str], lookup: Mapping[str, int], *, whole: bool = True) -> None:

        lens = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
        self.n_words = len(words)
        self.start = np.zeros(len(words), dtype=np.int64)
        if len(words):
            self.start[1:] = np.cumsum(lens + 1)[:-1]
        self.end = self.start + lens
        n_nodes = int((lens + 1).sum())
        self.depth = np.arange(n_nodes, dtype=np.int64) - np.repeat(self.start, lens + 1)
        self.word_of = np.repeat(np.arange(len(words), dtype=np.int64), lens + 1)
        self.n_nodes = n_nodes
        flat = array("q")  # (src, dst, pid) triples
        add = flat.extend
        get = lookup.get
        for w, word in enumerate(words):
            base, n = int(self.start[w]), len(word)
            for i in range(n):
                for j in range(i + 1, n + 1):
                    p = get(word[i:j])
                    if p is None:
                        break
                    if p >= 0 and (whole or j - i < n):
                        add((base + i, base + j, p))
        triples = np.frombuffer(flat, dtype=np.int64).reshape(-1, 3)
        src, dst, pid = triples[:, 0], triples[:, 1], triples[:, 2]
        # Edges were found word by word, start by start: a stable sort by the
        # depth of the end (start) node leaves each node's edges contiguous and
        # ordered by their other end, which is what Sweep needs.
        d_dst, d_src = self.depth[dst], self.depth[src]
        fwd = np.argsort(d_dst, kind="stable")
        bwd = np.argsort(d_src, kind="stable")
        self.fwd = Sweep(dst[fwd], src[fwd], pid[fwd], d_dst[fwd], reverse=False)
        self.bwd = Sweep(src[bwd], dst[bwd], pid[bwd], d_src[bwd], reverse=True)

    @property
    def n_edges(self) -> int:
        return len(self.fwd.pid)

    def keep(self, alive) -> None:
        """Drop the edges of pieces no longer in the vocabulary (``alive[pid]`` false)."""
        mask = alive[self.fwd.pid]
        if not mask.all():
            self.fwd = self.fwd.subset(mask)
            self.bwd = self.bwd.subset(alive[self.bwd.pid])

    def forward_backward(self, logp, counts):
        """Expected count of every piece and log P(word) of every word (the E-step)."""
        f, b = self.fwd, self.bwd
        alpha = np.full(self.n_nodes, -np.inf)
        alpha[self.start] = 0.0
        f_score = logp[f.pid]
        f.logsumexp(alpha, f_score)
        beta = np.full(self.n_nodes, -np.inf)
        beta[self.end] = 0.0
        b.logsumexp(beta, logp[b.pid])
        log_z = alpha[self.end]
        if not np.isfinite(log_z).all():
            bad = int(np.flatnonzero(~np.isfinite(log_z))[0])
            raise ValueError(f"word #{bad} cannot be segmented with these pieces (a character has no piece)")
        words = self.word_of[f.node]
        post = np.exp(alpha[f.other] + f_score + beta[f.node] - log_z[words]) * counts[words]
        return np.bincount(f.pid, weights=post, minlength=len(logp)), log_z

    def viterbi(self, logp):
        """Best score of every word and its segmentation as ``(word index, piece id)`` pairs."""
        f = self.fwd
        best = np.full(self.n_nodes, -np.inf)
        best[self.start] = 0.0
        back = f.maximum(best, logp[f.pid])
        words, pieces = [], []
        cur = self.end.copy()
        idx = np.arange(self.n_words)
        live = cur != self.start
        cur, idx = cur[live], idx[live]
        while cur.size:
            e = back[cur]
            if (e < 0).any():
                raise ValueError("a word cannot be segmented with these pieces")
            words.append(idx)
            pieces.append(f.pid[e])
            cur = f.other[e]
            live = cur != self.start[idx]
            cur, idx = cur[live], idx[live]
        if not words:
            return best[self.end], np.zeros(0, np.int64), np.zeros(0, np.int64)
        return best[self.end], np.concatenate(words), np.concatenate(pieces)


def piece_lookup(pieces: Sequence[str], ids: Iterable[int] | None = None) -> dict[str, int]:
    """Prefix dict for `Lattice`: piece -> its index (or ``ids[k]``), other prefixes -> -1."""
    lookup: dict[str, int] = {}
    for i, piece in zip(range(len(pieces)) if ids is None else ids, pieces):
        for k in range(1, len(piece)):
            lookup.setdefault(piece[:k], -1)
        lookup[piece] = int(i)
    return lookup
