"""Checkers for the coding exercises of §8 (interview questions).

* ``ch08-ex1``, `check_backoff(fn)`: the reader's ``backoff(merges, text, k)``: with
  the merge list ``merges`` (pairs of str, in rank order), encode ``text[:k]`` and
  ``text`` from single characters, and return the smallest number of final tokens of
  the first encoding to drop so that what is left is a prefix of the second (what token
  healing must back off; 0 when the cut is stable). Compared with
  `toklab.bpe.reference_encode` and `toklab.teaching.drills.prefix.backoff`.
* ``ch08-ex2``, `check_other_ids(fn)`: the reader's ``other_ids(tokenizer, text)`` for
  a byte-level `toklab.ByteBPE`: a list of token IDs, different from
  ``tokenizer.encode_ordinary(text)``, that decodes to exactly ``text``; or None when
  no such list exists. The checker decodes what it gets, and decides existence itself
  by counting the ways the text's bytes can be cut into vocabulary tokens.

Each runs hand-made cases first, then random ones (fixed seed), and reports in the
format of `toklab.teaching.exercises.harness`, with a hint at the usual mistake.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence

from ... import bpe
from ...bpe import ByteBPE
from ...data import corpus
from ..drills.bpe import trained_merges
from ..drills.prefix import backoff
from .harness import Run, Shown, exercise, show

__all__ = ["check_backoff", "check_other_ids"]

_SEED = 2025

Merge = tuple[str, str]


def _backoff(merges: Sequence[Merge], text: str, k: int) -> int:
    return backoff(bpe.reference_encode(list(text[:k]), merges), bpe.reference_encode(list(text), merges))


@exercise("ch08-ex1", title="Tokens token healing must back off", function="backoff",
          reference=_backoff, against="toklab.bpe.reference_encode on the prompt and the text")
def check_backoff(run: Run, fn: Callable[[list[Merge], str, int], int]) -> None:
    """Check a reader's ``backoff(merges, text, k) -> int``."""
    d06 = [("a", "b"), ("ab", "c")]
    cases = [(d06, "abc", 2, "the merges a+b, ab+c: encode('ab') = [ab], encode('abc') = [abc]"),
             (d06, "abc", 1, "cut after 'a'"),
             (d06, "abcab", 3, "a stable cut: the prompt ends on a token boundary"),
             ([("a", "b"), ("c", "d"), ("ab", "cd")], "abcd", 3, "two tokens must go: [ab, c] vs [abcd]")]
    rng = random.Random(_SEED)
    for n in range(300):
        alphabet = "".join(rng.sample("abcdeg", rng.choice((2, 3))))
        merges = trained_merges(rng, alphabet, (3, 6))
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(2, 9)))
        cases.append((merges, text, rng.randint(1, len(text)), f"random case {n}"))
    cases.append((*_large_backoff(), LARGE_BACKOFF))
    for merges, text, k, what in cases:
        expected, seconds = run.timed(_backoff, merges, text, k)
        large = what == LARGE_BACKOFF
        case = run.case(what, expected=expected, seconds=seconds if large else None,
                        input=f"backoff(<{len(merges):,} merges>, <{len(text)} characters>, {k})" if large else None,
                        slow_hint="encode the two texts once each (a dict of ranks built once), then compare; "
                                  "re-encoding for every token dropped, or searching the merge list for each pair, "
                                  "multiplies the work")
        got = case.call(fn, [tuple(m) for m in merges], text, k)
        if isinstance(got, bool) or not isinstance(got, int):
            case.fail(got, "return the number of tokens to drop, an int.")
        if got != expected:
            prefix = bpe.reference_encode(list(text[:k]), merges)
            full = bpe.reference_encode(list(text), merges)
            if expected >= 2 and got == 1:
                hint = (f"one token is not enough: {prefix} without its last token is still not a prefix of {full}. "
                        "Keep dropping until it is.")
            elif expected == 0:
                hint = f"{prefix} already is a prefix of {full}: nothing needs to go (a cut on a token boundary)."
            elif got == 0:
                hint = f"{prefix} is not a prefix of {full}: the prompt's last tokens are not final."
            else:
                hint = ("encode both texts with the merges, lowest rank first, then drop final tokens of the "
                        "prompt's encoding until what is left starts the text's encoding")
            case.fail(got, hint)


LARGE_BACKOFF = "large: 1,000 merges, 300 characters of English cut after 200 (timed)"
LARGE_OTHER = "large: 4,000 characters of held-out English (timed)"


