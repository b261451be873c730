"""What every drill returns: a `Problem` with its prompt, its answer, and a checker.

A problem's answer has one or more *parts* (the merges; or the bytes, the tokens per
byte and the BPB of one text). Each `Part` knows its right value, how to compare a
reader's value with it (exactly, or to four significant digits), and the *mistakes*
people make on it: each `Mistake` is the value a particular wrong method produces on
this very problem, with feedback that names the method. `Problem.check` takes the
reader's answer (typed text or a Python value), and for each wrong part says which
mistake explains it, or, when none does, where to look.

The readers turn typed answers into values: tokens separated by spaces (``ab c``,
``a ##bc [UNK]``), merges (``a+b, ab+c``), numbers; parts are separated by ``;``.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Mistake",
    "Part",
    "Problem",
    "close",
    "SIG_DIGITS",
    "precision_note",
    "number_words",
    "read_tokens",
    "read_merges",
    "read_numbers",
    "read_ints",
    "split_parts",
    "show_tokens",
    "show_merges",
    "show_number",
    "first_difference",
]

#: Numeric answers are asked for to this many significant digits (the prompts say so) ...
SIG_DIGITS = 4
#: ... and accepted within this relative error, which every correctly rounded answer meets
#: (rounding to 4 significant digits moves a number by at most 5 parts in 10,000).
REL_TOL = 1e-3


def close(got: Any, expected: Any) -> bool:
    """Numbers equal to ``REL_TOL`` (a list of numbers: element by element, same length)."""
    if isinstance(expected, (list, tuple)):
        return (isinstance(got, (list, tuple)) and len(got) == len(expected)
                and all(close(g, e) for g, e in zip(got, expected)))
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        return False
    return math.isclose(float(got), float(expected), rel_tol=REL_TOL, abs_tol=1e-12)


def _round_sig(x: float, digits: int) -> float:
    return float(f"{x:.{digits}g}")


def precision_note(got: Any, expected: Any) -> str | None:
    """Feedback for a number that is the right one rounded to fewer than `SIG_DIGITS` digits.

    For a list, the first value that is not `close` is looked at. None when the number is
    not a rounding of the right one (then it is simply wrong).
    """
    if isinstance(expected, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(expected):
            return None
        for k, (g, e) in enumerate(zip(got, expected), 1):
            if not close(g, e):
                note = precision_note(g, e)
                return f"value {k}: {note}" if note else None
        return None
    if isinstance(got, bool) or not isinstance(got, (int, float)) or close(got, expected):
        return None
    for digits in range(SIG_DIGITS - 1, 0, -1):
        if math.isclose(float(got), _round_sig(float(expected), digits), rel_tol=1e-9, abs_tol=1e-15):
            return (f"correct only to {digits} significant digit{'s' if digits > 1 else ''}; "
                    f"give {SIG_DIGITS} (more is fine)")
    return None


def _exact(got: Any, expected: Any) -> bool:
    """Equal values of the same kind (a tuple may stand for a list, a list for a pair)."""
    if isinstance(expected, bool) or isinstance(got, bool):
        return got is expected
    if isinstance(expected, int):
        return isinstance(got, int) and got == expected
    if isinstance(expected, list):
        if not isinstance(got, (list, tuple)):
            return False
        return [tuple(x) if isinstance(x, list) else x for x in got] == expected
    return type(got) is type(expected) and got == expected


@dataclass(frozen=True)
class Mistake:
    """The value a known wrong method gives on this problem, and feedback naming that method."""

    title: str
    value: Any
    detail: str

    def feedback(self) -> str:
        return f"{self.title}: {self.detail}"


@dataclass(frozen=True)
class Part:
    """One part of an answer: its right value, how values compare, the mistakes that explain wrong ones."""

    name: str
    value: Any
    mistakes: tuple[Mistake, ...] = ()
    numeric: bool = False
    #: Feedback for a wrong value no mistake explains (a function of that value).
    hint: Callable[[Any], str] | None = None

    def same(self, got: Any, expected: Any) -> bool:
        return close(got, expected) if self.numeric else _exact(got, expected)

    def live(self) -> "Part":
        """This part with only the mistakes that can be told from the right answer here.

        A mistake that gives the right value on this problem is dropped; two that give the
        same wrong value become one whose feedback names both.
        """
        kept: list[Mistake] = []
        for m in self.mistakes:
            if self.same(m.value, self.value):
                continue
            twin = next((k for k, other in enumerate(kept) if self.same(m.value, other.value)), None)
            if twin is None:
                kept.append(m)
            else:
                first = kept[twin]
                kept[twin] = Mistake(first.title, first.value, f"{first.detail} (The same answer also comes from "
                                     f"another slip, {m.title[0].lower()}{m.title[1:]}: {m.detail})")
        return Part(self.name, self.value, tuple(kept), self.numeric, self.hint)

    def judge(self, got: Any) -> tuple[bool, str]:
        if self.same(got, self.value):
            return True, "right"
        for m in self.mistakes:
            if self.same(got, m.value):
                return False, m.feedback()
        if self.numeric and (note := precision_note(got, self.value)):
            return False, note
        return False, self.hint(got) if self.hint else "not the right value"


@dataclass(frozen=True)
class Problem:
    """A practice problem: ``prompt`` to show, ``answer`` (toklab's), ``check(answer) -> (ok, feedback)``.

    ``topic`` and ``seed`` reproduce it (`toklab.teaching.drills.generate`); ``data`` holds its
    inputs for programs (the prompt states the same inputs for people); ``solution``
    is the worked solution; ``answer_format`` says how to type an answer.
    """

    topic: str
    seed: int
    prompt: str
    parts: tuple[Part, ...]
    solution: str
    answer_format: str
    data: dict[str, Any] = field(repr=False)
    reader: Callable[[str], Any] = field(repr=False)
    writer: Callable[[Any], str] = field(repr=False)

    @property
    def answer(self) -> Any:
        """The right answer: the one part's value, or a tuple of the parts' values."""
        return self.parts[0].value if len(self.parts) == 1 else tuple(p.value for p in self.parts)

    @property
    def answer_text(self) -> str:
        """The right answer, typed the way `parse` reads it."""
        return self.writer(self.answer)

    def mistakes(self) -> list[tuple[str, Mistake]]:
        """``(part name, mistake)`` for every mistake this problem can tell from the right answer."""
        return [(p.name, m) for p in self.parts for m in p.mistakes]

    def with_part(self, name: str, value: Any) -> Any:
        """The right answer with part ``name`` replaced by ``value`` (to try one wrong part)."""
        if len(self.parts) == 1:
            return value
        return tuple(value if p.name == name else p.value for p in self.parts)

    def parse(self, text: str) -> Any:
        """A typed answer as a value; ValueError says what could not be read and how to type it."""
        try:
            return self.reader(text)
        except ValueError as exc:
            raise ValueError(f"could not read {text.strip()!r}: {exc}. Type it as {self.answer_format}") from None

    def check(self, answer: Any) -> tuple[bool, str]:
        """``(ok, feedback)``: typed text is parsed first; each wrong part gets the mistake that explains it."""
        if isinstance(answer, str):
            try:
                answer = self.parse(answer)
            except ValueError as exc:
                return False, str(exc)
        if len(self.parts) == 1:
            values = [answer]
        elif isinstance(answer, (tuple, list)) and len(answer) == len(self.parts):
            values = list(answer)
        else:
            names = ", ".join(p.name for p in self.parts)
            return False, f"the answer has {len(self.parts)} parts ({names}); type them as {self.answer_format}"
        verdicts = [(p, *p.judge(v)) for p, v in zip(self.parts, values)]
        if all(ok for _, ok, _ in verdicts):
            return True, "correct"
        wrong = [(p, text) for p, ok, text in verdicts if not ok]
        if len(self.parts) == 1:
            return False, wrong[0][1]
        right = [p.name for p, ok, _ in verdicts if ok]
        lines = [f"{p.name} is wrong. {text}" for p, text in wrong]
        if right:
            lines.append(f"Right: {', '.join(right)}.")
        return False, "\n".join(lines)


# ---------------------------------------------------------------------------- reading typed answers


def split_parts(text: str, n: int) -> list[str]:
    """``text`` cut at ``;`` into exactly ``n`` parts."""
    parts = [p.strip() for p in text.split(";")]
    if len(parts) != n:
        raise ValueError(f"expected {n} parts separated by ';', found {len(parts)}")
    return parts


def read_tokens(text: str) -> list[str]:
    """Tokens separated by spaces or commas (``ab c``, ``a, ##bc``), or a Python list of strings."""
    text = text.strip()
    if text[:1] in "[(" and ("'" in text or '"' in text):
        try:
            value = ast.literal_eval(text)
        except (SyntaxError, ValueError):
            raise ValueError("a list of tokens needs quoted strings, e.g. ['ab', 'c']") from None
        if not isinstance(value, (list, tuple)) or not all(isinstance(t, str) for t in value):
            raise ValueError("expected a list of strings")
        return list(value)
    tokens = [t for t in re.split(r"[\s,]+", text) if t]
    if not tokens:
        raise ValueError("no tokens")
    return tokens


_MERGE = re.compile(r"""\s*\(?\s*['"]?([^\s+,'"()]+)['"]?\s*(?:\+|,)\s*['"]?([^\s+,'"()]+)['"]?\s*\)?\s*""")


def read_merges(text: str) -> list[tuple[str, str]]:
    """Merges ``a+b, ab+c`` (or ``(a, b), (ab, c)``), in order."""
    merges, pos, text = [], 0, text.strip()
    while pos < len(text):
        match = _MERGE.match(text, pos)
        if match is None or match.end() == pos:
            raise ValueError(f"cannot read a merge at {text[pos:pos + 12]!r}")
        merges.append((match[1], match[2]))
        pos = match.end()
        if pos < len(text):
            if text[pos] not in ",;\n":
                raise ValueError(f"expected ',' between merges at {text[pos:pos + 12]!r}")
            pos += 1
    if not merges:
        raise ValueError("no merges")
    return merges


_GROUPED = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")


def number_words(text: str) -> list[str]:
    """The numbers of a typed list, as words: split at spaces, ``;`` and commas, except that a
    comma between digit groups of three is a thousands separator (``100,256`` is one number,
    as the prompts write it; ``1,2`` and ``0.5,0.25`` are two)."""
    words = []
    for word in re.split(r"[\s;]+", text.strip()):
        word = word.strip(",")
        if _GROUPED.fullmatch(word):
            words.append(word.replace(",", ""))
        else:
            words.extend(w for w in word.split(",") if w)
    return words


def read_numbers(text: str, n: int | None = None) -> list[float]:
    """Numbers separated by spaces or commas (``100,256.5`` is one); exactly ``n`` of them when ``n`` is given."""
    words = number_words(text)
    try:
        values = [float(w) for w in words]
    except ValueError:
        raise ValueError("expected plain numbers such as 0.1875") from None
    if any(not math.isfinite(v) for v in values):
        raise ValueError("numbers must be finite")
    if n is not None and len(values) != n:
        raise ValueError(f"expected {n} number{'s' if n != 1 else ''}, found {len(values)}")
    return values


def read_ints(text: str, n: int | None = None) -> list[int]:
    """Whole numbers separated by spaces; ``100,256`` and ``100_256`` are one number each."""
    words = [w.replace("_", "") for w in number_words(text)]
    if not all(re.fullmatch(r"[-+]?\d+", w) for w in words):
        raise ValueError("expected whole numbers separated by spaces")
    if n is not None and len(words) != n:
        raise ValueError(f"expected {n} whole number{'s' if n != 1 else ''}, found {len(words)}")
    return [int(w) for w in words]


# ---------------------------------------------------------------------------- writing answers


def first_difference(got: Sequence[Any], expected: Sequence[Any], what: str = "token") -> str:
    """Where two lists part: ``"token 3 is 'ab'; the right one is 'a'"`` (or which one is shorter)."""
    for k, (g, e) in enumerate(zip(got, expected), 1):
        if g != e:
            return f"{what} {k} is {g!r}; the right one is {e!r}"
    if len(got) < len(expected):
        return f"your answer stops after {len(got)} {what}s; the right one has {len(expected)}"
    return f"your answer has {len(got)} {what}s; the right one has {len(expected)}"


def show_tokens(tokens: Sequence[str]) -> str:
    return " ".join(tokens)


def show_merges(merges: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{a}+{b}" for a, b in merges)


def show_number(x: float) -> str:
    """Four significant digits, or the exact value when it is shorter (0.16, not 0.1600)."""
    text = repr(float(x))
    short = f"{x:.4g}"
    return text if len(text) <= len(short) else short
