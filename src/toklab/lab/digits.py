"""How tokenizers cut numbers, measured: digit chunks, final tokens, place value.

Three generations of digit handling live in the pre-tokenizer, not in BPE:

- unlimited runs (GPT-2's ``r50k_base``: `` ?\\p{N}++``): the whole number is
  one chunk and BPE cuts it wherever its merges happen to;
- one digit per token (SentencePiece's ``split_digits``, used by Llama 1 and 2);
- up to three digits per chunk, left to right (``\\p{N}{1,3}`` in
  ``cl100k_base``, ``o200k_base`` and Llama 3): ``12345`` -> ``123`` + ``45``.

A cut is *aligned with place value* when the place of a digit (units, tens,
...) decides where it sits in its token, whatever the number's length: read
from the right, the tokens are groups of one size ``g``, the leftmost group
possibly shorter. One digit per token (``g = 1``) and thousands groups cut
from the right (``g = 3``: ``12`` + ``345``) are aligned; left-to-right groups
of three are aligned only when the length is a multiple of three or at most
three (``123`` + ``45`` puts the units digit first in its token, ``1234`` puts
it alone).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence

import regex

__all__ = ["RIGHT_TO_LEFT_3", "aligned", "shape", "alignment_rate", "shapes_by_length", "digit_runs"]

#: A pre-tokenizer alternative that groups digits in threes from the *right*:
#: each chunk is 1-3 digits followed by a whole number of 3-digit groups up to
#: the end of the run.
RIGHT_TO_LEFT_3: str = r"\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))"


def shape(pieces: Sequence[str]) -> tuple[int, ...]:
    """The lengths of the pieces, left to right: ``("123", "45")`` -> ``(3, 2)``."""
    return tuple(len(p) for p in pieces)


def aligned(pieces: Sequence[str]) -> bool:
    """True if the pieces, read from the right, are groups of one size (the leftmost may be shorter).

    >>> aligned(["12", "345"]), aligned(["123", "45"]), aligned(["1", "2", "3"]), aligned(["12345"])
    (True, False, True, True)
    """
    lengths = shape(pieces)
    if not lengths or 0 in lengths:
        raise ValueError(f"expected non-empty pieces, got {list(pieces)!r}")
    group = lengths[-1]
    return all(n == group for n in lengths[1:]) and lengths[0] <= group


def alignment_rate(numbers: Iterable[str], cut: Callable[[str], Sequence[str]]) -> float:
    """Share of ``numbers`` whose pieces under ``cut`` are `aligned`."""
    total = hits = 0
    for number in numbers:
        pieces = cut(number)
        if "".join(pieces) != number:
            raise ValueError(f"cut({number!r}) returned {list(pieces)!r}, which does not spell the number")
        total += 1
        hits += aligned(pieces)
    if not total:
        raise ValueError("no numbers to measure")
    return hits / total


def shapes_by_length(numbers: Iterable[str], cut: Callable[[str], Sequence[str]]) -> dict[int, Counter]:
    """For each number length, how often each `shape` occurs under ``cut``."""
    out: dict[int, Counter] = {}
    for number in numbers:
        out.setdefault(len(number), Counter())[shape(cut(number))] += 1
    return dict(sorted(out.items()))


def digit_runs(text: str) -> list[str]:
    """The maximal runs of ASCII digits 0-9 in ``text``, in order.

    Other scripts' digits (Arabic-Indic, fullwidth) are left out: they are
    several UTF-8 bytes each, so their tokens are not strings of whole digits.
    """
    return regex.findall(r"[0-9]+", text)
