"""``python -m toklab drill [TOPIC ...]``: practice problems from `toklab.teaching.drills`, checked, and §8's questions.

A TOPIC is a hand computation (``bpe-train``, ``byte-level``, ...), ``questions`` (§8's
twenty-five questions: say or type your answer, see the model answer, grade yourself),
or one question (``Q12``). Several take turns; none means all of them.

- In a terminal it is an untimed session: an item, your answer, feedback that names the
  likely mistake, the worked solution when you were wrong; a topic you missed comes back
  three items later; ``q`` ends with a summary by topic. An empty line or an answer that
  cannot be read asks again and counts nothing; ``?`` shows the solution (counted as shown).
- ``--minutes M`` is a timed session (from a terminal or a script): items until the time
  is up, then a second round with a fresh problem for every topic you missed and the
  questions you missed, then the summary by topic.
- Otherwise (input not a terminal) it prints and stops: the item (``--count N`` items,
  seeds N, N+1, ...), with ``--answer`` the answers and worked solutions (after the last
  item when there are several: an answer key). ``--check ANSWER`` checks an answer to one
  problem, named by its topic and ``--seed`` (exit status 0 right, 1 wrong).

Every header ends with the command that shows its item again. `COMMANDS` registers the
command with `toklab.cli`; `run` also takes ``stdin``, ``stdout``, ``interactive`` and
``clock`` so that a test can drive a session with a script of answers and a fake clock.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from collections.abc import Callable
from typing import TextIO

from ..teaching import drills
from ..teaching.drills import questions
from ..teaching.drills.session import QUESTIONS_TOPIC, RIGHT, SHOWN, WRONG, Item, Session, clock_text, resolve_topics
from .base import Command, CommandError

__all__ = ["COMMANDS", "HELP", "EPILOG", "configure", "run"]

HELP = ("practice for interviews: hand computations (BPE, WordPiece, Unigram, bytes, BPB, ...), checked, "
        "and §8's 25 questions")
EPILOG = (
    "topics:\n" + "\n".join(f"  {t:20} {drills.DESCRIPTIONS[t]}" for t in drills.TOPICS)
    + f"\n  {QUESTIONS_TOPIC:20} §8's {len(questions.QUESTIONS)} questions: answer, see the model answer, "
    f"grade yourself\n  {'Q1 ... Q' + str(len(questions.QUESTIONS)):20} one of them (--list shows them)\n\n"
    "In a terminal: an untimed session ('?' shows the solution, q ends with a summary by topic).\n"
    "--minutes M: a timed session, a second round on what you missed, a summary by topic.\n"
    "Otherwise it prints (see --count, --answer) or checks (--check, with the problem's topic and --seed).\n"
    "examples:\n"
    "  python -m toklab drill --minutes 20\n"
    "  python -m toklab drill byte-level wordpiece\n"
    "  python -m toklab drill questions\n"
    "  python -m toklab drill bpe-encode --count 5 --answer      # a worksheet and its answer key\n"
    "  python -m toklab drill bpe-train --seed 4 --check 'c+l, e+l, cl+l'"
)
QUIT = ("q", "quit", "exit")


def configure(p: argparse.ArgumentParser) -> None:
    """Add the drill's arguments to ``p``, the ``drill`` subparser `toklab.cli` builds."""
    p.add_argument("topic", nargs="*", metavar="TOPIC",
                   help="topics to practise, in turns (default: every topic and the questions)")
    p.add_argument("--seed", type=int, help="the first problem's seed (default: random); the same seed, the same problem")
    p.add_argument("--minutes", type=float, metavar="M", help="a timed session of M minutes, then a second round "
                   "on what you missed")
    p.add_argument("--answer", action="store_true", help="print the answers and worked solutions (an answer key "
                   "after the last item)")
    p.add_argument("--check", metavar="ANSWER", help="check ANSWER to the problem named by TOPIC and --seed; "
                   "exit status 1 if wrong")
    p.add_argument("--count", type=int, metavar="N", help="print N items (not interactive)")
    p.add_argument("--list", action="store_true", help="list the topics and the questions, and exit")


# ---------------------------------------------------------------------------- showing items


def _header(item: Item, out: TextIO, note: str = "") -> None:
    print(f"== {item.name} == (replay: {item.command}){note}", file=out)


def _show(item: Item, out: TextIO, note: str = "") -> None:
    _header(item, out, note)
    if item.is_question:
        q = item.question()
        print(f"{q.title}\n(Answer it out loud or in writing, then compare with the model answer.)", file=out)
    else:
        problem = item.problem()
        print(problem.prompt, file=out)
        print(f"Answer format: {problem.answer_format}", file=out)


