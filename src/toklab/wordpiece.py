"""WordPiece: BERT's text clean-up, likelihood-scored training, longest-match-first encoding.

WordPiece builds its vocabulary bottom-up like BPE, but the artifact is only a
vocabulary (no merge list), and encoding never replays training: each word is
cut greedily, longest vocabulary entry first. Three layers live here, in the
order the book teaches them:

* **BERT-style text processing.** `normalize` (clean-up, spaces around CJK
  ideographs, optional accent stripping and lowercasing) and `pre_tokenize`
  (split on whitespace, isolate every punctuation character). Together they
  reproduce HF ``normalizers.BertNormalizer`` + ``pre_tokenizers.BertPreTokenizer``
  character for character, including the places where HF's Unicode tables are
  older than Python's (see "Unicode tables" below).
* **Encoding one word.** `encode_word`: from the start of the word take the
  longest vocabulary entry (pieces after the first carry the ``##``
  continuation prefix), continue from where it ended, and if no entry matches
  at some position the *whole word* becomes the unknown token. There is no
  backtracking: with ``{a, ab, ##bc}`` the word ``abc`` takes ``ab`` and then
  fails on ``c``, although ``a`` + ``##bc`` would have worked.
* **Training.** A word is first cut into characters, the first one plain and
  every later one with ``##`` (``"abc"`` -> ``a ##b ##c``). Each step merges
  one adjacent pair everywhere and adds the merged string to the vocabulary
  (``a`` + ``##b`` -> ``ab``; ``##b`` + ``##c`` -> ``##bc``). Two scores pick
  the pair:

  - ``score="likelihood"`` (default): f(xy) / (f(x) * f(y)), where f counts
    pair and symbol occurrences in the current segmentation of the corpus,
    weighted by word frequency. This is the score usually given for WordPiece
    (log of it = PMI up to a constant). It rewards pairs whose parts rarely
    occur apart: with f(ab)=6, f(a)=f(b)=10 and f(qu)=2, f(q)=2, f(u)=10,
    BPE merges (a, b) (6 > 2) but WordPiece merges (q, u) (0.1 > 0.06).
  - ``score="frequency"``: f(xy), as BPE. **This is what HF ``tokenizers``'
    ``WordPieceTrainer`` does**: it is a thin wrapper around its
    ``BpeTrainer`` with ``continuing_subword_prefix="##"``, converted to a
    WordPiece vocabulary at the end; no likelihood score is computed anywhere.
    With the same order of initial symbols (see below), ``score="frequency"``
    reproduces HF's vocabulary token for token and ID for ID
    (``tests/test_wordpiece.py`` checks it on the bundled corpus).

  **Tie rule** (both scores): the highest score wins; among equal scores the
  pair that occurs more often; then the pair whose left part has the smaller
  vocabulary ID, then the smaller right-part ID. IDs are assigned in creation
  order: special tokens, then characters by code point, then their ``##``
  forms by code point, then merged strings in the order they were made. For
  ``score="frequency"`` this is exactly HF's rule (highest count, then the
  smallest pair of IDs). HF, however, assigns the IDs of the ``##`` forms in
  the iteration order of a Rust ``HashMap``, which is seeded randomly in each
  process, so HF's own vocabulary changes from run to run wherever a tie
  involves them (measured: 4-15 of 8,000 tokens differ between two runs on the
  bundled corpus). Pass ``initial=`` with HF's order to reproduce a given HF run.

  The likelihood score is compared as a Python float (the correctly rounded
  value of the exact fraction, so the order never inverts; two different
  fractions closer than one part in 2**53 count as a tie and fall to the
  next rule). Training stops at ``vocab_size`` entries or when no pair
  occurs at least ``min_frequency`` times. A merge whose string is already in
  the vocabulary reuses that entry's ID and does not grow it, as in HF. With
  words split into single characters this happens only when a special token
  spells the merged string, or when words contain the prefix characters
  (``#`` + ``###`` gives ``##``); BERT's pre-tokenizer isolates ``#``, so
  neither occurs with its specials. (A string such as ``abc`` cannot be built
  as ``ab`` + ``##c`` in one word and ``a`` + ``##bc`` in another: until it
  exists, no merge has crossed its edges, so the merges inside it happened in
  the global order in every word.) When it does happen, HF and this module
  part ways: HF's trainer never clears the count of a pair it has merged, so
  a pair rebuilt later by a reused ID comes back with its old count added,
  and is merged only in some words; here counts are exact. Found by a
  property test on words such as ``"a#a"``; it cannot arise after BERT's
  pre-tokenizer.

`reference_train` is the plain version (recount everything every step); `train_vocab`
is the fast one (incremental counts and a lazy heap); they must return the same list.

**Unicode tables.** HF's Rust code classifies characters with tables older
than Python 3.11's Unicode 14 database: about a hundred recent punctuation
characters are not punctuation for HF, thirteen recent format characters are
not removed, eighty-odd ranges of recent nonspacing marks survive accent
stripping, U+11938 is not decomposed, and ``char::is_whitespace`` (the
White_Space property) differs from ``str.isspace`` on U+001C..U+001F. Lowercasing
is per character (HF does not apply the Greek final-sigma rule that ``str.lower``
does), and HF lowercases 55 characters of Unicode 16 that Python 3.11 does not
know. The small tables at the end of this module record those differences; they
were measured by running HF on every code point, and a test re-checks all of
them against HF.
"""

