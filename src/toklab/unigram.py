"""Unigram language-model tokenization: a probability for every piece, Viterbi to segment.

A Unigram model (Kudo, 2018) does not store merge rules. It stores a table of
pieces, each with a log-probability (its *score*), and says that a segmentation
``z = (z1, ..., zk)`` of a string has probability ``p(z1) * ... * p(zk)``. The
string itself has the *marginal* probability ``P(x)``, the sum over all of its
segmentations. Everything in this module is one of three dynamic programs over
the *lattice* of a string (position ``i`` to position ``j`` is an edge when
``x[i:j]`` is a piece):

* Viterbi (max-product) finds the single best segmentation: that is how text
  is encoded;
* the forward algorithm (sum-product) gives ``P(x)``; forward-backward gives
  each piece's *expected* count under the posterior over all segmentations,
  which is the E-step of training;
* forward-filtering backward-sampling draws a segmentation at random with
  probability proportional to ``P(z) ** alpha`` (subword regularization).

The module is organised like `toklab.bpe`:

* `segmentations`, `reference_forward`, `reference_viterbi`,
  `reference_expected_counts` and `reference_em_step` are the plain versions
  the book prints: enumeration and textbook loops over tiny examples.
* `Unigram` is the model object (pure Python; the lattice is found by looking
  up substrings in a dict of piece prefixes). `Unigram.expected_counts` is
  forward-backward per word and must equal `reference_expected_counts`.
* `train` is the trainer: seed vocabulary from frequent substrings, EM with
  forward-backward expected counts, pruning by estimated likelihood loss. Its
  inner loops run over all words at once with numpy (imported only when you
  train); `expected_counts` exposes its E-step, which must equal the other two.
* `compare_with_sentencepiece` trains ours and `sentencepiece`'s on the same
  lines and reports compression, likelihood and vocabulary overlap.

Text here is a plain string of symbols: whitespace escaping (``" "`` -> ``"▁"``)
and normalization belong to the SentencePiece-style front end, which calls
this model on strings that are already escaped.
"""

from __future__ import annotations

import math
import os
import random
import re
import struct
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "segmentations",
    "reference_forward",
    "reference_viterbi",
    "reference_expected_counts",
    "reference_em_step",
    "Unigram",
    "split_words",
    "seed_pieces",
    "expected_counts",
    "digamma",
    "train",
    "SentencePieceComparison",
    "compare_with_sentencepiece",
]

#: sentencepiece's meta symbol for a space (U+2581 LOWER ONE EIGHTH BLOCK).
SPACE = "\u2581"

#: sentencepiece scores an unknown character ``min_score - 10`` (``kUnkPenalty``
#: in ``unigram_model.cc``): worse than any real piece, so a character is only
#: unknown when no piece covers it.
UNK_PENALTY = 10.0

_NEG_INF = float("-inf")

_F32 = struct.Struct("<f")
_FLT_MIN = 1.1754943508222875e-38  # C++ FLT_MIN: the smallest positive normal float


def _round32(x: float) -> float:
    """``x`` rounded to the nearest single-precision float (what a C++ ``float`` stores).

    Adding two floats in double precision and rounding once to single gives
    exactly the single-precision sum (53 >= 2 * 24 + 2 bits, so the double
    rounding is harmless).
    """
    return _F32.unpack(_F32.pack(x))[0]


# --------------------------------------------------------------------------
# The textbook versions (tiny inputs only: enumeration is exponential)
# --------------------------------------------------------------------------


def segmentations(text: str, vocab: Iterable[str] | Mapping[str, Any]) -> Iterator[list[str]]:
    """Every way to cut ``text`` into pieces of ``vocab``, in lexicographic order of cut points.

    A string of length n has up to 2**(n-1) segmentations, so this is for
    checking the dynamic programs on small words, nothing else.
    """
    pieces = vocab if isinstance(vocab, (set, frozenset, Mapping)) else set(vocab)
    if not text:
        yield []
        return
    for end in range(1, len(text) + 1):
        if text[:end] in pieces:
            for rest in segmentations(text[end:], pieces):
                yield [text[:end], *rest]


def reference_forward(text: str, probs: Mapping[str, float]) -> list[float]:
    """The forward table in probability space: ``f[i]`` = P(text[:i]) summed over segmentations.

    ``f[0] = 1`` and ``f[i] = sum over j < i of f[j] * p(text[j:i])``. This is
    the table the book computes by hand; `Unigram.forward` is the same
    recursion in log space (products of many probabilities underflow).
    """
    f = [1.0] + [0.0] * len(text)
    for end in range(1, len(text) + 1):
        for start in range(end):
            piece = text[start:end]
            if piece in probs:
                f[end] += f[start] * probs[piece]
    return f


def reference_viterbi(text: str, scores: Mapping[str, float]) -> list[str]:
    """The best segmentation: maximise the sum of ``scores`` (log-probabilities).

    ``best[i]`` is the best score of any segmentation of ``text[:i]``. Ties go
    to the earliest start of the last piece (strict ``>`` while starts are
    tried left to right), which is sentencepiece's rule. Raises ValueError when
    some character is covered by no piece.
    """
    n = len(text)
    best = [0.0] + [_NEG_INF] * n
    back = [0] * (n + 1)
    for end in range(1, n + 1):
        for start in range(end):
            piece = text[start:end]
            if piece in scores and best[start] + scores[piece] > best[end]:
                best[end] = best[start] + scores[piece]
                back[end] = start
    if n and best[n] == _NEG_INF:
        raise ValueError(f"{text!r} cannot be segmented with these pieces")
    pieces = []
    end = n
    while end > 0:
        pieces.append(text[back[end] : end])
        end = back[end]
    return pieces[::-1]


def reference_expected_counts(
    word_counts: Mapping[str, float], probs: Mapping[str, float]
) -> dict[str, float]:
    """The E-step by brute force: how often each piece is used, averaged over all segmentations.

    Every segmentation of a word gets the posterior weight P(z) / P(word);
    a piece's expected count is the sum of those weights times the number of
    times it occurs in z, times the word's count. Taking only the single best
    segmentation instead would be *hard* (Viterbi) EM, a different algorithm.
    """
    expected: Counter = Counter()
    for word, count in word_counts.items():
        segs = list(segmentations(word, probs))
        weights = [math.prod(probs[p] for p in seg) for seg in segs]
        total = sum(weights)
        if total == 0:
            raise ValueError(f"{word!r} cannot be segmented with these pieces")
        for seg, weight in zip(segs, weights):
            for piece in seg:
                expected[piece] += count * weight / total
    return dict(expected)


