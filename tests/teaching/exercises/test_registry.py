"""Every registered exercise checker accepts toklab's answer and rejects a typical slip.

A checker that passes everything would tell a student their broken code works,
so each one is run on its registry entry's reference (toklab's own answer,
which must pass) and on one hand-written, realistic mistake, which must fail
with the hint that names that mistake. The registry itself is tied to the
chapters: each label is an exercise of its chapter, and that exercise names the
checker and the function the reader has to write.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from toklab import bpe, unigram
from toklab.lab.patching import hash_buckets
from toklab.measure import metrics
from toklab.teaching import exercises
from toklab.teaching.exercises import CHAPTERS, REGISTRY, CheckFailure, checkers, get, harness

BOOK = Path(__file__).resolve().parents[3] / "book"
LABELS = list(REGISTRY)


# ---------------------------------------------------------------------------- the slips, one per checker


def decode_token_by_token(pipe, ids):
    """Decodes each ID on its own and joins the strings."""
    return "".join(pipe.decode([i]) for i in ids)


def encode_rendered_chat(pipe, messages):
    """Renders the whole conversation and encodes it with every special token allowed."""
    return pipe.encode(pipe.render_chat(messages), allowed_special="all", add_special_tokens=False)


def macro_bits_per_byte(documents, nlls, normalize=None):
    """Averages the per-document BPBs instead of dividing the corpus's NLL by its bytes."""
    scored = [doc if normalize is None else normalize(doc) for doc in documents]
    values = [sum(x) / (len(s.encode("utf-8")) * math.log(2)) for s, x in zip(scored, nlls) if s]
    if len(nlls) != len(documents) or not values or any(not math.isfinite(v) or v < 0 for x in nlls for v in x):
        raise ValueError("no BPB")
    return sum(values) / len(values)


def fertility_of_joined_corpus(tokenizer, documents, unit, segmenter=None):
    """Encodes the whole corpus as one string."""
    return metrics.fertility(tokenizer, "".join(documents), unit, segmenter=segmenter).tokens_per_unit


def unigram_without_smoothing(train_ids, test_ids, n_test_bytes, vocab_size):
    counts = Counter(train_ids)
    return -sum(math.log(counts[i] / len(train_ids)) for i in test_ids) / (n_test_bytes * math.log(2))


def train_first_seen_tie(words, num_merges):
    """Recounts correctly but breaks ties by the pair met first (Counter.most_common)."""
    words = dict(words)
    merges = []
    for _ in range(num_merges):
        counts = Counter()
        for word, n in words.items():
            for pair in zip(word, word[1:]):
                counts[pair] += n
        if not counts:
            break
        best = counts.most_common(1)[0][0]
        merges.append(best)
        words = {bpe.merge_pair(w, best): n for w, n in words.items()}
    return merges


def encode_by_recounting(symbols, merges):
    """§2.1's pitfall: merges the known pair that occurs most often in the input."""
    known, word = set(merges), list(symbols)
    while True:
        counts = Counter(p for p in zip(word, word[1:]) if p in known)
        if not counts:
            return word
        word = list(bpe.merge_pair(word, counts.most_common(1)[0][0]))


def shortest_match_first(word, vocab):
    if len(word) > 100:
        return ["[UNK]"]
    pieces = []
    while len("".join(p.removeprefix("##") for p in pieces)) < len(word):
        rest = word[len("".join(p.removeprefix("##") for p in pieces)) :]
        prefix = "##" if pieces else ""
        match = next((prefix + rest[:n] for n in range(1, len(rest) + 1) if prefix + rest[:n] in vocab), None)
        if match is None:
            return ["[UNK]"]
        pieces.append(match)
    return pieces


def greedy_longest_piece(word, vocab):
    """Longest piece first at every position, as WordPiece's encoder does (without ##)."""
    pieces, start = [], 0
    while start < len(word):
        end = next((e for e in range(len(word), start, -1) if word[start:e] in vocab), None)
        if end is None:
            raise ValueError(f"{word!r} cannot be segmented")
        pieces.append(word[start:end])
        start = end
    return pieces


