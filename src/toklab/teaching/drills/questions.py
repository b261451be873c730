"""§8's twenty-five interview questions, for reveal-and-self-grade drilling.

`QUESTIONS` holds them in the chapter's order, each a `Question`: its number, level
(``L1`` to ``L3``), title, model answer, the common mistake, and where the book shows
it, as plain text for a terminal. They are read from `toklab.teaching.drills.questions_source`,
the chapter's own MyST copied word for word (a test compares the two), and `render`
turns the MyST into text: a ``{ref}`` becomes the section's number and title, a
``{cite:p}`` the first author and year, a ``{glue:text}`` the value toklab computes
for it (`GLUE`, the same computations as the chapter's), and bold markers go.
"""

from __future__ import annotations

import functools
import math
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from .questions_source import CITATIONS, HEADINGS, SOURCE

__all__ = ["Question", "QUESTIONS", "LEVELS", "question", "render", "glued", "GLUE"]


@functools.lru_cache(maxsize=None)
def _tokenizer(name: str):
    from ...bpe import ByteBPE

    return ByteBPE.from_tiktoken(name)


def _cl100k_five():
    from ...measure import vocab_facts

    return vocab_facts.of_bpe(_tokenizer("cl100k_base"), "cl100k_base")


def _q16(which: str) -> float:
    from ... import unigram

    probs = {"a": 0.15, "b": 0.15, "ab": 0.40, "aba": 0.20, "bab": 0.10}
    if which == "marginal":
        return unigram.reference_forward("abab", probs)[-1]
    best = unigram.reference_viterbi("abab", {p: math.log(v) for p, v in probs.items()})
    return math.prod(probs[p] for p in best)


def _bits_per_byte() -> float:
    from ...measure import metrics

    return metrics.bits_per_byte(4.0, 8)


def _byt5_ids() -> int:
    from ...lab import patching

    return patching.ByteVocab().n_vocab


#: How to compute each value the answers glue (computed when a question showing it is rendered).
GLUE: dict[str, Callable[[], float]] = {
    "q12-cl-rows": lambda: _cl100k_five().id_space,
    "q12-cl-entries": lambda: _cl100k_five().entries,
    "q12-cl-params": lambda: _cl100k_five().id_space * 4096 / 1e6,
    "q12-o200k-params": lambda: _tokenizer("o200k_base").n_vocab * 4096 / 1e6,
    "q16-best": lambda: _q16("best"),
    "q16-marginal": lambda: _q16("marginal"),
    "q19-bpb": _bits_per_byte,
    "q24-byt5": _byt5_ids,
}


@functools.lru_cache(maxsize=None)
def glued(name: str) -> float:
    """The value the chapter glues under ``name``, computed by toklab."""
    if name not in GLUE:
        raise ValueError(f"no computation for the glued value {name!r}")
    return GLUE[name]()


def _cite(keys: str) -> str:
    return "(" + "; ".join(CITATIONS[k.strip()] for k in keys.split(",")) + ")"


def _glue(spec: str) -> str:
    name, _, fmt = spec.partition(":")
    return format(glued(name), fmt)


_ROLES = {
    "ref": lambda body: HEADINGS[re.sub(r"^.*<([^>]+)>$", r"\1", body)],
    "doc": lambda body: re.sub(r"\s*<[^>]+>$", "", body),
    "cite:p": _cite,
    "glue:text": _glue,
}
_ROLE = re.compile(r"\{(ref|doc|cite:p|glue:text)\}`([^`]+)`")


def render(myst: str, width: int | None = None) -> str:
    """MyST as plain text for a terminal: roles resolved, ``**`` dropped; with ``width``, each
    paragraph and list item is wrapped again to that width (resolving roles changes line lengths)."""
    text = _ROLE.sub(lambda m: _ROLES[m[1]](m[2]), myst).replace("**", "")
    if width is None:
        return text
    blocks: list[list[str]] = []
    for line in text.split("\n"):
        if not blocks or line.startswith("- ") or not line.strip() or not blocks[-1] or not blocks[-1][-1].strip():
            blocks.append([line])
        else:
            blocks[-1].append(line)
    out = []
    for block in blocks:
        joined = " ".join(part.strip() for part in block)
        if not joined:
            out.append("")
            continue
        indent = "  " if block[0].startswith("- ") else ""
        out.append(textwrap.fill(joined, width, subsequent_indent=indent, break_on_hyphens=False,
                                 break_long_words=False))
    return "\n".join(out)


@dataclass(frozen=True)
class Question:
    """One question of §8: ``Q12``, its level, and its texts as MyST (``render`` them to read)."""

    number: int
    level: str
    title_myst: str
    answer_myst: str
    mistake_myst: str
    shown_in_myst: str

    @property
    def name(self) -> str:
        return f"Q{self.number}"

    @property
    def title(self) -> str:
        return render(self.title_myst)

    @property
    def answer(self) -> str:
        return render(self.answer_myst)

    @property
    def mistake(self) -> str:
        return render(self.mistake_myst)

    @property
    def shown_in(self) -> str:
        return render(self.shown_in_myst)


_QUESTION = re.compile(
    r"\(ch08-q(?P<n>\d+)\)=\n### Q(?P=n)\. (?P<title>[^\n]+)\n\n"
    r"```\{admonition\} Model answer\n:class: dropdown\n\n(?P<answer>.*?)\n```\n\n"
    r"\*\*Common mistake\.\*\* (?P<mistake>.*?)\n\*\*Shown in\*\* (?P<shown>.*?)\n(?=\n|\Z)", re.S)
_LEVEL = re.compile(r"\(ch08-l(\d)\)=\n## Level \d: ([^\n]+)\n")


def _parse(source: str) -> tuple[tuple[Question, ...], dict[str, str]]:
    levels = {f"L{m[1]}": m[2] for m in _LEVEL.finditer(source)}
    starts = [(m.start(), f"L{m[1]}") for m in _LEVEL.finditer(source)]
    found = []
    for m in _QUESTION.finditer(source):
        level = [name for start, name in starts if start < m.start()][-1]
        found.append(Question(int(m["n"]), level, m["title"], m["answer"], m["mistake"], m["shown"]))
    if [q.number for q in found] != list(range(1, len(found) + 1)) or source.count("\n### Q") != len(found):
        raise RuntimeError("toklab.teaching.drills.questions_source does not parse as §8's questions; this is a bug")
    return tuple(found), levels


#: The questions, Q1 first; and what each level is (``LEVELS["L1"]``: "what every candidate should answer").
QUESTIONS, LEVELS = _parse(SOURCE)


def question(which: int | str) -> Question:
    """Question ``which``: its number, or its name (``"Q12"``, any case)."""
    text = str(which).strip()
    number = text[1:] if text[:1] in "qQ" else text
    if number.isdigit() and 1 <= int(number) <= len(QUESTIONS):
        return QUESTIONS[int(number) - 1]
    raise ValueError(f"no question {'Q' + number!r}; "
                     f"the questions are Q1 to Q{len(QUESTIONS)}")
