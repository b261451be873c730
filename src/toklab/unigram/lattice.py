"""The Unigram lattice: the dynamic programs over "position i to j is a piece" edges.

Everything a Unigram model computes is one of three dynamic programs over the *lattice* of a
string (an edge from ``i`` to ``j`` when ``x[i:j]`` is a piece): Viterbi (max-product) finds
the best segmentation, which is how text is encoded; forward (sum-product) gives ``P(x)``,
and forward-backward each piece's expected count, the E-step of training; forward-filtering
backward-sampling draws a segmentation with probability ``∝ P(z) ** alpha``.

Two engines run them, and both must equal the plain versions in `toklab.unigram.reference`:

* per text, in pure Python (`PieceTable`, `text_edges`, `best_path`, `forward_log`,
  `nbest_paths`, `sample_paths`, `text_expected_counts`), for `toklab.unigram.Unigram`;
  `best_path` adds scores in float32 when asked, as sentencepiece's C++ encoder does;
* for many words at once, in numpy (`Lattice`, `Sweep`, `substring_edges`), for the
  trainer: every word's lattice in flat arrays, found for all words at once and run
  one numpy step per position. Pruning only masks edges; it never rescans the text.
"""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "FLT_MIN", "round32", "PieceTable", "text_edges", "best_path", "forward_log", "nbest_paths", "sample_paths",
    "draw", "text_expected_counts", "Sweep", "Lattice", "code_points", "substring_edges", "piece_lookup",
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
    its start for right-to-left), ``other`` the node it reads; ``depth[v]`` is
    the position of node ``v`` inside its word. Edges are sorted by the depth
    of ``node``, and within a depth the edges of one node are contiguous (a
    *group*), with ``other`` increasing. All words advance together: one numpy
    step per depth updates that position in every word.
    """

    def __init__(self, node, other, pid, depth, reverse: bool) -> None:
        self.node, self.other, self.pid, self.depth, self.reverse = node, other, pid, depth, reverse
        n = len(node)
        flag = np.ones(n, dtype=bool)
        if n:
            flag[1:] = node[1:] != node[:-1]
        starts = np.flatnonzero(flag)
        self.group_node = node[starts]
        node_depth = depth[node]
        top = int(node_depth.max()) if n else 0
        edge_bounds = np.searchsorted(node_depth, np.arange(top + 2))
        group_bounds = np.searchsorted(starts, edge_bounds)
        steps = []  # per depth: edges a:b, groups ga:gb, each group's first edge and size
        for d in range(top + 1):
            a, b = int(edge_bounds[d]), int(edge_bounds[d + 1])
            if a < b:
                ga, gb = int(group_bounds[d]), int(group_bounds[d + 1])
                local = starts[ga:gb] - a
                steps.append((a, b, ga, gb, local, np.diff(local, append=b - a)))
        self.steps = steps[::-1] if reverse else steps

    def subset(self, mask) -> "Sweep":
        """The same sweep without the masked-out edges (order is kept, so no re-sorting)."""
        return Sweep(self.node[mask], self.other[mask], self.pid[mask], self.depth, self.reverse)

    def logsumexp(self, values, edge_score) -> None:
        """values[node] = log sum over the node's edges of exp(values[other] + edge_score)."""
        for a, b, ga, gb, local, size in self.steps:
            v = values[self.other[a:b]] + edge_score[a:b]
            if b - a == gb - ga:  # one edge per node: nothing to add up
                values[self.group_node[ga:gb]] = v
                continue
            m = np.maximum.reduceat(v, local)
            e = np.exp(v - np.repeat(m, size))
            values[self.group_node[ga:gb]] = m + np.log(np.add.reduceat(e, local))

    def maximum(self, values, edge_score):
        """values[node] = max over edges of values[other] + edge_score; returns the argmax edge per node.

        Among equal maxima the first edge of the group wins, i.e. the
        smallest ``other``: for a left-to-right sweep the earliest start of
        the last piece, as in `Unigram.viterbi`.
        """
        back = np.full(len(values), -1, dtype=np.int64)
        big = np.iinfo(np.int64).max
        for a, b, ga, gb, local, size in self.steps:
            v = values[self.other[a:b]] + edge_score[a:b]
            nodes = self.group_node[ga:gb]
            if b - a == gb - ga:
                values[nodes] = v
                back[nodes] = np.arange(a, b)
                continue
            m = np.maximum.reduceat(v, local)
            hit = v == np.repeat(m, size)
            back[nodes] = np.minimum.reduceat(np.where(hit, np.arange(a, b), big), local)
            values[nodes] = m
        return back


