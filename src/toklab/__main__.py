"""``python -m toklab COMMAND ...``: a minimal dispatcher for toklab's subcommands.

Each subcommand is a module with ``HELP`` (one line) and ``main(argv) -> int`` (its own
argparse parser, ``--help``, one-line errors on stderr, the exit status it returns).
`COMMANDS` maps a command name to its module, so another command joins with one line.
"""

from __future__ import annotations

import importlib
import sys

#: command -> module holding its ``main(argv)`` and ``HELP``
COMMANDS: dict[str, str] = {
    "drill": "toklab.cli_drill",
    "sanity": "toklab.cli_sanity",
}


def usage() -> str:
    lines = ["usage: python -m toklab COMMAND [ARGS...]", "", "commands:"]
    for name, module in COMMANDS.items():
        lines.append(f"  {name:8} {importlib.import_module(module).HELP}")
    lines.append("")
    lines.append("python -m toklab COMMAND --help describes a command.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"toklab: unknown command {name!r}; commands: {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    return importlib.import_module(COMMANDS[name]).main(rest)


if __name__ == "__main__":
    sys.exit(main())