def reference_em_step(word_counts: Mapping[str, float], probs: Mapping[str, float]) -> dict[str, float]:
    """One EM iteration: expected counts (E-step), then renormalise them (M-step).

    Returns the new probability of every piece in ``probs`` (0 for pieces no
    segmentation uses). This is plain maximum-likelihood EM; `train` uses
    sentencepiece's Bayesian variant (see `digamma`).
    """
    expected = reference_expected_counts(word_counts, probs)
    total = sum(expected.values())
    return {piece: expected.get(piece, 0.0) / total for piece in probs}


# --------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------

#: Entry kinds, named after sentencepiece's piece types. Only "normal" and
#: "user" pieces are ever matched against text.
KINDS = ("normal", "unknown", "control", "user", "byte", "unused")


def _byte_piece(b: int) -> str:
    return f"<0x{b:02X}>"


class Unigram:
    """A Unigram model: pieces with scores (log-probabilities), IDs, and the lattice algorithms.

    ``pieces`` maps each ordinary piece to its score, as a dict or a list of
    ``(piece, score)`` pairs. IDs are assigned in this order: ``unk_piece``
    (ID 0), ``special_tokens`` (control pieces: they get IDs but never match
    text), the 256 byte pieces ``<0x00>``..``<0xFF>`` when ``byte_fallback``,
    then ``pieces`` in the order given.

    Unknown characters (covered by no piece) follow sentencepiece: such a
    character becomes a one-character unknown piece scored ``min_score -
    unk_penalty``, where ``min_score`` is the lowest score of an ordinary
    piece; adjacent unknown characters are reported as one unknown piece.
    With ``byte_fallback`` each unknown character becomes its UTF-8 bytes
    instead.

    ``float32=True`` makes `viterbi`/`encode` add path scores in single
    precision, as sentencepiece's C++ encoder does. It matters only for exact
    ties: two segmentations with the same multiset of pieces (``[00, 0]`` and
    ``[0, 00]``) have equal scores in exact arithmetic, and which one wins is
    then decided by how each running sum rounds. `from_sentencepiece` turns it
    on so that segmentations match sentencepiece's token for token; otherwise
    sums are in double precision and ties go to the earliest start of the
    last piece.

    Segmentations are returned as lists of surface strings (like
    ``sentencepiece.encode(..., out_type=str)``), so ``"".join(pieces) == text``
    always; `encode` returns IDs, with the unknown ID for unknown runs.
    """

    def __init__(
        self,
        pieces: Mapping[str, float] | Iterable[tuple[str, float]],
        *,
        unk_piece: str = "<unk>",
        special_tokens: Sequence[str] = (),
        byte_fallback: bool = False,
        unk_penalty: float = UNK_PENALTY,
        float32: bool = False,
    ) -> None:
        items = list(pieces.items()) if isinstance(pieces, Mapping) else list(pieces)
        entries: list[tuple[str, float, str]] = [(unk_piece, 0.0, "unknown")]
        entries += [(s, 0.0, "control") for s in special_tokens]
        if byte_fallback:
            entries += [(_byte_piece(b), 0.0, "byte") for b in range(256)]
        for item in items:
            if not (isinstance(item, tuple) and len(item) == 2):
                raise TypeError(f"pieces must be (piece, score) pairs, got {item!r}")
            entries.append((item[0], item[1], "normal"))
        self._build(entries, unk_penalty=unk_penalty, byte_fallback=byte_fallback, float32=float32)

    @classmethod
    def from_probs(cls, probs: Mapping[str, float], **options) -> "Unigram":
        """A model from piece probabilities (scores are their natural logs)."""
        bad = [p for p, v in probs.items() if not v > 0]
        if bad:
            raise ValueError(f"probabilities must be > 0; got {bad[0]!r}: {probs[bad[0]]!r}")
        return cls({p: math.log(v) for p, v in probs.items()}, **options)

    @classmethod
    def _from_entries(
        cls,
        entries: Sequence[tuple[str, float, str]],
        *,
        byte_fallback: bool,
        unk_penalty: float = UNK_PENALTY,
        float32: bool = False,
    ) -> "Unigram":
        self = cls.__new__(cls)
        self._build(list(entries), unk_penalty=unk_penalty, byte_fallback=byte_fallback, float32=float32)
        return self

    def _build(
        self, entries: list[tuple[str, float, str]], *, unk_penalty: float, byte_fallback: bool, float32: bool
    ) -> None:
        self._vocab = [e[0] for e in entries]
        self._scores = [float(e[1]) for e in entries]
        self._kinds = [e[2] for e in entries]
        self._ids: dict[str, int] = {}
        for i, (piece, score, kind) in enumerate(entries):
            if not isinstance(piece, str) or not piece:
                raise ValueError(f"entry {i}: a piece must be a non-empty string, got {piece!r}")
            if kind not in KINDS:
                raise ValueError(f"entry {i}: unknown kind {kind!r}")
            if not math.isfinite(float(score)):
                raise ValueError(f"piece {piece!r} has a non-finite score {score!r}")
            if piece in self._ids:
                raise ValueError(f"piece {piece!r} appears twice (IDs {self._ids[piece]} and {i})")
            self._ids[piece] = i
        unks = [i for i, k in enumerate(self._kinds) if k == "unknown"]
        if len(unks) != 1:
            raise ValueError(f"a Unigram model needs exactly one unknown piece, found {len(unks)}")
        self.unk_id = unks[0]
        normal = [s for s, k in zip(self._scores, self._kinds) if k == "normal"]
        if not normal:
            raise ValueError("a Unigram model needs at least one ordinary piece")
        self.min_score = min(normal)
        self.max_score = max(normal)
        self.unk_penalty = float(unk_penalty)
        self.unk_score = self.min_score - self.unk_penalty
        self.float32 = bool(float32)
        if self.float32:
            self.unk_score = _round32(self.unk_score)
        self.byte_fallback = bool(byte_fallback)
        if byte_fallback and any(_byte_piece(b) not in self._ids for b in range(256)):
            raise ValueError("byte_fallback needs all 256 byte pieces <0x00>..<0xFF> in the vocabulary")
        # The score used inside the lattice. sentencepiece means to give a
        # user-defined piece len(utf8) * max_score - 0.1, but its max_score_
        # starts at FLT_MIN (the smallest *positive* float) and ordinary scores
        # are negative, so max_score_ stays ~1e-38 and the piece scores ~-0.1:
        # nearly free, chosen almost always. We reproduce that (checked against
        # sentencepiece in the tests).
        sp_max = max([_FLT_MIN, *normal])
        self._match_score = [
            (len(p.encode("utf-8")) * sp_max - 0.1) if k == "user" else s
            for p, s, k in zip(self._vocab, self._scores, self._kinds)
        ]
        # The lattice "trie": every prefix of a matchable piece maps to the
        # piece's ID if it is itself a piece, else to -1. Scanning text[i:j]
        # for growing j stops at the first substring that is no prefix at all.
        match: dict[str, int] = {}
        for i, (piece, kind) in enumerate(zip(self._vocab, self._kinds)):
            if kind in ("normal", "user"):
                for k in range(1, len(piece)):
                    match.setdefault(piece[:k], -1)
                match[piece] = i
        self._match = match

    # ---- vocabulary ---------------------------------------------------------

    def __len__(self) -> int:
        return len(self._vocab)

    def __contains__(self, piece: object) -> bool:
        return piece in self._ids

    def __repr__(self) -> str:
        n = sum(k == "normal" for k in self._kinds)
        return f"Unigram({len(self)} entries, {n} ordinary pieces, unk={self.unk_piece!r})"

    @property
    def unk_piece(self) -> str:
        return self._vocab[self.unk_id]

    @property
    def vocab(self) -> list[str]:
        """All entries, index = ID."""
        return list(self._vocab)

    @property
    def pieces(self) -> dict[str, float]:
        """The ordinary pieces and their scores, in ID order."""
        return {p: s for p, s, k in zip(self._vocab, self._scores, self._kinds) if k == "normal"}

    def kind(self, piece_or_id: str | int) -> str:
        """``"normal"``, ``"unknown"``, ``"control"``, ``"user"``, ``"byte"`` or ``"unused"``."""
        i = piece_or_id if isinstance(piece_or_id, int) else self._lookup(piece_or_id)
        return self._kinds[self._check_id(i)]

    def score(self, piece: str) -> float:
        """The stored score of ``piece``; KeyError if it is not in the vocabulary."""
        return self._scores[self._lookup(piece)]

    def piece_to_id(self, piece: str) -> int:
        """The ID of ``piece``, or the unknown ID if it is not in the vocabulary (sentencepiece's rule)."""
        return self._ids.get(piece, self.unk_id)

    def id_to_piece(self, i: int) -> str:
        return self._vocab[self._check_id(i)]

    def _lookup(self, piece: str) -> int:
        try:
            return self._ids[piece]
        except KeyError:
            raise KeyError(f"piece {piece!r} is not in the vocabulary ({len(self)} entries)") from None

    def _check_id(self, i: int) -> int:
        if not isinstance(i, int) or not 0 <= i < len(self._vocab):
            raise IndexError(f"ID {i!r} is out of range: valid IDs are 0..{len(self._vocab) - 1}")
        return i

    def log_prob(self, pieces: Sequence[str]) -> float:
        """Score of one segmentation: the sum of its pieces' lattice scores.

        A piece not in the vocabulary counts as unknown characters, one
        ``unk_score`` per character (what the lattice would charge for it).
        """
        total = 0.0
        for p in pieces:
            i = self._match.get(p, -1)
            total += self._match_score[i] if i >= 0 else self.unk_score * len(p)
        return total

    # ---- the lattice --------------------------------------------------------

    def _edges(self, text: str) -> list[list[tuple[int, int, float]]]:
        """``edges[i]`` = every ``(end, id, score)`` of a piece starting at ``i``, by increasing end.

        A position where no one-character piece starts also gets a
        one-character unknown edge, so every string has a segmentation.
        """
        match, scores, n = self._match, self._match_score, len(text)
        out: list[list[tuple[int, int, float]]] = []
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
                here.insert(0, (i + 1, self.unk_id, self.unk_score))
            out.append(here)
        return out

    def _best_path(self, text: str) -> tuple[list[tuple[int, int, int]], float]:
        """Viterbi over the lattice: ``[(start, end, id), ...]`` and its score.

        Same loop order and tie rule as sentencepiece's optimized encoder:
        starts left to right, and a later candidate replaces the current best
        only if strictly better, so ties go to the earliest start of the last
        piece (the longest final piece). Must equal `reference_viterbi`
        wherever every character is covered (in double precision).
        """
        match, scores, n = self._match, self._match_score, len(text)
        unk_id, unk_score = self.unk_id, self.unk_score
        rnd = _round32 if self.float32 else None
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

    def _surfaces(self, text: str, path: Sequence[tuple[int, int, int]]) -> list[str]:
        """Pieces as strings; runs of unknown characters merged (or spelled as bytes)."""
        out: list[str] = []
        prev_unk = False
        for start, end, pid in path:
            is_unk = pid == self.unk_id
            if is_unk and self.byte_fallback:
                out.extend(_byte_piece(b) for b in text[start:end].encode("utf-8"))
            elif is_unk and prev_unk:
                out[-1] += text[start:end]
            else:
                out.append(text[start:end])
            prev_unk = is_unk
        return out

    def _ids_of(self, text: str, path: Sequence[tuple[int, int, int]]) -> list[int]:
        out: list[int] = []
        prev_unk = False
        for start, end, pid in path:
            is_unk = pid == self.unk_id
            if is_unk and self.byte_fallback:
                out.extend(self._ids[_byte_piece(b)] for b in text[start:end].encode("utf-8"))
            elif not (is_unk and prev_unk):
                out.append(pid)
            prev_unk = is_unk
        return out

    # ---- inference ----------------------------------------------------------

    def viterbi(self, text: str) -> list[str]:
        """The most probable segmentation of ``text`` (how the model encodes it)."""
        return self._surfaces(text, self._best_path(text)[0])

    def encode(self, text: str) -> list[int]:
        """IDs of the Viterbi segmentation (a run of unknown characters is one unknown ID)."""
        return self._ids_of(text, self._best_path(text)[0])

    def forward(self, text: str, *, log: bool = True) -> list[float]:
        """The forward table: entry ``i`` is P(text[:i]) summed over all segmentations.

        Natural logs by default (``log=False`` exponentiates). Entry 0 is the
        empty prefix (log 1 = 0); the last entry is the marginal likelihood.
        Same recursion as `reference_forward`, summed with log-sum-exp.
        """
        alpha = self._forward_log(self._edges(text), len(text), 1.0)
        return alpha if log else [math.exp(a) for a in alpha]

    @staticmethod
    def _forward_log(edges: list[list[tuple[int, int, float]]], n: int, theta: float) -> list[float]:
        # Collect incoming edges per end position, then log-sum-exp them.
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

    def marginal_likelihood(self, text: str, *, log: bool = True) -> float:
        """P(text), summed over every segmentation (natural log by default)."""
        value = self.forward(text)[-1]
        return value if log else math.exp(value)

    def nbest(self, text: str, n: int) -> list[tuple[list[str], float]]:
        """The ``n`` most probable segmentations with their scores, best first.

        A k-best Viterbi: every position keeps its ``n`` best partial paths.
        Equal scores are ordered like `viterbi` breaks ties (earliest start of
        the last piece first), so the first result is always the Viterbi one.
        """
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        size = len(text)
        edges = self._edges(text)
        incoming: list[list[tuple[int, int, float]]] = [[] for _ in range(size + 1)]
        for i, here in enumerate(edges):
            for j, pid, s in here:
                incoming[j].append((i, pid, s))
        # kbest[j] = list of (score, start, rank in kbest[start], id), best first
        kbest: list[list[tuple[float, int, int, int]]] = [[(0.0, -1, -1, -1)]] + [[] for _ in range(size)]
        for j in range(1, size + 1):
            cands = [
                (prev[0] + s, i, r, pid)
                for i, pid, s in incoming[j]
                for r, prev in enumerate(kbest[i])
            ]
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
            results.append((self._surfaces(text, path[::-1]), score))
        return results

    def sample(
        self,
        text: str,
        *,
        alpha: float = 1.0,
        nbest_size: int = -1,
        seed: int | random.Random | None = None,
    ) -> list[str]:
        """One segmentation drawn with probability proportional to ``P(z) ** alpha``.

        ``alpha`` is an inverse temperature: large values concentrate on the
        Viterbi segmentation, 0 makes every segmentation equally likely.
        ``nbest_size`` follows sentencepiece: negative samples from all
        segmentations (forward-filtering backward-sampling), 0 or 1 returns
        the Viterbi segmentation, ``n > 1`` samples among the ``n`` best.
        ``seed`` is an int (same seed, same sample) or a `random.Random` to
        draw from (use one generator to draw many different samples).
        """
        return self.samples(text, 1, alpha=alpha, nbest_size=nbest_size, seed=seed)[0]

    def samples(
        self,
        text: str,
        k: int,
        *,
        alpha: float = 1.0,
        nbest_size: int = -1,
        seed: int | random.Random | None = None,
    ) -> list[list[str]]:
        """``k`` independent draws of `sample` (the lattice and tables are built once)."""
        if not isinstance(nbest_size, int):
            raise TypeError(f"nbest_size must be an int, got {nbest_size!r}")
        if not math.isfinite(alpha) or alpha < 0:
            raise ValueError(f"alpha must be a finite number >= 0, got {alpha!r}")
        rng = seed if isinstance(seed, random.Random) else random.Random(seed)
        if nbest_size in (0, 1):
            return [self.viterbi(text) for _ in range(k)]
        if nbest_size > 1:
            best = self.nbest(text, nbest_size)
            top = max(s for _, s in best)
            weights = [math.exp(alpha * (s - top)) for _, s in best]
            return [list(best[self._draw(weights, rng)][0]) for _ in range(k)]
        # Forward filtering with scores scaled by alpha, then walk back from the
        # end, choosing the last piece with probability
        # exp(fwd[start] + alpha * score - fwd[end]).
        n = len(text)
        edges = self._edges(text)
        fwd = self._forward_log(edges, n, alpha)
        incoming: list[list[tuple[int, int]]] = [[] for _ in range(n + 1)]
        for i, here in enumerate(edges):
            for j, pid, _s in here:
                incoming[j].append((i, pid))
        scores = self._match_score
        out = []
        for _ in range(k):
            path = []
            end = n
            while end > 0:
                cands = incoming[end]
                weights = [
                    math.exp(fwd[i] + alpha * (self.unk_score if pid == self.unk_id else scores[pid]) - fwd[end])
                    for i, pid in cands
                ]
                i, pid = cands[self._draw(weights, rng)]
                path.append((i, end, pid))
                end = i
            out.append(self._surfaces(text, path[::-1]))
        return out

    @staticmethod
    def _draw(weights: Sequence[float], rng: random.Random) -> int:
        u = rng.random() * sum(weights)
        acc = 0.0
        for idx, w in enumerate(weights):
            acc += w
            if u < acc:
                return idx
        return len(weights) - 1

    def expected_counts(self, words: str | Mapping[str, float]) -> dict[str, float]:
        """Expected piece counts under the posterior over segmentations (forward-backward).

        ``words`` is one string or a mapping ``word -> count``. For every edge
        ``i -> j`` with piece ``z`` the posterior probability of using it is
        ``exp(alpha[i] + score(z) + beta[j] - log P(word))``; summing over
        edges gives each piece's expected count. Unknown edges are counted
        under the unknown piece. Must equal `reference_expected_counts`.
        """
        items = {words: 1.0}.items() if isinstance(words, str) else words.items()
        expected: dict[str, float] = {}
        for word, count in items:
            n = len(word)
            if n == 0:
                continue
            edges = self._edges(word)
            alpha = self._forward_log(edges, n, 1.0)
            beta = [_NEG_INF] * n + [0.0]
            for i in range(n - 1, -1, -1):
                terms = [s + beta[j] for j, _pid, s in edges[i]]
                m = max(terms)
                beta[i] = m + math.log(sum(math.exp(t - m) for t in terms))
            log_z = alpha[n]
            for i, here in enumerate(edges):
                for j, pid, s in here:
                    piece = self._vocab[pid]
                    expected[piece] = expected.get(piece, 0.0) + count * math.exp(alpha[i] + s + beta[j] - log_z)
        return expected

    # ---- interop --------------------------------------------------------------

    @classmethod
    def from_sentencepiece(cls, model: Any) -> "Unigram":
        """Load a sentencepiece Unigram model: a ``SentencePieceProcessor``, a path, or proto bytes.

        Pieces, scores (float32, exactly as stored), IDs and piece types are
        read from the serialized model, so user-defined pieces are recognised
        (the Python API cannot tell them from ordinary ones). Raises
        ValueError for a BPE/char/word model.
        """
        if isinstance(model, (bytes, bytearray)):
            blob = bytes(model)
        elif isinstance(model, (str, os.PathLike)):
            with open(model, "rb") as fh:
                blob = fh.read()
        elif hasattr(model, "serialized_model_proto"):
            blob = model.serialized_model_proto()
        else:
            raise TypeError(f"expected a SentencePieceProcessor, a path or bytes, got {type(model).__name__}")
        # The SentencePiece front end owns the model-file reader (imported here, not at
        # module level, because that module imports this one).
        from .sentencepiece import parse_model_proto

        pieces, config = parse_model_proto(blob)
        if config.model_type != "unigram":
            raise ValueError(f"not a Unigram model (model_type={config.model_type})")
        entries = [(p.piece, p.score, p.kind) for p in pieces]
        return cls._from_entries(entries, byte_fallback=config.byte_fallback, float32=True)


