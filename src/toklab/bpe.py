"""Byte-pair encoding: the textbook algorithms, the fast ones, and the tokenizer object.

Two pairs of functions live here, and the book teaches them in this order:

* `reference_train` / `reference_encode` are the plain versions. Training
  recounts every adjacent pair of every word on every step and merges the
  most frequent; encoding repeatedly merges the adjacent pair that was
  learned earliest. They work on any symbols that support ``+`` (``str`` for
  the classic ``</w>`` example, ``bytes`` for byte-level BPE) and are short
  enough to print.
* `train` and `ByteBPE.encode` are what you would run. Training keeps the
  pair counts up to date incrementally, touching only the words that contain
  the merged pair, and finds the best pair with a lazy max-heap. Encoding
  caches each pre-token's IDs and uses a heap for long chunks. Both must give
  exactly what the reference versions give; ``tests/test_bpe_fast_vs_reference.py``
  checks that on corpora and on random input.

Encoding follows tiktoken's rule: inside a chunk, merge the adjacent pair
whose *concatenation* has the lowest rank. For vocabularies produced by BPE
training this is the same as applying the learned merges in order (a token's
rank is always higher than the ranks of the two tokens it was made from).
"""

from __future__ import annotations

import hashlib
import heapq
import json
import os
import random
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Literal, TypeVar

from . import pretokenize, special
from .special import SpecialSet
from .unicode import from_proxy, to_proxy

__all__ = [
    "reference_train",
    "reference_encode",
    "pretoken_counts",
    "train",
    "ByteBPE",
]

Sym = TypeVar("Sym", str, bytes)
TieBreak = Literal["smallest", "largest"]


# --------------------------------------------------------------------------
# The textbook versions
# --------------------------------------------------------------------------


def _pick(counts: Mapping[tuple[Sym, Sym], int], tie_break: TieBreak) -> tuple[Sym, Sym]:
    """The most frequent pair; among equals the smallest or largest pair."""
    best = max(counts.values())
    tied = [pair for pair, c in counts.items() if c == best]
    return min(tied) if tie_break == "smallest" else max(tied)


