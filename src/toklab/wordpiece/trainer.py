"""Fast WordPiece training: incremental counts and a lazy max-heap, from text to a tokenizer.

`train_vocab` must return exactly what `toklab.wordpiece.reference.reference_train`
returns (``tests/wordpiece/test_fast_vs_reference.py``). `word_counts` runs
BERT's normalizer and pre-tokenizer over a text, a file or documents; `train`
puts the two together and returns a `toklab.wordpiece.WordPiece`.
"""

from __future__ import annotations

import heapq
import os
from itertools import chain
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..base.checks import check_int, check_not_a_file_name, not_utf8, type_name, warn_smaller
from ..normalizers.bert import BertNormalizer, char_tables, ideographs_apart, run_tables
from ..pre_tokenizers.bert import split_rule
from .model import BERT_SPECIAL_TOKENS, WordPiece
from .reference import Score, join, prepare

__all__ = ["train_vocab", "word_counts", "train"]


def train_vocab(
    words: Mapping[str, int],
    vocab_size: int,
    *,
    special_tokens: Sequence[str] = (),
    score: Score = "likelihood",
    min_frequency: int = 1,
    prefix: str = "##",
    initial: Sequence[str] | None = None,
    progress: bool = False,
) -> list[str]:
    """`reference_train` with incremental counts and a lazy max-heap; returns the same list.

    Pair counts, symbol counts and a pair -> words index are updated only for
    the words that contain the merged pair. With frequency scores the heap is
    lazy, as in BPE: a pair is pushed when its count rises, and an entry whose
    count has since fallen is pushed back with the present count when it
    surfaces. For likelihood scores the heap holds one entry per (pair, key)
    ever pushed; ``current`` maps each live pair to its present key, and a
    popped entry whose key differs from it is stale and dropped. The likelihood score of a pair
    (x, z) also *rises* when x is merged away and f(x) falls, although no
    word containing (x, z) changed. So after each merge every pair that
    contains a symbol whose count changed is re-scored too, and pushed again
    if its key moved. Every live pair's current key is therefore always in
    the heap, and the first non-stale entry popped is the true best pair.
    """
    vocab, index, items = prepare(words, vocab_size, special_tokens, score, min_frequency, prefix, initial)
    likelihood = score == "likelihood"
    min_count = max(min_frequency, 1)
    # split_word's symbols by ID: the first character plain, the rest prefixed
    cont = {t[len(prefix) :]: i for t, i in index.items() if len(t) == len(prefix) + 1 and t.startswith(prefix)}
    corpus: list[list[int]] = [[index[w[0]], *map(cont.__getitem__, w[1:])] for w, _ in items]
    freq: list[int] = [c for _, c in items]

    # Counted in C where possible: symbols per group of words with the same count,
    # then each pair's count as the sum of its words' counts (a word that holds the
    # pair twice is listed twice).
    sym_count: dict[int, int] = {}
    by_count: dict[int, list[list[int]]] = {}
    for word, c in zip(corpus, freq):
        by_count.setdefault(c, []).append(word)
    for c, group in by_count.items():
        for s, k in Counter(chain.from_iterable(group)).items():
            sym_count[s] = sym_count.get(s, 0) + k * c
    # pair -> the words it occurs in; a list, so a word may be listed twice or
    # after losing the pair (both are skipped when the pair is merged)
    where: defaultdict[tuple[int, int], list[int]] = defaultdict(list)
    for w, word in enumerate(corpus):
        for pair in zip(word, word[1:]):
            where[pair].append(w)
    weight = freq.__getitem__
    pair_count: dict[tuple[int, int], int] = {pair: sum(map(weight, ws)) for pair, ws in where.items()}
    # pairs_with[s]: live pairs that have s as a part (only needed to re-score for likelihood)
    pairs_with: dict[int, set[tuple[int, int]]] = {}
    if likelihood:
        for a, b in pair_count:
            pairs_with.setdefault(a, set()).add((a, b))
            pairs_with.setdefault(b, set()).add((a, b))

    def key(pair: tuple[int, int]) -> tuple:  # smaller is better (heapq is a min-heap)
        n = pair_count[pair]
        if likelihood:
            return (-(n / (sym_count[pair[0]] * sym_count[pair[1]])), -n, pair[0], pair[1])
        return (-n, -n, pair[0], pair[1])

    current: dict[tuple[int, int], tuple] = {}
    for pair, n in pair_count.items():
        if n >= min_count:
            current[pair] = key(pair)
    heap = list(current.values())
    heapq.heapify(heap)

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=vocab_size - len(vocab), desc="WordPiece", unit="token")
    while len(vocab) < vocab_size and heap:
        top = heapq.heappop(heap)
        pair = (top[2], top[3])
        if likelihood:
            if current.get(pair) != top:
                continue  # stale: the pair is gone, too rare, or has a newer key
        else:
            n = pair_count.get(pair, 0)
            if n != -top[0]:
                # Stale: the count fell since (a count that rises is pushed at once),
                # so it goes back in with its present count, unless it is too rare now.
                if n >= min_count:
                    heapq.heappush(heap, (-n, -n, pair[0], pair[1]))
                continue
        a, b = pair
        token = join(vocab[a], vocab[b], prefix)
        new = index.get(token)
        if new is None:
            new = index[token] = len(vocab)
            vocab.append(token)
            if bar is not None:
                bar.update(1)

        delta: defaultdict[tuple[int, int], int] = defaultdict(int)
        sym_delta: dict[int, int] = {}
        merged = 0
        consumed = 2 if a == b else 1  # a's used up by one merge
        for w in dict.fromkeys(where.pop(pair)):
            # `merge_symbols` on this word, noting the pair-count changes at each merge
            # site as it goes: for an occurrence with left neighbour p and right
            # neighbour q, (p, a), (a, b) and (b, q) lose one and (p, new) and
            # (new, q) gain one; p comes from the output built so far, so
            # back-to-back occurrences come out right.
            word = corpus[w]
            left_parts = word.count(a)  # the a's still to look at; no exception-driven search
            if not left_parts:
                continue  # the index is a superset: this word lost the pair earlier
            find = word.index
            i = find(a)
            n, c = len(word), freq[w]
            if left_parts == 1:
                # The usual case, written out: one a, so at most one occurrence,
                # and the word is changed in place.
                if i + 1 == n or word[i + 1] != b:
                    continue
                if i:
                    left = word[i - 1]
                    q = (left, a)
                    delta[q] -= c
                    q = (left, new)
                    delta[q] += c
                    where[q].append(w)
                if i + 2 < n:
                    right = word[i + 2]
                    q = (b, right)
                    delta[q] -= c
                    q = (new, right)
                    delta[q] += c
                    where[q].append(w)
                word[i : i + 2] = (new,)
                merged += c
                continue
            out: list[int] = []
            start = occurrences = 0
            while True:
                if i + 1 >= n or word[i + 1] != b:
                    search = i + 1
                    left_parts -= 1
                else:
                    out += word[start:i]
                    occurrences += 1
                    left_parts -= consumed
                    if out:
                        left = out[-1]
                        q = (left, a)
                        delta[q] -= c
                        q = (left, new)
                        delta[q] += c
                        where[q].append(w)
                    if i + 2 < n:
                        right = word[i + 2]
                        q = (b, right)
                        delta[q] -= c
                        q = (new, right)
                        delta[q] += c
                        where[q].append(w)
                    out.append(new)
                    start = search = i + 2
                if left_parts <= 0:
                    break
                i = find(a, search)
            if not occurrences:
                continue
            out += word[start:]
            corpus[w] = out
            merged += occurrences * c
        delta[pair] -= merged
        sym_delta[a] = sym_delta.get(a, 0) - merged
        sym_delta[b] = sym_delta.get(b, 0) - merged
        sym_delta[new] = sym_delta.get(new, 0) + merged

        if not likelihood:
            # A frequency key moves only with the pair's own count, and only a rise needs a
            # push now: a pair whose count fell is re-pushed when its old entry surfaces.
            for p, d in delta.items():
                if not d:
                    continue
                n = pair_count.get(p, 0) + d
                if n:
                    pair_count[p] = n
                else:
                    del pair_count[p]
                if d > 0 and n >= min_count:
                    heapq.heappush(heap, (-n, -n, p[0], p[1]))
            for s, d in sym_delta.items():
                sym_count[s] = sym_count.get(s, 0) + d
            continue
        touched: set[tuple[int, int]] = set()
        for p, d in delta.items():
            if not d:
                continue
            n = pair_count.get(p, 0) + d
            if n:
                if p not in pair_count:
                    pairs_with.setdefault(p[0], set()).add(p)
                    pairs_with.setdefault(p[1], set()).add(p)
                pair_count[p] = n
            else:
                del pair_count[p]
                pairs_with[p[0]].discard(p)
                pairs_with[p[1]].discard(p)
            touched.add(p)
        for s, d in sym_delta.items():
            sym_count[s] = sym_count.get(s, 0) + d
            if d:
                touched.update(pairs_with.get(s, ()))
        for p in touched:
            if pair_count.get(p, 0) >= min_count:
                k = key(p)
                if current.get(p) != k:
                    current[p] = k
                    heapq.heappush(heap, k)
            else:
                current.pop(p, None)
    if bar is not None:
        bar.close()
    return vocab


