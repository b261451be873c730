"""Training a sentencepiece model from raw text: normalize and escape as sentencepiece does, then Unigram or BPE.

sentencepiece's trainer (``trainer_interface.cc``) never sees the text you give
it: it sees each sentence after the model's own normalizer, that is, after the
compiled table, the whitespace rules and the dummy prefix, with every space
escaped to ``▁``. Only then does it cut words (before each ``▁``, and around
digits with ``split_digits``) and learn pieces inside them. `train_model` runs
those same steps with the stage modules, so the model it returns normalizes at
encode time exactly as it did while training:

1. **Settings** (`toklab.sentencepiece.model_file.SPConfig`): a named rule is
   compiled into a table first (`toklab.normalizers.tables.compile_rule`),
   because a ``.model`` file can only carry a table and sentencepiece only runs
   tables; the model encodes with that table, so a saved model gives the same IDs
   in the ``sentencepiece`` library.
2. **Sentences to words**: each line is normalized
   (`toklab.normalizers.spm.SentencePieceNormalizer`) and cut into words
   (`toklab.pre_tokenizers.metaspace.split_words`). User-defined symbols, and the
   strings of the reserved pieces (``<unk>``, control symbols, ``<0xXX>``), are cut
   out of the words, so no learned piece contains or repeats one. With
   ``character_coverage < 1`` the rarest characters (the last ``1 - coverage`` of
   all character occurrences) are cut out too, as sentencepiece leaves them out
   of the vocabulary (they become ``<unk>``, or bytes with byte fallback).
3. **The model**: ``model_type="unigram"`` runs `toklab.unigram.train` on the
   word counts (seed, EM, pruning); ``"bpe"`` merges the most frequent adjacent
   pair of pieces inside words (`merge_chars` over
   characters), and, as sentencepiece's BPE trainer stores them, the ``i``-th
   merged piece scores ``-i`` and the characters come last, most frequent first.
4. **The vocabulary**, in sentencepiece's order: the unknown piece, the control
   symbols, the user-defined symbols, the 256 byte pieces with ``byte_fallback``,
   then the learned pieces. Scores are rounded to float32, as a ``.model`` file
   stores them.

Like sentencepiece (``split_by_unicode_script``, on by default), no piece mixes
Unicode scripts: words are cut where the script changes (`script_runs`), with
punctuation and digits in the Common script, Hiragana and Katakana counted as Han,
combining marks taking the script of the character before them and ``▁`` belonging
to none; ``split_by_number=False`` lets ASCII digits join any script.

What is not reproduced: sentencepiece samples sentences from large inputs; its BPE
trainer picks among equally frequent pairs by a hash and only recounts the most
frequent candidates. So the vocabularies are similar, not identical (the book
measures how similar); a model trained here is, however, a valid sentencepiece
model that the library runs exactly as toklab does.
"""

from __future__ import annotations

import functools
import heapq
import os
import re
import struct
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence

from ..base.checks import (MAX_SENTENCE_LENGTH, SkippedCount, check_bool, check_int, check_not_a_file_name,
                           check_str, not_utf8, short_sentences, type_name, warn_smaller)
from ..base.pieces import SPACE, UNK_SURFACE, byte_piece
from ..bpe.trainer import pop_best
from ..normalizers.nmt import NORMALIZATIONS
from ..normalizers.spm import SentencePieceNormalizer
from ..normalizers.tables import compile_rule
from ..pre_tokenizers.metaspace import split_words
from ..unigram.trainer import train as train_unigram
from .model_file import SPConfig, SPPiece

__all__ = ["sentences", "script_runs", "word_counts", "merge_chars", "covered_chars", "train_bpe_pieces", "train_model"]


def sentences(source: str | os.PathLike | Iterable[str]) -> Iterator[str]:
    """The training sentences: the lines of a text or of a UTF-8 file, or the items of an iterable."""
    if isinstance(source, str):
        yield from check_not_a_file_name(source).split("\n")
        return
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise ValueError(f"training source {path} is not a file")
        with open(path, encoding="utf-8", newline="") as fh:
            try:
                for line in fh:
                    yield line[:-1] if line.endswith("\n") else line
            except UnicodeDecodeError as e:
                raise not_utf8(path, e) from None
        return
    if isinstance(source, (bytes, bytearray)) or not hasattr(source, "__iter__"):
        raise TypeError(f"source must be a str, a path (os.PathLike) or an iterable of str, got {type_name(source)}")
    for k, sentence in enumerate(source):
        if not isinstance(sentence, str):
            raise TypeError(f"training sentences must be str; item {k} is {type_name(sentence)}")
        yield sentence