def forward_with_max(text, probs):
    table = [1.0] + [0.0] * len(text)
    for end in range(1, len(text) + 1):
        for start in range(end):
            p = probs.get(text[start:end])
            if p:
                table[end] = max(table[end], table[start] * p)
    return table


def viterbi_greedy(text, scores):
    """Longest piece first at every position, as WordPiece would do."""
    pieces, i = [], 0
    while i < len(text):
        for j in range(len(text), i, -1):
            if text[i:j] in scores:
                pieces.append(text[i:j])
                i = j
                break
        else:
            raise ValueError(f"{text!r} cannot be segmented")
    return pieces


def viterbi_counts(word_counts, probs):
    """Hard EM: counts the pieces of the best segmentation only."""
    scores = {p: math.log(v) for p, v in probs.items()}
    counts = Counter()
    for word, n in word_counts.items():
        for piece in unigram.reference_viterbi(word, scores):
            counts[piece] += n
    return dict(counts)


def keeps_the_space():
    table, n = {}, 0
    for b in range(256):
        if chr(b).isprintable():
            table[b] = chr(b)
        else:
            table[b] = chr(256 + n)
            n += 1
    return table


def thousands_from_the_right(s):
    head = len(s) % 3
    return ([s[:head]] if head else []) + [s[i : i + 3] for i in range(head, len(s), 3)]


def escape_with_split(text, add_dummy_prefix=True, remove_extra_whitespaces=True):
    if remove_extra_whitespaces:
        text = " ".join(text.split())
    if add_dummy_prefix and text:
        text = " " + text
    return text.replace(" ", "\u2581")


def decode_with_python_replace(pieces):
    out, run = [], bytearray()
    for piece in pieces:
        m = re.fullmatch(r"<0x([0-9A-F]{2})>", piece)
        if m:
            run.append(int(m[1], 16))
            continue
        out.append(bytes(run).decode("utf-8", errors="replace"))
        run.clear()
        out.append(piece.replace("\u2581", " "))
    return "".join(out) + bytes(run).decode("utf-8", errors="replace")


def truncate_code_points(text, limit):
    """Keeps the first `limit` code points, as if the limit counted code points."""
    if limit < 0:
        raise ValueError(limit)
    return text[:limit]


def fingerprint_of_the_file(model_proto):
    """Hashes the file's bytes, training record included."""
    return hashlib.sha256(model_proto).hexdigest()


def char_span_rounding_down(text, start, end):
    starts = [0]
    for ch in text:
        starts.append(starts[-1] + len(ch.encode("utf-8")))
    first = bisect.bisect_right(starts, start) - 1
    if start == end:
        return first, first
    return first, bisect.bisect_right(starts, end) - 1


def patch_starts_at_or_above(entropies, threshold, rule):
    """Takes a score equal to the threshold as a boundary."""
    if not entropies:
        return []
    rises = [entropies[i] - entropies[i - 1] for i in range(1, len(entropies))]
    scores = entropies[1:] if rule == "global" else rises
    return [0] + [i + 1 for i, s in enumerate(scores) if s >= threshold]


def threshold_aiming_at_n_over_m(entropies, mean_size):
    """Puts about n / mean_size positions above the threshold (one patch too many)."""
    ranked = sorted(entropies[1:], reverse=True)
    k = min(len(entropies) - 1, round(len(entropies) / mean_size))
    return ranked[k] if k < len(ranked) else min(ranked, default=0.0) - 1.0


def groups_from_the_left(pieces, group):
    """Groups of ``group`` read from the left, the last piece may be shorter."""
    sizes = [len(p) for p in pieces]
    return all(n == group for n in sizes[:-1]) and sizes[-1] <= group


def partial_by_high_first_byte(tokens):
    return sorted(i for i, t in tokens.items() if t[0] >= 0x80)


