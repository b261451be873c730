"""Fast byte-level BPE training: incremental pair counts and a lazy max-heap.

Must equal `toklab.bpe.reference.reference_train` on the same pre-token counts
(``tests/bpe/test_fast_vs_reference.py``). The text is first reduced to
distinct pre-tokens and their counts (`pretoken_counts`: the pre-tokenizer's
chunks, never crossing a special token); a file is read in blocks cut only at
places where cutting cannot change the chunks, and the blocks may be counted in
worker processes.
"""

from __future__ import annotations

import heapq
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from ..base import special
from ..base.checks import check_int, check_not_a_file_name, not_utf8, type_name, warn_smaller
from ..pre_tokenizers import patterns
from .model import ByteBPE
from .reference import TieBreak, check_tie_break

__all__ = ["BLOCK_CHARS", "pretoken_counts", "text_blocks", "file_blocks", "pop_best", "train"]

#: Characters read from a file at a time; a block is cut back to its last safe cut.
BLOCK_CHARS = 1 << 20


def _count_text(args: tuple[str, str, tuple[str, ...]]) -> Counter:
    text, pattern, specials = args
    split = patterns.splitter(pattern)
    counts: Counter = Counter()
    for piece, is_special in special.split_on_specials(text, frozenset(specials)):
        if not is_special:
            counts.update(split(piece))
    return counts


def file_blocks(path: Path, pattern: str, specials: Sequence[str]) -> Iterator[str]:
    """Read a text file in ~1 MB pieces, cutting only where splitting is unaffected.

    A cut is made just after a special token or at a pattern's safe cut point;
    neither changes the pre-tokens (see `patterns.safe_cut_points`).
    """
    buffer = ""
    with open(path, encoding="utf-8", newline="") as fh:
        while True:
            try:
                block = fh.read(BLOCK_CHARS)
            except UnicodeDecodeError as e:
                raise not_utf8(path, e) from None
            buffer += block
            if not block:
                if buffer:
                    yield buffer
                return
            cut = _last_cut(buffer, pattern, specials)
            if cut:
                yield buffer[:cut]
                buffer = buffer[cut:]


def text_blocks(text: str, pattern: str, specials: Sequence[str]) -> Iterator[str]:
    """`file_blocks` for a string already in memory."""
    start = 0
    while len(text) - start > BLOCK_CHARS:
        cut = _last_cut(text[start : start + BLOCK_CHARS], pattern, specials)
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
    cut = patterns.last_safe_cut(text, pattern, avoid=specials)
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
    if isinstance(special_tokens, str):
        raise TypeError(
            f"special_tokens must be a list of str, got the str {special_tokens!r}"
        )
    if processes is not None:
        check_int(processes, "processes", minimum=1)
    if isinstance(source, (bytes, bytearray)):
        raise TypeError("source must be a str, a path (os.PathLike) or an iterable of str, got bytes: decode it first")
    if not isinstance(source, (str, os.PathLike)) and not hasattr(source, "__iter__"):
        raise TypeError(f"source must be a str, a path (os.PathLike) or an iterable of str, got {type_name(source)}")
    specials = tuple(special_tokens)
    patterns.compiled(pattern)  # fail early on a bad pattern
    if isinstance(source, str):
        check_not_a_file_name(source)
        # In ~1 MB blocks (cut where the pre-tokens cannot change), so the list of
        # pre-tokens in memory at once is a block's, not the whole text's.
        jobs: Iterable[str] = text_blocks(source, pattern, specials)
    elif isinstance(source, os.PathLike):
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"training source {path} is not a file")
        jobs = file_blocks(path, pattern, specials)
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



