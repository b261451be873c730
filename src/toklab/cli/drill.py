"""``python -m toklab drill [TOPIC] [--seed N]``: practice problems from `toklab.teaching.drills`, checked.

In a terminal it is interactive: a problem, your answer, feedback naming the likely
mistake, the worked solution when you were wrong, then the next problem (Enter) or
quit (``q``). When stdin is not a terminal it prints the problem and stops, so it
can be scripted: ``--answer`` adds the answer and the worked solution, ``--check
ANSWER`` checks an answer (exit status 0 when right, 1 when wrong), ``--count N``
prints N problems (seeds N, N+1, ...). Without a TOPIC the topics take turns.

`COMMANDS` registers it with `toklab.cli`; `run` also takes ``stdin``, ``stdout`` and
``interactive`` so that a test can drive the interactive loop.
"""

from __future__ import annotations

import argparse
import random
import secrets
import sys
from typing import TextIO

from ..teaching import drills
from .base import Command, CommandError

__all__ = ["COMMANDS", "HELP", "EPILOG", "configure", "run"]

HELP = "practice problems for interviews (BPE, WordPiece, Unigram, BPB, vocab sizes, prefixes), checked"
EPILOG = ("topics:\n" + "\n".join(f"  {t:20} {drills.DESCRIPTIONS[t]}" for t in drills.TOPICS)
          + "\n\nInteractive in a terminal; otherwise prints the problem (see --answer, --check).\n"
          "examples:\n  python -m toklab drill bpe-encode\n"
          "  python -m toklab drill wordpiece --seed 4 --check 'b ##bb [UNK] bhb ##b'")


def configure(p: argparse.ArgumentParser) -> None:
    """Add the drill's arguments to ``p``, the ``drill`` subparser `toklab.cli` builds."""
    p.add_argument("topic", nargs="?", metavar="TOPIC", help="one of the topics below (default: they take turns)")
    p.add_argument("--seed", type=int, help="the problem's seed (default: random); the same seed, the same problem")
    p.add_argument("--answer", action="store_true", help="print the answer and the worked solution too")
    p.add_argument("--check", metavar="ANSWER", help="check ANSWER against the problem; exit status 1 if wrong")
    p.add_argument("--count", type=int, default=1, metavar="N", help="print N problems (not interactive)")
    p.add_argument("--list", action="store_true", help="list the topics and exit")


def _topic_for(topic: str | None, seed: int, turn: int) -> str:
    if topic is not None:
        return topic
    order = list(drills.TOPICS)
    random.Random(f"toklab.drill.turns:{seed}").shuffle(order)
    return order[turn % len(order)]


def _show(problem: drills.Problem, out: TextIO) -> None:
    print(f"== {problem.topic}, seed {problem.seed} ==", file=out)
    print(problem.prompt, file=out)
    print(f"Answer format: {problem.answer_format}", file=out)


def _reveal(problem: drills.Problem, out: TextIO) -> None:
    print(f"Answer: {problem.answer_text}", file=out)
    print(problem.solution, file=out)


def _interactive(topic: str | None, seed: int, inp: TextIO, out: TextIO) -> int:
    print("Type your answer and press Enter; '?' shows the solution, 'q' quits.", file=out)
    right = total = 0
    turn = 0
    while True:
        problem = drills.generate(_topic_for(topic, seed, turn), seed + turn)
        print(file=out)
        _show(problem, out)
        print("> ", end="", file=out, flush=True)
        line = inp.readline()
        if not line or line.strip().lower() in ("q", "quit", "exit"):
            break
        if line.strip() == "?":
            _reveal(problem, out)
        else:
            ok, feedback = problem.check(line.strip())
            total += 1
            right += ok
            print("Correct." if ok else feedback, file=out)
            if not ok:
                _reveal(problem, out)
        print("Enter for the next problem, q to quit: ", end="", file=out, flush=True)
        line = inp.readline()
        if not line or line.strip().lower() in ("q", "quit", "exit"):
            break
        turn += 1
    print(f"\n{right} of {total} answered right.", file=out)
    return 0



def run(args: argparse.Namespace, *, stdin: TextIO | None = None, stdout: TextIO | None = None,
        interactive: bool | None = None) -> int:
    """Run the drill on parsed arguments; ``interactive`` defaults to whether stdin is a terminal."""
    inp, out = stdin or sys.stdin, stdout or sys.stdout
    if args.list:
        for t in drills.TOPICS:
            print(f"{t:20} {drills.DESCRIPTIONS[t]}", file=out)
        return 0
    if args.topic is not None and args.topic not in drills.TOPICS:
        raise CommandError(f"unknown topic {args.topic!r}; topics: {', '.join(drills.TOPICS)}", status=2)
    if args.seed is not None and args.seed < 0:
        raise CommandError(f"--seed must be a non-negative integer, got {args.seed}", status=2)
    if args.count < 1:
        raise CommandError(f"--count must be at least 1, got {args.count}", status=2)
    seed = args.seed if args.seed is not None else secrets.randbelow(10**6)
    if interactive is None:
        interactive = inp.isatty() and args.check is None and not args.answer and args.count == 1
    if interactive:
        return _interactive(args.topic, seed, inp, out)
    if args.check is not None:
        problem = drills.generate(_topic_for(args.topic, seed, 0), seed)
        ok, feedback = problem.check(args.check)
        print("correct" if ok else feedback, file=out)
        if args.answer:
            _reveal(problem, out)
        return 0 if ok else 1
    for turn in range(args.count):
        if turn:
            print(file=out)
        problem = drills.generate(_topic_for(args.topic, seed, turn), seed + turn)
        _show(problem, out)
        if args.answer:
            _reveal(problem, out)
    return 0


COMMANDS = (Command("drill", HELP, configure, run, description=HELP + ".", epilog=EPILOG),)