@functools.lru_cache(maxsize=1 << 16)
def _script(ch: str) -> str:
    from fontTools.unicodedata import script  # ISO 15924 codes from Unicode's Scripts.txt

    code = script(ch)
    return "Hani" if code in ("Hira", "Kana") or ch == "\u30fc" else code


def script_runs(word: str, *, split_by_number: bool = True) -> list[str]:
    """``word`` cut where the Unicode script changes: sentencepiece's rule that no piece mixes scripts.

    Punctuation, symbols and digits are the Common script (``Zyyy``), Hiragana,
    Katakana and ``ー`` count as Han, a combining mark (``Zinh``) takes the script of
    the character before it, ``▁`` belongs to no script, and with
    ``split_by_number=False`` neither do the ASCII digits.

    >>> script_runs("▁GPT-4o是")
    ['▁GPT', '-4', 'o', '是']
    """
    runs: list[str] = []
    start, prev = 0, None  # None: no script yet (anything may follow)
    for i, ch in enumerate(word):
        if ch == SPACE:
            continue
        s = _script(ch)
        if s == "Zinh":
            s = prev
        if not split_by_number and "0" <= ch <= "9":
            s = None
        if s is not None and prev is not None and s != prev:
            runs.append(word[start:i])
            start = i
        prev = s
    runs.append(word[start:])
    return runs


def word_counts(
    lines: Iterable[str], normalizer: SentencePieceNormalizer, *, cut: Sequence[str] = (),
    split_by_unicode_script: bool = True, split_by_number: bool = True,
) -> Counter:
    """Words of the normalized, escaped sentences and their counts; the strings in ``cut`` split words and vanish.

    With ``split_by_unicode_script`` each word is cut further into `script_runs`.
    """
    cfg = normalizer.config
    cutter = re.compile("|".join(re.escape(s) for s in sorted(set(cut), key=len, reverse=True))) if cut else None
    counts: Counter = Counter()
    for line in lines:
        text = normalizer.normalize(line)
        if not text:
            continue
        for word in split_words(text, split_by_whitespace=cfg.split_by_whitespace, split_digits=cfg.split_digits):
            if cutter is not None and cutter.search(word):
                counts.update(part for part in cutter.split(word) if part)
            else:
                counts[word] += 1
    if not split_by_unicode_script:
        return counts
    runs: Counter = Counter()
    for word, c in counts.items():
        for run in script_runs(word, split_by_number=split_by_number):
            runs[run] += c
    return runs


def covered_chars(counts: Counter, coverage: float) -> list[str]:
    """The characters to keep, most frequent first: the fewest whose occurrences reach ``coverage`` of all."""
    chars: Counter = Counter()
    for word, c in counts.items():
        for ch in word:
            chars[ch] += c
    ranked = sorted(chars.items(), key=lambda kv: (-kv[1], kv[0]))
    total = sum(chars.values())
    kept, running = [], 0
    for ch, n in ranked:
        if kept and running >= coverage * total:
            break
        kept.append(ch)
        running += n
    return kept


def train_bpe_pieces(counts: Counter, chars: Sequence[str], num_pieces: int) -> list[tuple[str, float]]:
    """sentencepiece-style BPE: up to ``num_pieces`` merged pieces (score ``-i``), then ``chars`` (scores go on down).

    Words are cut into characters; the most frequent adjacent pair is merged
    everywhere (ties: the smallest pair of strings), and its concatenation
    becomes a piece unless an earlier merge already made that string.
    """
    sym = list(chars)
    index = {ch: i for i, ch in enumerate(sym)}
    items = sorted(counts.items())
    words = [[index[ch] for ch in w] for w, _ in items]
    freq = [c for _, c in items]
    # A merge that spells an existing piece adds none, so ask again for the rest.
    while len(sym) - len(chars) < num_pieces:
        wanted = num_pieces - (len(sym) - len(chars))
        if len(merge_chars(words, freq, sym, wanted)) < wanted:
            break
    pieces = sym[len(chars) : len(chars) + num_pieces]
    out = [(p, -float(i)) for i, p in enumerate(pieces)]
    return out + [(ch, -float(len(out) + j)) for j, ch in enumerate(chars)]