def _merge_word(word: tuple[Sym, ...], pair: tuple[Sym, Sym]) -> tuple[Sym, ...]:
    """Replace every non-overlapping occurrence of ``pair``, scanning left to right."""
    out = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(word[i] + word[i + 1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def reference_train(
    words: Mapping[Sequence[Sym], int],
    num_merges: int,
    *,
    tie_break: TieBreak = "smallest",
    min_frequency: int = 1,
) -> list[tuple[Sym, Sym]]:
    """Learn up to ``num_merges`` merges from word frequencies (the plain O(n²) algorithm).

    ``words`` maps each word, already cut into symbols, to its count, e.g.
    ``{("l", "o", "w", "</w>"): 5}``. Each step counts every adjacent pair,
    weighted by word count, and merges the most frequent one everywhere.
    Training stops early when no pair occurs ``min_frequency`` times.
    """
    _check_tie_break(tie_break)
    corpus = {tuple(w): c for w, c in words.items()}
    merges: list[tuple[Sym, Sym]] = []
    for _ in range(num_merges):
        counts: Counter = Counter()
        for word, c in corpus.items():
            for pair in zip(word, word[1:]):
                counts[pair] += c
        if not counts or max(counts.values()) < min_frequency:
            break
        pair = _pick(counts, tie_break)
        merges.append(pair)
        corpus = {_merge_word(w, pair): c for w, c in corpus.items()}
    return merges


def reference_encode(symbols: Sequence[Sym], merges: Sequence[tuple[Sym, Sym]]) -> list[Sym]:
    """Segment one word with frozen merges: apply the earliest-learned applicable merge, repeat.

    Frequencies play no part here; only the order of ``merges`` does.
    """
    rank = {pair: i for i, pair in enumerate(merges)}
    word = tuple(symbols)
    while len(word) > 1:
        pairs = [p for p in zip(word, word[1:]) if p in rank]
        if not pairs:
            break
        word = _merge_word(word, min(pairs, key=rank.__getitem__))
    return list(word)


def _check_tie_break(tie_break: str) -> None:
    if tie_break not in ("smallest", "largest"):
        raise ValueError(f"tie_break must be 'smallest' or 'largest', got {tie_break!r}")


# --------------------------------------------------------------------------
# Counting pre-tokens (shared by the fast trainer and the tests' reference runs)
# --------------------------------------------------------------------------

_CHUNK_CHARS = 1 << 20


def _count_text(args: tuple[str, str, tuple[str, ...]]) -> Counter:
    text, pattern, specials = args
    pat = pretokenize.compiled(pattern)
    counts: Counter = Counter()
    for piece, is_special in special.split_on_specials(text, frozenset(specials)):
        if not is_special:
            counts.update(pat.findall(piece))
    return counts


def _file_chunks(path: Path, pattern: str, specials: Sequence[str]) -> Iterator[str]:
    """Read a text file in ~1 MB pieces, cutting only where splitting is unaffected.

    A cut is made just after a special token or at a pattern's safe cut point;
    neither changes the pre-tokens (see `pretokenize.safe_cut_points`).
    """
    buffer = ""
    with open(path, encoding="utf-8", newline="") as fh:
        while True:
            block = fh.read(_CHUNK_CHARS)
            buffer += block
            if not block:
                if buffer:
                    yield buffer
                return
            cut = _last_cut(buffer, pattern, specials)
            if cut:
                yield buffer[:cut]
                buffer = buffer[cut:]


def _text_chunks(text: str, pattern: str, specials: Sequence[str]) -> Iterator[str]:
    """`_file_chunks` for a string already in memory."""
    start = 0
    while len(text) - start > _CHUNK_CHARS:
        cut = _last_cut(text[start : start + _CHUNK_CHARS], pattern, specials)
        if not cut:
            break
        yield text[start : start + cut]
        start += cut
    yield text[start:]


def _last_cut(text: str, pattern: str, specials: Sequence[str]) -> int | None:
    """The last position where ``text`` can be split without changing its pre-tokens."""
    best = None
    if specials:
        for m in special.special_regex(frozenset(specials)).finditer(text):
            best = m.end()
    cut = pretokenize.last_safe_cut(text, pattern)
    while cut is not None and specials and special.straddles(text, cut, specials):
        cut = pretokenize.last_safe_cut(text[:cut], pattern)
    if cut is not None and (best is None or cut > best):
        best = cut
    return best


def pretoken_counts(
    source: str | os.PathLike | Iterable[str],
    pattern: str = "gpt2",
    special_tokens: Sequence[str] = (),
    processes: int | None = None,
) -> Counter:
    """Count pre-tokens (as ``str``) in a text, a file, or an iterable of documents.

    Special tokens split the text and are not counted. A file is read in
    chunks; with ``processes`` > 1 the chunks are counted in worker processes.
    Items of an iterable are separate documents: no pre-token spans two items.
    """
    specials = tuple(special_tokens)
    pretokenize.compiled(pattern)  # fail early on a bad pattern
    if isinstance(source, str):
        jobs: Iterable[str] = _text_chunks(source, pattern, specials) if processes and processes > 1 else [source]
    elif isinstance(source, os.PathLike):
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"training source {path} is not a file")
        jobs = _file_chunks(path, pattern, specials)
    else:
        jobs = source
    total: Counter = Counter()
    work = ((text, pattern, specials) for text in jobs)
    if processes and processes > 1:
        import multiprocessing as mp

        # "spawn" keeps workers independent of the parent's state (and of fork
        # safety issues in notebook kernels); results are merged by addition,
        # which does not depend on arrival order.
        with mp.get_context("spawn").Pool(processes) as pool:
            for counts in pool.imap_unordered(_count_text, work, chunksize=1):
                total.update(counts)
    else:
        for args in work:
            if not isinstance(args[0], str):
                raise TypeError(f"training documents must be str, got {type(args[0]).__name__}")
            total.update(_count_text(args))
    return total


# --------------------------------------------------------------------------
# Fast training
# --------------------------------------------------------------------------


def _inverted(data: bytes) -> tuple[int, ...]:
    """A key that sorts byte strings in *descending* order in a min-heap.

    Each byte b becomes 255 - b and a terminator 256 goes last, so a string
    sorts before its own prefixes, exactly reversing bytes' order.
    """
    return tuple(255 - b for b in data) + (256,)


def train(
    source: str | os.PathLike | Iterable[str],
    vocab_size: int,
    *,
    pattern: str = "gpt2",
    special_tokens: Sequence[str] = (),
    tie_break: TieBreak = "smallest",
    min_frequency: int = 1,
    processes: int | None = None,
    progress: bool = False,
) -> "ByteBPE":
    """Train a byte-level BPE tokenizer to ``vocab_size`` tokens (256 bytes + merges + specials).

    Must equal `reference_train` on the same pre-token counts. Pair counts are
    updated only for words containing the merged pair, and the best pair comes
    from a max-heap whose stale entries are re-checked when they surface
    (a pair's count never grows after the step that created it, so the top
    entry, once confirmed current, is the true maximum).
    """
    _check_tie_break(tie_break)
    pretokenize.resolve(pattern)
    specials = list(dict.fromkeys(special_tokens))
    if vocab_size < 256 + len(specials):
        raise ValueError(
            f"vocab_size={vocab_size} is too small: it must be at least 256 (one token per byte) "
            f"+ {len(specials)} special tokens = {256 + len(specials)}"
        )
    counts = pretoken_counts(source, pattern, specials, processes)
    if not counts:
        raise ValueError("the training corpus is empty (no text outside special tokens)")
    num_merges = vocab_size - 256 - len(specials)

    # Distinct pre-tokens in a fixed order, so nothing depends on hash order.
    try:
        items = sorted((piece.encode("utf-8"), c) for piece, c in counts.items())
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end]
        raise ValueError(
            f"training text contains a lone surrogate ({bad!r} in {exc.object!r}), which has no "
            "UTF-8 form; fix the text (e.g. decode it with errors='replace') before training"
        ) from None
    words: list[list[int]] = [list(b) for b, _ in items]
    freq: list[int] = [c for _, c in items]
    sym: list[bytes] = [bytes([i]) for i in range(256)]

    pair_count: dict[tuple[int, int], int] = {}
    where: dict[tuple[int, int], set[int]] = {}
    for w, word in enumerate(words):
        c = freq[w]
        for pair in zip(word, word[1:]):
            pair_count[pair] = pair_count.get(pair, 0) + c
            where.setdefault(pair, set()).add(w)

    if tie_break == "smallest":
        def key(p: tuple[int, int]) -> tuple:
            return (sym[p[0]], sym[p[1]])
    else:
        def key(p: tuple[int, int]) -> tuple:
            return (_inverted(sym[p[0]]), _inverted(sym[p[1]]))

    heap = [(-c, key(p), p) for p, c in pair_count.items()]
    heapq.heapify(heap)

    merges: list[tuple[bytes, bytes]] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=num_merges, desc="BPE merges", unit="merge")
    while len(merges) < num_merges and heap:
        neg, _, pair = heapq.heappop(heap)
        current = pair_count.get(pair, 0)
        if current != -neg:
            if current > 0:
                heapq.heappush(heap, (-current, key(pair), pair))
            continue
        if current < min_frequency:
            break
        a, b = pair
        new_id = len(sym)
        sym.append(sym[a] + sym[b])
        merges.append((sym[a], sym[b]))
        created: set[tuple[int, int]] = set()
        for w in where.pop(pair):
            result = _merge_ids(words[w], a, b, new_id)
            if result is None:
                continue
            words[w], changes = result
            c = freq[w]
            for p, d in changes:
                n = pair_count.get(p, 0) + d * c
                if n:
                    if p not in pair_count and new_id in p:
                        created.add(p)
                    pair_count[p] = n
                else:
                    del pair_count[p]
                if d > 0:
                    words_with_p = where.get(p)
                    if words_with_p is None:
                        where[p] = {w}
                    else:
                        words_with_p.add(w)
        pair_count.pop(pair, None)
        for p in created:
            if p in pair_count:
                heapq.heappush(heap, (-pair_count[p], key(p), p))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return ByteBPE(merges, pattern=pattern, special_tokens=specials)


