"""Checkers for the coding exercises of the appendix (the invariants as runnable checks).

* ``ch09-ex1``, `check_assert_round_trip(fn)`: the reader's
  ``assert_round_trip(tokenizer, texts)``, an invariant written the way `toklab.teaching.sanity`
  writes its checks. ``tokenizer`` has ``encode(text) -> list[int]`` and
  ``decode(ids) -> str``; ``texts`` is a list of str. When
  ``tokenizer.decode(tokenizer.encode(t)) == t`` for every text, it returns one line (a
  non-empty str) saying what it verified; otherwise it raises AssertionError whose
  message names (``repr``) the first text that does not come back. The checker runs it
  on a byte-level BPE (lossless on every text) and on two lossy wrappers of it: one
  that applies NFKC before encoding, one whose decoder collapses runs of whitespace,
  as a SentencePiece model does.

Each runs hand-made cases first, then random ones (fixed seed), and reports in the
format of `toklab.teaching.exercises.harness`, with a hint at the usual mistake.
"""

from __future__ import annotations

import functools
import random
import unicodedata
from collections.abc import Callable, Sequence

from ... import bpe
from ...bpe import ByteBPE
from ...data import corpus
from .harness import Run, Shown, derived, exercise, show

__all__ = ["catching_assertion", "check_assert_round_trip"]

_SEED = 2009


class _Nfkc:
    """A byte-level BPE that applies NFKC first: lossy where NFKC rewrites (``Ａ①`` -> ``A1``)."""

    def __init__(self, inner: ByteBPE) -> None:
        self.inner = inner

    def encode(self, text: str) -> list[int]:
        return self.inner.encode(unicodedata.normalize("NFKC", text))

    def decode(self, ids: Sequence[int]) -> str:
        return self.inner.decode(ids)

    def __repr__(self) -> str:
        return "<BPE with an NFKC normalizer>"


class _Collapsing:
    """A byte-level BPE whose decoder collapses whitespace runs and strips the ends, as ``▁`` decoding does."""

    def __init__(self, inner: ByteBPE) -> None:
        self.inner = inner

    def encode(self, text: str) -> list[int]:
        return self.inner.encode(text)

    def decode(self, ids: Sequence[int]) -> str:
        return " ".join(self.inner.decode(ids).split())

    def __repr__(self) -> str:
        return "<BPE whose decoder collapses whitespace>"


class _Failed:
    """The reader's function raised AssertionError: the invariant, by its own account, does not hold."""

    def __init__(self, message: str) -> None:
        self.error = message

    def __repr__(self) -> str:
        return f"raised AssertionError: {self.error}"


def catching_assertion(fn: Callable, *args: object) -> object:
    """``fn(*args)``, or ``("AssertionError", message)`` when it raises AssertionError.

    Run where the reader's function runs (a plain pair crosses a process boundary; any
    other exception propagates to the harness).
    """
    try:
        return fn(*args)
    except AssertionError as exc:
        return ("AssertionError", str(exc))


@functools.lru_cache(maxsize=1)
def _bpe() -> ByteBPE:
    return bpe.train(corpus.load("en", 20_000), 256 + 150)


def _first_failure(tokenizer, texts: Sequence[str]) -> str | None:
    for text in texts:
        if tokenizer.decode(tokenizer.encode(text)) != text:
            return text
    return None


def _assert_round_trip(tokenizer, texts: Sequence[str]) -> str:
    """toklab's answer: decode(encode(t)) == t for every text, or AssertionError naming the first that fails."""
    for text in texts:
        back = tokenizer.decode(tokenizer.encode(text))
        if back != text:
            raise AssertionError(f"{text!r} comes back as {back!r}")
    return f"{len(texts)} texts round-trip exactly"