# --------------------------------------------------------------------------
# Training: words, seed vocabulary
# --------------------------------------------------------------------------

_WORD = re.compile("\u2581[^\u2581]*|[^\u2581]+")


def split_words(sentence: str) -> list[str]:
    """Cut an escaped sentence before every ``▁``: sentencepiece's ``split_by_whitespace``.

    ``"ab▁cd▁▁e"`` -> ``["ab", "▁cd", "▁", "▁e"]``. A piece can then hold
    ``▁`` only as its first character, so no piece spans two words.
    """
    return _WORD.findall(sentence)


def _word_counts(
    source: str | Iterable[str] | Mapping[str, int], split: Callable[[str], Iterable[str]] | None
) -> Counter:
    """Distinct words and their counts from text, sentences, or a ready word-count mapping."""
    counts: Counter = Counter()
    if isinstance(source, Mapping):
        for word, c in source.items():
            if not isinstance(word, str):
                raise TypeError(f"word counts must map str to int, got key {word!r}")
            if not (isinstance(c, int) and c >= 0):
                raise ValueError(f"count of {word!r} must be an integer >= 0, got {c!r}")
            if word and c:
                counts[word] += c
        return counts
    sentences = source.split("\n") if isinstance(source, str) else source
    for sentence in sentences:
        if not isinstance(sentence, str):
            raise TypeError(f"training sentences must be str, got {type(sentence).__name__}")
        counts.update(w for w in (split(sentence) if split else [sentence]) if w)
    return counts