def merge_chars(words: list[list[int]], freq: Sequence[int], sym: list[str], num_merges: int) -> list[tuple[int, int]]:
    """Up to ``num_merges`` merges of the most frequent adjacent pair of symbols, as sentencepiece's BPE trainer makes them.

    ``words`` are the distinct words as lists of IDs into ``sym`` (the
    characters, then each merged piece), ``freq`` their counts. Each merge
    appends its piece to ``sym`` and rewrites the words in place; a merge that
    spells an existing piece (two pairs can make the same string) reuses its ID.
    Ties go to the smallest pair of strings. Pair counts are updated only next to
    the merge sites, and stale heap entries are re-checked when they surface, as
    in `toklab.bpe.train`. Returns the merged pairs of IDs in order.
    """
    index = {s: i for i, s in enumerate(sym)}
    pair_count: dict[tuple[int, int], int] = {}
    where: dict[tuple[int, int], set[int]] = {}
    for w, word in enumerate(words):
        c = freq[w]
        for pair in zip(word, word[1:]):
            pair_count[pair] = pair_count.get(pair, 0) + c
            where.setdefault(pair, set()).add(w)

    def key(p: tuple[int, int]) -> tuple:
        return (sym[p[0]], sym[p[1]])

    heap = [(-c, key(p), p) for p, c in pair_count.items()]
    heapq.heapify(heap)

    merges: list[tuple[int, int]] = []
    while len(merges) < num_merges:
        best = pop_best(heap, pair_count, key)
        if best is None:
            break
        a, b = pair = best[1]
        new_sym = sym[a] + sym[b]
        new_id = index.get(new_sym)
        if new_id is None:
            new_id = index[new_sym] = len(sym)
            sym.append(new_sym)
        merges.append(pair)
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
                    if d > 0:  # a pair with the new symbol: new, or (reused symbol) grown
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
    return merges