from __future__ import annotations

import heapq
import os
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Literal

__all__ = [
    "BERT_SPECIAL_TOKENS",
    "normalize",
    "pre_tokenize",
    "encode_word",
    "word_counts",
    "split_word",
    "initial_vocab",
    "reference_train",
    "train_vocab",
    "train",
    "WordPiece",
]

Score = Literal["likelihood", "frequency"]

BERT_SPECIAL_TOKENS: tuple[str, ...] = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


# --------------------------------------------------------------------------
# BERT-style normalization and pre-tokenization
# --------------------------------------------------------------------------


def _ranges(spec: str) -> frozenset[int]:
    """Code points from a compact spec such as ``"061D 2E43-2E4F"`` (hex, inclusive)."""
    out: set[int] = set()
    for part in spec.split():
        lo, _, hi = part.partition("-")
        out.update(range(int(lo, 16), int(hi or lo, 16) + 1))
    return frozenset(out)


def _is_whitespace(ch: str) -> bool:
    """HF's whitespace: Rust ``char::is_whitespace``, i.e. the Unicode White_Space property."""
    return ch in _WHITE_SPACE


def _is_control(ch: str) -> bool:
    """Characters BERT's clean-up deletes: categories Cc, Cf, Co, Cs, except tab, LF, CR.

    Tab, LF and CR are controls in Unicode, but BERT treats them as whitespace.
    """
    if ch in "\t\n\r":
        return False
    cat = unicodedata.category(ch)
    if cat == "Cf":
        return ord(ch) not in _HF_NOT_FORMAT
    return cat in ("Cc", "Co", "Cs")


def _is_punctuation(ch: str) -> bool:
    """BERT's punctuation: all ASCII symbols (``$``, ``+``, ``^``, ... too) and Unicode P*."""
    cp = ord(ch)
    if cp < 128:
        return ch in _ASCII_PUNCT
    if cp in _HF_EXTRA_PUNCT:
        return True
    return unicodedata.category(ch)[0] == "P" and cp not in _HF_NOT_PUNCT


def _is_chinese_char(ch: str) -> bool:
    """CJK ideographs (the blocks BERT lists); kana and hangul are not included."""
    cp = ord(ch)
    for lo, hi in _CJK_RANGES:  # sorted by start
        if cp < lo:
            return False
        if cp <= hi:
            return True
    return False


def _is_nonspacing_mark(ch: str) -> bool:
    cp = ord(ch)
    if cp in _HF_EXTRA_MN:
        return True
    return unicodedata.category(ch) == "Mn" and cp not in _HF_NOT_MN


def _lower(ch: str) -> str:
    return _HF_EXTRA_LOWER.get(ord(ch)) or ch.lower()


class _CharTable(dict):
    """A ``str.translate`` table that computes each character's replacement on first use.

    Building full tables would mean classifying all 1.1 million code points up
    front; text only ever uses a few thousand of them.
    """

    def __init__(self, rule: Callable[[str], str | None]) -> None:
        super().__init__()
        self.rule = rule

    def __missing__(self, code: int) -> str | None:
        value = self.rule(chr(code))
        self[code] = value
        return value


def _clean_rule(ch: str) -> str | None:
    cp = ord(ch)
    if cp == 0 or cp == 0xFFFD or _is_control(ch):
        return None
    return " " if ch in "\t\n\r" or _is_whitespace(ch) else ch


def _cjk_rule(ch: str) -> str:
    return f" {ch} " if _is_chinese_char(ch) else ch


def _drop_mn_rule(ch: str) -> str | None:
    return None if _is_nonspacing_mark(ch) else ch


def _split_rule(ch: str) -> str:
    """Whitespace -> a space; punctuation -> itself between spaces (split on " " afterwards)."""
    return " " if _is_whitespace(ch) else f" {ch} " if _is_punctuation(ch) else ch


def _compose(rules: Sequence[Callable[[str], str | None]]) -> Callable[[str], str | None]:
    """Chain per-character rules; each rule sees every character the previous one produced."""

    def rule(ch: str) -> str | None:
        text = ch
        for r in rules:
            if len(text) == 1:  # the usual case: one character in, at most one out
                text = r(text) or ""
            else:
                text = "".join(r(c) or "" for c in text)
            if not text:
                return None
        return text

    return rule