def seed_pieces(
    word_counts: Mapping[str, int],
    *,
    max_piece_length: int = 16,
    seed_size: int = 1_000_000,
) -> dict[str, float]:
    """The initial, oversized vocabulary: every character plus the most frequent substrings.

    Candidates are the substrings of length 2..``max_piece_length`` that
    occur at least twice (counted inside words, weighted by word count).
    Like sentencepiece's suffix-array seed, a candidate that is always
    followed by the same character (``"Pytho"`` when every occurrence is in
    ``"Python"``) is skipped: its longer extension has the same count and
    covers more. The ``seed_size`` candidates with the largest
    ``count * length`` (characters they cover) are kept, ties broken by the
    piece itself, and every character is added. Returns initial scores:
    ``log(value / total)`` with value = count for a character and
    count * length for a longer piece.

    Counting is level by level (apriori): a substring of length ``l`` can only
    occur twice if both its length ``l - 1`` prefix and suffix do, so only
    those positions are extended. This avoids counting the millions of
    substrings that occur once.
    """
    if max_piece_length < 1:
        raise ValueError(f"max_piece_length must be >= 1, got {max_piece_length}")
    items = sorted((w, c) for w, c in word_counts.items() if w and c > 0)
    chars: Counter = Counter()
    for w, c in items:
        for ch in w:
            chars[ch] += c
    # positions[w] = starts i where w[i:i+l] occurs at least twice (current level l)
    positions = [[i for i, ch in enumerate(w) if chars[ch] >= 2] for w, _ in items]
    found: dict[str, int] = {}
    prev_level: dict[str, int] = {ch: n for ch, n in chars.items() if n >= 2}
    for length in range(2, max_piece_length + 1):
        level: Counter = Counter()
        candidates = []
        for (w, c), pos in zip(items, positions):
            ok = set(pos)
            here = [i for i in pos if i + 1 in ok and i + length <= len(w)]
            for i in here:
                level[w[i : i + length]] += c
            candidates.append(here)
        frequent = {s: n for s, n in level.items() if n >= 2}
        if not frequent:
            break
        # Drop the previous level's strings that never branch to the right.
        if length > 2:
            best_ext: dict[str, int] = {}
            for s, n in frequent.items():
                if n > best_ext.get(s[:-1], 0):
                    best_ext[s[:-1]] = n
            for s, n in prev_level.items():
                if best_ext.get(s, 0) == n:
                    found.pop(s, None)
        found.update(frequent)
        prev_level = frequent
        positions = [
            [i for i in here if w[i : i + length] in frequent] for (w, _), here in zip(items, candidates)
        ]
    ranked = sorted(found.items(), key=lambda kv: (-kv[1] * len(kv[0]), kv[0]))[:seed_size]
    values = {ch: float(n) for ch, n in sorted(chars.items(), key=lambda kv: (-kv[1], kv[0]))}
    values.update((s, float(n * len(s))) for s, n in ranked)
    log_total = math.log(sum(values.values())) if values else 0.0
    return {p: math.log(v) - log_total for p, v in values.items()}


