"""More mistakes a reader makes, each caught with the hint that names it.

`test_registry.py` runs one typical slip per checker; these are the others the
hints are written for (moved here from ``tests/test_exercise_checkers.py`` and
extended), so that a hint that stops recognising its mistake fails a test.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import re
import unicodedata
from collections import Counter

import pytest

from toklab import bpe, decoders, unigram, wordpiece
from toklab.base import unicode
from toklab.lab import patching
from toklab.sentencepiece import model_file
from toklab.teaching.exercises import CheckFailure, ch01, get


def keep_pieces_before_a_dead_end(word, vocab):
    """Longest match first, but a dead end only adds [UNK] after the pieces found so far."""
    pieces, start = [], 0
    while start < len(word):
        marker = "##" if start else ""
        end = max((e for e in range(start + 1, len(word) + 1) if marker + word[start:e] in vocab), default=None)
        if end is None:
            return pieces + ["[UNK]"]
        pieces.append(marker + word[start:end])
        start = end
    return pieces


def train_unweighted(words, num_merges):
    return bpe.reference_train({w: 1 for w in words}, num_merges)


def train_counting_once(words, num_merges):
    counts = bpe.pair_counts(words)
    return sorted(counts, key=lambda p: (-counts[p], p))[:num_merges]


def train_stopping_at_singletons(words, num_merges):
    return bpe.reference_train(words, num_merges, min_frequency=2)


def expected_counts_unnormalized(word_counts, probs):
    counts = {}
    for word, n in word_counts.items():
        for seg in unigram.segmentations(word, probs):
            weight = n * math.prod(probs[p] for p in seg)
            for piece in seg:
                counts[piece] = counts.get(piece, 0.0) + weight
    return counts


def escape_keeping_trailing_literal(text, add_dummy_prefix=True, remove_extra_whitespaces=True):
    if remove_extra_whitespaces:
        text = re.sub(" +", " ", text).strip(" ")
    if add_dummy_prefix and text:
        text = " " + text
    return text.replace(" ", "\u2581")


def escape_prefix_then_strip(text, add_dummy_prefix=True, remove_extra_whitespaces=True):
    if add_dummy_prefix and text:
        text = " " + text
    if remove_extra_whitespaces:
        text = re.sub(" +", " ", text).strip(" ")
    return text.replace(" ", "\u2581").rstrip("\u2581") if remove_extra_whitespaces else text.replace(" ", "\u2581")


def truncate_counting_utf8(text, limit):
    """Whole graphemes, but counted in UTF-8 bytes."""
    kept, used = "", 0
    for grapheme in unicode.graphemes(text):
        used += len(grapheme.encode("utf-8"))
        if used > limit:
            break
        kept += grapheme
    return kept


def _group_runs(text, is_number):
    pieces, run = [], ""
    for ch in text + " ":
        if is_number(ch):
            run += ch
        else:
            pieces += [run[i : i + 3] for i in range(0, len(run), 3)]
            run = ""
    return pieces


def group_digits_isdigit(text):
    return _group_runs(text, str.isdigit)


def group_digits_isnumeric(text):
    return _group_runs(text, str.isnumeric)


def decode_bytes_but_keep_metaspace(pieces):
    """Reassembles the bytes right (one U+FFFD per bad byte) but leaves ▁ as it is."""
    text, run = "", b""
    for piece in [*pieces, ""]:
        if re.fullmatch(r"<0x[0-9A-F]{2}>", piece):
            run += bytes([int(piece[3:5], 16)])
        else:
            text += decoders.decode_utf8_per_byte(run) + piece
            run = b""
    return text


def fertility_accepting_words_without_a_segmenter(tokenizer, documents, unit, segmenter=None):
    if unit == "words" and segmenter is None:
        segmenter = "whitespace"
    return ch01.reference_corpus_fertility(tokenizer, documents, unit, segmenter)


def fertility_by_str_split(tokenizer, documents, unit, segmenter=None):
    if unit != "words":
        return ch01.reference_corpus_fertility(tokenizer, documents, unit, segmenter)
    if segmenter is None:
        raise ValueError("no segmenter")
    return sum(len(tokenizer.encode(d)) for d in documents) / sum(len(d.split()) for d in documents)


def bpb_over_raw_bytes(documents, nlls, normalize=None):
    return ch01.reference_corpus_bits_per_byte(documents, nlls)


def bpb_upside_down(documents, nlls, normalize=None):
    bpb = ch01.reference_corpus_bits_per_byte(documents, nlls, normalize)
    return 1 / bpb if bpb else bpb


def bpb_over_ln10(documents, nlls, normalize=None):
    return ch01.reference_corpus_bits_per_byte(documents, nlls, normalize) * math.log(2) / math.log(10)


def bpb_per_token(documents, nlls, normalize=None):
    ch01.reference_corpus_bits_per_byte(documents, nlls, normalize)  # the same refusals
    return sum(map(sum, nlls)) / (sum(map(len, nlls)) * math.log(2))


def fertility_over_utf16_bytes(tokenizer, documents, unit, segmenter=None):
    if unit != "bytes":
        return ch01.reference_corpus_fertility(tokenizer, documents, unit, segmenter)
    ch01.reference_corpus_fertility(tokenizer, documents, unit, segmenter)  # the same refusals
    return sum(len(tokenizer.encode(d)) for d in documents) / sum(len(d.encode("utf-16-le")) for d in documents)


def unigram_smoothing_seen_ids_only(train_ids, test_ids, n_test_bytes, vocab_size):
    counts = Counter(train_ids)
    total = len(train_ids) + len(counts)
    return -sum(math.log((counts[i] + 1) / total) for i in test_ids) / (n_test_bytes * math.log(2))


def unigram_trained_on_test_too(train_ids, test_ids, n_test_bytes, vocab_size):
    return ch01.reference_unigram_bits_per_byte(list(train_ids) + list(test_ids), test_ids, n_test_bytes, vocab_size)


def unigram_bits_per_token(train_ids, test_ids, n_test_bytes, vocab_size):
    bpb = ch01.reference_unigram_bits_per_byte(train_ids, test_ids, n_test_bytes, vocab_size)
    return bpb * n_test_bytes / len(test_ids)


def reader_encode_chat(pipe, messages):
    ids = []
    for text, trusted in pipe.chat_template(messages, False):
        options = {"allowed_special": "all"} if trusted else {"disallowed_special": ()}
        ids += pipe.encode(text, add_special_tokens=False, **options)
    return ids


def viterbi_returning_nothing(text, scores):
    try:
        return unigram.reference_viterbi(text, scores)
    except ValueError:
        return []


def shortest_pieces_viterbi(text, scores):
    """Fewest pieces (every piece costs the same), not the best score."""
    best = [0] + [math.inf] * len(text)
    back = [0] * (len(text) + 1)
    for i in range(1, len(text) + 1):
        for j in range(i):
            if text[j:i] in scores and best[j] + 1 < best[i]:
                best[i], back[i] = best[j] + 1, j
    if best[-1] == math.inf:
        raise ValueError(text)
    out, i = [], len(text)
    while i:
        out.append(text[back[i] : i])
        i = back[i]
    return out[::-1]


def viterbi_reading_first_characters(text, scores):
    """Right, except that it looks at every piece's first character: the empty piece crashes it."""
    if any(p[0] == "\x00" for p in scores):
        raise ValueError("no NUL pieces")
    return unigram.reference_viterbi(text, scores)


