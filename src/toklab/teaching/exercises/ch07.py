"""Checkers for the coding exercises of §7 (tokenization from scratch, in one file).

* ``ch07-ex1``, `check_merge_delta(fn)`: the reader's ``merge_delta(word, pair)``, the
  heart of the incremental BPE trainer. ``word`` is a tuple of symbols (str), ``pair``
  two symbols. It must return a dict mapping each adjacent pair to the change in its
  number of occurrences in ``word`` when every occurrence of ``pair`` is merged left to
  right (``toklab.bpe.merge_pair``); pairs whose count does not change may be left out.
  Compared with recounting: ``pair_counts`` of the merged word minus that of the word.
* ``ch07-ex2``, `check_gpt2_pattern(fn)`: the reader's ``gpt2_pattern()``, GPT-2's
  pre-tokenizer pattern for the standard library's ``re``, which has no ``\\p{L}`` or
  ``\\p{N}``. It returns a pattern (a string or a compiled ``re`` pattern); its
  ``re.findall`` must give the chunks that GPT-2's pattern gives when the ``regex``
  module runs it (`toklab.pre_tokenizers.patterns.compiled`), on hand-made texts, the
  corpus and random strings of letters, numbers, marks, separators and whitespace.
  Characters that Python's Unicode tables and the ``regex`` module's classify
  differently (characters newer than one of them) are left out.

Each runs hand-made cases first, then random ones (fixed seed), and reports in the
format of `toklab.teaching.exercises.harness`, with a hint at the usual mistake.
"""

from __future__ import annotations

import functools
import random
import re
import sys
import unicodedata
from collections.abc import Callable

from ... import bpe
from ...data import corpus
from ...pre_tokenizers import patterns
from .harness import Run, Shown, derived, exercise

__all__ = ["check_merge_delta", "check_gpt2_pattern", "findall_with"]

_SEED = 2007


def _delta(word: tuple[str, ...], pair: tuple[str, str]) -> dict[tuple[str, str], int]:
    before = bpe.pair_counts({word: 1})
    after = bpe.pair_counts({bpe.merge_pair(word, pair): 1})
    out = {p: after.get(p, 0) - before.get(p, 0) for p in set(before) | set(after)}
    return {p: d for p, d in sorted(out.items()) if d}


def _delta_hint(word: tuple[str, ...], pair: tuple[str, str], expected: dict, got: dict) -> str:
    a, b = pair
    occurrences = sum(1 for x in zip(word, word[1:]) if x == pair)
    if a == b and got.get(pair, 0) == -occurrences != expected.get(pair, 0):
        merged = bpe.merge_pair(word, pair).count(a + b)
        return (f"in {word!r} the pair {pair} occurs {occurrences} times (overlapping) but is merged {merged} "
                "times, left to right: what is left of the run still holds the pair. Recount the merged word, "
                "do not just subtract the occurrences.")
    new = (a + b, a + b)
    if new in expected and new not in got:
        return f"two merged symbols next to each other form a new pair {new}: count it too."
    return ("the change is every pair of the merged word minus every pair of the word: each merged occurrence "
            "takes its neighbours' pairs with it and makes new ones with the new symbol.")


@exercise("ch07-ex1", title="Incremental pair counts for one merge", function="merge_delta",
          reference=_delta, against="recounting with toklab.bpe.pair_counts")
