"""``python -m toklab``: the command line, one module per group of subcommands.

- `base`: `Command` (a subcommand: name, help, arguments, run), `CommandError`
  (one-line errors), the parser, reading text from an argument or stdin;
- `tokenizers`: ``--vocab NAME`` / ``--model FILE`` and the loaded tokenizer (a file's
  format is recognised by `toklab.formats`);
- `tokens`: ``encode``, ``decode``, ``show``;
- `training`: ``train bpe|wordpiece|unigram``;
- `compare`: ``compare`` (bytes/token, chars/token, token counts side by side);
- `listing`: ``exercises`` (every exercise of the book, its difficulty, whether it has a checker);
- `grading`: ``check`` and ``grade`` (a student's file against an exercise's checker, each
  in its own process: `toklab.teaching.exercises.sandbox`);
- `drill`: ``drill`` (practice problems from `toklab.teaching.drills`, interactive in a terminal);
- `sanity`: ``sanity`` (the eight invariants of `toklab.teaching.sanity`, PASS/FAIL per line).

Adding a subcommand: write a module here that defines ``COMMANDS``, a tuple of
`Command`, and add its name to `COMMAND_MODULES`. Nothing else changes:
`main` builds the parser from that list, in that order, and turns errors into
one line each::

    # toklab/cli/hello.py
    from .base import Command

    def _configure(parser): parser.add_argument("name", nargs="?", default="world")
    def _run(args): print(f"hello, {args.name}"); return 0

    COMMANDS = (Command("hello", "say hello", _configure, _run),)

Exit status: 0 success, 1 an error in the input or a failed check, 2 a usage
error, 3 an internal error (a bug: please report it; ``TOKLAB_TRACEBACK=1``
shows its traceback), 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from importlib import metadata

from .base import Command, CommandError, Parser

__all__ = ["COMMAND_MODULES", "commands", "build_parser", "main"]

#: The modules that define subcommands (each a ``COMMANDS`` tuple), in the order ``--help`` lists them.
COMMAND_MODULES = (
    "toklab.cli.tokens",
    "toklab.cli.training",
    "toklab.cli.compare",
    "toklab.cli.listing",
    "toklab.cli.grading",
    "toklab.cli.drill",
    "toklab.cli.sanity",
)

_DESCRIPTION = (
    "toklab's command line: encode, decode and look at tokens with real vocabularies or your own "
    "tokenizer files, train tokenizers, compare them, check exercise solutions, drill for interviews "
    "and check the package's invariants."
)
_EPILOG = """examples:
  python -m toklab encode "Hello, world" --vocab cl100k_base
  python -m toklab show "unbelievable 12345" --vocab r50k_base --vocab o200k_base
  python -m toklab train bpe corpus.txt --vocab-size 1000 -o my_bpe.json
  python -m toklab exercises
  python -m toklab check ch02_1-ex2 my_solution.py
  python -m toklab drill bpe-encode
  python -m toklab sanity

python -m toklab COMMAND --help describes each command."""


def commands() -> list[Command]:
    """Every subcommand, module by module in `COMMAND_MODULES` order."""
    out: list[Command] = []
    for name in COMMAND_MODULES:
        out.extend(importlib.import_module(name).COMMANDS)
    names = [c.name for c in out]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise RuntimeError(f"subcommands defined twice: {duplicated}")
    return out


def build_parser() -> tuple[Parser, dict[str, Command]]:
    """The top-level parser with one subparser per command, and the commands by name."""
    parser = Parser(prog="toklab", description=_DESCRIPTION, epilog=_EPILOG,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"toklab {metadata.version('toklab')}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    by_name = {}
    for command in commands():
        child = sub.add_parser(command.name, help=command.help, description=command.description or command.help,
                               epilog=command.epilog or None, formatter_class=argparse.RawDescriptionHelpFormatter)
        command.configure(child)
        by_name[command.name] = command
    return parser, by_name


def _message(exc: BaseException) -> str:
    text = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
    return " ".join(str(text).split()) or type(exc).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``toklab`` with ``argv`` (default ``sys.argv[1:]``) and return the exit status."""
    parser, by_name = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error (already printed, on one line)
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:
        parser.print_help()
        return 2
    prog = f"toklab {args.command}"
    if sys.stdout is None:  # started with standard output closed (>&-): whatever it printed would be lost
        if sys.stderr is not None:
            print(f"{prog}: error: standard output is closed, so there is nowhere to print the result", file=sys.stderr)
        return 1
    try:
        return by_name[args.command].run(args)
    except CommandError as exc:
        print(f"{prog}: error: {_message(exc)}", file=sys.stderr)
        return exc.status
    except (ValueError, KeyError, OSError, UnicodeError, MemoryError) as exc:
        if isinstance(exc, BrokenPipeError):  # the reader went away (| head): not an error of ours
            _silence_stdout()
            return 0
        print(f"{prog}: error: {_message(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if os.environ.get("TOKLAB_TRACEBACK"):
            raise
        print(f"{prog}: internal error: {type(exc).__name__}: {_message(exc)} (a bug in toklab; run again with "
              "TOKLAB_TRACEBACK=1 to see where)", file=sys.stderr)
        return 3


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that Python's final flush does not raise BrokenPipeError again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