@functools.lru_cache(maxsize=1)
def _large_backoff() -> tuple[list[tuple[str, str]], str, int]:
    text = " ".join(corpus.load("en", 40_000).split())
    model = bpe.train(text[:30_000], 256 + 1_000)
    merges = [(a.decode("latin-1"), b.decode("latin-1")) for a, b in model.merges]
    return merges, text[30_000:30_300], 200


@functools.lru_cache(maxsize=1)
def _small() -> ByteBPE:
    return bpe.train(corpus.load("en", 50_000), 256 + 300)


def _segmentations_at_least_two(tokenizer: ByteBPE, data: bytes) -> bool:
    """Whether ``data`` can be cut into vocabulary tokens in two or more ways (a count capped at 2)."""
    vocab = set(tokenizer.vocab.values())
    longest = max(map(len, vocab))
    ways = [1] + [0] * len(data)
    for end in range(1, len(data) + 1):
        ways[end] = min(2, sum(ways[start] for start in range(max(0, end - longest), end) if data[start:end] in vocab))
    return ways[-1] >= 2


def _other_ids(tokenizer: ByteBPE, text: str) -> list[int] | None:
    """toklab's answer: split the first multi-byte token into its bytes (or find any other cut)."""
    ids = tokenizer.encode_ordinary(text)
    for k, i in enumerate(ids):
        token = tokenizer.id_to_token(i)
        if len(token) > 1:
            return ids[:k] + [tokenizer.token_to_id(bytes([b])) for b in token] + ids[k + 1:]
    return None if not _segmentations_at_least_two(tokenizer, text.encode("utf-8")) else _any_other(tokenizer, text)


def _any_other(tokenizer: ByteBPE, text: str) -> list[int]:
    data, vocab = text.encode("utf-8"), tokenizer.get_vocab()
    canonical = tokenizer.encode_ordinary(text)

    def cuts(start: int):
        if start == len(data):
            yield []
            return
        for end in range(len(data), start, -1):
            if data[start:end] in vocab:
                for rest in cuts(end):
                    yield [vocab[data[start:end]], *rest]

    return next(ids for ids in cuts(0) if ids != canonical)


@exercise("ch08-ex2", title="Another ID sequence for the same text", function="other_ids",
          reference=_other_ids, against="decoding the IDs, and counting the cuts of the text's bytes")
def check_other_ids(run: Run, fn: Callable[[ByteBPE, str], list[int] | None]) -> None:
    """Check a reader's ``other_ids(tokenizer, text) -> list[int] | None``."""
    tok = _small()
    lines = [line for line in corpus.held_out("en", 50_000, 20_000).splitlines() if line.strip()]
    rng = random.Random(_SEED + 1)
    cases = [("a", "one byte: its only cut is itself"), (" ", "a space alone"),
             ("the", "a whole word that is one token"), ("注", "a Chinese character: three byte tokens"),
             ("hello world", "two words")]
    cases += [(rng.choice(lines)[: rng.randint(1, 40)], f"held-out English {n}") for n in range(60)]
    cases += [("🙂", "an emoji: four byte tokens, one way only"), ("", "the empty text: no other list of IDs"),
              (" ".join(lines)[:4_000], LARGE_OTHER)]
    for text, what in cases:
        exists = _segmentations_at_least_two(tok, text.encode("utf-8"))
        canonical = tok.encode_ordinary(text)
        _, seconds = run.timed(_other_ids, tok, text)
        large = what == LARGE_OTHER
        case = run.case(what, expected=Shown(f"IDs other than {show(canonical, 100)} decoding to {show(text, 100)}"
                                             if exists else "None (no other cut exists)"),
                        seconds=seconds if large else None,
                        input=f"other_ids(tokenizer, <{len(text):,} characters>)" if large else None, slow_hint=(
                            "one other list is enough: split one token of two or more bytes into its byte tokens; "
                            "enumerating the cuts of the text is exponential in its length"))
        got = case.call(fn, tok, text)
        if got is None:
            if exists:
                case.fail(None, "another cut exists: any token of two or more bytes can be replaced by its "
                          "single-byte tokens, which every byte-level vocabulary has.")
            continue
        if not exists:
            case.fail(got, "every cut of this text into tokens is the encoding itself: return None.")
        try:
            ids = [int(i) for i in got]
        except (TypeError, ValueError):
            case.fail(got, "return a list of token IDs (ints), or None.")
        if ids == canonical:
            case.fail(ids, "that is the encoding itself (the canonical cut): the point is another ID "
                      "sequence that decodes to the same text.")
        if any(i not in tok.vocab for i in ids):
            case.fail(ids, "every ID must be an ordinary token of the tokenizer.")
        if tok.decode_bytes(ids) != text.encode("utf-8"):
            case.fail(ids, f"these IDs decode to {tok.decode_bytes(ids)!r}, not {text.encode('utf-8')!r}.")