def check_merge_delta(run: Run, fn: Callable[[tuple[str, ...], tuple[str, str]], dict]) -> None:
    """Check a reader's ``merge_delta(word, pair) -> {pair: change}``."""
    cases = [
        (tuple("abab"), ("a", "b"), "abab: the merged symbols meet, (ab, ab) is new"),
        (tuple("abac"), ("a", "b"), "abac: one occurrence"),
        (tuple("aaa"), ("a", "a"), "aaa: (a, a) occurs twice, is merged once"),
        (tuple("aaaa"), ("a", "a"), "aaaa: three occurrences, two merges, (aa, aa) is new"),
        (tuple("xyz"), ("a", "b"), "the pair does not occur: nothing changes"),
        (("ab", "c", "ab", "c"), ("ab", "c"), "merged symbols as parts"),
    ]
    rng = random.Random(_SEED)
    for k in range(300):
        word = tuple(rng.choice("aab") for _ in range(rng.randint(1, 9)))
        pair = (rng.choice("ab"), rng.choice("ab"))
        cases.append((word, pair, f"random case {k}"))
    cases.append((tuple(random.Random(_SEED + 3).choice("aab") for _ in range(20_000)), ("a", "b"), LARGE_DELTA))
    for word, pair, what in cases:
        expected, seconds = run.timed(_delta, word, pair)
        large = what == LARGE_DELTA
        case = run.case(what, expected=expected, seconds=seconds if large else None,
                        input=f"merge_delta(<{len(word):,} symbols>, {pair!r})" if large else None, slow_hint=(
                            "one pass over the word is enough: count the pairs before and after merging (or patch "
                            "the counts around each occurrence); rebuilding the word after every occurrence, or "
                            "recounting it, is quadratic"))
        got = case.call(fn, word, pair)
        if not isinstance(got, dict):
            case.fail(got, "return a dict mapping each pair (a tuple of two symbols) to its change in count.")
        cleaned = {tuple(p): d for p, d in got.items() if d}
        if cleaned != expected:
            case.fail(Shown(repr(dict(sorted(cleaned.items())))), _delta_hint(word, pair, expected, cleaned))


# ---------------------------------------------------------------------------- ch07-ex2

# Unicode's White_Space, which is what \s means to the regex module: re's \s adds U+001C..U+001F.
_WHITE_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"


def _ranges(first_letter: str) -> str:
    """A character class body (no brackets) of every code point whose general category starts with ``first_letter``."""
    points = [cp for cp in range(sys.maxunicode + 1) if unicodedata.category(chr(cp))[0] == first_letter]
    runs, start = [], points[0]
    for prev, cp in zip(points, points[1:] + [-1]):
        if cp != prev + 1:
            runs.append(re.escape(chr(start)) + ("-" + re.escape(chr(prev)) if prev > start else ""))
            start = cp
    return "".join(runs)


@functools.lru_cache(maxsize=1)
def _gpt2_pattern() -> str:
    letters, numbers, space = _ranges("L"), _ranges("N"), _WHITE_SPACE
    return (rf"'(?:[sdmt]|ll|ve|re)| ?[{letters}]+| ?[{numbers}]+| ?[^{space}{letters}{numbers}]+"
            rf"|[{space}]+(?![^{space}])|[{space}]+")


_TEXTS = [
    ("x² ½ Ⅻ①", "numbers that are not decimal digits (No, Nl): GPT-2's \\p{N}"),
    ("a \x1cb\x1d \x1f", "U+001C..U+001F: control characters, not white space"),
    ("snake_case __init__ a_1", "the underscore is punctuation to GPT-2"),
    ("don't I'll we’re 'S", "contractions: an ASCII apostrophe, lower case only"),
    ("٣٤ 一二三 ¹²³ 12345", "digits of other scripts, CJK numerals, superscripts"),
    ("e\u0301 नमस्ते Ω", "combining marks are neither letters nor numbers"),
    (" \u00a0a\u3000b  \n\n c\u2028", "white space beyond ASCII, and runs of it"),
    ("Hello, world! 😀👩‍👩‍👧 \x00\x7f", "punctuation, emoji, controls"),
]


def _same_class(char: str) -> bool:
    """Python's unicodedata and the regex module agree on ``char`` (they differ on characters newer than one of them)."""
    compiled = patterns.compiled(r"\p{L}|\p{N}")
    python = unicodedata.category(char)[0] in "LN"
    return python == bool(compiled.fullmatch(char)) and unicodedata.category(char) != "Cn"


