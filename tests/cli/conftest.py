"""Running the command line in this process, and the small tokenizers the CLI tests train once.

`toklab` (the fixture) calls `toklab.cli.main` with arguments and, optionally,
bytes on standard input, and returns the exit status and what was printed.
Every run is also checked for the promise every command makes: an error is
one line, never a traceback.
"""

from __future__ import annotations

import contextlib
import io
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from toklab.cli import main
from toklab.data import corpus


@dataclass(frozen=True)
class Result:
    status: int
    out: str
    err: str

    def error(self) -> str:
        """The one error line (asserting that there is exactly one, and no traceback)."""
        lines = self.err.strip().splitlines()
        assert len(lines) == 1, f"expected a one-line error, got:\n{self.err}"
        assert "Traceback" not in self.err and "internal error" not in self.err, self.err
        assert ": error: " in lines[0], lines[0]
        return lines[0]


class FakeTerminal(io.TextIOWrapper):
    """A standard input (or output) that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def run_main(argv, stdin: bytes | str | None = None, tty: bool = False) -> Result:
    """``main(argv)`` with ``stdin`` as standard input; returns status and captured output."""
    data = stdin.encode("utf-8") if isinstance(stdin, str) else (stdin or b"")
    fake_in = (FakeTerminal if tty else io.TextIOWrapper)(io.BytesIO(data), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = fake_in
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main([str(a) for a in argv])
    finally:
        sys.stdin = saved
    result = Result(status, out.getvalue(), err.getvalue())
    assert "Traceback" not in result.err, result.err
    return result


@pytest.fixture
def toklab():
    """``toklab(*argv, stdin=None, tty=False) -> Result``: one command-line run, in this process."""

    def run(*argv, stdin: bytes | str | None = None, tty: bool = False) -> Result:
        return run_main(argv, stdin, tty)

    return run


@pytest.fixture(scope="session")
def texts(tmp_path_factory) -> dict[str, Path]:
    """Small UTF-8 training and test files: English, Chinese, code, mixed."""
    folder = tmp_path_factory.mktemp("texts")
    paths = {}
    for name, size in (("en", 40_000), ("zh", 15_000), ("code", 15_000), ("mixed", 15_000)):
        paths[name] = folder / f"{name}.txt"
        paths[name].write_text(corpus.load(name, size), encoding="utf-8")
    return paths


@pytest.fixture(scope="session")
def trained(tmp_path_factory, texts) -> dict[str, Path]:
    """One tokenizer of each kind, trained by the CLI itself: bpe.json, vocab.txt, unigram.json."""
    folder = tmp_path_factory.mktemp("trained")
    out = {"bpe": folder / "bpe.json", "wordpiece": folder / "vocab.txt", "unigram": folder / "unigram.json"}
    sizes = {"bpe": 400, "wordpiece": 1000, "unigram": 1000}
    for kind, path in out.items():
        result = run_main(["train", kind, texts["en"], texts["zh"], "--vocab-size", sizes[kind], "-o", path])
        assert result.status == 0, result.err
    return out