class Lattice:
    """The lattices of many words as flat arrays: the trainer's engine.

    Node ``start[w] + k`` is position ``k`` of word ``w``; an edge ``(src,
    dst, pid)`` is an occurrence of piece ``pid`` from ``src`` to ``dst``.
    ``lookup`` maps each piece to its ID (a `piece_lookup` prefix dict, whose
    ``-1`` entries are ignored, or a plain piece -> ID dict). The edges are
    exactly those `text_edges` finds word by word (every ``word[i:j]`` that is a
    piece), in the same order (word, start, end), found by `substring_edges`
    for all words at once; when pieces are pruned the lattice only drops edges
    (`keep`), it never scans text again. ``whole=False`` leaves out the edge
    spanning a whole word (used to find each piece's best *other*
    segmentation); ``backward=False`` builds no backward sweep (Viterbi only).
    """

    def __init__(self, words: Sequence[str], lookup: Mapping[str, int], *, whole=True, backward=True) -> None:
        codes, self.start, lens = code_points(words)
        self.n_words = len(words)
        self.end = self.start + lens
        self.n_nodes = n_nodes = int((lens + 1).sum())
        kind = np.int32 if n_nodes < 2**31 else np.int64
        self.depth = (np.arange(n_nodes, dtype=np.int64) - np.repeat(self.start, lens + 1)).astype(kind)
        self.word_of = np.repeat(np.arange(len(words), dtype=kind), lens + 1)
        src, dst, pid = substring_edges(codes, self.start, self.end, lookup, whole=whole, dtype=kind)
        # The edges come in (word, start, end) order: a stable sort by the depth of the end (start)
        # node leaves each node's edges contiguous and ordered by their other end, as Sweep needs.
        order = np.argsort(self.depth[dst], kind="stable")
        self.fwd = Sweep(dst[order], src[order], pid[order], self.depth, reverse=False)
        self.bwd = None  # backward=False: Viterbi only
        if backward:
            order = np.argsort(self.depth[src], kind="stable")
            node, other, pid = src[order], dst[order], pid[order]
            del src, dst, order
            self.bwd = Sweep(node, other, pid, self.depth, reverse=True)

    @property
    def n_edges(self) -> int:
        return len(self.fwd.pid)

    def keep(self, alive) -> None:
        """Drop the edges of pieces no longer in the vocabulary (``alive[pid]`` false)."""
        mask = alive[self.fwd.pid]
        if not mask.all():
            self.fwd = self.fwd.subset(mask)
            if self.bwd is not None:
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
        # post = exp(alpha[other] + score + beta[node] - log P(word)) * count, in place
        words = self.word_of[f.node]
        post = alpha[f.other]
        post += f_score
        del f_score
        post += beta[f.node]
        post -= log_z[words]
        np.exp(post, out=post)
        post *= counts[words]
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
            pieces.append(f.pid[e].astype(np.int64))
            cur = f.other[e].astype(np.int64)
            live = cur != self.start[idx]
            cur, idx = cur[live], idx[live]
        if not words:
            return best[self.end], np.zeros(0, np.int64), np.zeros(0, np.int64)
        return best[self.end], np.concatenate(words), np.concatenate(pieces)