_LINES_PER_BATCH = 20_000


def _split_counts(text: str, raw: Counter) -> None:
    """Count ``text``'s tokens between the four characters BERT always splits on (space, tab, LF, CR)."""
    raw.update(text.replace("\t", " ").replace("\n", " ").replace("\r", " ").split(" "))


def _normalized_counts(raw: Counter, normalizer: BertNormalizer) -> Counter:
    """The BERT words of every raw token, weighted by its count: each distinct token normalized once.

    Space, tab, LF and CR become or stay whitespace under every normalizer
    option, NFD never moves a mark across them, and every other step maps one
    character at a time, so the words of a text are the words of its
    tokens between those characters, in order. Tokens with the same count
    are joined with spaces and go through the normalizer as one string;
    ASCII tokens and the rest are joined apart, so that the ASCII strings
    take `run_tables`' fast path. With CJK spacing on, the ideographs of the
    non-ASCII strings are counted in numpy (`ideographs_apart`) and each
    one's words found once: in Chinese text most words are single
    ideographs, and making a string of each was a fifth of the counting.
    """
    by_count: dict[tuple[int, bool], list[str]] = {}
    for token, c in raw.items():
        if token:
            by_count.setdefault((c, token.isascii()), []).append(token)
    flags = normalizer.flags
    tables = char_tables(*flags, extra=split_rule)  # what `bert_words` runs
    # with CJK spacing on, the ideographs are counted apart and the rest runs without it
    apart = char_tables(flags[0], False, *flags[2:], extra=split_rule) if normalizer.handle_chinese_chars else None
    counts: Counter = Counter()
    ideographs: Counter = Counter()
    for (c, ascii_), tokens in by_count.items():
        text = " ".join(tokens)
        if apart is None or ascii_:
            words = run_tables(text, tables).split(" ")
        else:
            text, found = ideographs_apart(text)
            words = run_tables(text, apart).split(" ")
            for code, k in found.items():
                ideographs[code] += k * c
        if c == 1:
            counts.update(words)  # counted in C, with no Counter in between
        else:
            for w, k in Counter(words).items():
                counts[w] += k * c
    for code, k in ideographs.items():
        # the words of one ideograph alone (NFD turns a compatibility ideograph into another)
        for w in run_tables(chr(code), tables).split(" "):
            counts[w] += k
    counts.pop("", None)
    return counts