def viterbi_decoding_bytes(text, scores):
    """Right on ASCII text, but it decodes the text's UTF-8 bytes as ASCII."""
    return unigram.reference_viterbi(text.encode("utf-8").decode("ascii"), scores)


def encode_skipping_an_end(end):
    """The right encoder, but its loop never looks at the first (end=0) or the last (end=-1) pair."""

    def encode(symbols, merges):
        rank, parts = {pair: r for r, pair in enumerate(merges)}, list(symbols)
        while True:
            pairs = list(enumerate(zip(parts, parts[1:])))
            ranked = [(rank[p], i) for i, p in (pairs[1:] if end == 0 else pairs[:-1]) if p in rank]
            if not ranked:
                return parts
            i = min(ranked)[1]
            parts[i : i + 2] = [parts[i] + parts[i + 1]]

    return encode


def greedy_from_the_right(word, vocab):
    """Longest piece first, from the end of the word backwards."""
    pieces, end = [], len(word)
    while end:
        start = next((s for s in range(end) if word[s:end] in vocab), None)
        if start is None:
            raise ValueError(f"{word!r} cannot be segmented")
        pieces.insert(0, word[start:end])
        end = start
    return pieces


def fewest_pieces_or_characters(word, vocab):
    """Right when a segmentation exists; falls back to single characters instead of raising."""
    try:
        return unigram.reference_viterbi(word, {p: -1.0 for p in vocab})
    except ValueError:
        return list(word)