# --------------------------------------------------------------------------
# Training: many lattices at once (numpy)
# --------------------------------------------------------------------------


def _np():
    try:
        import numpy
    except ImportError as exc:  # numpy is a book dependency, not a package one
        raise ImportError("Unigram training needs numpy: pip install numpy") from exc
    return numpy


def digamma(x: float) -> float:
    """The digamma function psi(x) = d/dx log Gamma(x), for x > 0.

    Recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic
    series. sentencepiece's M-step uses it in place of the log (see `train`).
    """
    if not x > 0:
        raise ValueError(f"digamma needs x > 0, got {x!r}")
    result = 0.0
    while x < 10:
        result -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    return result + math.log(x) - 0.5 / x - inv2 * (
        1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132)))
    )


def _digamma_array(x):
    """`digamma` on a numpy array (same recurrence and series)."""
    np = _np()
    x = np.array(x, dtype=np.float64)
    result = np.zeros_like(x)
    small = x < 10
    while small.any():
        result[small] -= 1.0 / x[small]
        x[small] += 1.0
        small = x < 10
    inv2 = 1.0 / (x * x)
    return result + np.log(x) - 0.5 / x - inv2 * (
        1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132)))
    )


class _Sweep:
    """Edges sorted for one direction of dynamic programming over many lattices.

    ``node`` is the node each edge updates (its end for a left-to-right sweep,
    its start for right-to-left), ``other`` the node it reads, ``depth`` the
    position of ``node`` inside its word. Edges are sorted by depth, and
    within a depth the edges of one node are contiguous (a *group*), with
    ``other`` increasing. All words advance together: one numpy step per
    depth updates that position in every word.
    """

    def __init__(self, node, other, pid, depth, reverse: bool) -> None:
        np = _np()
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

    def subset(self, mask) -> "_Sweep":
        """The same sweep without the masked-out edges (order is kept, so no re-sorting)."""
        return _Sweep(self.node[mask], self.other[mask], self.pid[mask], self.depth[mask], self.reverse)

    def logsumexp(self, values, edge_score) -> None:
        """values[node] = log sum over the node's edges of exp(values[other] + edge_score)."""
        np = _np()
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
        np = _np()
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


class _Lattice:
    """The lattices of many words as flat arrays: the trainer's engine.

    Node ``base[w] + k`` is position ``k`` of word ``w``; an edge ``(src,
    dst, pid)`` is an occurrence of piece ``pid`` from ``src`` to ``dst``.
    The edges are found once, by the same prefix-dict scan as
    `Unigram._edges`; when pieces are pruned the lattice only drops edges
    (`keep`), it never scans text again. ``whole=False`` leaves out the edge
    spanning a whole word (used to find each piece's best *other*
    segmentation).
    """

    def __init__(self, words: Sequence[str], lookup: Mapping[str, int], *, whole: bool = True) -> None:
        np = _np()
        from array import array

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
        # ordered by their other end, which is what _Sweep needs.
        d_dst, d_src = self.depth[dst], self.depth[src]
        fwd = np.argsort(d_dst, kind="stable")
        bwd = np.argsort(d_src, kind="stable")
        self.fwd = _Sweep(dst[fwd], src[fwd], pid[fwd], d_dst[fwd], reverse=False)
        self.bwd = _Sweep(src[bwd], dst[bwd], pid[bwd], d_src[bwd], reverse=True)

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
        np = _np()
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
        np = _np()
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


