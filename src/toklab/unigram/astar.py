"""sentencepiece's n-best search, step for step: A* from the end of the lattice, its heap order included.

`toklab.unigram.lattice.nbest_paths` keeps the ``n`` best partial paths at every
position, which finds the right set of segmentations; but when two of them score the
same (the same pieces in another order, ``[--, -]`` and ``[-, --]``), which comes first
is decided, in sentencepiece (``Lattice::NBest``), by the order in which its search
pops equal scores off a heap. `nbest` reproduces that search exactly, so the n-best
lists equal ``sentencepiece``'s ``nbest_encode_as_ids``, order and all:

1. the lattice's nodes in sentencepiece's insertion order (by start; at one start, by
   length; the one-character unknown node last), scores in float32;
2. Viterbi over the lattice in float32 (`best_path`'s tie rule), which gives each node
   the exact best score from the start to its end, the A* heuristic;
3. a search from the end: a hypothesis is a partial path from the end back to some
   node, ``g`` its score so far, ``f = g + best score before it``; the hypothesis with
   the largest ``f`` is expanded into one hypothesis per node ending where it starts;
4. the agenda is a binary heap laid out as libstdc++'s ``std::priority_queue`` lays it
   out (`StdHeap`), so equal ``f`` pop in the same order; when it reaches 10,000
   entries it keeps the best ``min(512, 10 n)``, as sentencepiece does.
"""

from __future__ import annotations

from .lattice import Path, PieceTable, round32

__all__ = ["StdHeap", "nbest"]

_MAX_AGENDA = 10_000
_MIN_AGENDA = 512


class StdHeap:
    """A max-heap on ``key`` with the exact element moves of libstdc++'s ``push_heap`` and ``pop_heap``.

    Which of several equal keys comes out first depends only on those moves, so a search
    that pushes and pops in the same order as a C++ program gets its ties in the same order.
    """

    __slots__ = ("items", "key")

    def __init__(self, key) -> None:
        self.items: list = []
        self.key = key

    def __len__(self) -> int:
        return len(self.items)

    def push(self, value) -> None:
        heap, key = self.items, self.key
        heap.append(value)
        self._up(len(heap) - 1, 0, value, key(value))

    def _up(self, hole: int, top: int, value, value_key) -> None:
        heap, key = self.items, self.key
        parent = (hole - 1) // 2
        while hole > top and key(heap[parent]) < value_key:
            heap[hole] = heap[parent]
            hole = parent
            parent = (hole - 1) // 2
        heap[hole] = value

    def pop(self):
        heap, key = self.items, self.key
        top = heap[0]
        last = heap.pop()
        n = len(heap)
        if n:  # __adjust_heap: move the hole to a leaf along the larger children, then push `last` up
            hole = child = 0
            while child < (n - 1) // 2:
                child = 2 * (child + 1)
                if key(heap[child]) < key(heap[child - 1]):
                    child -= 1
                heap[hole] = heap[child]
                hole = child
            if n % 2 == 0 and child == (n - 2) // 2:
                child = 2 * (child + 1)
                heap[hole] = heap[child - 1]
                hole = child - 1
            self._up(hole, 0, last, key(last))
        return top


class _Hyp:
    __slots__ = ("node", "next", "f", "g")

    def __init__(self, node: int, nxt: "_Hyp | None", f: float, g: float) -> None:
        self.node, self.next, self.f, self.g = node, nxt, f, g


def _f(h: _Hyp) -> float:
    return h.f


def nbest(table: PieceTable, text: str, n: int) -> list[tuple[Path, float]]:
    """The ``n`` best paths, ``[(start, end, id), ...]`` with their float32 scores, in sentencepiece's order."""
    match, size = table.match, len(text)
    # Nodes: 0 is BOS, 1 is EOS; then as sentencepiece inserts them.
    start, end, ids, score = [0, size], [0, size], [-1, -1], [0.0, 0.0]
    ending: list[list[int]] = [[] for _ in range(size + 1)]
    beginning: list[list[int]] = [[] for _ in range(size + 1)]
    ending[0].append(0)
    beginning[size].append(1)
    for i in range(size):
        single = False
        for j in range(i + 1, size + 1):
            pid = match.get(text[i:j])
            if pid is None:
                break
            if pid >= 0:
                _node(start, end, ids, score, beginning, ending, i, j, pid, table.scores[pid])
                single = single or j == i + 1
        if not single:
            _node(start, end, ids, score, beginning, ending, i, i + 1, table.unk_id, table.unk_score)
    # Viterbi in float32: the best score from BOS to the end of every node.
    best = [0.0] * len(ids)
    for pos in range(size + 1):
        for r in beginning[pos]:
            top = None
            for left in ending[pos]:
                s = round32(best[left] + score[r])
                if top is None or s > top:
                    top = s
            best[r] = top
    agenda = StdHeap(_f)
    agenda.push(_Hyp(1, None, best[1], 0.0))
    results: list[tuple[Path, float]] = []
    while len(agenda):
        hyp = agenda.pop()
        if hyp.node == 0:
            path, h = [], hyp.next
            while h.next is not None:
                path.append((start[h.node], end[h.node], ids[h.node]))
                h = h.next
            results.append((path, hyp.f))
            if len(results) == n:
                break
            continue
        for left in ending[start[hyp.node]]:
            agenda.push(_Hyp(left, hyp, round32(best[left] + hyp.g), round32(score[left] + hyp.g)))
        if len(agenda) >= _MAX_AGENDA:
            kept = StdHeap(_f)
            for _ in range(min(_MIN_AGENDA, n * 10)):
                kept.push(agenda.pop())
            agenda = kept
    return results


def _node(start, end, ids, score, beginning, ending, i: int, j: int, pid: int, s: float) -> None:
    k = len(ids)
    start.append(i)
    end.append(j)
    ids.append(pid)
    score.append(round32(s))
    beginning[i].append(k)
    ending[j].append(k)