def _merge_ids(
    word: list[int], a: int, b: int, new: int
) -> tuple[list[int], list[tuple[tuple[int, int], int]]] | None:
    """`_merge_word` on IDs, plus the pair-count changes it causes (None if the pair is absent).

    Only pairs next to a merge site change: for an occurrence with left
    neighbour p and right neighbour q, (p, a) and (b, q) disappear and
    (p, new) and (new, q) appear. Taking p from the output built so far makes
    back-to-back occurrences come out right (``a b a b`` -> ``new new``).
    Occurrences are found with ``list.index``, so a long word costs little
    more than the number of places where ``a`` occurs.
    """
    if a not in word:
        return None
    n = len(word)
    out: list[int] = []
    changes: list[tuple[tuple[int, int], int]] = []
    index = word.index
    start = 0
    i = index(a)
    while i + 1 < n:
        if word[i + 1] == b:
            out.extend(word[start:i])
            changes.append(((a, b), -1))
            if out:
                prev = out[-1]
                changes.append(((prev, a), -1))
                changes.append(((prev, new), 1))
            if i + 2 < n:
                nxt = word[i + 2]
                changes.append(((b, nxt), -1))
                changes.append(((new, nxt), 1))
            out.append(new)
            start = i + 2
            search_from = start
        else:
            search_from = i + 1
        try:
            i = index(a, search_from)
        except ValueError:
            break
    if not changes:
        return None
    out.extend(word[start:])
    return out, changes