@lru_cache(maxsize=None)
def _tables(
    clean_text: bool, handle_chinese_chars: bool, strip_accents: bool, lowercase: bool, split: bool
) -> tuple[_CharTable, _CharTable | None]:
    """The per-character stages fused into ``str.translate`` tables: one before NFD, one after.

    Every stage except NFD maps characters one at a time, so consecutive
    stages can run as one pass. NFD reorders combining marks across
    characters, so accent stripping splits the work in two.
    """
    before = [r for on, r in ((clean_text, _clean_rule), (handle_chinese_chars, _cjk_rule)) if on]
    after = [r for on, r in ((strip_accents, _drop_mn_rule), (lowercase, _lower), (split, _split_rule)) if on]
    if not strip_accents:
        return _CharTable(_compose(before + after)), None
    return _CharTable(_compose(before)), _CharTable(_compose(after))


_PRETOKEN = _CharTable(_split_rule)


def _nfd(text: str) -> str:
    if _HF_NO_DECOMPOSE in text:  # HF's tables predate this decomposition
        return _HF_NO_DECOMPOSE.join(unicodedata.normalize("NFD", p) for p in text.split(_HF_NO_DECOMPOSE))
    return unicodedata.normalize("NFD", text)


def _run(
    text: str, clean_text: bool, handle_chinese_chars: bool, strip_accents: bool, lowercase: bool, split: bool
) -> str:
    before, after = _tables(clean_text, handle_chinese_chars, strip_accents, lowercase, split)
    text = text.translate(before)
    if after is not None:
        text = _nfd(text).translate(after)
    return text


def normalize(
    text: str,
    *,
    lowercase: bool = True,
    strip_accents: bool | None = None,
    handle_chinese_chars: bool = True,
    clean_text: bool = True,
) -> str:
    """BERT's normalizer (HF ``BertNormalizer``), applied in HF's order.

    1. ``clean_text``: delete NUL, U+FFFD and control/format/private-use
       characters; turn every whitespace character (tab, newline, NBSP,
       ideographic space, ...) into a plain space.
    2. ``handle_chinese_chars``: put spaces around each CJK ideograph, so the
       pre-tokenizer makes every ideograph a word of its own.
    3. ``strip_accents``: decompose (NFD) and drop nonspacing marks:
       ``"Café"`` -> ``"Cafe"``. ``None`` means "same as ``lowercase``", as in
       HF and in the original BERT uncased models.
    4. ``lowercase``: character by character (``"ΟΔΟΣ"`` -> ``"οδοσ"``, without
       the final-sigma rule of ``str.lower``).
    """
    if strip_accents is None:
        strip_accents = lowercase
    return _run(text, clean_text, handle_chinese_chars, strip_accents, lowercase, False)


def _words(text: str, clean_text: bool, handle_chinese_chars: bool, strip_accents: bool, lowercase: bool) -> list[str]:
    """`normalize` then `pre_tokenize`, fused (same result, fewer passes over the text)."""
    return [w for w in _run(text, clean_text, handle_chinese_chars, strip_accents, lowercase, True).split(" ") if w]


def pre_tokenize(text: str) -> list[str]:
    """BERT's pre-tokenizer (HF ``BertPreTokenizer``): whitespace splits, punctuation stands alone.

    ``"Hey friend!  How are you?!?"`` -> ``Hey, friend, !, How, are, you, ?, !, ?``.
    Punctuation is ASCII's 32 symbols plus every Unicode punctuation character,
    so ``"e-mail"`` gives three words and ``"don't"`` gives ``don, ', t``.
    """
    return [w for w in text.translate(_PRETOKEN).split(" ") if w]


# --------------------------------------------------------------------------
# Encoding one word
# --------------------------------------------------------------------------


def encode_word(
    word: str,
    vocab: Mapping[str, object] | set[str] | Sequence[str],
    *,
    unk_token: str = "[UNK]",
    prefix: str = "##",
    max_input_chars_per_word: int = 100,
) -> list[str]:
    """Cut one pre-tokenized word longest-match-first; any failure makes the whole word ``unk_token``.

    At each position try the longest remaining substring first and shorten it
    one character at a time until it is in the vocabulary (with ``prefix``
    unless it starts the word). If nothing matches, return ``[unk_token]``
    for the whole word: the pieces found so far are dropped, because a partial
    answer would silently misrepresent the word. Words longer than
    ``max_input_chars_per_word`` characters are ``[unk_token]`` without a search.
    """
    if len(word) > max_input_chars_per_word:
        return [unk_token]
    pieces: list[str] = []
    start = 0
    while start < len(word):
        piece = None
        end = len(word)
        while end > start:
            candidate = word[start:end] if start == 0 else prefix + word[start:end]
            if candidate in vocab:
                piece = candidate
                break
            end -= 1
        if piece is None:
            return [unk_token]  # no backtracking: the whole word fails
        pieces.append(piece)
        start = end
    return pieces


# --------------------------------------------------------------------------
# Training: shared pieces
# --------------------------------------------------------------------------


def split_word(word: str, prefix: str = "##") -> list[str]:
    """A word as training starts it: first character plain, every later one prefixed.

    ``"abc"`` -> ``["a", "##b", "##c"]``.
    """
    return [word[0]] + [prefix + ch for ch in word[1:]]


