"""How tokenizers cut numbers, measured: digit chunks, final tokens, place value.

Three generations of digit handling live in the pre-tokenizer, not in BPE:

- unlimited runs (GPT-2's ``r50k_base``: `` ?\\p{N}++``): the whole number is
  one chunk and BPE cuts it wherever its merges happen to;
- one digit per token (SentencePiece's ``split_digits``, used by Llama 1 and 2);
- up to three digits per chunk, left to right (``\\p{N}{1,3}`` in
  ``cl100k_base``, ``o200k_base`` and Llama 3): ``12345`` -> ``123`` + ``45``.

A way of cutting numbers is *aligned with place value* when the place of a
digit (units, tens, ...) alone decides which token it lands in, counted from
the right, and where inside that token, whatever the number's length. That
holds exactly when every number is cut into groups of one size ``g`` from the
right, the leftmost group possibly shorter. So alignment is measured against a
group size: `aligned` asks whether one number's pieces are its ``g``-digit
groups, `alignment_rate` how many numbers a cut gets right for a given ``g``,
and `best_group` which ``g`` fits the most. One digit per token (``g = 1``)
and thousands groups cut from the right (``g = 3``: ``12`` + ``345``) are
aligned for every number; left-to-right groups of three are right for ``g = 3``
only when the length is a multiple of three or at most three (``123`` + ``45``
puts the units digit first in its token, ``1234`` puts it alone). A cut that
gives ``12`` + ``34`` for one number and ``12`` + ``345`` for another follows
no single group size: its tens digit is first in its token in one and in the
middle in the other.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence

import regex

__all__ = [
    "RIGHT_TO_LEFT_3",
    "aligned",
    "alignment_rate",
    "best_group",
    "digit_runs",
    "groups_from_right",
    "shape",
    "shapes_by_length",
]

#: A pre-tokenizer alternative that groups digits in threes from the *right*:
#: each chunk is 1-3 digits followed by a whole number of 3-digit groups up to
#: the end of the run.
RIGHT_TO_LEFT_3: str = r"\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))"


def shape(pieces: Sequence[str]) -> tuple[int, ...]:
    """The lengths of the pieces, left to right: ``("123", "45")`` -> ``(3, 2)``."""
    return tuple(len(p) for p in pieces)


def _check_group(group: object) -> int:
    if isinstance(group, bool) or not isinstance(group, int) or group < 1:
        raise ValueError(f"group must be an int >= 1, got {group!r}")
    return group


def groups_from_right(length: int, group: int) -> tuple[int, ...]:
    """The `shape` of ``length`` digits cut into ``group``-digit groups from the right.

    >>> groups_from_right(5, 3), groups_from_right(6, 3), groups_from_right(2, 3)
    ((2, 3), (3, 3), (2,))
    """
    _check_group(group)
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise ValueError(f"length must be an int >= 1, got {length!r}")
    head = length % group or group
    return (head, *(group,) * ((length - head) // group))


def aligned(pieces: Sequence[str], group: int) -> bool:
    """True if the pieces are the number cut into ``group``-digit groups from the right.

    >>> [aligned(p, 3) for p in (["12", "345"], ["123", "45"], ["12", "34"], ["123"])]
    [True, False, False, True]
    >>> aligned(["12", "34"], 2), aligned(["1", "2", "3"], 1)
    (True, True)
    """
    _check_group(group)
    sizes = shape(pieces)
    if not sizes or 0 in sizes:
        raise ValueError(f"expected non-empty pieces, got {list(pieces)!r}")
    return sizes == groups_from_right(sum(sizes), group)


def _cuts(
    numbers: Iterable[str], cut: Callable[[str], Sequence[str]]
) -> list[Sequence[str]]:
    out = []
    for number in numbers:
        pieces = cut(number)
        if "".join(pieces) != number:
            raise ValueError(
                f"cut({number!r}) returned {list(pieces)!r}, "
                "which does not spell the number"
            )
        out.append(pieces)
    if not out:
        raise ValueError("no numbers to measure")
    return out


def alignment_rate(
    numbers: Iterable[str], cut: Callable[[str], Sequence[str]], group: int
) -> float:
    """Share of ``numbers`` cut into their ``group``-digit groups from the right."""
    _check_group(group)
    cuts = _cuts(numbers, cut)
    return sum(aligned(pieces, group) for pieces in cuts) / len(cuts)


def best_group(
    numbers: Iterable[str], cut: Callable[[str], Sequence[str]]
) -> tuple[int, float]:
    """The group size that most of ``numbers`` follow under ``cut``, and their share.

    Sizes from 1 to the longest number's length are tried (a larger group leaves
    every number whole, like the longest one); on a tie the smaller size wins.
    """
    cuts = _cuts(numbers, cut)
    longest = max(sum(shape(pieces)) for pieces in cuts)
    rates = {
        g: sum(aligned(pieces, g) for pieces in cuts) / len(cuts)
        for g in range(1, longest + 1)
    }
    group = max(rates, key=lambda g: (rates[g], -g))
    return group, rates[group]


def shapes_by_length(
    numbers: Iterable[str], cut: Callable[[str], Sequence[str]]
) -> dict[int, Counter]:
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
