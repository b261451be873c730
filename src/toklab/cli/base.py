"""What every subcommand shares: `Command`, `CommandError`, the one-line-error parser, text input.

A subcommand is a `Command`: its name, a one-line help, a function that adds
its arguments to an `argparse.ArgumentParser`, and a function that runs it on
the parsed arguments and returns the exit status. A command module lists its
commands in a ``COMMANDS`` tuple (see `toklab.cli`).

Errors a user can cause (a missing file, text that is not UTF-8, an unknown
ID) are raised as `CommandError` or as the ValueError/KeyError/OSError toklab
itself raises; `toklab.cli.main` prints either as one line,
``toklab <command>: error: <message>``, and exits with status 1. Usage errors
(an unknown option, a missing argument) exit with status 2, also on one line.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO, NoReturn, TextIO

from ..base.files import STREAM_LIMIT, InputTooLarge, read_limited

__all__ = ["Command", "CommandError", "Parser", "decode_utf8", "opened", "read_bytes", "read_text", "read_text_file",
           "use_color"]


class CommandError(Exception):
    """An error in what the user asked for; printed as one line, exit status ``status``."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Command:
    """One subcommand: ``toklab <name> ...``.

    ``configure(parser)`` adds the arguments; ``run(args)`` does the work and
    returns the exit status (0 for success). ``help`` is the line shown by
    ``toklab --help``; ``description`` (default: ``help``) and ``epilog``
    (examples) are shown by ``toklab <name> --help``.
    """

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    description: str = ""
    epilog: str = ""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line, naming where to get help."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def read_text(text: str | None, *, what: str = "text") -> str:
    """``text`` itself, or standard input when it is None or ``"-"``.

    Standard input is read as bytes and decoded as strict UTF-8, so a bad byte
    is reported with its offset instead of becoming U+FFFD. An argument that
    the shell passed as bytes that are not UTF-8 (Python keeps them as lone
    surrogates) is refused the same way.
    """
    if text is not None and text != "-":
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise CommandError(f"the {what} argument is not valid UTF-8 (bad byte at character {exc.start})") from None
        return text
    if text is None and sys.stdin is not None and sys.stdin.isatty():
        raise CommandError(f"no {what}: give it as an argument, or pipe it into standard input")
    stream = sys.stdin.buffer if sys.stdin is not None else None
    if stream is None:
        raise CommandError(f"no {what}: standard input is closed")
    return decode_utf8(read_bytes(stream, "standard input"), "standard input")


def read_bytes(stream: BinaryIO, name: str) -> bytes:
    """All of ``stream``; one bounded by `toklab.base.files.STREAM_LIMIT` unless it is a regular file.

    A regular file ends where its size says; a pipe or a device (``/dev/zero``,
    ``yes |``) may never end, so reading one stops with a `CommandError` after
    ``STREAM_LIMIT`` bytes instead of filling memory.
    """
    try:
        regular = stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):  # no descriptor behind it (a test's BytesIO)
        regular = False
    try:
        return stream.read() if regular else read_limited(stream, STREAM_LIMIT, name)
    except InputTooLarge as exc:
        raise CommandError(str(exc)) from None


@contextmanager
def opened(path, what: str = "a text file") -> Iterator[BinaryIO]:
    """``open(path, "rb")``, turning a missing file, a folder or a read error into a one-line `CommandError`."""
    try:
        with open(path, "rb") as fh:
            yield fh
    except FileNotFoundError:
        raise CommandError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CommandError(f"{path} is a directory, not {what}") from None
    except OSError as exc:
        raise CommandError(f"{path}: cannot read it ({exc.strerror or exc})") from None


def read_text_file(path: str) -> str:
    """The content of a UTF-8 text file (``-``: standard input), with one-line errors."""
    if path == "-":
        return read_text(None)
    with opened(path) as fh:
        data = read_bytes(fh, path)
    return decode_utf8(data, path)


def decode_utf8(data: bytes, source: str) -> str:
    """``data`` as strict UTF-8; CommandError naming ``source`` and the offset of a bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CommandError(
            f"{source} is not UTF-8 text: byte 0x{data[exc.start]:02X} at offset {exc.start} cannot be decoded"
        ) from None


def use_color(choice: str, stream: TextIO | None = None) -> bool:
    """``--color auto|always|never``: auto means colours when ``stream`` is a terminal and NO_COLOR is unset."""
    import os

    if choice == "always":
        return True
    if choice == "never":
        return False
    stream = sys.stdout if stream is None else stream
    return bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("NO_COLOR")