def _random_texts(rng: random.Random, n: int) -> list[str]:
    pool = list(" '\t\n_sdmtv\x1c\x1f0123456789½²Ⅻ①") + [" "] * 4
    while len(pool) < 160:
        block = rng.choice([(0x20, 0x3000), (0x4E00, 0x9FFF), (0x1F300, 0x1FAFF)])  # most scripts, Han, emoji
        char = chr(rng.randrange(*block))
        if _same_class(char):
            pool.append(char)
    return ["".join(rng.choice(pool) for _ in range(rng.randint(1, 12))) for _ in range(n)]


LARGE_DELTA = "large: a word of 20,000 symbols (timed)"
LARGE_PATTERN = "large: 60 KB of the mixed corpus (timed)"
_COMPILED: dict[Callable[[], object], re.Pattern] = {}


def findall_with(gpt2_pattern: Callable[[], object], text: str) -> list:
    """``re.findall(gpt2_pattern(), text)``, calling ``gpt2_pattern`` (and compiling its answer) once."""
    compiled = _COMPILED.get(gpt2_pattern)
    if compiled is None:
        got = gpt2_pattern()
        compiled = got if isinstance(got, re.Pattern) else re.compile(got)
        _COMPILED.clear()
        _COMPILED[gpt2_pattern] = compiled
    return compiled.findall(text)


def _pattern_hint(text: str) -> str:
    if any(unicodedata.category(c) in ("No", "Nl") for c in text):
        return ("re's letters, [^\\W\\d_], also take ², ½, Ⅻ and ①, which GPT-2's \\p{N} counts as numbers: build "
                "both classes from unicodedata.category (every L*, every N*), not from \\w and \\d.")
    if any("\x1c" <= c <= "\x1f" for c in text):
        return ("re's \\s also matches U+001C..U+001F, which Unicode's White_Space (the \\s of GPT-2's pattern) does "
                "not: spell the white space out.")
    if "_" in text:
        return "the underscore is \\w to re, but GPT-2 counts it with the punctuation ([^\\s\\p{L}\\p{N}])."
    return ("find the first chunk that differs and ask which alternative of the pattern took it; the order of the "
            "alternatives matters as much as their classes.")


@exercise("ch07-ex2", title="GPT-2's chunks with the standard library's re", function="gpt2_pattern",
          reference=_gpt2_pattern, against="GPT-2's pattern run by the regex module")
def check_gpt2_pattern(run: Run, fn: Callable[[], object]) -> None:
    """Check a reader's ``gpt2_pattern() -> str | re.Pattern``."""
    # The pattern runs where the reader's function runs (their process, under `check` and `grade`).
    findall = derived(fn, findall_with)
    case = run.case("gpt2_pattern() returns a pattern re can compile", expected=Shown("a str or re.Pattern"),
                    input=Shown("re.findall(gpt2_pattern(), '')"))
    case.call(findall, "", error_hint=lambda exc: (
        f"re.compile raised {type(exc).__name__} on what gpt2_pattern() returned: return the pattern as a string, "
        "or compiled with re.compile."))
    gpt2 = patterns.compiled("gpt2")
    texts = list(_TEXTS)
    for name in ("en", "zh", "code", "mixed"):
        lines = [line for line in corpus.load(name, 4_000).splitlines(keepends=True) if line.strip()]
        texts += [(line, f"line {k} of the corpus file {name}") for k, line in enumerate(lines[:20], 1)]
    texts += [(text, f"random text {k}") for k, text in enumerate(_random_texts(random.Random(_SEED + 2), 300))]
    texts.append((corpus.load("mixed", 60_000), LARGE_PATTERN))
    for text, what in texts:
        expected, seconds = run.timed(gpt2.findall, text)
        large = what == LARGE_PATTERN
        case = run.case(what, expected=expected, seconds=seconds if large else None, slow_hint=(
            "the pattern backtracks far more than GPT-2's: look for a class or a quantifier that can match the "
            "same characters in many ways (nested repeats, overlapping alternatives)"),
            input=Shown(f"re.findall(gpt2_pattern(), <{len(text):,} characters>)" if large else
                        f"re.findall(gpt2_pattern(), {text!r})"))
        chunks = case.call(findall, text)
        if chunks != expected:
            case.fail(chunks, _pattern_hint(text))