def _cases() -> list[tuple[object, list[str], str]]:
    lossless = _bpe()
    nfkc, collapsing = _Nfkc(lossless), _Collapsing(lossless)
    cases: list[tuple[object, list[str], str]] = [
        (lossless, ["abab abac", " A\n中文🙂\x00", "tab\there\r\n", "  two spaces  ", ""],
         "a byte-level BPE: lossless on spaces, newlines, Chinese, an emoji, NUL and the empty text"),
        (nfkc, ["plain ASCII", "Ａ①", "ﬃ"], "NFKC first: 'Ａ①' comes back as 'A1'"),
        (nfkc, ["x²", "x2"], "NFKC first: the superscript two becomes 2"),
        (collapsing, ["a b", "a  b", "c"], "a decoder that collapses whitespace: 'a  b' comes back as 'a b'"),
        (collapsing, [" leading space"], "a decoder that collapses whitespace: the leading space is lost"),
        (nfkc, ["plain ASCII", "only ASCII here"], "NFKC first, but every text is ASCII: nothing is lost"),
        (lossless, [], "no texts at all: nothing fails"),
    ]
    rng = random.Random(_SEED)
    lines = [x for x in corpus.held_out("mixed", 50_000, 20_000).splitlines() if x.strip()]
    for n in range(8):
        texts = rng.sample(lines, 5)
        tokenizer = rng.choice((lossless, lossless, nfkc, collapsing))
        if rng.random() < 0.5 and tokenizer is not lossless:
            texts.insert(rng.randint(0, len(texts)), "Ａ①  ﬃ" if tokenizer is nfkc else "x  y")
        cases.append((tokenizer, texts, f"random held-out lines {n}, {tokenizer!r}"))
    cases.append((lossless, lines[:400], LARGE))
    return cases


LARGE = "large: 400 held-out lines, a byte-level BPE (timed)"


@exercise("ch09-ex1", title="An invariant of your own: the round trip", function="assert_round_trip",
          reference=_assert_round_trip, against="decode(encode(t)) == t on each text, in order")
def check_assert_round_trip(run: Run, fn: Callable[[object, list[str]], str]) -> None:
    """Check a reader's ``assert_round_trip(tokenizer, texts) -> str`` (AssertionError when a text fails)."""
    for tokenizer, texts, what in _cases():
        failing = _first_failure(tokenizer, texts)
        _, seconds = run.timed(_assert_round_trip if failing is None else _first_failure, tokenizer, texts)
        call = f"assert_round_trip({tokenizer!r}, {show(list(texts))})"
        if what == LARGE:
            case = run.case(what, expected=Shown("a line saying what was verified"), input=call, seconds=seconds,
                            slow_hint="encode and decode each text once; re-checking every earlier text for each "
                                      "new one grows with the square of their number")
        elif failing is None:
            case = run.case(what, expected=Shown("a line saying what was verified"), input=call)
        else:
            back = tokenizer.decode(tokenizer.encode(failing))
            case = run.case(what, expected=Shown(f"raises AssertionError naming {failing!r} (it comes back as "
                                                 f"{back!r})"), input=call)
        got = case.call(derived(fn, catching_assertion), tokenizer, list(texts), error_hint=(
            "only AssertionError means 'the invariant does not hold'; any other exception is a bug in the check "
            "itself (it is this failure's __cause__, with its traceback)"))
        if isinstance(got, tuple) and len(got) == 2 and got[0] == "AssertionError":
            got = _Failed(str(got[1]))
        if isinstance(got, _Failed):
            message = str(got.error)
            if failing is None:
                case.fail(Shown(f"raised AssertionError: {show(message)}"),
                          "every text comes back exactly here: an invariant that holds must not fail.")
            if repr(failing) not in message and failing not in message:
                case.fail(Shown(f"raised AssertionError: {show(message)}"),
                          f"name the text that broke the invariant in the message ({failing!r}), so that a "
                          "FAIL line says what to look at; and stop at the first text that fails.")
            continue
        if failing is not None:
            canonical = tokenizer.encode(tokenizer.decode(tokenizer.encode(failing))) == tokenizer.encode(failing)
            hint = f"decode(encode({failing!r})) is {back!r}, not the text, yet the function returned. "
            if canonical:
                hint += ("If it compares encode(decode(ids)) with ids, that is the other direction (Q8): it holds "
                         "here, because normalizing twice changes nothing more. ")
            hint += "Compare the decoded text with the original and raise AssertionError naming it."
            case.fail(got, hint)
        if not isinstance(got, str) or not got.strip():
            case.fail(got, "when every text round-trips, return one line (a non-empty str) saying what was "
                      "verified, as each check of toklab.teaching.sanity does.")
