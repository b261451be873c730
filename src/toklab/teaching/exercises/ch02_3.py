"""Checkers for the exercises of §2.3 (Unigram: a probabilistic vocabulary).

* ``ch02_3-ex1``, `check_forward(user_fn)`: the reader's forward algorithm,
  called as ``user_fn(text, probs)`` with ``probs`` a dict mapping each piece to
  its probability. It must return the forward table: a list of ``len(text) + 1``
  floats where entry ``i`` is the total probability of all segmentations of
  ``text[:i]`` (entry 0 is 1.0; an entry is 0.0 when that prefix cannot be
  segmented), like `toklab.unigram.reference_forward`.
* ``ch02_3-ex2``, `check_viterbi(user_fn)`: the reader's Viterbi segmenter,
  called as ``user_fn(text, scores)`` with ``scores`` a dict mapping each piece
  to its log-probability. It must return a most probable segmentation (a list
  of pieces that concatenates to ``text``) and raise ValueError when ``text``
  cannot be segmented, like `toklab.unigram.reference_viterbi`. When several
  segmentations tie for the best score, any of them is accepted.
* ``ch02_3-ex3``, `check_expected_counts(user_fn)`: the reader's E-step, called
  as ``user_fn(word_counts, probs)``. It must return a dict mapping each piece
  to its expected count over all segmentations of every word, weighted by the
  word's count, like `toklab.unigram.reference_expected_counts` (pieces with
  expected count 0 may be left out).

Each runs the chapter's worked examples first, then random small vocabularies
and words compared with toklab's reference functions (fixed seed, so every run
checks the same cases), and reports in the format of
`toklab.teaching.exercises.harness`, with hints for the usual slips (max for sum, hard
EM for the E-step, greedy for Viterbi, unweighted or unnormalized counts).
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable

from ...unigram import reference_expected_counts, reference_forward, reference_viterbi, segmentations
from .harness import Run, Shown, exercise

__all__ = ["check_forward", "check_viterbi", "check_expected_counts", "forward_backward_counts"]

_SEED = 2018  # any fixed value: the random cases are the same on every run
_N_RANDOM = 200
_TOL = 1e-9  # relative tolerance: the order of a sum may differ from the reference's

ABAB = {"a": 0.15, "b": 0.15, "ab": 0.40, "aba": 0.20, "bab": 0.10}
BEIJING_COSTS = {"北": 3.0, "北京": 1.0, "大学": 1.0, "大": 2.0, "学": 2.0}
HUG_WORDS = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}
HUG_VOCAB = ["h", "u", "g", "hu", "ug", "p", "pu", "n", "un", "b", "bu", "s", "hug", "gs", "ugs"]


def _hug_probs() -> dict[str, float]:
    """The hug example's probabilities: each piece's substring count in the corpus over the total (210)."""
    freq = {v: sum(c * sum(w.startswith(v, i) for i in range(len(w))) for w, c in HUG_WORDS.items())
            for v in HUG_VOCAB}
    total = sum(freq.values())
    return {v: f / total for v, f in freq.items()}


def _random_probs(rng: random.Random, alphabet: str = "abc", *, all_chars: bool = True) -> dict[str, float]:
    """A small random vocabulary: (all or some) single characters plus a few longer pieces."""
    chars = list(alphabet) if all_chars else [c for c in alphabet if rng.random() < 0.7]
    extra = {"".join(rng.choice(alphabet) for _ in range(rng.randint(2, 4)))
             for _ in range(rng.randint(0, 7))}
    pieces = sorted(set(chars) | extra)
    if not pieces:
        pieces = [alphabet[0]]
    weights = [rng.randint(1, 20) for _ in pieces]
    total = sum(weights)
    return {p: w / total for p, w in zip(pieces, weights)}


def _random_word(rng: random.Random, alphabet: str = "abc") -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8)))


def _close(a: float, b: float, abs_tol: float = 0.0) -> bool:
    """Equal up to a relative error of `_TOL` (tiny probabilities are compared relatively too)."""
    return abs(a - b) <= max(_TOL * max(abs(a), abs(b)), abs_tol)


def _short(d: dict) -> Shown:
    """A dict of floats for a message, rounded so it stays readable."""
    return Shown("{" + ", ".join(f"{k!r}: {v:.6g}" for k, v in d.items()) + "}")


# ---------------------------------------------------------------------------- forward


def _forward_cases() -> list[tuple[str, dict[str, float], str]]:
    hug = _hug_probs()
    cases = [
        ("abab", ABAB, "the worked example 'abab'"),
        ("ababab", ABAB, "a longer word over the worked example's pieces"),
        ("b", ABAB, "a single character"),
        ("", ABAB, "the empty string (its table is [1.0])"),
        ("abc", ABAB, "'c' is no piece: the last entry is 0.0"),
        ("cab", ABAB, "'c' is no piece at the start: every entry after 0 is 0.0"),
        *[(w, hug, f"the hug example's word {w!r}") for w in HUG_WORDS],
    ]
    rng = random.Random(_SEED)
    for k in range(_N_RANDOM):
        probs = _random_probs(rng, all_chars=rng.random() < 0.85)
        cases.append((_random_word(rng), probs, f"random case {k}"))
    cases.append(("🙂a🙂🙂", {"🙂": 0.3, "a": 0.2, "🙂a": 0.1, "🙂🙂": 0.4}, "emoji (astral characters are one code "
                                                                               "point each)"))
    cases.append((*_large_text(), LARGE))
    return cases


LARGE = "large: 400 characters of text over 60 pieces (timed)"


@functools.lru_cache(maxsize=1)
def _large_text() -> tuple[str, dict[str, float]]:
    """A long text over a 3-letter alphabet and a vocabulary of its characters and 57 longer pieces."""
    rng = random.Random(_SEED + 3)
    pieces = {"a", "b", "c"} | {"".join(rng.choice("abc") for _ in range(rng.randint(2, 6))) for _ in range(80)}
    pieces = sorted(pieces)[:60]
    weights = [rng.randint(1, 20) for _ in pieces]
    total = sum(weights)
    return "".join(rng.choice("abc") for _ in range(400)), {p: w / total for p, w in zip(pieces, weights)}


def _best_single(text: str, probs: dict[str, float]) -> float:
    """The probability of the best single segmentation of ``text`` (0.0 if there is none)."""
    return max((math.prod(probs[p] for p in s) for s in segmentations(text, probs)), default=0.0)


def _forward_hint(text: str, probs: dict[str, float], i: int, got: float) -> str:
    where = f"entry {i} (prefix {text[:i]!r})"
    if i == 0:
        return "entry 0 is the empty prefix: its probability is 1 (one way to segment nothing)."
    if _close(got, _best_single(text[:i], probs)):
        return f"{where} is the probability of the best single segmentation: forward *sums* over all of them."
    return (f"{where} should be the sum, over the pieces p that end at position {i}, of "
            f"f[{i} - len(p)] * probs[p].")


@exercise("ch02_3-ex1", title="Implement the forward algorithm", function="my_forward",
          reference=reference_forward, against="toklab.unigram.reference_forward")
def check_forward(run: Run, user_fn: Callable) -> None:
    """Compare ``user_fn(text, probs)`` with `toklab.unigram.reference_forward` (the whole table)."""
    for text, probs, what in _forward_cases():
        expected, seconds = run.timed(reference_forward, text, probs)
        case = run.case(what, expected=expected, seconds=seconds if what == LARGE else None, slow_hint=(
            "compute the table in one pass, each entry from the entries before it (a sum over the pieces that end "
            "there); enumerating the segmentations is exponential in the length of the text"))
        got = case.call(user_fn, text, dict(probs))
        try:
            table = [float(x) for x in got]
        except (TypeError, ValueError):
            case.fail(got, f"return the forward table: a list of len(text) + 1 = {len(expected)} floats.")
        if len(table) != len(expected):
            case.fail(table, f"the table has len(text) + 1 = {len(expected)} entries, not {len(table)}: "
                             "entry 0 is the empty prefix, entry len(text) the whole text.")
        for i, (e, g) in enumerate(zip(expected, table)):
            if not _close(e, g):
                case.fail(table, _forward_hint(text, probs, i, g))


# ---------------------------------------------------------------------------- Viterbi


def _viterbi_cases() -> list[tuple[str, dict[str, float], str]]:
    abab = {p: math.log(v) for p, v in ABAB.items()}
    hug = {p: math.log(v) for p, v in _hug_probs().items()}
    beijing = {p: -c for p, c in BEIJING_COSTS.items()}
    cases = [
        ("abab", abab, "the worked example 'abab'"),
        ("abababa", abab, "a longer word over the worked example's pieces"),
        ("北京大学", beijing, "the chapter's 北京大学 (scores = -costs)"),
        ("北京大", beijing, "a prefix of the chapter's 北京大学 example"),
        ("abc", abab, "'c' is no piece: raise ValueError"),
        ("", abab, "the empty string (no pieces)"),
        *[(w, hug, f"the hug example's word {w!r} (ties allowed)") for w in HUG_WORDS],
    ]
    rng = random.Random(_SEED + 1)
    for k in range(_N_RANDOM):
        probs = _random_probs(rng, all_chars=rng.random() < 0.85)
        cases.append((_random_word(rng), {p: math.log(v) for p, v in probs.items()}, f"random case {k}"))
    cases += [
        ("abab", {**abab, "": -0.5}, "a vocabulary holding the empty piece, which no segmentation may use"),
        ("", {"": -0.5, "a": -1.0}, "the empty text, with the empty piece in the vocabulary"),
        ("北京🙂大学", {**beijing, "🙂": -2.0, "京🙂": -0.5}, "Chinese with an emoji (an astral character)"),
    ]
    text, probs = _large_text()
    cases.append((text, {p: math.log(v) for p, v in probs.items()}, LARGE))
    return cases


def _greedy_longest(text: str, scores: dict[str, float]) -> list[str] | None:
    """Longest match first, WordPiece style (None at a dead end): not Viterbi."""
    longest = max(map(len, scores), default=0)
    pieces, i = [], 0
    while i < len(text):
        for j in range(min(len(text), i + longest), i, -1):
            if text[i:j] in scores:
                pieces.append(text[i:j])
                i = j
                break
        else:
            return None
    return pieces


def _viterbi_hint(text: str, scores: dict[str, float], pieces: list[str]) -> str:
    if pieces == _greedy_longest(text, scores):
        return ("that is the greedy longest-match segmentation: Viterbi keeps the best score of every "
                "prefix (max over the pieces ending there) and follows the back-pointers from the end.")
    if len(pieces) == min(len(s) for s in segmentations(text, scores)):
        return ("that segmentation has the fewest pieces, not the highest score: add the pieces' "
                "log-probabilities and keep the highest sum.")
    return ("the best score of prefix i is the max, over the pieces p ending at i, of "
            "best[i - len(p)] + scores[p]; scores are log-probabilities, so they add.")


def _viterbi_error_hint(text: str, exc: Exception) -> str:
    if not text:
        return ("the empty text is segmented into no pieces: return [] (best[0] = 0.0 and nothing to follow "
                "back), without indexing into the text or the table.")
    if type(exc) is ValueError:  # a subclass (UnicodeDecodeError, ...) is a bug, not a refusal
        return (f"{text!r} can be segmented (see expected), so no ValueError is due; check that every prefix "
                "reachable by a piece gets a score.")
    return (f"{type(exc).__name__} is a bug in the function, not a refusal (only ValueError says 'cannot be "
            "segmented'); call it with the input above to see where.")


def _log_probability(pieces: list[str], scores: dict[str, float]) -> float:
    return sum(scores[p] for p in pieces)


@exercise("ch02_3-ex2", title="Implement Viterbi for a Unigram model", function="my_viterbi",
          reference=reference_viterbi, against="toklab.unigram.reference_viterbi's best score")
def check_viterbi(run: Run, user_fn: Callable) -> None:
    """Check that ``user_fn(text, scores)`` returns a best segmentation (or raises ValueError).

    The reference is `toklab.unigram.reference_viterbi`. A segmentation is
    accepted if its pieces are in ``scores``, concatenate to ``text`` and score
    as high as the reference's (ties may be broken either way).
    """
    for text, scores, what in _viterbi_cases():
        try:
            expected, seconds = run.timed(reference_viterbi, text, scores)
        except ValueError:
            run.case(what, expected=None).expect_error(
                user_fn, text, dict(scores),
                why=f"no segmentation of {text!r} into pieces of the vocabulary exists")
            continue
        best = _log_probability(expected, scores)
        case = run.case(what, expected=Shown(f"{expected!r} (log-probability {best:.6f}; any segmentation "
                                             "that scores as high passes)"), seconds=seconds if what == LARGE else None,
                        slow_hint="keep only the best score of each prefix and where its last piece starts, each "
                                  "computed once from shorter prefixes; trying every segmentation (or recursing "
                                  "without remembering results) is exponential in the length of the text")
        got = case.call(user_fn, text, dict(scores), error_hint=functools.partial(_viterbi_error_hint, text))
        try:
            pieces = [str(p) for p in got]
        except TypeError:
            case.fail(got, "return the segmentation as a list of pieces (str).")
        if "".join(pieces) != text or any(p not in scores or not p for p in pieces):
            case.fail(pieces, f"the pieces must be vocabulary entries that concatenate to {text!r}; follow "
                              "the back-pointers from the end of the text to its start.")
        yours = _log_probability(pieces, scores)
        if not _close(best, yours, abs_tol=_TOL):
            case.fail(Shown(f"{pieces!r} (log-probability {yours:.6f})"), _viterbi_hint(text, scores, pieces))


# ---------------------------------------------------------------------------- E-step


def _counts_cases() -> list[tuple[dict[str, int], dict[str, float], str]]:
    cases = [
        ({"abab": 1}, ABAB, "the worked example 'abab'"),
        ({"abab": 3, "aba": 2, "bab": 1, "ba": 1}, ABAB, "the chapter's hard-versus-soft EM example"),
        (HUG_WORDS, _hug_probs(), "the hug example's corpus with its substring-frequency probabilities"),
        ({"a": 4}, ABAB, "one word with a single segmentation"),
    ]
    rng = random.Random(_SEED + 2)
    for k in range(_N_RANDOM):
        probs = _random_probs(rng)  # all characters: every word can be segmented
        words = {_random_word(rng): rng.randint(1, 5) for _ in range(rng.randint(1, 4))}
        cases.append((words, probs, f"random case {k}"))
    cases.append(({"🙂🙂a": 2, "a🙂": 1}, {"🙂": 0.3, "a": 0.3, "🙂a": 0.2, "🙂🙂": 0.2}, "emoji (astral characters)"))
    cases.append(({}, ABAB, "no words at all: nothing to count"))
    cases.append((*_large_corpus(), LARGE_COUNTS))
    return cases


LARGE_COUNTS = "large: 150 words of 12 to 20 characters over 60 pieces (timed)"


@functools.lru_cache(maxsize=1)
def _large_corpus() -> tuple[dict[str, int], dict[str, float]]:
    text, probs = _large_text()
    rng = random.Random(_SEED + 4)
    words: dict[str, int] = {}
    while len(words) < 150:
        start, size = rng.randrange(len(text) - 20), rng.randint(12, 20)
        words[text[start : start + size]] = rng.randint(1, 9)
    return words, probs


def forward_backward_counts(word_counts: dict[str, int], probs: dict[str, float]) -> dict[str, float]:
    """The E-step in O(len(word)²) per word: forward times backward, over each word's total probability.

    Equal to `toklab.unigram.reference_expected_counts` (which enumerates segmentations) up to the order
    of the sums; the yardstick of the large case, where enumerating is far too slow.
    """
    counts: dict[str, float] = {}
    for word, n in word_counts.items():
        size = len(word)
        forward = reference_forward(word, probs)
        backward = [0.0] * size + [1.0]
        for start in range(size - 1, -1, -1):
            backward[start] = sum(probs[word[start:end]] * backward[end] for end in range(start + 1, size + 1)
                                  if word[start:end] in probs)
        if forward[size] == 0.0:
            continue
        for start in range(size):
            for end in range(start + 1, size + 1):
                piece = word[start:end]
                if piece in probs:
                    weight = n * forward[start] * probs[piece] * backward[end] / forward[size]
                    counts[piece] = counts.get(piece, 0.0) + weight
    return counts


def _counts_hint(words: dict[str, int], probs: dict[str, float], got: dict[str, float], piece: str) -> str:
    if all(abs(v - round(v)) < 1e-12 for v in got.values()):
        return ("all your counts are whole numbers: counting the best segmentation only is hard EM; the "
                "E-step averages over all segmentations, weighted by their probability.")
    if _same_counts(got, reference_expected_counts({w: 1 for w in words}, probs)):
        return "these are the counts of each word once: multiply a word's expected counts by its count."
    unnormalized: dict[str, float] = {}
    for word, n in words.items():
        for seg in segmentations(word, probs):
            weight = n * math.prod(probs[p] for p in seg)
            for p in seg:
                unnormalized[p] = unnormalized.get(p, 0.0) + weight
    if _same_counts(got, unnormalized):
        return ("each segmentation's weight must be its probability divided by the word's total "
                "probability (the last forward entry), so the weights of one word sum to 1.")
    return (f"the expected count of {piece!r} is the sum, over words and over the positions where "
            f"{piece!r} can sit, of count(word) * f[i] * p * b[j] / f[n] (forward times backward).")


def _same_counts(a: dict[str, float], b: dict[str, float]) -> bool:
    return all(_close(a.get(k, 0.0), b.get(k, 0.0)) for k in set(a) | set(b))


@exercise("ch02_3-ex3", title="Implement the E-step with forward-backward", function="my_expected_counts",
          reference=forward_backward_counts, against="toklab.unigram.reference_expected_counts",
          answers=("toklab.unigram.reference.reference_expected_counts",
                   "toklab.teaching.exercises.ch02_3.forward_backward_counts"))
def check_expected_counts(run: Run, user_fn: Callable) -> None:
    """Compare ``user_fn(word_counts, probs)`` with `toklab.unigram.reference_expected_counts`.

    A piece missing from the reader's dict counts as 0.
    """
    for words, probs, what in _counts_cases():
        large = what == LARGE_COUNTS
        expected, seconds = run.timed(forward_backward_counts if large else reference_expected_counts, words, probs)
        case = run.case(what, expected=_short(expected), seconds=seconds if large else None, slow_hint=(
            "use forward-backward: f[i] * p * b[j] / f[n] for every piece that can sit at [i, j), a table pass "
            "per word; enumerating each word's segmentations is exponential in its length"))
        got = case.call(user_fn, dict(words), dict(probs))
        try:
            got_d = {str(k): float(v) for k, v in dict(got).items()}
        except (TypeError, ValueError):
            case.fail(got, "return a dict mapping each piece to its expected count (a float).")
        for piece in sorted(set(expected) | set(got_d)):
            e, g = expected.get(piece, 0.0), got_d.get(piece, 0.0)
            if not _close(e, g):
                hint = f"piece {piece!r}: expected {e:.6g}, got {g:.6g}; " + _counts_hint(words, probs, got_d, piece)
                case.fail(_short(got_d), hint)