def initial_vocab(words: Iterable[str], special_tokens: Sequence[str] = (), prefix: str = "##") -> list[str]:
    """The vocabulary before the first merge, in ID order.

    Special tokens (in the given order, duplicates dropped), then every
    character of the corpus by code point, then the ``prefix`` form of every
    character that occurs after a word's first position, by code point. Every
    character gets a plain entry even if it never starts a word, as in HF.
    """
    chars: set[str] = set()
    continued: set[str] = set()
    for word in words:
        chars.update(word)
        continued.update(word[1:])
    vocab = list(dict.fromkeys(special_tokens))
    seen = set(vocab)
    for token in sorted(chars) + [prefix + ch for ch in sorted(continued)]:
        if token not in seen:
            seen.add(token)
            vocab.append(token)
    return vocab


def _prepare(
    words: Mapping[str, int],
    vocab_size: int,
    special_tokens: Sequence[str],
    score: str,
    min_frequency: int,
    prefix: str,
    initial: Sequence[str] | None,
) -> tuple[list[str], dict[str, int], list[tuple[str, int]]]:
    """Validate the arguments; return the initial vocabulary, its index and the words in a fixed order."""
    if score not in ("likelihood", "frequency"):
        raise ValueError(f"score must be 'likelihood' or 'frequency', got {score!r}")
    if not prefix:
        raise ValueError("prefix must be a non-empty string such as '##'")
    items = sorted((w, c) for w, c in words.items() if w and c > 0)
    if not items:
        raise ValueError("the training corpus is empty (no words left after normalization and pre-tokenization)")
    if initial is None:
        vocab = initial_vocab((w for w, _ in items), special_tokens, prefix)
    else:
        vocab = list(initial)
        if len(set(vocab)) != len(vocab):
            dup = next(t for t, n in Counter(vocab).items() if n > 1)
            raise ValueError(f"initial vocabulary lists {dup!r} twice")
        given = set(vocab)
        missing = [t for t in initial_vocab((w for w, _ in items), special_tokens, prefix) if t not in given]
        if missing:
            raise ValueError(f"initial vocabulary lacks {len(missing)} required entries, e.g. {missing[:5]!r}")
    n_special = len(dict.fromkeys(special_tokens))
    if vocab_size < len(vocab):
        raise ValueError(
            f"vocab_size={vocab_size} is too small: the {n_special} special tokens and "
            f"{len(vocab) - n_special} characters (plain and {prefix!r}-prefixed) of the corpus "
            f"already need {len(vocab)} entries; use vocab_size >= {len(vocab)}"
        )
    if min_frequency < 0:
        raise ValueError(f"min_frequency must be >= 0, got {min_frequency}")
    return vocab, {t: i for i, t in enumerate(vocab)}, items


def _join(left: str, right: str, prefix: str) -> str:
    """The string a merge creates: the right part loses its continuation prefix."""
    return left + (right[len(prefix) :] if right.startswith(prefix) else right)


def _merge_symbols(word: list[int], a: int, b: int, new: int) -> list[int]:
    """Replace each non-overlapping (a, b), scanning left to right (``a a a`` -> ``aa a``)."""
    out: list[int] = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and word[i] == a and word[i + 1] == b:
            out.append(new)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


# --------------------------------------------------------------------------
# Training: the textbook version
# --------------------------------------------------------------------------


def reference_train(
    words: Mapping[str, int],
    vocab_size: int,
    *,
    special_tokens: Sequence[str] = (),
    score: Score = "likelihood",
    min_frequency: int = 1,
    prefix: str = "##",
    initial: Sequence[str] | None = None,
) -> list[str]:
    """Learn a WordPiece vocabulary (in ID order) from word counts, recounting everything each step.

    ``words`` maps pre-tokenized words to counts, e.g. ``{"hug": 10, "pug": 5}``.
    Each step counts every symbol and every adjacent pair (weighted by word
    count), scores the pairs that occur at least ``min_frequency`` times, and
    merges the best one everywhere (tie rule in the module docstring).
    """
    vocab, index, items = _prepare(words, vocab_size, special_tokens, score, min_frequency, prefix, initial)
    corpus = [([index[s] for s in split_word(w, prefix)], c) for w, c in items]
    while len(vocab) < vocab_size:
        symbols: Counter = Counter()
        pairs: Counter = Counter()
        for word, c in corpus:
            for s in word:
                symbols[s] += c
            for pair in zip(word, word[1:]):
                pairs[pair] += c
        eligible = [p for p, n in pairs.items() if n >= min_frequency]
        if not eligible:
            break

        def rank(p: tuple[int, int]) -> tuple:  # larger is better
            n = pairs[p]
            value = n if score == "frequency" else n / (symbols[p[0]] * symbols[p[1]])
            return (value, n, -p[0], -p[1])

        a, b = max(eligible, key=rank)
        token = _join(vocab[a], vocab[b], prefix)
        if token not in index:
            index[token] = len(vocab)
            vocab.append(token)
        corpus = [(_merge_symbols(word, a, b, index[token]), c) for word, c in corpus]
    return vocab