def _lookup(pieces: Sequence[str], ids: Iterable[int] | None = None) -> dict[str, int]:
    """Prefix dict for `_Lattice`: piece -> its index (or ``ids[k]``), other prefixes -> -1."""
    lookup: dict[str, int] = {}
    for i, piece in zip(range(len(pieces)) if ids is None else ids, pieces):
        for k in range(1, len(piece)):
            lookup.setdefault(piece[:k], -1)
        lookup[piece] = int(i)
    return lookup


def expected_counts(word_counts: Mapping[str, float], scores: Mapping[str, float]) -> dict[str, float]:
    """The trainer's E-step on its own: expected piece counts by batched forward-backward.

    ``scores`` are log-probabilities. The result equals
    `reference_expected_counts` (enumeration) and `Unigram.expected_counts`
    (per-word loops) up to rounding; pieces with expected count 0 are left out.
    """
    np = _np()
    names = list(scores)
    words = [w for w, c in word_counts.items() if w and c]
    lattice = _Lattice(words, _lookup(names))
    counts = np.array([float(word_counts[w]) for w in words])
    expected, _ = lattice.forward_backward(np.array([float(scores[p]) for p in names]), counts)
    return {p: float(e) for p, e in zip(names, expected) if e > 0}


# --------------------------------------------------------------------------
# Training: EM and pruning
# --------------------------------------------------------------------------

#: sentencepiece drops a piece whose expected count falls below this in the M-step.
MIN_EXPECTED_COUNT = 0.5


def train(
    source: str | Iterable[str] | Mapping[str, int],
    vocab_size: int,
    *,
    max_piece_length: int = 16,
    seed_size: int = 1_000_000,
    em_iters: int = 2,
    shrink: float = 0.75,
    required_chars: Iterable[str] = (),
    protected: Iterable[str] = (),
    special_tokens: Sequence[str] = (),
    unk_piece: str = "<unk>",
    byte_fallback: bool = False,
    split: Callable[[str], Iterable[str]] | None = split_words,
    bayesian: bool = True,
    history: list | None = None,
    progress: bool = False,
) -> Unigram:
    """Train a Unigram model with ``vocab_size`` entries, the way sentencepiece does.

    ``source`` is escaped text (a string is cut into lines), an iterable of
    escaped sentences, or a mapping ``word -> count``. Sentences are cut into
    words by ``split`` (default `split_words`: before every ``▁``; ``None``
    keeps each sentence whole); no piece crosses a word boundary.

    ``vocab_size`` counts every entry: the unknown piece, ``special_tokens``
    (control pieces), the 256 byte pieces if ``byte_fallback``, and the
    ordinary pieces. Always kept: every character of the corpus, each of
    ``required_chars`` and each of ``protected`` (pieces that take part in EM
    but are never pruned). ValueError if those alone exceed ``vocab_size``.
    If the corpus cannot fill the vocabulary the model is smaller (check
    ``len(model)``).

    The algorithm (sentencepiece's ``unigram_model_trainer.cc``):

    1. Seed: every character plus up to ``seed_size`` frequent substrings
       (`seed_pieces`).
    2. ``em_iters`` EM iterations. The E-step computes each piece's
       *expected* count over all segmentations of every word
       (forward-backward, `expected_counts`), not its count in the best
       segmentation (that would be hard, Viterbi EM). The M-step drops pieces
       expected fewer than 0.5 times and, with ``bayesian`` (the default, as
       in sentencepiece), sets ``score = digamma(count) - digamma(total)``
       instead of ``log(count / total)``: a variational-Bayes update with a
       sparse prior that favours removing rare pieces. ``bayesian=False``
       gives textbook maximum-likelihood EM.
    3. If more than ``1.1 * vocab_size`` pieces remain, prune: segment every
       word with Viterbi, count each piece's uses ``freq``, and estimate for
       each piece the loss in corpus log-likelihood if it were removed and
       each of its uses replaced by its best segmentation into other pieces
       (which get its count added). Pieces never used, or whose own best
       segmentation is not themselves, go; of the rest, the
       ``shrink`` fraction with the largest loss is kept. Back to 2.
    4. Keep the characters and the best-scoring pieces up to ``vocab_size``.

    Deterministic: no randomness, ties broken by the piece string, nothing
    depends on hash order. ``history``, if given, receives one dict per EM
    iteration (``round``, ``em_iter``, ``pieces`` left after its M-step,
    ``log_likelihood``: the corpus's marginal log-likelihood under the scores
    its E-step used) and one per pruning step (``round``, ``pruned_to``).
    """
    np = _np()
    if not isinstance(vocab_size, int) or vocab_size < 1:
        raise ValueError(f"vocab_size must be a positive integer, got {vocab_size!r}")
    if not isinstance(em_iters, int) or em_iters < 1:
        raise ValueError(f"em_iters must be an integer >= 1, got {em_iters!r}")
    if not 0 < shrink < 1:
        raise ValueError(f"shrink must be between 0 and 1 (exclusive), got {shrink!r}")
    specials = list(dict.fromkeys(special_tokens))
    protected = list(dict.fromkeys(protected))
    for piece in protected:
        if not isinstance(piece, str) or not piece:
            raise ValueError(f"protected pieces must be non-empty strings, got {piece!r}")
    required = sorted(set(required_chars))
    for ch in required:
        if len(ch) != 1:
            raise ValueError(f"required_chars must be single characters, got {ch!r}")
    meta = [unk_piece, *specials] + ([_byte_piece(b) for b in range(256)] if byte_fallback else [])
    clash = sorted(set(meta) & (set(protected) | set(required)))
    if clash or len(set(meta)) != len(meta):
        raise ValueError(f"the unknown piece, special tokens and byte pieces must be distinct from each other "
                         f"and from protected pieces; clash: {clash or 'duplicate special token'}")

    counts = _word_counts(source, split)
    if not counts:
        raise ValueError("no text to train on: the corpus is empty")
    seed = seed_pieces(counts, max_piece_length=max_piece_length, seed_size=seed_size)
    chars = [p for p in seed if len(p) == 1]
    keep_always = list(dict.fromkeys([*chars, *required, *protected]))
    n_target = vocab_size - len(meta)
    if n_target < len(keep_always):
        raise ValueError(
            f"vocab_size={vocab_size} is too small: {len(meta)} reserved entries (the unknown piece, "
            f"special tokens: {len(specials)}{', byte pieces: 256' if byte_fallback else ''}) plus "
            f"{len(keep_always)} pieces that are always kept ({len(chars)} characters of the corpus, "
            f"required characters and protected pieces) need vocab_size >= {len(meta) + len(keep_always)}"
        )

    # Pieces get fixed indices for the whole run; "alive" marks the current vocabulary.
    names = list(seed)
    floor = min(seed.values())
    for piece in [*protected, *required]:
        if piece not in seed:
            names.append(piece)
    logp = np.array([seed.get(p, floor) for p in names], dtype=np.float64)
    is_protected = np.zeros(len(names), dtype=bool)
    index = {p: i for i, p in enumerate(names)}
    is_protected[[index[p] for p in keep_always]] = True
    alive = np.ones(len(names), dtype=bool)
    lengths = np.fromiter((len(p) for p in names), dtype=np.int64, count=len(names))

    words = sorted(counts)
    word_count = np.array([float(counts[w]) for w in words])
    lattice = _Lattice(words, _lookup(names))
    desired = int(vocab_size * 1.1)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(desc="Unigram EM", unit="round")
    step = 0
    while True:
        step += 1
        for it in range(em_iters):
            expected, log_z = lattice.forward_backward(logp, word_count)
            logp, alive = _m_step(expected, alive, is_protected, bayesian)
            lattice.keep(alive)
            if history is not None:
                history.append({"round": step, "em_iter": it + 1, "pieces": int(alive.sum()),
                                "log_likelihood": float(word_count @ log_z)})
        n_alive = int(alive.sum())
        if bar is not None:
            bar.update(1)
            bar.set_postfix(pieces=n_alive)
        if n_alive <= desired:
            break
        alive = _prune(lattice, names, logp, alive, is_protected, lengths, word_count,
                       max(desired, int(shrink * n_alive)))
        logp = np.where(alive, logp, -np.inf)
        lattice.keep(alive)
        if history is not None:
            history.append({"round": step, "pruned_to": int(alive.sum())})
    if bar is not None:
        bar.close()

    # Final cut: the always-kept pieces, then the best scores (ties: the piece string).
    # (Every alive piece has a finite score: protected ones are never dropped.)
    final = [index[p] for p in keep_always]
    taken = set(final)
    ranked = sorted((i for i in np.flatnonzero(alive) if i not in taken), key=lambda i: (-logp[i], names[i]))
    final += ranked[: max(0, n_target - len(final))]
    scored = [(names[i], float(logp[i])) for i in final]
    scored.sort(key=lambda ps: (-ps[1], ps[0]))
    entries = [(unk_piece, 0.0, "unknown")] + [(s, 0.0, "control") for s in specials]
    if byte_fallback:
        entries += [(_byte_piece(b), 0.0, "byte") for b in range(256)]
    entries += [(p, s, "normal") for p, s in scored]
    return Unigram._from_entries(entries, byte_fallback=byte_fallback)


