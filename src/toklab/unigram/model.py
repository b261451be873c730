"""`Unigram`: a probability for every piece, Viterbi to segment, and the other lattice programs.

Unlike the plain functions in `toklab.unigram.reference`, the model works in
log space on a lattice built by prefix lookups (`toklab.unigram.lattice`),
assigns IDs, handles unknown characters and byte fallback the way
sentencepiece does, and can add path scores in float32 to reproduce
sentencepiece's tie-breaking exactly.

Text here is a plain string of symbols: whitespace escaping (``" "`` -> ``"▁"``)
and normalization belong to the SentencePiece front end
(`toklab.sentencepiece`), which calls this model on strings already escaped.
As a pipeline model, `segment` is `encode`; tokens are piece strings and
``vocab`` maps ID to piece.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence

from ..base.checks import check_ids, check_str, type_name
from ..base.pieces import KINDS, UNK_SURFACE, byte_of_piece, byte_piece
from ..base.unicode import replace_surrogates
from ..decoders import decode_utf8_per_byte
from . import lattice
from .lattice import PieceTable, round32

__all__ = ["UNK_PENALTY", "Unigram", "path_pieces", "path_ids"]

#: sentencepiece scores an unknown character ``min_score - 10`` (``kUnkPenalty``
#: in ``unigram_model.cc``): worse than any real piece, so a character is only
#: unknown when no piece covers it.
UNK_PENALTY = 10.0

Entry = tuple[str, float, str]  # (piece, score, kind)


class Unigram:
    """A Unigram model: pieces with scores (log-probabilities), IDs, and the lattice algorithms.

    ``pieces`` maps each ordinary piece to its score, as a dict or a list of
    ``(piece, score)`` pairs. IDs are assigned in this order: ``unk_piece``
    (ID 0), ``special_tokens`` (control pieces: they get IDs but never match
    text), the 256 byte pieces ``<0x00>``..``<0xFF>`` when ``byte_fallback``,
    then ``pieces`` in the order given. `from_entries` takes the full table.

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
    then decided by how each running sum rounds. `toklab.sentencepiece.load_unigram`
    turns it on so that segmentations match sentencepiece's token for token; otherwise
    sums are in double precision and ties go to the earliest start of the
    last piece.
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
        entries: list[Entry] = [(unk_piece, 0.0, "unknown")]
        entries += [(s, 0.0, "control") for s in special_tokens]
        if byte_fallback:
            entries += [(byte_piece(b), 0.0, "byte") for b in range(256)]
        for item in items:
            if not (isinstance(item, tuple) and len(item) == 2):
                raise TypeError(f"pieces must be (piece, score) pairs, got {item!r}")
            if isinstance(item[1], bool) or not isinstance(item[1], (int, float)):
                raise TypeError(f"the score of piece {item[0]!r} must be a number, got {type_name(item[1])}")
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
    def from_entries(
        cls, entries: Sequence[Entry], *, byte_fallback: bool, unk_penalty: float = UNK_PENALTY, float32: bool = False
    ) -> "Unigram":
        """A model from its full table: ``(piece, score, kind)`` per ID, kinds as in `KINDS`.

        This is how a trainer or a model file hands over a vocabulary whose
        unknown, control, user-defined and byte pieces sit at given IDs.
        """
        self = cls.__new__(cls)
        self._build(list(entries), unk_penalty=unk_penalty, byte_fallback=byte_fallback, float32=float32)
        return self

    def _build(self, entries: list[Entry], *, unk_penalty: float, byte_fallback: bool, float32: bool) -> None:
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
        self.min_score, self.max_score = min(normal), max(normal)
        self.unk_penalty = float(unk_penalty)
        self.unk_score = self.min_score - self.unk_penalty
        self.float32 = bool(float32)
        if self.float32:
            self.unk_score = round32(self.unk_score)
        self.byte_fallback = bool(byte_fallback)
        if byte_fallback and any(byte_piece(b) not in self._ids for b in range(256)):
            raise ValueError("byte_fallback needs all 256 byte pieces <0x00>..<0xFF> in the vocabulary")
        # The score used inside the lattice. sentencepiece gives a user-defined
        # piece of n characters the score n * 0.1 - 0.1 (float32 product, as C++
        # computes `length * 0.1f - 0.1`): never below 0, so better than any
        # ordinary piece, and longer symbols better still. Measured on
        # sentencepiece 0.2.3's n-best scores (its versions up to 0.2.0 gave
        # about -0.1 whatever the length: `length * max_score_ - 0.1` with
        # max_score_ stuck at FLT_MIN); the tests check both encodings and
        # n-best lists against the pinned library.
        match_score = [
            _user_score(len(p)) if k == "user" else s for p, s, k in zip(self._vocab, self._scores, self._kinds)
        ]
        match: dict[str, int] = {}
        for i, (piece, kind) in enumerate(zip(self._vocab, self._kinds)):
            if kind in ("normal", "user"):
                for k in range(1, len(piece)):
                    match.setdefault(piece[:k], -1)
                match[piece] = i
        self.table = PieceTable(match, match_score, self.unk_id, self.unk_score, self.float32)

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
    def vocab(self) -> dict[int, str]:
        """ID -> piece, for every entry."""
        return dict(enumerate(self._vocab))

    @property
    def pieces(self) -> dict[str, float]:
        """The ordinary pieces and their scores, in ID order."""
        return {p: s for p, s, k in zip(self._vocab, self._scores, self._kinds) if k == "normal"}

    def entries(self) -> list[Entry]:
        """``(piece, score, kind)`` for every ID: what `from_entries` takes."""
        return list(zip(self._vocab, self._scores, self._kinds))

    def fingerprint(self) -> str:
        """SHA-256 of the pieces, scores, options and library versions (`toklab.pipeline.versioning`)."""
        from ..pipeline import versioning

        return versioning.fingerprint(self)

    def get_vocab(self) -> dict[str, int]:
        """Piece -> ID."""
        return dict(self._ids)

    def kind(self, piece_or_id: str | int) -> str:
        """``"normal"``, ``"unknown"``, ``"control"``, ``"user"``, ``"byte"`` or ``"unused"``."""
        i = piece_or_id if isinstance(piece_or_id, int) else self.token_to_id(piece_or_id)
        self.id_to_token(i)
        return self._kinds[i]

    def score(self, piece: str) -> float:
        """The stored score of ``piece``; KeyError if it is not in the vocabulary."""
        return self._scores[self.token_to_id(piece)]

    def token_to_id(self, piece: str) -> int:
        """The ID of ``piece``; KeyError naming it if it is not in the vocabulary."""
        try:
            return self._ids[piece]
        except (KeyError, TypeError):
            raise KeyError(f"piece {piece!r} is not in the vocabulary ({len(self)} entries)") from None

    def piece_to_id(self, piece: str) -> int:
        """sentencepiece's lookup: the ID of ``piece``, or the unknown ID if it is not a piece.

        The real library returns the unknown ID for any other string, and so
        does this; use `token_to_id` to get a KeyError instead.
        """
        return self._ids.get(piece, self.unk_id)

    def id_to_token(self, i: int) -> str:
        """The piece with ID ``i``; ValueError naming the ID and the valid range if there is none."""
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(self._vocab):
            raise ValueError(f"unknown token ID {i!r}: valid IDs are 0..{len(self._vocab) - 1}")
        return self._vocab[i]

    id_to_piece = id_to_token

    def log_prob(self, pieces: Sequence[str]) -> float:
        """Score of one segmentation: the sum of its pieces' lattice scores.

        A piece not in the vocabulary counts as unknown characters, one
        ``unk_score`` per character (what the lattice would charge for it).
        """
        match, scores = self.table.match, self.table.scores
        total = 0.0
        for p in pieces:
            i = match.get(p, -1)
            total += scores[i] if i >= 0 else self.unk_score * len(p)
        return total

    # ---- inference ----------------------------------------------------------

    def viterbi(self, text: str) -> list[str]:
        """The most probable segmentation of ``text`` (how the model encodes it); a lone surrogate is U+FFFD."""
        text = replace_surrogates(check_str(text))
        return path_pieces(self, text, lattice.best_path(self.table, text)[0])

    def encode(self, text: str) -> list[int]:
        """IDs of the Viterbi segmentation (a run of unknown characters is one unknown ID)."""
        text = replace_surrogates(check_str(text))
        return path_ids(self, text, lattice.best_path(self.table, text)[0])

    segment = encode

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids``: pieces joined, runs of byte pieces decoded as UTF-8, controls dropped.

        An unknown ID raises ValueError. The unknown piece prints as
        sentencepiece's ``" ⁇ "``. So ``decode(encode(x)) == x`` whenever
        every character of ``x`` is covered by a piece or by byte fallback.
        """
        out: list[str] = []
        pending = bytearray()
        for i in check_ids(ids):
            piece, kind = self.id_to_token(i), self._kinds[i]
            if kind == "byte":
                pending.append(byte_of_piece(piece))
                continue
            if pending:
                out.append(decode_utf8_per_byte(bytes(pending)))
                pending.clear()
            if kind in ("normal", "user"):
                out.append(piece)
            elif kind == "unknown":
                out.append(UNK_SURFACE)
        if pending:
            out.append(decode_utf8_per_byte(bytes(pending)))
        return "".join(out)

    def forward(self, text: str, *, log: bool = True) -> list[float]:
        """The forward table: entry ``i`` is P(text[:i]) summed over all segmentations.

        Natural logs by default (``log=False`` exponentiates). Entry 0 is the
        empty prefix (log 1 = 0); the last entry is the marginal likelihood.
        Same recursion as `reference_forward`, summed with log-sum-exp.
        """
        alpha = lattice.forward_log(lattice.text_edges(self.table, check_str(text)), len(text))
        return alpha if log else [math.exp(a) for a in alpha]

    def marginal_likelihood(self, text: str, *, log: bool = True) -> float:
        """P(text), summed over every segmentation (natural log by default)."""
        value = self.forward(text)[-1]
        return value if log else math.exp(value)

    def nbest(self, text: str, n: int) -> list[tuple[list[str], float]]:
        """The ``n`` most probable segmentations with their scores, best first (first = `viterbi`)."""
        text = replace_surrogates(check_str(text))
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        return [(path_pieces(self, text, path), score) for path, score in lattice.nbest_paths(self.table, text, n)]

    def sample(
        self, text: str, *, alpha: float = 1.0, nbest_size: int = -1, seed: int | random.Random | None = None
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
        self, text: str, k: int, *, alpha: float = 1.0, nbest_size: int = -1, seed: int | random.Random | None = None
    ) -> list[list[str]]:
        """``k`` independent draws of `sample` (the lattice and tables are built once)."""
        text = replace_surrogates(check_str(text))
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
            return [list(best[lattice.draw(weights, rng)][0]) for _ in range(k)]
        return [path_pieces(self, text, path) for path in lattice.sample_paths(self.table, text, k, alpha, rng)]

    def expected_counts(self, words: str | Mapping[str, float]) -> dict[str, float]:
        """Expected piece counts under the posterior over segmentations (forward-backward).

        ``words`` is one string or a mapping ``word -> count``. Unknown edges
        are counted under the unknown piece. Must equal `reference_expected_counts`.
        """
        items = {words: 1.0}.items() if isinstance(words, str) else words.items()
        by_id = lattice.text_expected_counts(self.table, items)
        return {self._vocab[i]: c for i, c in by_id.items()}


_TENTH32 = round32(0.1)


def _user_score(n_chars: int) -> float:
    """sentencepiece's lattice score for a user-defined piece of ``n_chars`` characters (see `Unigram`)."""
    return round32(round32(n_chars * _TENTH32) - 0.1)


def path_pieces(model, text: str, path: lattice.Path) -> list[str]:
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


def path_ids(model, text: str, path: lattice.Path) -> list[int]:
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
