"""A drill session's plan and record: which item comes next, what was missed, the summary by topic.

An `Item` is one thing to practise: a hand computation (a topic of `TOPICS` and a seed)
or one of §8's questions (self-graded). `Session` deals them out: the chosen topics take
turns in an order fixed by the session's seed (``"questions"`` stands for §8's questions,
dealt in a shuffled order; ``"Q12"`` for one of them), the item of turn k has seed
``seed + k``, and in an untimed session a topic that was missed comes back three turns
later. A timed session has a second round instead: `second_round` gives a fresh problem
for every topic missed in the first, and the missed questions again. `Session.record`
keeps each outcome and the time it took; `Session.summary` is the table by topic that
ends a session. Nothing here reads input or a clock: `toklab.cli.drill` does, so a test
can drive a session with a script of answers and a fake clock.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from . import generate
from .problem import Problem
from .questions import QUESTIONS, Question, question

__all__ = ["Item", "Session", "Outcome", "RIGHT", "WRONG", "SHOWN", "QUESTIONS_TOPIC", "COMMAND", "resolve_topics",
           "clock_text"]

#: The pseudo-topic of §8's questions.
QUESTIONS_TOPIC = "questions"
#: How the commands a session prints start.
COMMAND = "python -m toklab drill"
#: The outcomes an item can have: checked right or wrong, solution shown with '?', or self-graded.
Outcome = str
RIGHT, WRONG, SHOWN = "right", "wrong", "shown"
#: Turns until a missed topic comes back in an untimed session.
REVISIT_AFTER = 3


def resolve_topics(names: Sequence[str], topics: Sequence[str]) -> list[str]:
    """The session's topics from what was typed: topic names, ``questions``, or ``Q1`` to ``Q25``.

    ValueError names an unknown one; nothing typed means every topic and the questions.
    """
    if not names:
        return [*topics, QUESTIONS_TOPIC]
    out = []
    for name in names:
        if name in topics or name == QUESTIONS_TOPIC:
            out.append(name)
        elif name[:1] in "qQ" and name[1:].isdigit():
            out.append(question(name).name)
        else:
            raise ValueError(f"unknown topic {name!r}; topics: {', '.join(topics)}, {QUESTIONS_TOPIC}, "
                             f"or one question, Q1 to Q{len(QUESTIONS)}")
        if out.count(out[-1]) > 1:
            out.pop()
    return out


@dataclass(frozen=True)
class Item:
    """One thing to practise: a problem (``topic``, ``seed``) or a question (``number``)."""

    topic: str
    seed: int | None = None
    number: int | None = None

    @property
    def is_question(self) -> bool:
        return self.number is not None

    @property
    def name(self) -> str:
        """What a header calls it: ``"bpe-train, seed 5"`` or ``"Q12 (L2)"``."""
        if self.is_question:
            return f"{self.question().name} ({self.question().level})"
        return f"{self.topic}, seed {self.seed}"

    @property
    def command(self) -> str:
        """The command that shows this item again."""
        return f"{COMMAND} Q{self.number}" if self.is_question else f"{COMMAND} {self.topic} --seed {self.seed}"

    def problem(self) -> Problem:
        if self.is_question:
            raise TypeError(f"{self.name} is a question, not a problem")
        return generate(self.topic, self.seed)

    def question(self) -> Question:
        if not self.is_question:
            raise TypeError(f"{self.name} is a problem, not a question")
        return QUESTIONS[self.number - 1]

    @property
    def row(self) -> str:
        """The summary row it counts in: its topic, or ``questions`` for any question."""
        return QUESTIONS_TOPIC if self.is_question else self.topic


@dataclass
class _Record:
    item: Item
    outcome: Outcome
    seconds: float
    round: int


@dataclass
class Session:
    """The plan and the record of one session over ``topics`` (from `resolve_topics`), from ``seed``."""

    topics: list[str]
    seed: int
    revisit: bool = True
    turn: int = 0
    records: list[_Record] = field(default_factory=list)
    _order: list[str] = field(init=False)
    _questions: list[int] = field(init=False)
    _asked: int = 0
    _rotation: int = 0
    _due: list[tuple[int, Item]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.topics:
            raise ValueError("a session needs at least one topic")
        self._order = list(self.topics)
        if len(self._order) > 1:
            random.Random(f"toklab.drill.turns:{self.seed}").shuffle(self._order)
        self._questions = [q.number for q in QUESTIONS]
        random.Random(f"toklab.drill.questions:{self.seed}").shuffle(self._questions)

    def _fresh(self, topic: str) -> Item:
        if topic == QUESTIONS_TOPIC:
            number = self._questions[self._asked % len(self._questions)]
            self._asked += 1
            return Item(topic, number=number)
        if topic[:1] == "Q" and topic[1:].isdigit():
            return Item(topic, number=int(topic[1:]))
        return Item(topic, seed=self.seed + self.turn)

    def next_item(self) -> Item:
        """The item of this turn: a missed topic that is due again, else the next topic in turn."""
        due = [k for k, (turn, _) in enumerate(self._due) if turn <= self.turn]
        if due:
            _, item = self._due.pop(due[0])
            item = item if item.is_question else Item(item.topic, seed=self.seed + self.turn)
        else:
            item = self._fresh(self._order[self._rotation % len(self._order)])
            self._rotation += 1
        self.turn += 1
        return item

    def record(self, item: Item, outcome: Outcome, seconds: float, round: int = 1) -> None:
        """Keep ``item``'s outcome (`RIGHT`, `WRONG` or `SHOWN`) and time; schedule a missed topic again."""
        if outcome not in (RIGHT, WRONG, SHOWN):
            raise ValueError(f"unknown outcome {outcome!r}")
        self.records.append(_Record(item, outcome, seconds, round))
        rotating = len(self._order) > 1 or item.is_question
        if outcome != RIGHT and self.revisit and rotating and all(i != item for _, i in self._due):
            self._due.append((self.turn + REVISIT_AFTER - 1, item))

    def missed(self, round: int = 1) -> list[Item]:
        """The items of ``round`` not answered right, first missed first."""
        return [r.item for r in self.records if r.round == round and r.outcome != RIGHT]

    def second_round(self) -> list[Item]:
        """A fresh problem for each topic missed in round 1, and each missed question again."""
        items, topics = [], []
        for item in self.missed(1):
            if item.is_question:
                if item not in items:
                    items.append(item)
            elif item.topic not in topics:
                topics.append(item.topic)
                items.append(Item(item.topic, seed=self.seed + self.turn))
                self.turn += 1
        return items

    def summary(self, elapsed: dict[int, float] | None = None) -> str:
        """The table by topic: tried, right, wrong, solution shown, time, and the second round's result."""
        rounds = sorted({r.round for r in self.records})
        rows: dict[str, dict[str, float]] = {}
        for r in self.records:
            row = rows.setdefault(r.item.row, {"tried": 0, RIGHT: 0, WRONG: 0, SHOWN: 0, "time": 0.0,
                                               "r2": 0, "r2 right": 0})
            row["time"] += r.seconds
            if r.round == 1:
                row["tried"] += 1
                row[r.outcome] += 1
            else:
                row["r2"] += 1
                row["r2 right"] += r.outcome == RIGHT
        if not rows:
            return "Nothing answered, nothing to summarise."
        width = max(len(t) for t in rows) + 2
        head = f"{'topic':{width}}{'tried':>6}{'right':>6}{'wrong':>6}{'shown':>6}{'time':>7}"
        head += "  round 2" if 2 in rounds else ""
        lines = [head]
        order = [t for t in dict.fromkeys([*self.topics, QUESTIONS_TOPIC, *rows]) if t in rows]
        total = {"tried": 0, RIGHT: 0, WRONG: 0, SHOWN: 0, "time": 0.0}
        for t in order:
            row = rows[t]
            line = (f"{t:{width}}{row['tried']:>6}{row[RIGHT]:>6}{row[WRONG]:>6}{row[SHOWN]:>6}"
                    f"{clock_text(row['time']):>7}")
            if 2 in rounds:
                line += f"  {row['r2 right']} of {row['r2']} right" if row["r2"] else "  -"
            lines.append(line)
            for key in total:
                total[key] += row[key]
        lines.append(f"{'all':{width}}{total['tried']:>6}{total[RIGHT]:>6}{total[WRONG]:>6}{total[SHOWN]:>6}"
                     f"{clock_text(total['time']):>7}")
        if QUESTIONS_TOPIC in rows:
            lines.append("(questions: right and wrong as you graded them)")
        if elapsed:
            lines.append("; ".join(f"round {k}: {clock_text(v)}" for k, v in sorted(elapsed.items())))
        last: dict[object, _Record] = {}  # a topic's last problem, or each question's last answer
        for r in self.records:
            last[r.item if r.item.is_question else r.item.topic] = r
        still = [r.item for r in last.values() if r.outcome != RIGHT]
        if still:
            lines.append("To work on (each command shows the item again):")
            lines += [f"  {item.command}" for item in still]
        else:
            lines.append("Every topic's last item was right.")
        return "\n".join(lines)


def clock_text(seconds: float) -> str:
    """``m:ss`` (``h:mm:ss`` from an hour)."""
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"