def _m_step(expected, alive, is_protected, bayesian: bool):
    """New scores from expected counts; pieces expected < 0.5 times leave (unless protected).

    A protected piece expected less than 0.5 times is scored as if it had
    been expected 0.5 times, so it keeps a finite (low) score.
    """
    np = _np()
    keep = alive & ((expected >= MIN_EXPECTED_COUNT) | is_protected)
    count = np.where(is_protected, np.maximum(expected, MIN_EXPECTED_COUNT), expected)
    total = count[keep].sum()
    logp = np.full(len(expected), -np.inf)
    if bayesian:
        logp[keep] = _digamma_array(count[keep]) - digamma(total)
    else:
        logp[keep] = np.log(count[keep]) - math.log(total)
    return logp, keep


def _prune(lattice, names, logp, alive, is_protected, lengths, word_count, size: int):
    """sentencepiece's pruning step: keep ``size`` pieces, dropping those whose loss is smallest.

    ``freq[i]`` = uses of piece i in the Viterbi segmentation of the corpus.
    For a piece whose own best segmentation is itself, its *alternative* is
    its best segmentation into two or more other pieces. Removing it moves
    its ``freq[i]`` uses onto the alternative pieces, and the approximate loss
    in log-likelihood is

        freq[i] / N * (log p(i) - sum over alternative pieces a of log p'(a))

    with p from Viterbi counts (``p(i) = freq[i] / total``) and p' the counts
    after the move (``freq[a] + freq[i]`` over ``total + freq[i] * (len(alt) - 1)``).
    N is the number of words.
    """
    np = _np()
    _, seg_words, seg_pieces = lattice.viterbi(logp)
    freq = np.bincount(seg_pieces, weights=word_count[seg_words], minlength=len(names))
    total = freq.sum()
    n_words = word_count.sum()
    cand = np.flatnonzero(alive & ~is_protected & (freq > 0) & (lengths > 1))
    keep = alive & is_protected
    if cand.size:
        # Best segmentation of each candidate into other pieces (the whole-piece edge left out).
        live = np.flatnonzero(alive)
        alt = _Lattice([names[i] for i in cand], _lookup([names[i] for i in live], live), whole=False)
        alt_score, alt_of, alt_piece = alt.viterbi(logp)
        own_best = alt_score <= logp[cand]  # False: its Viterbi path is split, drop it
        n_alt = np.bincount(alt_of, minlength=cand.size)
        f_i = freq[cand]
        log_alt = np.bincount(alt_of, weights=np.log(freq[alt_piece] + f_i[alt_of]), minlength=cand.size)
        log_alt -= n_alt * np.log(total + f_i * (n_alt - 1))
        loss = f_i / n_words * ((np.log(f_i) - math.log(total)) - log_alt)
        cand, loss = cand[own_best], loss[own_best]
        room = size - int(keep.sum())
        if room > 0:
            order = sorted(range(cand.size), key=lambda k: (-loss[k], names[cand[k]]))[:room]
            keep[cand[order]] = True
    return keep


# --------------------------------------------------------------------------
# Ours against sentencepiece
# --------------------------------------------------------------------------

#: The sentencepiece options that make its Unigram trainer see exactly what
#: `train` sees: no normalization, spaces kept as they are and escaped to ``▁``,
#: words split before ``▁``, pieces free to mix scripts and digits, every
#: character kept, no line dropped for length, no shuffling, one thread.
SENTENCEPIECE_OPTIONS: dict[str, Any] = dict(
    model_type="unigram",
    normalization_rule_name="identity",
    add_dummy_prefix=False,
    remove_extra_whitespaces=False,
    split_by_whitespace=True,
    split_by_unicode_script=False,
    split_by_number=False,
    byte_fallback=False,
    character_coverage=1.0,
    max_sentence_length=1 << 20,
    shuffle_input_sentence=False,
    hard_vocab_limit=False,
    minloglevel=2,
)