def rise_towards_the_next_byte(entropies, threshold, rule):
    if rule == "global":
        return patching.patch_starts(entropies, threshold, rule).tolist()
    n = len(entropies)
    return [0] + [i for i in range(1, n - 1) if entropies[i + 1] - entropies[i] > threshold] if n else []


def _bucket_groups(code_points, num_hashes, num_buckets):
    return Counter(map(tuple, patching.hash_buckets(code_points, num_hashes, num_buckets).tolist())).values()


def collisions_under_any_function(code_points, num_hashes, num_buckets):
    columns = patching.hash_buckets(code_points, num_hashes, num_buckets).T.tolist()
    return sum(any(col.count(col[i]) > 1 for col in columns) for i in range(len(code_points)))


SLIPS = [
    ("ch00-ex1", lambda pipe, ids: pipe.model.decode(ids), "undo the post-processor"),
    ("ch00-ex1", lambda pipe, ids: pipe.decode(ids, skip_special_tokens=True),
     "other than BOS/EOS decode to their text"),
    ("ch00-ex2", lambda pipe, m: pipe.post_process(reader_encode_chat(pipe, m)), "do not run the post-processor"),
    ("ch00-ex2", lambda pipe, m: pipe.encode(pipe.render_chat(m), add_special_tokens=False),
     "must never make encoding fail"),
    ("ch01-ex1", bpb_over_raw_bytes, "bytes of the raw documents"),
    ("ch01-ex1", bpb_per_token, "that is bits per token"),
    ("ch01-ex1", bpb_upside_down, "upside down"),
    ("ch01-ex1", bpb_over_ln10, "that divides by ln 10"),
    ("ch01-ex2", fertility_accepting_words_without_a_segmenter, "needs a named segmenter"),
    ("ch01-ex2", fertility_by_str_split, "str.split() pieces"),
    ("ch01-ex2", fertility_over_utf16_bytes, "UTF-16 bytes"),
    ("ch01-ex6", unigram_smoothing_seen_ids_only, "len(train_ids) + vocab_size"),
    ("ch01-ex6", unigram_trained_on_test_too, "counts the test IDs too"),
    ("ch01-ex6", unigram_bits_per_token, "that is bits per token"),
    ("ch02_1-ex1", lambda words, n: bpe.reference_train(words, n, tie_break="largest"), "a tie"),
    ("ch02_1-ex1", train_unweighted, "each distinct word was counted once"),
    ("ch02_1-ex1", train_counting_once, "rewrite every word"),
    ("ch02_1-ex1", train_stopping_at_singletons, "yours stops after"),
    ("ch02_1-ex1", lambda words, n: ["".join(p) for p in bpe.reference_train(words, n)], "(left, right) pairs"),
    ("ch02_1-ex2", lambda symbols, merges: bpe.reference_encode(symbols, merges[::-1]), "latest-learned merge first"),
    ("ch02_1-ex2", lambda symbols, merges: list(symbols), "no merge was applied"),
    ("ch02_1-ex2", lambda symbols, merges: ["".join(symbols)] if symbols else [], "lowest rank"),
    ("ch02_1-ex2", encode_skipping_an_end(-1), "the last adjacent pair of the word is never looked at"),
    ("ch02_1-ex2", encode_skipping_an_end(0), "the first adjacent pair of the word is never looked at"),
    ("ch02_2-ex1", keep_pieces_before_a_dead_end, "drop the pieces found so far"),
    ("ch02_2-ex1", lambda word, vocab: wordpiece.encode_word(word, vocab, max_input_chars_per_word=10**6),
     "longer than 100 characters"),
    ("ch02_3-ex1", lambda text, probs: unigram.reference_forward(text, probs)[1:], "len(text) + 1"),
    ("ch02_3-ex2", viterbi_returning_nothing, "must raise ValueError"),
    ("ch02_3-ex2", shortest_pieces_viterbi, "fewest pieces"),
    ("ch02_3-ex2", viterbi_reading_first_characters, "IndexError is a bug in the function"),
    ("ch02_3-ex2", viterbi_decoding_bytes, "UnicodeDecodeError is a bug in the function"),
    ("ch02_3-ex3", lambda wc, probs: unigram.reference_expected_counts({w: 1 for w in wc}, probs),
     "multiply a word's expected counts by its count"),
    ("ch02_3-ex3", expected_counts_unnormalized, "divided by the word's total probability"),
    ("ch02_4-ex5", greedy_from_the_right, "from the right end"),
    ("ch02_4-ex5", lambda word, vocab: list(word), "every piece must be in vocab"),
    ("ch02_4-ex5", fewest_pieces_or_characters, "must raise ValueError"),
    ("ch02_4-ex5", lambda word, vocab: [word] if word in vocab else list(word), "must be in vocab"),
    ("ch03_1-ex1", lambda: {b: chr(b) for b in range(256)}, "is shifted: the n-th shifted byte"),
    ("ch03_1-ex1", lambda: {b: chr(256 + b) for b in range(256)}, "keeps it unchanged"),
    ("ch03_1-ex1", lambda: {b: chr(b % 128) for b in range(256)}, "bijection"),
    ("ch03_1-ex1", lambda: {bytes([b]): chr(b) for b in range(256)}, "the keys are the byte values as ints"),
    ("ch03_1-ex2", lambda s: [s[i : i + 4] for i in range(0, len(s), 4)], "more than three digits"),
    ("ch03_2-ex1", escape_keeping_trailing_literal, "a literal ▁ is not a space"),
    ("ch03_2-ex1", escape_prefix_then_strip, "after the extra whitespace is removed"),
    ("ch03_2-ex2", decode_bytes_but_keep_metaspace, "▁ in an ordinary piece is a space"),
    ("ch03_2-ex5", lambda blob: hashlib.sha256(repr(model_file.parse_model_proto(blob)).encode()).hexdigest(),
     "rules for the trainer"),
    ("ch03_2-ex5", lambda blob: hashlib.sha256(repr(model_file.parse_model_proto(blob)[0]).encode()).hexdigest(),
     "normalizer spec's flags"),
    ("ch03_2-ex5", lambda blob: hash(repr(model_file.parse_model_proto(blob)[0])), "PYTHONHASHSEED"),
    ("ch03_3-ex1", lambda text, limit: text.encode("utf-16-le")[: 2 * limit].decode("utf-16-le", "ignore"),
     "you cut inside a grapheme"),
    ("ch03_3-ex1", truncate_counting_utf8, "that counts UTF-8 bytes"),
    ("ch03_3-ex1", lambda text, limit: text if limit < 0 else text[:0], "yours stops earlier"),
    ("ch03_1-ex2", group_digits_isdigit, "str.isdigit() is False"),
    ("ch03_1-ex2", group_digits_isnumeric, "not the numeric property"),
    ("ch03_1-ex2", lambda text: [m for r in re.findall("[0-9]+", text) for m in (r[i : i + 3] for i in range(0, len(r), 3))],
     "only ASCII digits were grouped"),
    ("ch03_3-ex2", lambda text, start, end: (start, end), "*byte* offsets"),
    ("ch06-ex1", rise_towards_the_next_byte, "the rise into byte i"),
    ("ch06-ex1", lambda e, t, rule: patching.patch_starts(e, t, rule).tolist()[1:], "the first byte always starts"),
    ("ch06-ex3", lambda cps, k, b: sum(1 for n in _bucket_groups(cps, k, b) if n > 1), "counts the colliding groups"),
    ("ch06-ex3", lambda cps, k, b: sum(n - 1 for n in _bucket_groups(cps, k, b)), "leaves out one member"),
    ("ch06-ex3", collisions_under_any_function, "under all hash functions at once"),
]


@pytest.mark.parametrize(("label", "slip", "phrase"), SLIPS, ids=[f"{s[0]}:{s[2]}" for s in SLIPS])
def test_slip_is_caught_with_its_hint(label, slip, phrase):
    with pytest.raises(CheckFailure) as info:
        get(label).check(slip)
    assert phrase in info.value.hint, f"{label}: {info.value}"


def test_checker_answers_are_themselves_right():
    # The checkers are only meaningful if toklab's answers are right; spot-check against the standard library.
    assert unicode.utf16_length("a😀") == len("a😀".encode("utf-16-le")) // 2
    assert unicodedata.normalize("NFC", "e\u0301") == "é"
    starts = [0, 1, 4]  # "a" + "龘": byte offsets of the characters
    assert unicode.byte_span_to_char_span("a龘", 2, 3) == (1, 2) == (bisect.bisect_right(starts, 2) - 1, 2)