def pop_best(heap: list, counts: dict, key) -> tuple[int, object] | None:
    """Pop the pair with the largest current count from a lazy max-heap of ``(-count, key(pair), pair)``.

    Counts only ever change in ``counts``, so an entry can be stale: one whose
    count has since changed is pushed back with its current count, one whose
    pair is gone is dropped. Returns ``(count, pair)``, or None once the heap is empty.
    """
    while heap:
        neg, _, pair = heapq.heappop(heap)
        current = counts.get(pair, 0)
        if current == -neg:
            return current, pair
        if current > 0:
            heapq.heappush(heap, (-current, key(pair), pair))
    return None


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
    allow_smaller: bool = False,
) -> "ByteBPE":
    """Train byte-level BPE to ``vocab_size`` tokens (256 bytes + merges + specials).

    Must equal `reference_train` on the same pre-token counts. Pair counts are
    updated only for words containing the merged pair, and the best pair comes
    from a max-heap whose stale entries are re-checked when they surface
    (a pair's count never grows after the step that created it, so the top
    entry, once confirmed current, is the true maximum).

    When no pair occurs ``min_frequency`` times any more before ``vocab_size``
    is reached (a tiny corpus), the tokenizer is smaller and
    `toklab.base.checks.SmallVocabularyWarning` says so, unless ``allow_smaller``
    (the rule every trainer follows).
    """
    check_int(vocab_size, "vocab_size", minimum=1)
    check_int(min_frequency, "min_frequency", minimum=0)
    check_tie_break(tie_break)
    patterns.resolve(pattern)
    if isinstance(special_tokens, str):
        raise TypeError(
            f"special_tokens must be a list of str, got the str {special_tokens!r}"
        )
    specials = list(dict.fromkeys(special_tokens))
    if vocab_size < 256 + len(specials):
        raise ValueError(
            f"vocab_size={vocab_size} is too small: it must be at least 256 "
            f"(one token per byte) + {len(specials)} special tokens "
            f"= {256 + len(specials)}"
        )
    if vocab_size - len(specials) > 0x110000:  # one character per symbol (see below)
        raise ValueError(
            f"vocab_size={vocab_size} is too large: "
            f"at most {0x110000 + len(specials):,} is supported"
        )
    counts = pretoken_counts(source, pattern, specials, processes)
    if not counts:
        raise ValueError(
            "the training corpus is empty (no text outside special tokens)"
        )
    num_merges = vocab_size - 256 - len(specials)

    # Distinct pre-tokens in a fixed order, so nothing depends on hash order.
    try:
        items = sorted((piece.encode("utf-8"), c) for piece, c in counts.items())
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end]
        raise ValueError(
            f"training text contains a lone surrogate ({bad!r} in {exc.object!r}), "
            "which has no UTF-8 form; fix the text (e.g. decode it with "
            "errors='replace') before training"
        ) from None
    # A word is a str with one character per symbol: chr(ID), so the bytes decoded
    # as Latin-1 to start with and chr(256 + k) for merge k. A pair is the
    # two-character string of its symbols, and merging a word is str.replace,
    # which works left to right without overlaps exactly as `merge_pair` does.
    words: list[str] = [b.decode("latin-1") for b, _ in items]
    freq: list[int] = [c for _, c in items]
    del counts, items
    sym: list[bytes] = [bytes([i]) for i in range(256)]

    # pair -> count, and pair -> the words it occurs in (a list that may hold stale
    # words and repeats: it is read only when the pair is merged, then deduplicated)
    pair_count: dict[str, int] = {}
    where: dict[str, list[int]] = {}
    for w, word in enumerate(words):
        c = freq[w]
        for i in range(len(word) - 1):
            pair = word[i : i + 2]
            n = pair_count.get(pair)
            if n is None:
                pair_count[pair] = c
                where[pair] = [w]
            else:
                pair_count[pair] = n + c
                where[pair].append(w)

    if tie_break == "smallest":
        def key(p: str) -> tuple:
            return (sym[ord(p[0])], sym[ord(p[1])])
    else:
        def key(p: str) -> tuple:
            return (_inverted(sym[ord(p[0])]), _inverted(sym[ord(p[1])]))

    heap = [(-c, key(p), p) for p, c in pair_count.items()]
    heapq.heapify(heap)

    merges: list[tuple[bytes, bytes]] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=num_merges, desc="BPE merges", unit="merge")
    while len(merges) < num_merges:
        best = pop_best(heap, pair_count, key)
        if best is None or best[0] < min_frequency:
            break
        pair = best[1]
        a, b = ord(pair[0]), ord(pair[1])
        new_id = len(sym)
        sym.append(sym[a] + sym[b])
        merges.append((sym[a], sym[b]))
        new = chr(new_id)
        created: list[str] = []
        for w in dict.fromkeys(where.pop(pair)):
            # The counts of the pairs next to each merge site change: for an occurrence
            # with left neighbour p and right neighbour q, (p, a) and (b, q) are broken
            # and (p, new) and (new, q) made. After a back-to-back occurrence
            # (a b a b -> new new) the left neighbour is the new symbol.
            word = words[w]
            i = word.find(pair)
            if i < 0:
                continue  # the index is a superset: this word lost the pair earlier
            c, end, last = freq[w], len(word) - 2, -1
            while i >= 0:
                if i:
                    if i == last:
                        broken, made = new + pair[0], new + new
                    else:
                        broken, made = word[i - 1 : i + 1], word[i - 1] + new
                    if broken != pair:  # "a a a": the merged pair is dropped below
                        k = pair_count[broken] - c
                        if k:
                            pair_count[broken] = k
                        else:
                            del pair_count[broken]
                    k = pair_count.get(made)
                    if k is None:
                        pair_count[made] = c
                        created.append(made)
                        where.setdefault(made, []).append(w)
                    else:
                        pair_count[made] = k + c
                        where[made].append(w)
                if i < end:
                    broken = word[i + 1 : i + 3]
                    if broken != pair:
                        k = pair_count[broken] - c
                        if k:
                            pair_count[broken] = k
                        else:
                            del pair_count[broken]
                    made = new + word[i + 2]
                    k = pair_count.get(made)
                    if k is None:
                        pair_count[made] = c
                        created.append(made)
                        where.setdefault(made, []).append(w)
                    else:
                        pair_count[made] = k + c
                        where[made].append(w)
                last = i + 2
                i = word.find(pair, last)
            words[w] = word.replace(pair, new)
        del pair_count[pair]
        for p in dict.fromkeys(created):
            if p in pair_count:
                heapq.heappush(heap, (-pair_count[p], key(p), p))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    rarest = max(min_frequency, 1)
    warn_smaller("toklab.bpe.train", 256 + len(merges) + len(specials), vocab_size,
                 f"after {len(merges)} merges no pair of adjacent tokens occurs "
                 f"{rarest} or more times", allow_smaller)
    return ByteBPE(merges, pattern=pattern, special_tokens=specials)