@dataclass
class SentencePieceComparison:
    """`compare_with_sentencepiece`'s measurements (``*_sp`` = sentencepiece's model).

    Log-likelihoods are natural logs over the evaluation lines, computed with
    each model's scores renormalised to sum to 1 over its ordinary pieces
    (both trainers' digamma scores sum to less than 1), each model scoring
    the text with its own pieces. ``*_viterbi_ll`` scores the best
    segmentation, ``*_marginal_ll`` sums over all segmentations (always the
    larger). ``seconds_*`` are wall-clock training times: they vary from run
    to run and with machine load.
    """

    vocab_size: int
    lines: int
    bytes: int
    tokens: int
    tokens_sp: int
    viterbi_ll: float
    viterbi_ll_sp: float
    marginal_ll: float
    marginal_ll_sp: float
    pieces: int
    pieces_sp: int
    shared_pieces: int
    jaccard: float
    seconds: float
    seconds_sp: float
    model: Unigram = field(repr=False)
    model_sp: Unigram = field(repr=False)
    proto_sp: bytes = field(repr=False)

    @property
    def tokens_per_byte(self) -> float:
        return self.tokens / self.bytes

    @property
    def tokens_per_byte_sp(self) -> float:
        return self.tokens_sp / self.bytes

    @property
    def compression_gap(self) -> float:
        """Our token count relative to sentencepiece's, minus 1 (negative: we use fewer tokens)."""
        return self.tokens / self.tokens_sp - 1

    def rows(self) -> list[tuple[str, float, float]]:
        """``(measure, ours, sentencepiece)`` rows for a table."""
        bits = self.bytes * math.log(2)
        return [
            ("ordinary pieces", self.pieces, self.pieces_sp),
            ("tokens", self.tokens, self.tokens_sp),
            ("tokens per byte", self.tokens_per_byte, self.tokens_per_byte_sp),
            ("Viterbi bits per byte", -self.viterbi_ll / bits, -self.viterbi_ll_sp / bits),
            ("marginal bits per byte", -self.marginal_ll / bits, -self.marginal_ll_sp / bits),
        ]


def _normalised_log_likelihood(model: Unigram, word_counts: Mapping[str, int]) -> tuple[float, float]:
    """(Viterbi, marginal) log-likelihood of words under ``model``'s renormalised scores.

    Runs on distinct words with `_Lattice` (no piece of either model crosses a
    ``▁`` boundary, so a line's likelihood is the sum over its words). A
    character no piece covers is scored like the model does, with its
    unknown score.
    """
    np = _np()
    pieces = model.pieces
    names = list(pieces)
    scores = np.array([pieces[p] for p in names])
    log_norm = float(np.logaddexp.reduce(scores))
    unknown = sorted({ch for w in word_counts for ch in w} - set(pieces))
    names += unknown
    scores = np.concatenate([scores, np.full(len(unknown), model.unk_score)]) - log_norm
    words = sorted(word_counts)
    counts = np.array([float(word_counts[w]) for w in words])
    lattice = _Lattice(words, _lookup(names))
    best, _, _ = lattice.viterbi(scores)
    _, log_z = lattice.forward_backward(scores, counts)
    return float(counts @ best), float(counts @ log_z)


def compare_with_sentencepiece(
    lines: str | Sequence[str],
    vocab_size: int,
    *,
    eval_lines: str | Sequence[str] | None = None,
    max_piece_length: int = 16,
    **train_options,
) -> SentencePieceComparison:
    """Train our Unigram trainer and sentencepiece's on the same lines; compare the two models.

    ``lines`` is raw text (cut into lines) or a list of lines; empty lines are
    skipped. Both trainers see the same thing: sentencepiece gets the raw lines
    with `SENTENCEPIECE_OPTIONS` (identity normalization, no dummy prefix,
    spaces kept), and escapes ``" "`` to ``▁`` itself; `train` gets the
    lines with ``" "`` replaced by ``▁`` (what sentencepiece's normalizer
    does under those options), plus the special tokens ``<s>`` and ``</s>``
    so that both vocabularies hold ``vocab_size - 3`` ordinary pieces.

    Measured on ``eval_lines`` (default: the training lines): tokens from each
    model's own encoder (sentencepiece's ``encode`` for its model), Viterbi
    and marginal log-likelihood, and the overlap of the ordinary pieces.
    sentencepiece is imported here, not when this module is imported.
    """
    import io

    import sentencepiece as spm

    def as_lines(x: str | Sequence[str]) -> list[str]:
        return [ln for ln in (x.split("\n") if isinstance(x, str) else x) if ln]

    train_lines = as_lines(lines)
    test_lines = as_lines(eval_lines) if eval_lines is not None else train_lines
    if not train_lines:
        raise ValueError("no lines to train on")

    buf = io.BytesIO()
    t0 = time.perf_counter()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(train_lines), model_writer=buf, vocab_size=vocab_size,
        max_sentencepiece_length=max_piece_length, num_threads=1, **SENTENCEPIECE_OPTIONS,
    )
    seconds_sp = time.perf_counter() - t0
    proto = buf.getvalue()
    processor = spm.SentencePieceProcessor(model_proto=proto)
    theirs = Unigram.from_sentencepiece(proto)

    t0 = time.perf_counter()
    ours = train([ln.replace(" ", SPACE) for ln in train_lines], vocab_size,
                 special_tokens=("<s>", "</s>"), max_piece_length=max_piece_length, **train_options)
    seconds = time.perf_counter() - t0

    escaped = [ln.replace(" ", SPACE) for ln in test_lines]
    word_counts = Counter(w for ln in escaped for w in split_words(ln))
    v_ours, m_ours = _normalised_log_likelihood(ours, word_counts)
    v_sp, m_sp = _normalised_log_likelihood(theirs, word_counts)
    a, b = set(ours.pieces), set(theirs.pieces)
    return SentencePieceComparison(
        vocab_size=vocab_size,
        lines=len(test_lines),
        bytes=sum(len(ln.encode("utf-8")) for ln in test_lines),
        tokens=sum(len(ours.encode(ln)) for ln in escaped),
        tokens_sp=sum(len(ids) for ids in processor.encode(test_lines)),
        viterbi_ll=v_ours,
        viterbi_ll_sp=v_sp,
        marginal_ll=m_ours,
        marginal_ll_sp=m_sp,
        pieces=len(a),
        pieces_sp=len(b),
        shared_pieces=len(a & b),
        jaccard=len(a & b) / len(a | b),
        seconds=seconds,
        seconds_sp=seconds_sp,
        model=ours,
        model_sp=theirs,
        proto_sp=proto,
    )