def _reveal(item: Item, out: TextIO) -> None:
    if item.is_question:
        q = item.question()
        print(f"Model answer:\n{questions.render(q.answer_myst, 88)}", file=out)
        print(questions.render(f"Common mistake. {q.mistake_myst}", 88), file=out)
        print(questions.render(f"Shown in {q.shown_in_myst}", 88), file=out)
    else:
        problem = item.problem()
        print(f"Answer: {problem.answer_text}", file=out)
        print(problem.solution, file=out)


# ---------------------------------------------------------------------------- sessions


class _Input:
    """Lines typed by the user: None at end of input; a closed stream is a one-line error."""

    def __init__(self, inp: TextIO | None, out: TextIO) -> None:
        if inp is None:
            raise CommandError("standard input is closed: a session reads your answers from it")
        self.inp, self.out = inp, out

    def ask(self, prompt: str) -> str | None:
        print(prompt, end="", file=self.out, flush=True)
        try:
            line = self.inp.readline()
        except (ValueError, OSError) as exc:  # closed, or not readable
            raise CommandError(f"cannot read standard input ({exc})") from None
        except KeyboardInterrupt:  # Ctrl-C ends the session as q does: the summary is still worth having
            print(file=self.out)
            return None
        return line.strip() if line else None


def _attempt(item: Item, ask: _Input, out: TextIO) -> str | None:
    """Read answers to ``item`` (already shown) until one can be judged: its outcome, or None to quit."""
    if item.is_question:
        line = ask.ask("> ")
        if line is None or line.lower() in QUIT:
            return None
        _reveal(item, out)
        if line == "?":
            return SHOWN
        while True:
            grade = ask.ask("Did your answer make the model answer's points? (y/n) ")
            if grade is None or grade.lower() in QUIT:
                return None
            if grade.lower() in ("y", "yes", "n", "no"):
                return RIGHT if grade.lower().startswith("y") else WRONG
            print("Type y or n.", file=out)
    problem = item.problem()
    while True:
        line = ask.ask("> ")
        if line is None or line.lower() in QUIT:
            return None
        if line == "?":
            _reveal(item, out)
            return SHOWN
        if not line:
            print(f"Type your answer as {problem.answer_format}; '?' shows the solution, 'q' quits.", file=out)
            continue
        try:
            value = problem.parse(line)
        except ValueError as exc:
            print(f"{exc}. Nothing counted: try again.", file=out)
            continue
        ok, feedback = problem.check(value)
        print("Correct." if ok else feedback, file=out)
        if not ok:
            _reveal(item, out)
        return RIGHT if ok else WRONG


def _session(topics: list[str], seed: int, ask: _Input, out: TextIO, clock: Callable[[], float],
             minutes: float | None) -> int:
    timed = minutes is not None
    session = Session(topics, seed, revisit=not timed)
    if timed:
        print(f"A {clock_text(minutes * 60)} session: answer each item and press Enter; '?' shows the solution, "
              "q ends the session. When the time is up, a second round gives you a fresh problem on each topic "
              "you missed, and the questions you missed again; then a summary by topic.", file=out)
    else:
        print("Type your answer and press Enter; '?' shows the solution, q ends with a summary. An empty line or "
              "an answer that cannot be read asks again and counts nothing.", file=out)
    start = clock()
    deadline = start + minutes * 60 if timed else None
    elapsed: dict[int, float] = {}
    quit_early = False

    def one(item: Item, round: int, note: str = "") -> bool:
        print(file=out)
        began = clock()
        _show(item, out, note)
        outcome = _attempt(item, ask, out)
        if outcome is None:
            return False
        session.record(item, outcome, clock() - began, round)
        return True

    while True:
        left = deadline - clock() if timed else None
        if timed and left <= 0:
            break
        item = session.next_item()
        if not one(item, 1, f" [{clock_text(left)} left]" if timed else ""):
            quit_early = True
            break
        if timed and clock() >= deadline:
            break
        if ask.ask("Enter for the next item, q to quit: ") in (None, *QUIT):
            quit_early = True
            break
    elapsed[1] = clock() - start
    if timed and not quit_early:
        again = session.second_round()
        print(f"\nTime is up ({clock_text(elapsed[1])}).", file=out)
        if again:
            print(f"Second round, untimed: {len(again)} item{'s' if len(again) > 1 else ''} on what you missed "
                  f"({', '.join(dict.fromkeys(i.row for i in again))}).", file=out)
            began = clock()
            for k, item in enumerate(again, 1):
                if not one(item, 2, f" [round 2, {k} of {len(again)}]"):
                    break
                if k < len(again) and ask.ask("Enter for the next item, q to quit: ") in (None, *QUIT):
                    break
            elapsed[2] = clock() - began
    print("\nSummary by topic", file=out)
    print(session.summary(elapsed if timed else None), file=out)
    return 0


