"""Checkers for the coding exercises of §5.7 (versioning a tokenizer).

* ``ch05_7-ex4``, `check_merges_from_ranks`: the reader recovers the ordered merge
  list from a rank table (what a tiktoken file stores): for each multi-byte token,
  in rank order, the two tokens that BPE joins to make it, found by running BPE on
  the token's bytes with only the lower ranks. Compared with
  `toklab.bpe.encode.recover_split` on small tables where two splits are
  possible, on tokens made of emoji and astral characters' bytes, on a table of
  single bytes only, on the first ranks of ``cl100k_base``, and on a table with a
  token no merge can make (which must raise ValueError).

Reported in the format of `toklab.teaching.exercises.harness`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ...bpe.encode import recover_split
from .harness import Run, Shown, exercise

__all__ = ["check_merges_from_ranks", "reference_merges_from_ranks"]

_BYTES = {bytes([b]): b for b in range(256)}


def reference_merges_from_ranks(ranks: Mapping[bytes, int]) -> list[tuple[bytes, bytes]]:
    """toklab's answer: `recover_split` for every multi-byte token, in rank order."""
    return [recover_split(token, ranks, rank)
            for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]) if len(token) > 1]


def _table(*tokens: bytes) -> dict[bytes, int]:
    """The 256 single bytes, then ``tokens`` at ranks 256, 257, ..."""
    return {**_BYTES, **{t: 256 + k for k, t in enumerate(tokens)}}


def _first_split(token: bytes, ranks: Mapping[bytes, int]) -> tuple[bytes, bytes] | None:
    return next(((token[:i], token[i:]) for i in range(1, len(token))
                 if token[:i] in ranks and token[i:] in ranks), None)


def _hint(ranks: Mapping[bytes, int], expected: list, got: object) -> str:
    if not isinstance(got, (list, tuple)):
        return "return a list of (left, right) pairs of bytes, one per multi-byte token, in rank order."
    if len(got) != len(expected):
        return (f"one pair per multi-byte token: {len(expected)} here (the 256 single bytes are not merges), "
                "in the order of their ranks.")
    k = next(k for k, (g, e) in enumerate(zip(got, expected)) if tuple(g) != e)
    token = expected[k][0] + expected[k][1]
    split = _first_split(token, ranks)
    if split is not None and tuple(got[k]) == split != expected[k]:
        return (f"{token!r} can be cut into two tokens in more than one place; the merge is the cut BPE "
                "makes: run BPE on the token's bytes using only tokens of lower rank, and take the two "
                "parts it ends with.")
    if isinstance(got[k], (list, tuple)) and b"".join(got[k]) != token:
        return f"merge {k} must make {token!r}: its two parts, joined, are the token."
    return (f"merge {k} makes {token!r} from {expected[k][0]!r} + {expected[k][1]!r}, the two parts BPE "
            "reaches on its bytes with the lower ranks only.")


LARGE = "large: the first 3,000 merges of cl100k_base (timed)"


def _cases() -> list[tuple[dict[bytes, int], str]]:
    from ...data import vocabs

    smile = "\U0001f642".encode()
    fraktur = "\U0001d518".encode()
    cl100k = vocabs.load("cl100k_base").ranks
    first = {t: r for t, r in cl100k.items() if r < 256 + 3000}
    return [
        (dict(_BYTES), "single bytes only: no merges"),
        (_table(b"ab", b"bc", b"abc"), "'abc' after 'ab' and 'bc'"),
        (_table(b"bc", b"ab", b"abc"), "'abc' after 'bc' and 'ab'"),
        (_table(b"ab", b"cd", b"bc", b"abcd"), "'abcd': two cuts are tokens"),
        (_table(b"aa", b"aaa", b"aaaa"), "runs of one letter"),
        (_table(smile[:2], smile[2:], smile), "🙂 from two halves of its bytes"),
        (_table(smile[1:3], smile[:3], smile), "🙂 from three bytes and one"),
        (_table(fraktur[:2], fraktur[2:], fraktur, b" " + fraktur), "an astral letter, then with a space"),
        (_table(b"  ", b"    ", b"   ", b"\n\n", b" \n"), "runs of whitespace"),
        (first, LARGE),
    ]


@exercise("ch05_7-ex4", title="Recover the merge order from ranks", function="merges_from_ranks",
          reference=reference_merges_from_ranks, against="toklab.bpe.encode.recover_split")
def check_merges_from_ranks(run: Run, fn: Callable[[dict[bytes, int]], list[tuple[bytes, bytes]]]) -> None:
    """Check a reader's ``merges_from_ranks(ranks) -> [(left, right), ...]``.

    ``ranks`` maps every single byte and some multi-byte tokens to their ranks; the
    answer lists, for each multi-byte token in rank order, the two lower-ranked
    tokens BPE joins to make it, and raises ValueError for a token no merge makes.
    """
    for ranks, what in _cases():
        expected, seconds = run.timed(reference_merges_from_ranks, ranks)
        shown = expected if len(expected) <= 6 else Shown(f"{len(expected):,} merges, the first {expected[:3]}")
        case = run.case(what, expected=shown,
                        input=None if len(ranks) <= 300 else f"merges_from_ranks(<{len(ranks):,} ranks>)",
                        seconds=seconds if what == LARGE else None,
                        slow_hint="look each candidate part up in the ranks dict; searching the table for "
                                  "every split of every token costs a pass over all the ranks each time")
        got = case.call(fn, dict(ranks))
        pairs = [tuple(g) for g in got] if isinstance(got, (list, tuple)) and all(
            isinstance(g, (list, tuple)) and len(g) == 2 for g in got) else got
        if pairs != expected:
            case.fail(got if len(expected) <= 6 else Shown(f"{len(got) if hasattr(got, '__len__') else '?'} "
                                                           "merges, not the expected ones"),
                      _hint(ranks, expected, got))
    case = run.case("'abc' with neither 'ab' nor 'bc' below it", expected=Shown("ValueError"))
    case.expect_error(fn, _table(b"abc", b"ab"),
                      why="BPE on 'abc' with the lower ranks never reaches two parts, so no merge makes it")