# --------------------------------------------------------------------------
# Encoding one chunk
# --------------------------------------------------------------------------

_SHORT = 8  # below this many bytes the quadratic scan beats the heap (measured on cl100k)


def _merge_short(piece: bytes, ranks: Mapping[bytes, int]) -> list[bytes]:
    """Lowest-rank adjacent concatenation first, leftmost on ties (quadratic; short chunks)."""
    parts = [piece[i : i + 1] for i in range(len(piece))]
    get = ranks.get
    while len(parts) > 1:
        best_rank = None
        best_i = 0
        for i in range(len(parts) - 1):
            r = get(parts[i] + parts[i + 1])
            if r is not None and (best_rank is None or r < best_rank):
                best_rank = r
                best_i = i
        if best_rank is None:
            break
        parts[best_i : best_i + 2] = [parts[best_i] + parts[best_i + 1]]
    return parts


def _merge_long(piece: bytes, ranks: Mapping[bytes, int]) -> list[bytes]:
    """`_merge_short` in O(n log n): a linked list of parts and a heap of candidate merges.

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


def _merge_dropout(piece: bytes, ranks: Mapping[bytes, int], p: float, rng: random.Random) -> list[bytes]:
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


# --------------------------------------------------------------------------
# The tokenizer object
# --------------------------------------------------------------------------

_FORMAT = "toklab-bpe"
_FORMAT_VERSION = 1
_CACHE_LIMIT = 500_000
_CACHE_PIECE_CHARS = 200


class ByteBPE:
    """A byte-level BPE tokenizer: pattern + merges (+ IDs) + special tokens.

    ``merges`` are byte pairs in learning order. ``vocab`` maps IDs to bytes;
    left out, byte b gets ID b and merge k gets ID 256 + k. ``special_tokens``
    is a dict of explicit IDs, or a list of strings whose IDs are taken from
    ``vocab`` when it holds their UTF-8 bytes and appended after the largest
    ID otherwise.
    """

    def __init__(
        self,
        merges: Sequence[tuple[bytes, bytes]],
        *,
        vocab: Mapping[int, bytes] | None = None,
        pattern: str = "gpt2",
        special_tokens: Mapping[str, int] | Sequence[str] | None = None,
    ) -> None:
        self.pattern = pattern
        self._pat = pretokenize.compiled(pattern)
        merges = [(bytes(a), bytes(b)) for a, b in merges]
        if vocab is None:
            vocab = {i: bytes([i]) for i in range(256)}
            for k, (a, b) in enumerate(merges):
                vocab[256 + k] = a + b
        vocab = {int(i): bytes(t) for i, t in vocab.items()}
        encoder: dict[bytes, int] = {}
        for i, tok in vocab.items():
            if tok in encoder:
                raise ValueError(f"vocab maps both IDs {encoder[tok]} and {i} to the bytes {tok!r}")
            encoder[tok] = i
        missing = [b for b in range(256) if bytes([b]) not in encoder]
        if missing:
            raise ValueError(f"vocab lacks single-byte tokens for bytes {missing[:8]}... ({len(missing)} missing)")
        ranks: dict[bytes, int] = {}
        for k, (a, b) in enumerate(merges):
            for part in (a, b):
                if part not in encoder:
                    raise ValueError(f"merge {k} uses {part!r}, which is not in the vocabulary")
            tok = a + b
            if tok not in encoder:
                raise ValueError(f"merge {k} makes {tok!r}, which is not in the vocabulary")
            if tok in ranks:
                raise ValueError(f"merges {ranks[tok]} and {k} both make {tok!r}")
            ranks[tok] = k
        self._init_tables(vocab, encoder, ranks, special_tokens)
        self._merges: list[tuple[bytes, bytes]] | None = merges

    def _init_tables(self, vocab, encoder, ranks, special_tokens) -> None:
        self.vocab: dict[int, bytes] = dict(vocab)
        self._encoder = encoder
        self._ranks = ranks
        specials: dict[str, int] = {}
        if special_tokens is None:
            special_tokens = {}
        if isinstance(special_tokens, Mapping):
            specials = {str(s): int(i) for s, i in special_tokens.items()}
        else:
            next_id = max(vocab) + 1
            for s in special_tokens:
                if s in specials:
                    continue
                tok = s.encode("utf-8")
                if tok in encoder:
                    specials[s] = encoder[tok]
                else:
                    specials[s] = next_id
                    next_id += 1
        for s, i in specials.items():
            if not s:
                raise ValueError("a special token cannot be the empty string")
            if i in vocab and vocab[i] != s.encode("utf-8"):
                raise ValueError(f"special token {s!r} has ID {i}, which the vocab already uses for {vocab[i]!r}")
        if len(set(specials.values())) != len(specials):
            raise ValueError(f"two special tokens share an ID: {specials}")
        self.special_tokens: dict[str, int] = specials
        self._decoder: dict[int, bytes] = dict(vocab)
        for s, i in specials.items():
            self._decoder[i] = s.encode("utf-8")
        self._cache: dict[str, list[int]] = {}

    # -- construction from ranks (tiktoken files) ---------------------------

    @classmethod
    def from_ranks(
        cls,
        ranks: Mapping[bytes, int],
        *,
        pattern: str,
        special_tokens: Mapping[str, int] | None = None,
    ) -> "ByteBPE":
        """Build from tiktoken-style mergeable ranks (token bytes -> rank = ID).

        The merge list is not stored in such files; it is recovered on first
        use of `merges` by re-running BPE on each token's bytes.
        """
        self = cls.__new__(cls)
        self.pattern = pattern
        self._pat = pretokenize.compiled(pattern)
        encoder = {bytes(t): int(r) for t, r in ranks.items()}
        vocab = {r: t for t, r in encoder.items()}
        if len(vocab) != len(encoder):
            raise ValueError("two tokens share a rank in the rank table")
        missing = [b for b in range(256) if bytes([b]) not in encoder]
        if missing:
            raise ValueError(f"rank table lacks single-byte tokens for bytes {missing[:8]} ({len(missing)} missing)")
        merge_ranks = {t: r for t, r in encoder.items() if len(t) > 1}
        self._init_tables(vocab, encoder, merge_ranks, special_tokens or {})
        self._merges = None
        return self

    @classmethod
    def from_tiktoken(cls, name_or_path: str | os.PathLike) -> "ByteBPE":
        """Load ``r50k_base``, ``cl100k_base`` or ``o200k_base`` (SHA-256 checked), or a rank file."""
        from . import vocabs

        spec = vocabs.load(name_or_path)
        return cls.from_ranks(spec.ranks, pattern=spec.pattern, special_tokens=spec.special_tokens)

    @property
    def merges(self) -> list[tuple[bytes, bytes]]:
        """Merges in rank order. For rank tables this recovers each token's two parts."""
        if self._merges is None:
            merges = []
            for tok, r in sorted(self._ranks.items(), key=lambda kv: kv[1]):
                merges.append(_recover_split(tok, self._ranks, r))
            self._merges = merges
        return list(self._merges)

    # -- sizes ----------------------------------------------------------------

    @property
    def n_vocab(self) -> int:
        """Largest ID + 1: the number of embedding rows this tokenizer needs."""
        return max(self._decoder) + 1

    def __len__(self) -> int:
        """Number of distinct tokens, specials included (may be < n_vocab if IDs have gaps)."""
        return len(self._decoder)

    def __repr__(self) -> str:
        name = pretokenize.pattern_name(self.pattern) or "custom"
        return (
            f"ByteBPE(pattern={name!r}, tokens={len(self.vocab)}, merges={len(self._ranks)}, "
            f"special_tokens={len(self.special_tokens)})"
        )

    # -- encoding -------------------------------------------------------------

    def segment(self, chunk: str) -> list[int]:
        """The model stage alone: BPE on one pre-tokenized chunk, no cache, no specials.

        ``encode_ordinary(text)`` is ``segment`` applied to each chunk of the pattern's
        split, concatenated. A chunk with a lone surrogate must be cleaned first.
        """
        data = chunk.encode("utf-8")
        tid = self._encoder.get(data)
        if tid is not None:
            return [tid]
        parts = _merge_short(data, self._ranks) if len(data) < _SHORT else _merge_long(data, self._ranks)
        enc = self._encoder
        return [enc[p] for p in parts]

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode text with no special-token handling at all (specials are plain text)."""
        text = _replace_surrogates(text)
        cache = self._cache
        if len(cache) > _CACHE_LIMIT:
            cache.clear()
        # One pass, filling the cache as we go: a chunk that repeats within this
        # text is encoded once (looking everything up first would miss every repeat
        # of a new chunk, which made first calls 1.6x slower when measured).
        out: list[int] = []
        extend = out.extend
        get = cache.get
        for piece in self._pat.findall(text):
            ids = get(piece)
            if ids is None:
                ids = self.segment(piece)
                if len(piece) <= _CACHE_PIECE_CHARS:
                    cache[piece] = ids
            extend(ids)
        return out

    def encode(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        dropout: float = 0.0,
        seed: int | random.Random | None = None,
    ) -> list[int]:
        """Encode text to IDs, with tiktoken's special-token contract.

        A special token is encoded as its ID only if it is in
        ``allowed_special``. If text contains one that is in
        ``disallowed_special`` (by default: every special not allowed), this
        raises ValueError rather than guess; ``disallowed_special=()`` encodes
        such text as ordinary bytes. Lone surrogates, which have no UTF-8
        form, become U+FFFD as in tiktoken.

        ``dropout`` > 0 turns on BPE-dropout: each merge is skipped with that
        probability at every step, giving a random, longer segmentation that
        still decodes to the same text. ``seed`` (an int, or a `random.Random`
        to continue an existing stream) makes it repeatable.
        """
        allowed, disallowed = special.resolve_special_sets(self.special_tokens, allowed_special, disallowed_special)
        special.check_disallowed(text, disallowed)
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"dropout must be a probability in [0, 1], got {dropout}")
        out: list[int] = []
        rng = None
        if dropout > 0:
            rng = seed if isinstance(seed, random.Random) else random.Random(seed)
        for piece, is_special in special.split_on_specials(text, allowed):
            if is_special:
                out.append(self.special_tokens[piece])
            elif rng is None:
                out.extend(self.encode_ordinary(piece))
            else:
                out.extend(self._encode_dropout(piece, dropout, rng))
        return out

    def _encode_dropout(self, text: str, p: float, rng: random.Random) -> list[int]:
        out: list[int] = []
        for piece in self._pat.findall(_replace_surrogates(text)):
            parts = _merge_dropout(piece.encode("utf-8"), self._ranks, p, rng)
            out.extend(self._encoder[t] for t in parts)
        return out

    def encode_batch(self, texts: Iterable[str], **options) -> list[list[int]]:
        """`encode` each text (same options)."""
        return [self.encode(t, **options) for t in texts]

    def encode_iterable(self, texts: Iterable[str], **options) -> Iterator[int]:
        """Encode a stream of text pieces lazily; the IDs equal ``encode("".join(texts))``.

        Text is buffered only up to the last position where a cut cannot
        change the result (a pattern safe cut that does not fall inside a
        special token), so memory stays bounded for ordinary text. With a
        custom pattern there are no safe cuts and the whole input is buffered.
        """
        tokens = list(self.special_tokens)
        if options.get("dropout", 0.0) > 0 and not isinstance(options.get("seed"), random.Random):
            # One random stream for the whole input, as a single encode() call would use.
            options = {**options, "seed": random.Random(options.get("seed"))}
        buffer = ""
        for text in texts:
            buffer += text
            if len(buffer) < 4096:
                continue
            cut = pretokenize.last_safe_cut(buffer, self.pattern)
            while cut is not None and tokens and special.straddles(buffer, cut, tokens):
                cut = pretokenize.last_safe_cut(buffer[:cut], self.pattern)
            if cut:
                yield from self.encode(buffer[:cut], **options)
                buffer = buffer[cut:]
        if buffer:
            yield from self.encode(buffer, **options)

    # -- decoding -------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """Concatenate the tokens' bytes. Raises ValueError on an unknown ID."""
        decoder = self._decoder
        ids = ids if isinstance(ids, list) else list(ids)
        try:
            return b"".join([decoder[i] for i in ids])
        except (KeyError, TypeError):
            pass
        for pos, i in enumerate(ids):
            if i not in decoder:
                raise ValueError(
                    f"unknown token ID {i!r} at position {pos}: not in this vocabulary "
                    f"(IDs range over 0..{self.n_vocab - 1}, {len(decoder)} assigned)"
                )
        raise TypeError(f"token IDs must be integers, got {ids!r}")

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """Decode IDs to text; bytes that are not valid UTF-8 become U+FFFD by default.

        A token sequence can end in the middle of a character (byte-level
        tokens split multi-byte characters), so ``errors`` matters; pass
        ``"strict"`` to get an exception instead.
        """
        return self.decode_bytes(list(ids)).decode("utf-8", errors=errors)

    def token_to_id(self, token: bytes) -> int:
        """The ID of a token given as bytes (ordinary or special); KeyError names it if absent."""
        token = bytes(token)
        tid = self._encoder.get(token)
        if tid is None:
            tid = next((i for s, i in self.special_tokens.items() if s.encode("utf-8") == token), None)
        if tid is None:
            raise KeyError(f"{token!r} is not a token of this vocabulary")
        return tid

    def id_to_token(self, token_id: int) -> bytes:
        """The bytes of one token; ValueError names an unknown ID and the valid range."""
        return self.decode_bytes([token_id])

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token."""
        return self.decode_bytes([token_id])

    def tokens(self, ids: Iterable[int]) -> list[bytes]:
        """The bytes of each token, e.g. for showing token boundaries."""
        ids = list(ids)
        self.decode_bytes(ids)
        return [self._decoder[i] for i in ids]

    # -- files ----------------------------------------------------------------

    def _payload(self) -> dict:
        default_ids = all(
            self.vocab.get(i) == bytes([i]) for i in range(256)
        ) and all(self._encoder.get(a + b) == 256 + k for k, (a, b) in enumerate(self.merges)) and len(
            self.vocab
        ) == 256 + len(self.merges)
        payload = {
            "format": _FORMAT,
            "version": _FORMAT_VERSION,
            "pattern": self.pattern,
            "special_tokens": dict(sorted(self.special_tokens.items(), key=lambda kv: kv[1])),
            "merges": [f"{to_proxy(a)} {to_proxy(b)}" for a, b in self.merges],
            "vocab": None if default_ids else {str(i): to_proxy(t) for i, t in sorted(self.vocab.items())},
        }
        return payload

    @staticmethod
    def _fingerprint(payload: dict) -> str:
        canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def fingerprint(self) -> str:
        """SHA-256 of everything that determines this tokenizer's output."""
        return self._fingerprint(self._payload())

    def save(self, path: str | os.PathLike) -> None:
        """Write a readable JSON file: pattern, specials, merges (GPT-2 proxy alphabet), sha256."""
        payload = self._payload()
        payload["sha256"] = self._fingerprint(payload)
        text = json.dumps(payload, ensure_ascii=False, indent=1)
        Path(path).write_text(text + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike) -> "ByteBPE":
        """Read a file written by `save`, verifying its SHA-256 fingerprint."""
        path = Path(path)
        try:
            payload = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path} is not a valid toklab BPE file (truncated or not JSON: {exc})") from None
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path} is not UTF-8 text: {exc}") from None
        if not isinstance(payload, dict) or payload.get("format") != _FORMAT:
            raise ValueError(f"{path} is not a toklab BPE file (format field is not {_FORMAT!r})")
        if payload.get("version") != _FORMAT_VERSION:
            raise ValueError(f"{path} has format version {payload.get('version')!r}; this toklab reads {_FORMAT_VERSION}")
        expected = payload.pop("sha256", None)
        if expected is None:
            raise ValueError(f"{path} has no sha256 fingerprint")
        actual = cls._fingerprint(payload)
        if actual != expected:
            raise ValueError(
                f"{path} fails its SHA-256 check (stored {expected[:16]}..., content hashes to "
                f"{actual[:16]}...): the file was modified or truncated"
            )
        merges = []
        for k, line in enumerate(payload["merges"]):
            a, sep, b = line.partition(" ")
            if not sep or not a or not b:
                raise ValueError(f"{path}: merge {k} is malformed: {line!r}")
            merges.append((from_proxy(a), from_proxy(b)))
        vocab = None
        if payload["vocab"] is not None:
            vocab = {int(i): from_proxy(t) for i, t in payload["vocab"].items()}
        return cls(merges, vocab=vocab, pattern=payload["pattern"], special_tokens=payload["special_tokens"])

    # -- interop --------------------------------------------------------------

    def mergeable_ranks(self) -> dict[bytes, int]:
        """Token bytes -> ID, the table tiktoken calls ``mergeable_ranks``.

        Valid only when IDs are ranks (merges get increasing IDs), which holds
        for trained tokenizers and for tiktoken's own files.
        """
        return dict(self._encoder)

    def to_tiktoken(self, name: str = "toklab"):
        """A `tiktoken.Encoding` that encodes exactly as this tokenizer does."""
        import tiktoken

        ranks = self.mergeable_ranks()
        # tiktoken merges by rank = ID, so the merge order must agree with ID order.
        order = sorted(self._ranks, key=self._ranks.__getitem__)
        ids = [self._encoder[t] for t in order]
        if ids != sorted(ids):
            raise ValueError("this tokenizer's IDs are not in merge order, so tiktoken cannot represent it")
        return tiktoken.Encoding(
            name,
            pat_str=pretokenize.resolve(self.pattern),
            mergeable_ranks=ranks,
            special_tokens=dict(self.special_tokens),
        )


def _recover_split(token: bytes, ranks: Mapping[bytes, int], rank: int) -> tuple[bytes, bytes]:
    """The two tokens that ``token`` was made from: BPE on its bytes using only lower ranks."""
    limited = _RankBelow(ranks, rank)
    parts = _merge_short(token, limited) if len(token) < _SHORT else _merge_long(token, limited)
    if len(parts) != 2:
        raise ValueError(f"token {token!r} (rank {rank}) is not the merge of two lower-ranked tokens")
    return parts[0], parts[1]


class _RankBelow:
    """A read-only view of a rank table that hides ranks >= a limit."""

    __slots__ = ("ranks", "limit")

    def __init__(self, ranks: Mapping[bytes, int], limit: int) -> None:
        self.ranks = ranks
        self.limit = limit

    def get(self, key: bytes, default=None):
        r = self.ranks.get(key)
        return r if r is not None and r < self.limit else default


def _replace_surrogates(text: str) -> str:
    """Lone surrogates cannot be UTF-8 encoded; replace them with U+FFFD like tiktoken."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