# ---------------------------------------------------------------------------- printing and checking


def _print_items(items: list[Item], answer: bool, out: TextIO) -> None:
    for k, item in enumerate(items):
        if k:
            print(file=out)
        _show(item, out)
        if answer and len(items) == 1:
            _reveal(item, out)
    if answer and len(items) > 1:
        print("\n== Answer key ==", file=out)
        for k, item in enumerate(items, 1):
            print(f"\n{k}. {item.name}", file=out)
            _reveal(item, out)


def _check(args: argparse.Namespace, topics: list[str], out: TextIO) -> int:
    how = "name the problem as its header's replay command does: python -m toklab drill TOPIC --seed N --check ANSWER"
    if args.count is not None:
        raise CommandError("--check checks one problem; drop --count", status=2)
    if len(args.topic) != 1 or args.seed is None:
        raise CommandError(f"--check needs the problem's topic and --seed: {how}", status=2)
    if topics[0] not in drills.TOPICS:
        raise CommandError("a question is graded by you, not checked: run it in a terminal, or add --answer to "
                           "see its model answer", status=2)
    problem = drills.generate(topics[0], args.seed)
    try:
        value = problem.parse(args.check)
    except ValueError as exc:
        raise CommandError(str(exc), status=2) from None
    ok, feedback = problem.check(value)
    print("correct" if ok else feedback, file=out)
    if args.answer:
        _reveal(Item(topics[0], seed=args.seed), out)
    return 0 if ok else 1


def _list(out: TextIO) -> None:
    for t in drills.TOPICS:
        print(f"{t:20} {drills.DESCRIPTIONS[t]}", file=out)
    print(f"{QUESTIONS_TOPIC:20} §8's questions, self-graded:", file=out)
    for q in questions.QUESTIONS:
        print(f"  {q.name:4} {q.level}  {q.title}", file=out)


def run(args: argparse.Namespace, *, stdin: TextIO | None = None, stdout: TextIO | None = None,
        interactive: bool | None = None, clock: Callable[[], float] | None = None) -> int:
    """Run the drill on parsed arguments.

    ``interactive`` defaults to whether standard input is a terminal (``--minutes`` is
    always a session); ``clock`` (default `time.monotonic`) times the sessions.
    """
    inp = stdin if stdin is not None else sys.stdin
    out = stdout or sys.stdout
    clock = clock or time.monotonic
    if args.list:
        _list(out)
        return 0
    try:
        topics = resolve_topics(args.topic, drills.TOPICS)
    except ValueError as exc:
        raise CommandError(str(exc), status=2) from None
    if args.seed is not None and args.seed < 0:
        raise CommandError(f"--seed must be a non-negative integer, got {args.seed}", status=2)
    if args.count is not None and args.count < 1:
        raise CommandError(f"--count must be at least 1, got {args.count}", status=2)
    if args.minutes is not None:
        if not 0 < args.minutes <= 24 * 60:
            raise CommandError(f"--minutes must be more than 0 and at most a day, got {args.minutes:g}", status=2)
        if args.check is not None or args.answer or args.count is not None:
            raise CommandError("--minutes starts a session; it does not combine with --check, --answer or --count",
                               status=2)
    if args.check is not None:
        return _check(args, topics, out)
    seed = args.seed if args.seed is not None else secrets.randbelow(10**6)
    if args.minutes is not None:
        return _session(topics, seed, _Input(inp, out), out, clock, args.minutes)
    if interactive is None:
        try:
            interactive = inp is not None and inp.isatty() and not args.answer and args.count is None
        except ValueError:  # a closed stream: print, which needs no input
            interactive = False
    if interactive:
        return _session(topics, seed, _Input(inp, out), out, clock, None)
    plan = Session(topics, seed)
    _print_items([plan.next_item() for _ in range(args.count or 1)], args.answer, out)
    return 0


COMMANDS = (Command("drill", HELP, configure, run, description=HELP + ".", epilog=EPILOG),)