def _merge_ids(
    word: list[int], a: int, b: int, new: int
) -> tuple[list[int], list[tuple[tuple[int, int], int]]] | None:
    """`toklab.bpe.reference.merge_pair` on IDs, plus the pair-count changes it causes (None if the pair is absent).

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


def _float32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def train_model(
    source: str | os.PathLike | Iterable[str],
    vocab_size: int,
    *,
    model_type: str = "unigram",
    normalization: str = "nmt_nfkc",
    add_dummy_prefix: bool = True,
    remove_extra_whitespaces: bool = True,
    byte_fallback: bool = False,
    split_by_whitespace: bool = True,
    split_digits: bool = False,
    split_by_unicode_script: bool = True,
    split_by_number: bool = True,
    character_coverage: float = 0.9995,
    control_symbols: Sequence[str] = ("<s>", "</s>"),
    user_defined_symbols: Sequence[str] = (),
    unk_piece: str = "<unk>",
    unk_surface: str = UNK_SURFACE,
    max_piece_length: int = 16,
    allow_smaller: bool = False,
    max_sentence_length: int | None = MAX_SENTENCE_LENGTH,
) -> tuple[list[SPPiece], SPConfig]:
    """Train a sentencepiece model of ``vocab_size`` pieces from raw text; return its pieces and settings.

    ``source`` is raw text (one sentence per line), a UTF-8 file (``os.PathLike``)
    or an iterable of sentences. The options are sentencepiece's trainer flags of
    the same names (``normalization`` is ``normalization_rule_name``: one of
    ``identity``, ``nfkc``, ``nmt_nfkc``). ``vocab_size`` counts every entry: the
    unknown piece, control and user-defined symbols, the 256 byte pieces with
    ``byte_fallback``, and the learned pieces, which always include every kept
    character (ValueError if those alone do not fit). If the corpus cannot fill
    the rest, the model is smaller and `toklab.base.checks.SmallVocabularyWarning` says
    so, unless ``allow_smaller``. As sentencepiece does, a sentence longer than
    ``max_sentence_length`` UTF-8 bytes (before normalization) is skipped, and a
    `toklab.base.checks.LongSentenceWarning` counts them (None: no limit).
    `toklab.sentencepiece.train` returns the result as a `toklab.SentencePieceTokenizer`.
    """
    check_int(vocab_size, "vocab_size", minimum=1)
    if max_sentence_length is not None:
        check_int(max_sentence_length, "max_sentence_length", minimum=1)
    check_int(max_piece_length, "max_piece_length", minimum=1)
    for flag, value in (("add_dummy_prefix", add_dummy_prefix), ("remove_extra_whitespaces", remove_extra_whitespaces),
                        ("byte_fallback", byte_fallback), ("split_by_whitespace", split_by_whitespace),
                        ("split_digits", split_digits), ("split_by_unicode_script", split_by_unicode_script),
                        ("split_by_number", split_by_number), ("allow_smaller", allow_smaller)):
        check_bool(value, flag)
    if model_type not in ("unigram", "bpe"):
        raise ValueError(f"model_type must be 'unigram' or 'bpe', got {model_type!r}")
    if normalization not in NORMALIZATIONS:
        raise ValueError(f"normalization must be one of {', '.join(NORMALIZATIONS)}, got {normalization!r}")
    if isinstance(character_coverage, bool) or not isinstance(character_coverage, (int, float)) \
            or not 0 < character_coverage <= 1:
        raise ValueError(f"character_coverage must be a number in (0, 1], got {character_coverage!r}")
    controls = [check_str(s, "control symbol") for s in dict.fromkeys(control_symbols)]
    users = [check_str(s, "user-defined symbol") for s in dict.fromkeys(user_defined_symbols)]
    check_str(unk_piece, "unk_piece")
    meta = [unk_piece, *controls, *users] + ([byte_piece(b) for b in range(256)] if byte_fallback else [])
    for s in meta:
        if not s or any(ch.isspace() for ch in s):
            raise ValueError(f"reserved and user-defined pieces must be non-empty and without whitespace, got {s!r}")
    if len(set(meta)) != len(meta):
        dup = next(s for s, n in Counter(meta).items() if n > 1)
        raise ValueError(f"{dup!r} is given twice among the unknown piece, control, user-defined and byte pieces")
    if vocab_size <= len(meta):
        raise ValueError(f"vocab_size={vocab_size} is too small: {len(meta)} entries are reserved (the unknown piece, "
                         f"{len(controls)} control and {len(users)} user-defined symbols"
                         f"{', 256 byte pieces' if byte_fallback else ''}) before any learned piece")

    config = SPConfig(
        model_type=model_type, normalization=normalization, add_dummy_prefix=add_dummy_prefix,
        remove_extra_whitespaces=remove_extra_whitespaces, byte_fallback=byte_fallback,
        split_digits=split_digits, split_by_whitespace=split_by_whitespace, unk_surface=unk_surface,
        charsmap=compile_rule(normalization),
    )
    skipped = SkippedCount()
    counts = word_counts(short_sentences(sentences(source), max_sentence_length, skipped),
                         SentencePieceNormalizer(config, users), cut=meta,
                         split_by_unicode_script=split_by_unicode_script, split_by_number=split_by_number)
    skipped.warn("toklab.sentencepiece.train", max_sentence_length or 0, stacklevel=4)
    if not counts:
        raise ValueError("no text to train on: every sentence is empty after normalization" + (
            f" or longer than max_sentence_length={max_sentence_length:,} bytes ({skipped.count:,} skipped)"
            if skipped.count else ""))
    chars = covered_chars(counts, float(character_coverage))
    left_out = {ch for w in counts for ch in w} - set(chars)
    if left_out:  # the rarest characters split words, as they will be unknown
        rare = re.compile("[" + "".join(re.escape(ch) for ch in sorted(left_out)) + "]")
        kept: Counter = Counter()
        for word, c in counts.items():
            for part in rare.split(word):
                if part:
                    kept[part] += c
        counts = kept
    room = vocab_size - len(meta)
    if room < len(chars):
        raise ValueError(
            f"vocab_size={vocab_size} is too small: {len(meta)} reserved entries plus the {len(chars)} characters the "
            f"model keeps need vocab_size >= {len(meta) + len(chars)} (lower character_coverage to keep fewer)"
        )

    head = [SPPiece(unk_piece, 0.0, "unknown")] + [SPPiece(s, 0.0, "control") for s in controls]
    head += [SPPiece(s, 0.0, "user") for s in users]
    head += [SPPiece(byte_piece(b), 0.0, "byte") for b in range(256)] if byte_fallback else []
    if model_type == "unigram":
        model = train_unigram(counts, room + 1, split=None, max_piece_length=max_piece_length, allow_smaller=True,
                              max_sentence_length=None)
        learned = [(p, s) for p, s, kind in model.entries() if kind == "normal"]
    else:
        learned = train_bpe_pieces(counts, chars, room - len(chars))
    pieces = head + [SPPiece(p, _float32(s), "normal") for p, s in learned]
    warn_smaller("toklab.sentencepiece.train", len(pieces), vocab_size,
                 f"the corpus gave {len(learned)} pieces for the {room} places left after the reserved ones", allow_smaller,
                 stacklevel=4)
    return pieces, config
