"""`toklab.cli.main`: the registry of subcommands, their help, and how errors of every kind are reported."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

from toklab import cli
from toklab.cli.base import Command, CommandError

EXPECTED = ["encode", "decode", "show", "train", "compare", "exercises", "check", "grade", "drill", "sanity"]


def test_every_subcommand_is_registered_once_in_order():
    assert [c.name for c in cli.commands()] == EXPECTED
    for command in cli.commands():
        assert command.help and "\n" not in command.help


@pytest.mark.parametrize("name", EXPECTED)
def test_each_subcommand_has_help_with_an_example(toklab, name):
    result = toklab(name, "--help")
    assert result.status == 0 and result.err == ""
    assert result.out.startswith(f"usage: toklab {name}")
    assert "python -m toklab" in result.out  # the examples


def test_top_level_help_and_no_command(toklab):
    result = toklab("--help")
    assert result.status == 0
    for name in EXPECTED:
        assert f"    {name}" in result.out
    bare = toklab()
    assert bare.status == 2 and "usage: toklab" in bare.out
    assert toklab("--version").out.startswith("toklab ")


def _plugin(run):
    module = types.ModuleType("toklab_test_plugin")

    def configure(parser):
        parser.add_argument("topic", nargs="?", default="bpe")

    module.COMMANDS = (Command("hello", "say hello", configure, run),)
    return module


def test_a_new_module_and_one_line_add_a_subcommand(toklab, monkeypatch):
    seen = []

    def run(args):
        seen.append(args.topic)
        print(f"hello {args.topic}")
        return 0

    monkeypatch.setitem(sys.modules, "toklab_test_plugin", _plugin(run))
    monkeypatch.setattr(cli, "COMMAND_MODULES", (*cli.COMMAND_MODULES, "toklab_test_plugin"))
    result = toklab("hello", "wordpiece")
    assert result.status == 0 and result.out == "hello wordpiece\n" and seen == ["wordpiece"]
    assert "hello" in toklab("--help").out


def test_errors_from_a_command_are_one_line_with_the_right_status(toklab, monkeypatch):
    outcomes = {
        "command": (CommandError("the input is wrong"), 1, "toklab hello: error: the input is wrong"),
        "usage": (CommandError("give one", status=2), 2, "toklab hello: error: give one"),
        "value": (ValueError("bad\nvalue"), 1, "toklab hello: error: bad value"),
        "key": (KeyError("no such token"), 1, "toklab hello: error: no such token"),
        "os": (FileNotFoundError(2, "No such file or directory"), 1, "toklab hello: error: [Errno 2] No such file"),
    }
    for kind, (exc, status, line) in outcomes.items():
        def run(args, exc=exc):
            raise exc

        monkeypatch.setitem(sys.modules, "toklab_test_plugin", _plugin(run))
        monkeypatch.setattr(cli, "COMMAND_MODULES", ("toklab_test_plugin",))
        result = toklab("hello")
        assert result.status == status, kind
        assert result.error().startswith(line), (kind, result.err)


def test_a_bug_is_one_line_unless_a_traceback_is_asked_for(toklab, monkeypatch):
    def run(args):
        raise TypeError("unsupported operand")

    monkeypatch.setitem(sys.modules, "toklab_test_plugin", _plugin(run))
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("toklab_test_plugin",))
    result = toklab("hello")
    assert result.status == 3
    assert result.err.count("\n") == 1 and "internal error: TypeError: unsupported operand" in result.err
    assert "TOKLAB_TRACEBACK=1" in result.err
    monkeypatch.setenv("TOKLAB_TRACEBACK", "1")
    with pytest.raises(TypeError):
        cli.main(["hello"])


def test_a_closed_pipe_is_not_an_error():
    """``python -m toklab encode ... | head -c 1`` must not print BrokenPipeError."""
    text = "word " * 200_000
    shell = (f"{sys.executable} -m toklab encode --vocab r50k_base | head -c 10 >/dev/null; "
             "echo status=${PIPESTATUS[0]}")
    done = subprocess.run(["bash", "-c", shell], input=text, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert "status=0" in done.stdout