# --------------------------------------------------------------------------
# Training: the fast version
# --------------------------------------------------------------------------


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
    the words that contain the merged pair. The heap holds one entry per
    (pair, key) ever pushed; ``current`` maps each live pair to its present
    key, and a popped entry whose key differs from it is stale and dropped.
    That is enough for frequency scores, but the likelihood score of a pair
    (x, z) also *rises* when x is merged away and f(x) falls, although no
    word containing (x, z) changed. So after each merge every pair that
    contains a symbol whose count changed is re-scored too, and pushed again
    if its key moved. Every live pair's current key is therefore always in
    the heap, and the first non-stale entry popped is the true best pair.
    """
    vocab, index, items = _prepare(words, vocab_size, special_tokens, score, min_frequency, prefix, initial)
    likelihood = score == "likelihood"
    min_count = max(min_frequency, 1)
    corpus: list[list[int]] = [[index[s] for s in split_word(w, prefix)] for w, _ in items]
    freq: list[int] = [c for _, c in items]

    sym_count: dict[int, int] = {}
    pair_count: dict[tuple[int, int], int] = {}
    where: dict[tuple[int, int], set[int]] = {}
    for w, word in enumerate(corpus):
        c = freq[w]
        for s in word:
            sym_count[s] = sym_count.get(s, 0) + c
        for pair in zip(word, word[1:]):
            pair_count[pair] = pair_count.get(pair, 0) + c
            where.setdefault(pair, set()).add(w)
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
        if current.get(pair) != top:
            continue  # stale: the pair is gone, too rare, or has a newer key
        a, b = pair
        token = _join(vocab[a], vocab[b], prefix)
        new = index.get(token)
        if new is None:
            new = index[token] = len(vocab)
            vocab.append(token)
            if bar is not None:
                bar.update(1)

        delta: dict[tuple[int, int], int] = {}
        sym_delta: dict[int, int] = {}
        for w in where.pop(pair):
            word = corpus[w]
            merged = _merge_symbols(word, a, b, new)
            if len(merged) == len(word):
                continue  # the index is a superset: this word lost the pair earlier
            c = freq[w]
            k = (len(word) - len(merged)) * c
            sym_delta[a] = sym_delta.get(a, 0) - k
            sym_delta[b] = sym_delta.get(b, 0) - k
            sym_delta[new] = sym_delta.get(new, 0) + k
            for p in zip(word, word[1:]):
                delta[p] = delta.get(p, 0) - c
            for p in zip(merged, merged[1:]):
                delta[p] = delta.get(p, 0) + c
                if new in p:
                    where.setdefault(p, set()).add(w)
            corpus[w] = merged

        touched: set[tuple[int, int]] = set()
        for p, d in delta.items():
            if not d:
                continue
            n = pair_count.get(p, 0) + d
            if n:
                if p not in pair_count and likelihood:
                    pairs_with.setdefault(p[0], set()).add(p)
                    pairs_with.setdefault(p[1], set()).add(p)
                pair_count[p] = n
            else:
                del pair_count[p]
                if likelihood:
                    pairs_with[p[0]].discard(p)
                    pairs_with[p[1]].discard(p)
            touched.add(p)
        for s, d in sym_delta.items():
            sym_count[s] = sym_count.get(s, 0) + d
            if likelihood and d:
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


# --------------------------------------------------------------------------
# From text to a tokenizer
# --------------------------------------------------------------------------

_LINES_PER_BATCH = 20_000


def word_counts(
    source: str | os.PathLike | Iterable[str],
    *,
    lowercase: bool = True,
    strip_accents: bool | None = None,
    handle_chinese_chars: bool = True,
    clean_text: bool = True,
) -> Counter:
    """Count the words BERT's normalizer + pre-tokenizer produce from a text, a file or documents.

    A file is read in batches of lines: cutting just after a line break never
    changes the words, because the break is whitespace and NFD does not
    reorder across it.
    """
    flags = (clean_text, handle_chinese_chars, lowercase if strip_accents is None else strip_accents, lowercase)
    counts: Counter = Counter()
    if isinstance(source, os.PathLike):
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"training source {path} is not a file")
        with open(path, encoding="utf-8", newline="") as fh:
            batch: list[str] = []
            for line in fh:
                batch.append(line)
                if len(batch) >= _LINES_PER_BATCH:
                    counts.update(_words("".join(batch), *flags))
                    batch = []
            counts.update(_words("".join(batch), *flags))
        return counts
    docs = [source] if isinstance(source, str) else source
    for doc in docs:
        if not isinstance(doc, str):
            raise TypeError(f"training documents must be str, got {type(doc).__name__}")
        counts.update(_words(doc, *flags))
    return counts


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
) -> "WordPiece":
    """Train a WordPiece tokenizer of at most ``vocab_size`` entries (specials included).

    ``source`` is a string, a file path (``os.PathLike``) or an iterable of
    documents. The text goes through the same normalizer and pre-tokenizer
    the returned tokenizer uses, then `train_vocab`. ``unk_token`` must be one
    of ``special_tokens``. With ``score="frequency"`` the result matches HF's
    ``WordPieceTrainer`` (up to HF's run-to-run order of ``##`` characters;
    see the module docstring). HF returns a smaller vocabulary when
    ``vocab_size`` cannot hold the alphabet; this function raises instead.

    The likelihood score is largest for pairs of rare symbols that always
    occur together (f(xy) = f(x) = f(y) = 1 scores 1, the maximum), so with
    ``min_frequency=1`` many merges go to one-off pairs and the vocabulary
    compresses less than a frequency-trained one; raising ``min_frequency``
    is the usual remedy.
    """
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
    return WordPiece(
        vocab, unk_token=unk_token, prefix=prefix, max_input_chars_per_word=max_input_chars_per_word, **options
    )


# --------------------------------------------------------------------------
# The tokenizer object
# --------------------------------------------------------------------------

_CACHE_LIMIT = 200_000


class WordPiece:
    """A BERT-style WordPiece tokenizer: normalizer, pre-tokenizer, longest-match-first model.

    ``vocab`` is a list (ID = position) or a dict token -> ID. Text goes
    through `normalize` and `pre_tokenize` with the given options, and each
    word through `encode_word`. No special tokens are recognised in the text
    and none are added ([CLS]/[SEP] belong to a post-processor), so
    ``encode`` equals HF's ``Tokenizer.encode(text, add_special_tokens=False).ids``
    for the same vocabulary and options.
    """

    def __init__(
        self,
        vocab: Mapping[str, int] | Sequence[str],
        *,
        unk_token: str = "[UNK]",
        prefix: str = "##",
        max_input_chars_per_word: int = 100,
        lowercase: bool = True,
        strip_accents: bool | None = None,
        handle_chinese_chars: bool = True,
        clean_text: bool = True,
    ) -> None:
        if isinstance(vocab, Mapping):
            token_to_id = dict(vocab)
            for token, i in token_to_id.items():
                if not isinstance(token, str) or not isinstance(i, int) or isinstance(i, bool) or i < 0:
                    raise ValueError(f"vocabulary entry {token!r}: {i!r} must map a str to an ID >= 0")
        else:
            if isinstance(vocab, str):
                raise TypeError("vocab must be a list of tokens or a dict token -> ID, not a str")
            token_to_id = {}
            for i, token in enumerate(vocab):
                if not isinstance(token, str):
                    raise ValueError(f"vocabulary entry {i} is {token!r}, not a str")
                if token in token_to_id:
                    raise ValueError(
                        f"token {token!r} appears twice in the vocabulary (IDs {token_to_id[token]} and {i})"
                    )
                token_to_id[token] = i
        id_to_token: dict[int, str] = {}
        for token, i in token_to_id.items():
            if i in id_to_token:
                raise ValueError(f"ID {i} is given to both {id_to_token[i]!r} and {token!r}")
            id_to_token[i] = token
        if unk_token not in token_to_id:
            raise ValueError(f"unk_token {unk_token!r} is not in the vocabulary")
        if not prefix:
            raise ValueError("prefix must be a non-empty string such as '##'")
        if max_input_chars_per_word < 1:
            raise ValueError(f"max_input_chars_per_word must be >= 1, got {max_input_chars_per_word}")
        self.vocab: dict[str, int] = token_to_id
        self.id_to_token_map: dict[int, str] = id_to_token
        self.unk_token = unk_token
        self.unk_id = token_to_id[unk_token]
        self.prefix = prefix
        self.max_input_chars_per_word = max_input_chars_per_word
        self.lowercase = lowercase
        self.strip_accents = lowercase if strip_accents is None else strip_accents
        self.handle_chinese_chars = handle_chinese_chars
        self.clean_text = clean_text
        # Longest candidates worth trying, in characters, at a word start and after it.
        self._max_first = max((len(t) for t in token_to_id if not t.startswith(prefix)), default=0)
        self._max_cont = max((len(t) - len(prefix) for t in token_to_id if t.startswith(prefix)), default=0)
        self._cache: dict[str, list[int]] = {}

    # -- pipeline stages -------------------------------------------------

    def normalize(self, text: str) -> str:
        """The normalizer stage with this tokenizer's options (see `normalize`)."""
        return normalize(
            text,
            lowercase=self.lowercase,
            strip_accents=self.strip_accents,
            handle_chinese_chars=self.handle_chinese_chars,
            clean_text=self.clean_text,
        )

    def pre_tokenize(self, text: str) -> list[str]:
        """Normalize, then split into words (`normalize` + `pre_tokenize`, fused)."""
        return _words(text, self.clean_text, self.handle_chinese_chars, self.strip_accents, self.lowercase)

    def encode_word(self, word: str) -> list[str]:
        """Longest-match-first pieces of one already normalized word (see `encode_word`).

        Same result as the module-level `encode_word`; candidates longer than
        the longest vocabulary entry are skipped because they cannot match.
        """
        vocab, prefix = self.vocab, self.prefix
        n = len(word)
        if n > self.max_input_chars_per_word:
            return [self.unk_token]
        pieces: list[str] = []
        start = 0
        while start < n:
            if start == 0:
                end = min(n, self._max_first)
                while end > 0 and word[:end] not in vocab:
                    end -= 1
                piece = word[:end]
            else:
                end = min(n, start + self._max_cont)
                while end > start and prefix + word[start:end] not in vocab:
                    end -= 1
                piece = prefix + word[start:end]
            if end == start:
                return [self.unk_token]
            pieces.append(piece)
            start = end
        return pieces

    def _word_ids(self, word: str) -> list[int]:
        ids = self._cache.get(word)
        if ids is None:
            ids = [self.vocab[p] for p in self.encode_word(word)]
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[word] = ids
        return ids

    def encode(self, text: str) -> list[int]:
        """Token IDs of ``text`` (no [CLS]/[SEP]; a word that cannot be cut is one [UNK])."""
        out: list[int] = []
        for word in self.pre_tokenize(text):
            out.extend(self._word_ids(word))
        return out

    def tokenize(self, text: str) -> list[str]:
        """Token strings of ``text``: ``"unaffable"`` -> e.g. ``["una", "##ffa", "##ble"]``."""
        return [self.id_to_token(i) for i in self.encode(text)]

    # -- IDs and decoding --------------------------------------------------

    def token_to_id(self, token: str) -> int:
        """The ID of ``token``; ValueError naming the token if it is not in the vocabulary."""
        try:
            return self.vocab[token]
        except (KeyError, TypeError):
            raise ValueError(f"token {token!r} is not in the vocabulary ({len(self)} entries)") from None

    def id_to_token(self, token_id: int) -> str:
        """The token with ID ``token_id``; ValueError naming the ID if there is none."""
        try:
            return self.id_to_token_map[token_id]
        except (KeyError, TypeError):
            raise ValueError(f"unknown token ID {token_id!r}: not in this vocabulary ({len(self)} entries)") from None

    def decode(self, ids: Iterable[int], *, cleanup: bool = True) -> str:
        """Join tokens as HF's ``decoders.WordPiece`` does: ``##`` pieces glue on, others get a space.

        With ``cleanup`` each token also loses the space before ``. ? ! ,`` and
        before ``n't 'm 's 've 're`` (HF applies these replacements token by
        token, so ``don ' t`` stays apart). Decoding is not an inverse: case,
        accents, the original spacing and every word that became [UNK] are
        gone. An unknown ID raises ValueError naming it and its position.
        """
        out: list[str] = []
        for pos, token_id in enumerate(ids):
            try:
                token = self.id_to_token_map.get(token_id)
            except TypeError:  # unhashable
                token = None
            if token is None:
                raise ValueError(
                    f"unknown token ID {token_id!r} at position {pos}: not in this vocabulary ({len(self)} entries)"
                )
            if pos:
                token = token[len(self.prefix) :] if token.startswith(self.prefix) else " " + token
            if cleanup:
                token = _cleanup(token)
            out.append(token)
        return "".join(out)

    def __len__(self) -> int:
        return len(self.vocab)

    def __repr__(self) -> str:
        return (
            f"WordPiece(vocab={len(self)} tokens, unk_token={self.unk_token!r}, "
            f"lowercase={self.lowercase}, strip_accents={self.strip_accents})"
        )

    # -- files ---------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> None:
        """Write BERT's ``vocab.txt``: one token per line, line number = ID (from 0).

        Only the vocabulary is stored, as in BERT; pass the normalizer options
        again to `load`. IDs must therefore run from 0 without gaps.
        """
        n = len(self.vocab)
        if set(self.id_to_token_map) != set(range(n)):
            raise ValueError("vocab.txt needs IDs 0..n-1 without gaps; this vocabulary has other IDs")
        for token in self.vocab:
            if not token or "\n" in token or "\r" in token:
                raise ValueError(f"token {token!r} cannot be written as one line of vocab.txt")
        text = "".join(self.id_to_token_map[i] + "\n" for i in range(n))
        Path(path).write_text(text, encoding="utf-8", newline="\n")

    @classmethod
    def load(cls, path: str | os.PathLike, **options) -> "WordPiece":
        """Read a ``vocab.txt`` (BERT format); ``options`` go to the constructor.

        Each line minus its line ending (LF or CRLF) is one token; HF's reader
        also trims trailing spaces, which no real vocabulary relies on.
        Raises ValueError naming the file and line for undecodable bytes, an
        empty line, or a token listed twice (BERT's and HF's loaders would
        silently keep only one of the two IDs).
        """
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as err:
            line = path.read_bytes()[: err.start].count(b"\n") + 1
            raise ValueError(f"{path}: line {line} is not valid UTF-8") from None
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        seen: dict[str, int] = {}
        for number, line in enumerate(lines, start=1):
            token = line[:-1] if line.endswith("\r") else line
            if not token:
                raise ValueError(f"{path}: line {number} is empty (every line must hold one token)")
            if token in seen:
                raise ValueError(f"{path}: line {number} repeats token {token!r} from line {seen[token] + 1}")
            seen[token] = number - 1
        if not seen:
            raise ValueError(f"{path}: the vocabulary file is empty")
        return cls(seen, **options)