def heal_one_token(tokenizer, prompt):
    ids = tokenizer.encode(prompt, disallowed_special=())
    return ids[:-1], tokenizer.decode_bytes(ids[-1:])


def mask_by_pad_id(ids, lengths):
    return ids[:, 1:] != 2  # PAD = EOS = 2 in the checker's batches


def code_point_spans_unchanged(text, spans):
    """Treats code points as UTF-16 units."""
    return [tuple(span) for span in spans]


def common_prefix_not_rounded(cached, request, block_size):
    """The common ID prefix, as if the cache kept single tokens."""
    if block_size < 1:
        raise ValueError(block_size)
    same = 0
    for a, b in zip(cached, request):
        if a != b:
            break
        same += 1
    return same


def first_cut_into_two_tokens(ranks):
    """Splits each token where both halves are lower-ranked tokens, leftmost cut first."""
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(token) > 1:
            merges.append(next((token[:i], token[i:]) for i in range(1, len(token))
                               if ranks.get(token[:i], rank) < rank and ranks.get(token[i:], rank) < rank))
    return merges


def causal_only(doc):
    n, t = doc.shape
    return np.broadcast_to(np.tril(np.ones((t, t), dtype=bool)), (n, t, t))


def colliding_pairs(code_points, num_hashes, num_buckets):
    rows = Counter(map(tuple, hash_buckets(code_points, num_hashes, num_buckets).tolist()))
    return sum(n * (n - 1) // 2 for n in rows.values())


def truncate_keeps_last_merges(tokenizer, vocab_size):
    """Keeps the last vocab_size - 256 merges instead of the first."""
    n = vocab_size - 256
    if not 0 <= n <= len(tokenizer.merges):
        raise ValueError(vocab_size)
    return bpe.ByteBPE(tokenizer.merges[len(tokenizer.merges) - n:], pattern=tokenizer.pattern)


def premium_per_byte(encode, texts, reference):
    """Compares tokens per byte (compression) instead of token counts (cost)."""
    ref = len(encode(texts[reference])) / max(len(texts[reference].encode()), 1)
    if not ref:
        raise ValueError("empty reference")
    return {loc: len(encode(t)) / max(len(t.encode()), 1) / ref for loc, t in texts.items()}


def mean_init_from_bytes(old, new, emb):
    """Averages the rows of the new token's single bytes instead of its old segmentation."""
    import numpy as np

    out = np.zeros((new.n_vocab, emb.shape[1]))
    out[: emb.shape[0]] = emb
    for i in range(old.n_vocab, new.n_vocab):
        out[i] = emb[list(new.id_to_token(i))].mean(axis=0)
    return out


def delta_by_occurrences(word, pair):
    """Patches the counts around each occurrence as if the others were not there."""
    out = Counter()
    for i in range(len(word) - 1):
        if (word[i], word[i + 1]) == pair:
            new = word[i] + word[i + 1]
            out[pair] -= 1
            if i > 0:
                out[(word[i - 1], word[i])] -= 1
                out[(word[i - 1], new)] += 1
            if i + 2 < len(word):
                out[(word[i + 1], word[i + 2])] -= 1
                out[(new, word[i + 2])] += 1
    return {p: d for p, d in out.items() if d}


def gpt2_pattern_from_w_and_d():
    """GPT-2's pattern with re's classes for letters and numbers (the first thing one writes)."""
    return r"'(?:[sdmt]|ll|ve|re)| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+"


def backoff_one_token(merges, text, k):
    """Token healing's one-token back-off: 1 whenever the cut is unstable."""
    prompt = bpe.reference_encode(list(text[:k]), merges)
    full = bpe.reference_encode(list(text), merges)
    return 0 if full[: len(prompt)] == prompt else 1


def canonical_ids(tokenizer, text):
    return tokenizer.encode_ordinary(text)


def round_trip_by_ids(tokenizer, texts):
    """Checks encode(decode(ids)) == ids, the other direction, which a normalizer passes."""
    for text in texts:
        ids = tokenizer.encode(text)
        assert tokenizer.encode(tokenizer.decode(ids)) == ids, text
    return f"{len(texts)} texts"


#: label -> (a typical slip, a phrase of the hint that names it)
SLIPS = {
    "ch00-ex1": (decode_token_by_token, "join all the tokens' bytes first"),
    "ch00-ex2": (encode_rendered_chat, "inject control tokens"),
    "ch01-ex1": (macro_bits_per_byte, "mean of the per-document BPBs"),
    "ch01-ex2": (fertility_of_joined_corpus, "encodes the documents joined"),
    "ch01-ex6": (unigram_without_smoothing, "add one to every count"),
    "ch02_1-ex1": (train_first_seen_tie, "a tie. Break ties by the smallest pair"),
    "ch02_1-ex2": (encode_by_recounting, "that ignores the ranks"),
    "ch02_2-ex1": (shortest_match_first, "takes the shortest match"),
    "ch02_3-ex1": (forward_with_max, "forward *sums* over all of them"),
    "ch02_3-ex2": (viterbi_greedy, "greedy longest-match segmentation"),
    "ch02_3-ex3": (viterbi_counts, "is hard EM"),
    "ch02_4-ex5": (greedy_longest_piece, "greedy longest-match-first"),
    "ch03_1-ex1": (keeps_the_space, "is printable but whitespace"),
    "ch03_1-ex2": (thousands_from_the_right, "the short piece belongs at the end"),
    "ch03_2-ex1": (escape_with_split, "a tab or newline is an ordinary character"),
    "ch03_2-ex2": (decode_with_python_replace, "becomes its own U+FFFD"),
    "ch03_2-ex5": (fingerprint_of_the_file, "not the file's bytes"),
    "ch03_3-ex1": (truncate_code_points, "surrogate pair"),
    "ch03_3-ex2": (char_span_rounding_down, "round the end up"),
    "ch04_1-ex1": (truncate_keeps_last_merges, "those are the *last* merges"),
    "ch04_2-ex1": (premium_per_byte, "compares compression"),
    "ch04_3-ex1": (mean_init_from_bytes, "single *bytes*"),
    "ch05_1-ex1": (groups_from_the_left, "read from the right"),
    "ch05_2-ex1": (partial_by_high_first_byte, "decide by decoding the bytes"),
    "ch05_3-ex1": (heal_one_token, "did not back off far enough"),
    "ch05_4-ex1": (mask_by_pad_id, "Build the mask from the lengths"),
    "ch05_4-ex2": (causal_only, "may not attend to another document"),
    "ch05_5-ex2": (code_point_spans_unchanged, "surrogate pair"),
    "ch05_6-ex4": (common_prefix_not_rounded, "Round down to a multiple of the block size"),
    "ch05_7-ex4": (first_cut_into_two_tokens, "the merge is the cut BPE makes"),
    "ch06-ex1": (patch_starts_at_or_above, "strictly above the threshold"),
    "ch06-ex2": (threshold_aiming_at_n_over_m, "one patch too many"),
    "ch06-ex3": (colliding_pairs, "count code points"),
    "ch07-ex1": (delta_by_occurrences, "form a new pair"),
    "ch07-ex2": (gpt2_pattern_from_w_and_d, "counts as numbers"),
    "ch08-ex1": (backoff_one_token, "one token is not enough"),
    "ch08-ex2": (canonical_ids, "return None"),
    "ch09-ex1": (round_trip_by_ids, "the other direction"),
}


# ---------------------------------------------------------------------------- accept and reject


def test_every_checker_has_a_slip():
    assert set(SLIPS) == set(REGISTRY)


@pytest.mark.parametrize("label", LABELS)
def test_reference_passes_and_a_large_case_is_timed(label, monkeypatch):
    timed = []
    case = harness.Run.case

    def recording(run, name, **options):
        opened = case(run, name, **options)
        timed.append((name, opened.budget()))
        return opened

    monkeypatch.setattr(harness.Run, "case", recording)
    entry = get(label)
    message = entry.check(entry.reference)
    pattern = rf"{re.escape(label)}: all ([\d,]+) cases passed \({re.escape(entry.function)} agrees with .+\)"
    match = re.fullmatch(pattern, message)
    assert match, message
    assert int(match[1].replace(",", "")) >= 10, f"{label} checks only {match[1]} cases"
    assert message.cases == int(match[1].replace(",", "")) == len(timed)
    assert any(budget is not None for _, budget in timed), f"{label} has no timed case"
    assert all(("(timed" in name) == (budget is not None) for name, budget in timed), (
        f"{label}: a timed case must say so in its name, and only a timed case")


@pytest.mark.parametrize("label", LABELS)
def test_typical_slip_is_rejected_with_its_hint(label):
    slip, phrase = SLIPS[label]
    with pytest.raises(CheckFailure) as info:
        get(label).check(slip)
    failure = info.value
    assert failure.label == label
    assert phrase in failure.hint, f"{label}: hint {failure.hint!r} does not name the slip ({phrase!r})"
    assert failure.got != failure.expected


# ---------------------------------------------------------------------------- the registry


def test_registry_is_in_book_order_and_read_only():
    entries = list(checkers())
    assert [e.label for e in entries] == LABELS
    assert entries == sorted(entries, key=lambda e: (e.chapter, e.number))
    assert len(LABELS) == len(set(LABELS))
    with pytest.raises(TypeError):
        REGISTRY["ch99-ex1"] = entries[0]  # type: ignore[index]


@pytest.mark.parametrize("label", LABELS)
def test_entry_describes_its_exercise(label):
    entry = get(label)
    assert entry.label == label == f"{entry.chapter}-ex{entry.number}"
    assert entry.check.__module__ == f"toklab.teaching.exercises.{entry.chapter}"
    assert entry.check.exercise is entry
    assert entry.function.isidentifier()
    assert entry.title and "\n" not in entry.title and len(entry.title) <= 60
    assert entry.against


def _exercise_text(label: str) -> str:
    """The statement of exercise ``label`` in its chapter (between its label line and the solution).

    A section may be split into a main page and deep-dive pages (``ch02_1_bpe.md``,
    ``ch02_1_bpe_fast.md``): the exercise is on exactly one of them.
    """
    stem = label.split("-ex")[0]
    # the chapter file that holds the exercise (a chapter may have optional deep-dive pages)
    (chapter,) = [path for path in BOOK.glob(f"{stem}_*.md")
                  if f":label: {label}\n" in path.read_text(encoding="utf-8")]
    text = chapter.read_text(encoding="utf-8")
    start = text.index(f":label: {label}\n")
    return text[start : text.index(f"{{solution-start}} {label}", start)]


@pytest.mark.parametrize("label", LABELS)
def test_the_chapter_names_the_checker_and_the_function(label):
    entry = get(label)
    statement = _exercise_text(label)
    assert entry.check.__name__ in statement
    assert re.search(rf"`{re.escape(entry.function)}\(", statement), (
        f"{label}: the exercise does not ask for `{entry.function}(...)`")


def test_every_chapter_module_is_loaded_and_every_checker_registered():
    package = Path(exercises.__file__).parent
    assert set(CHAPTERS) == {p.stem for p in package.glob("ch*.py")}
    registered = {entry.check for entry in checkers()}
    for chapter in CHAPTERS:
        module = getattr(exercises, chapter)
        functions = [getattr(module, name) for name in dir(module) if name.startswith("check_")]
        assert functions, f"toklab.teaching.exercises.{chapter} has no checker"
        assert all(f in registered for f in functions), f"an unregistered checker in {chapter}"
        assert set(module.__all__) >= {f.__name__ for f in functions}


def test_unknown_label_names_the_known_ones():
    with pytest.raises(KeyError) as info:
        get("ch09-ex7")
    message = str(info.value)
    assert "'ch09-ex7'" in message
    assert all(label in message for label in LABELS)