def word_counts(
    source: str | os.PathLike | Iterable[str],
    *,
    lowercase: bool = True,
    strip_accents: bool | None = None,
    handle_chinese_chars: bool = True,
    clean_text: bool = True,
) -> Counter:
    """Count the words BERT's normalizer + pre-tokenizer produce from a text, a file or documents.

    Equals ``Counter(bert_words(text))`` over the whole source, but runs the
    normalizer once per distinct space-separated token (`_normalized_counts`).
    A file is read in batches of lines: cutting just after a line break never
    changes the words, because the break is whitespace and NFD does not
    reorder across it.
    """
    normalizer = BertNormalizer(
        lowercase=lowercase, strip_accents=strip_accents, handle_chinese_chars=handle_chinese_chars, clean_text=clean_text
    )
    raw: Counter = Counter()
    if isinstance(source, (bytes, bytearray)) or not (isinstance(source, (str, os.PathLike)) or hasattr(source, "__iter__")):
        raise TypeError(f"source must be a str, a path (os.PathLike) or an iterable of str, got {type_name(source)}")
    if isinstance(source, os.PathLike):
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"training source {path} is not a file")
        with open(path, encoding="utf-8", newline="") as fh:
            batch: list[str] = []
            try:
                for line in fh:
                    batch.append(line)
                    if len(batch) >= _LINES_PER_BATCH:
                        _split_counts("".join(batch), raw)
                        batch = []
            except UnicodeDecodeError as e:
                raise not_utf8(path, e) from None
            _split_counts("".join(batch), raw)
        return _normalized_counts(raw, normalizer)
    docs = [check_not_a_file_name(source)] if isinstance(source, str) else source
    for doc in docs:
        if not isinstance(doc, str):
            raise TypeError(f"training documents must be str, got {type(doc).__name__}")
        _split_counts(doc, raw)
    return _normalized_counts(raw, normalizer)