def code_points(words: Sequence[str]):
    """The words end to end with a separator (0) between them, as code points: ``(codes, starts, lens)``.

    Position ``starts[w] + k`` is character ``k`` of word ``w``, and the lattice node where it starts.
    """
    lens = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
    starts = np.zeros(len(words), dtype=np.int64)
    if len(words):
        starts[1:] = np.cumsum(lens + 1)[:-1]
    data = "\0".join(words).encode("utf-32-le", "surrogatepass")
    return np.frombuffer(data, dtype=np.uint32).astype(np.int64), starts, lens


def substring_edges(codes, starts, ends, lookup: Mapping[str, int], *, whole: bool = True, dtype=np.int64):
    """``(src, dst, pid)``: every ``text[src:dst]`` that is a piece inside one word, sorted by ``(src, dst)``.

    ``codes``, ``starts``, ``ends``: the words as `code_points` lays them out.
    The same edges as `text_edges`' prefix scan, found length by length for every
    position at once: a position stays in play while its substring is a prefix of some
    piece. A substring is named by an exact integer key (the dense ID of its one-shorter
    prefix times a constant above every code point, plus its last code point), looked up
    among the pieces' prefix keys. ``dtype``: of the three arrays (nodes and IDs fit).
    """
    items = [(p, i) for p, i in lookup.items() if i >= 0 and p]
    empty = np.zeros(0, dtype=dtype)
    if not items or not len(codes):
        return empty, empty, empty
    p_codes, p_starts, p_lens = code_points([p for p, _ in items])
    p_ids = np.array([i for _, i in items], dtype=np.int64)
    base = np.int64(max(int(codes.max()), int(p_codes.max())) + 1)
    n, lens = len(codes), ends - starts
    end_of, start_of = np.repeat(ends, lens + 1)[:n], np.repeat(starts, lens + 1)[:n]  # the word at each position
    pos = np.ones(n, dtype=bool)
    pos[ends[:-1]] = False
    pos = np.flatnonzero(pos)  # positions whose substring of this length is a prefix of a piece
    t_key, p_live, p_key = codes[pos], np.arange(len(items)), p_codes[p_starts]
    found_src, found_len, found_pid = [], [], []
    length = 1
    while True:
        uniq, p_dense = np.unique(p_key, return_inverse=True)
        done = p_lens[p_live] == length
        piece_of = np.full(len(uniq), -1, dtype=np.int64)
        piece_of[p_dense[done]] = p_ids[p_live[done]]
        at = np.minimum(np.searchsorted(uniq, t_key), len(uniq) - 1)
        hit = uniq[at] == t_key
        pos, t_dense = pos[hit], at[hit]
        edge = piece_of[t_dense] >= 0
        if not whole:
            edge &= (pos != start_of[pos]) | (pos + length != end_of[pos])
        found_src.append(pos[edge].astype(dtype))
        found_len.append(np.full(int(edge.sum()), length, dtype=dtype))
        found_pid.append(piece_of[t_dense[edge]].astype(dtype))
        p_live, p_dense = p_live[~done], p_dense[~done]
        length += 1
        ok = pos + length <= end_of[pos]
        pos, t_dense = pos[ok], t_dense[ok]
        if not (p_live.size and pos.size):
            break
        p_key, t_key = p_dense * base + p_codes[p_starts[p_live] + length - 1], t_dense * base + codes[pos + length - 1]
    src, size, pid = np.concatenate(found_src), np.concatenate(found_len), np.concatenate(found_pid)
    del found_src, found_len, found_pid
    order = np.argsort(src, kind="stable")  # the levels were found shortest first: (src, dst) order
    src, size = src[order], size[order]
    size += src
    return src, size, pid[order]


def piece_lookup(pieces: Sequence[str], ids: Iterable[int] | None = None) -> dict[str, int]:
    """Prefix dict for `PieceTable` and `Lattice`: piece -> its index (or ``ids[k]``), other prefixes -> -1."""
    lookup: dict[str, int] = {}
    for i, piece in zip(range(len(pieces)) if ids is None else ids, pieces):
        for k in range(1, len(piece)):
            lookup.setdefault(piece[:k], -1)
        lookup[piece] = int(i)
    return lookup