def _cleanup(token: str) -> str:
    for old, new in _CLEANUPS:
        token = token.replace(old, new)
    return token


_CLEANUPS = (
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" do not", " don't"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
)


# --------------------------------------------------------------------------
# Character tables
# --------------------------------------------------------------------------

_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")

# The Unicode White_Space property (what Rust's char::is_whitespace tests).
# str.isspace() would add U+001C..U+001F, which HF treats as ordinary characters.
_WHITE_SPACE = frozenset(chr(c) for c in _ranges("0009-000D 0020 0085 00A0 1680 2000-200A 2028-2029 202F 205F 3000"))

# BERT's "Chinese character" blocks: CJK Unified Ideographs and Extensions A-F,
# CJK Compatibility Ideographs and their Supplement. Google's BERT starts the
# Extension E range at 0x2B820; HF writes 0x2B920, so U+2B820..U+2B91F are not
# split by HF. We follow HF.
_CJK_RANGES = (
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0x2F800, 0x2FA1F),
)

# Where HF tokenizers 0.23 (Rust tables) and Python 3.11 (Unicode 14.0) disagree.
# Measured by running HF's BertNormalizer / BertPreTokenizer on every code point;
# tests/test_wordpiece.py repeats the measurement.
# Punctuation (P*) in Unicode 14 that HF does not isolate:
_HF_NOT_PUNCT = _ranges(
    "061D 09FD 0A76 0C77 0C84 1B7D-1B7E 2E43-2E4F 2E52-2E5D 10EAD 10F55-10F59 10F86-10F89 "
    "1144B-1144F 1145A-1145B 1145D 11660-1166C 116B9 1183B 11944-11946 119E2 11A3F-11A46 "
    "11A9A-11A9C 11A9E-11AA2 11C41-11C45 11C70-11C71 11EF7-11EF8 11FFF 12FF1-12FF2 "
    "16E97-16E9A 16FE2 1E95E-1E95F"
)
# Not punctuation in Unicode 14 (reclassified as So / Mn) but still punctuation for HF:
_HF_EXTRA_PUNCT = _ranges("166D 111C9")
# Format characters (Cf) in Unicode 14 that HF's clean-up keeps:
_HF_NOT_FORMAT = _ranges("0890-0891 08E2 110CD 13430-13438")
# Nonspacing marks (Mn) in Unicode 14 that HF's accent stripping keeps:
_HF_NOT_MN = _ranges(
    "07FD 0898-089F 08CA-08E1 09FE 0AFA-0AFF 0B55 0C04 0C3C 0D00 0D3B-0D3C 0D81 0EBA 180F "
    "1885-1886 1ABF-1ACE 1DF6-1DFB A82C A8C5 A8FF A9BD 10D24-10D27 10EAB-10EAC 10F46-10F50 "
    "10F82-10F85 11070 11073-11074 110C2 111C9 111CF 1123E 1133B 11438-1143F 11442-11444 "
    "11446 1145E 1182F-11837 11839-1183A 1193B-1193C 1193E 11943 119D4-119D7 119DA-119DB "
    "119E0 11A01-11A0A 11A33-11A38 11A3B-11A3E 11A47 11A51-11A56 11A59-11A5B 11A8A-11A96 "
    "11A98-11A99 11C30-11C36 11C38-11C3D 11C3F 11C92-11CA7 11CAA-11CB0 11CB2-11CB3 "
    "11CB5-11CB6 11D31-11D36 11D3A 11D3C-11D3D 11D3F-11D45 11D47 11D90-11D91 11D95 11D97 "
    "11EF3-11EF4 16F4F 16FE4 1CF00-1CF2D 1CF30-1CF46 1E000-1E006 1E008-1E018 1E01B-1E021 "
    "1E023-1E024 1E026-1E02A 1E130-1E136 1E2AE 1E2EC-1E2EF 1E944-1E94A"
)
# A spacing mark (Mc) in Unicode 14 that HF strips as a nonspacing mark:
_HF_EXTRA_MN = _ranges("1734")
# Decomposed by Python's NFD (U+11935 U+11930) but left whole by HF's:
_HF_NO_DECOMPOSE = "\U00011938"
# Unicode 16 case pairs that HF lowercases and Python 3.11 does not know:
_HF_EXTRA_LOWER: dict[int, str] = {
    0x1C89: "\u1c8a",
    0xA7CB: "\u0264",
    0xA7CC: "\ua7cd",
    0xA7CE: "\ua7cf",
    0xA7D2: "\ua7d3",
    0xA7D4: "\ua7d5",
    0xA7DA: "\ua7db",
    0xA7DC: "\u019b",
    **{cp: chr(cp + 0x20) for cp in range(0x10D50, 0x10D66)},
    **{cp: chr(cp + 0x1B) for cp in range(0x16EA0, 0x16EB9)},
}