def train(
    source: str | os.PathLike | Iterable[str],
    vocab_size: int,
    *,
    special_tokens: Sequence[str] = BERT_SPECIAL_TOKENS,
    min_frequency: int = 1,
    score: Score = "likelihood",
    unk_token: str = "[UNK]",
    prefix: str = "##",
    max_input_chars_per_word: int = 100,
    lowercase: bool = True,
    strip_accents: bool | None = None,
    handle_chinese_chars: bool = True,
    clean_text: bool = True,
    progress: bool = False,
    allow_smaller: bool = False,
) -> "WordPiece":
    """Train a WordPiece tokenizer of at most ``vocab_size`` entries (specials included).

    ``source`` is a string, a file path (``os.PathLike``) or an iterable of
    documents. The text goes through the same normalizer and pre-tokenizer
    the returned tokenizer uses, then `train_vocab`. ``unk_token`` must be one
    of ``special_tokens``. With ``score="frequency"`` the result matches HF's
    ``WordPieceTrainer`` (up to HF's run-to-run order of ``##`` characters;
    see `toklab.wordpiece.reference`). HF returns a smaller vocabulary when
    ``vocab_size`` cannot hold the alphabet; this function raises instead.

    The likelihood score is largest for pairs of rare symbols that always
    occur together (f(xy) = f(x) = f(y) = 1 scores 1, the maximum), so with
    ``min_frequency=1`` many merges go to one-off pairs and the vocabulary
    compresses less than a frequency-trained one; raising ``min_frequency``
    is the usual remedy.

    When the corpus runs out of pairs (occurring ``min_frequency`` times)
    before ``vocab_size``, the tokenizer is smaller and
    `toklab.base.checks.SmallVocabularyWarning` says so, unless ``allow_smaller``
    (the rule every trainer follows).
    """
    check_int(vocab_size, "vocab_size", minimum=1)
    check_int(min_frequency, "min_frequency", minimum=0)
    if isinstance(special_tokens, str):
        raise TypeError(f"special_tokens must be a list of str, got the str {special_tokens!r}")
    if unk_token not in special_tokens:
        raise ValueError(f"unk_token {unk_token!r} must be one of special_tokens {tuple(special_tokens)!r}")
    options = dict(
        lowercase=lowercase,
        strip_accents=strip_accents,
        handle_chinese_chars=handle_chinese_chars,
        clean_text=clean_text,
    )
    counts = word_counts(source, **options)
    vocab = train_vocab(
        counts,
        vocab_size,
        special_tokens=special_tokens,
        score=score,
        min_frequency=min_frequency,
        prefix=prefix,
        progress=progress,
    )
    warn_smaller("toklab.wordpiece.train", len(vocab), vocab_size,
                 f"no pair of adjacent pieces occurs {max(min_frequency, 1)} or more times any more", allow_smaller)
    return WordPiece(
        vocab, unk_token=unk_token, prefix=prefix, max_input_chars_per_word=max_input_chars_per_word, **options
    )
