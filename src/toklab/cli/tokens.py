"""``encode``, ``decode`` and ``show``: text to IDs, IDs to text, and where the token boundaries fall."""

from __future__ import annotations

import argparse
import json
import re
import sys

from ..measure.viz import BoundaryView
from . import tokenizers
from .base import Command, CommandError, read_text, use_color

__all__ = ["COMMANDS", "parse_ids", "colored_rows"]

#: Terminal background colours (xterm-256) close to `toklab.measure.viz`'s HTML palette, with black text.
PALETTE = (189, 222, 157, 224, 183, 223)
_RESET = "\x1b[0m"


def parse_ids(text: str) -> list[int]:
    """Token IDs written as integers separated by spaces, commas or newlines (a JSON list is fine too)."""
    body = text.strip()
    if body.startswith("[") and body.endswith("]"):
        body = body[1:-1]
    ids = []
    for k, item in enumerate(i for i in re.split(r"[\s,]+", body) if i):
        if not re.fullmatch(r"[+-]?\d+", item):
            raise CommandError(f"{item[:40]!r} (item {k + 1}) is not a token ID: IDs are integers separated by "
                               "spaces or commas")
        ids.append(int(item))
    return ids


def colored_rows(rows: dict[str, list[str]]) -> str:
    """Rows of token labels as `BoundaryView` prints them, each token on its own background instead of ``|``."""
    width = max((len(name) for name in rows), default=0)
    lines = []
    for name, labels in rows.items():
        boxes = "".join(f"\x1b[30;48;5;{PALETTE[k % len(PALETTE)]}m{label}{_RESET}" for k, label in enumerate(labels))
        lines.append(f"{name:<{width}}  {len(labels):>4}  {boxes}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- encode


def _configure_encode(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", nargs="?", metavar="TEXT",
                        help="the text (default, or -: read standard input as UTF-8, exactly as given)")
    tokenizers.add_options(parser, many=False)
    tokenizers.add_special_options(parser)
    parser.add_argument("--json", action="store_true", help="print the IDs as a JSON list")


def _run_encode(args: argparse.Namespace) -> int:
    (tok,) = tokenizers.chosen(args, many=False)
    ids = tok.encode(read_text(args.text), args.specials)
    print(json.dumps(ids) if args.json else " ".join(map(str, ids)))
    return 0


# ---------------------------------------------------------------------------- decode


def _configure_decode(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ids", nargs="*", metavar="ID",
                        help="token IDs (default: read them from standard input, e.g. from toklab encode)")
    tokenizers.add_options(parser, many=False)
    parser.add_argument("-n", "--no-newline", action="store_true",
                        help="print the text exactly, without adding a newline")


def _run_decode(args: argparse.Namespace) -> int:
    (tok,) = tokenizers.chosen(args, many=False)
    ids = parse_ids(" ".join(args.ids) if args.ids else read_text(None, what="token IDs"))
    text = tok.decode(ids)
    sys.stdout.write(text if args.no_newline else text + "\n")
    return 0


# ---------------------------------------------------------------------------- show


def _configure_show(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", nargs="?", metavar="TEXT", help="the text (default, or -: standard input)")
    tokenizers.add_options(parser, many=True)
    tokenizers.add_special_options(parser)
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour each token's background: auto (when standard output is a terminal and "
                             "NO_COLOR is unset), always, never (tokens separated by |)")


def _run_show(args: argparse.Namespace) -> int:
    chosen = tokenizers.chosen(args, many=True)
    text = read_text(args.text)
    rows: dict[str, list[str]] = {}
    for tok in chosen:
        name = tok.name if tok.name not in rows else f"{tok.name} ({len(rows) + 1})"
        rows[name] = tok.labels(tok.encode(text, args.specials))
    print(colored_rows(rows) if use_color(args.color) else repr(BoundaryView(rows)))
    return 0


_EXAMPLES_ENCODE = """examples:
  python -m toklab encode "Hello, world" --vocab cl100k_base
  printf 'naïve café' | python -m toklab encode --vocab o200k_base --json
  python -m toklab encode "hello" --model my_bpe.json"""

_EXAMPLES_DECODE = """examples:
  python -m toklab decode 9906 11 1917 --vocab cl100k_base
  python -m toklab encode "héllo" --vocab r50k_base | python -m toklab decode --vocab r50k_base"""

_EXAMPLES_SHOW = """examples:
  python -m toklab show "unbelievable 12345 世界" --vocab r50k_base --vocab o200k_base
  python -m toklab show --vocab cl100k_base --model vocab.txt < sentence.txt"""

COMMANDS = (
    Command("encode", "text to token IDs", _configure_encode, _run_encode,
            "Encode TEXT (or standard input) and print its token IDs, separated by spaces. Text that spells "
            "a special token (<|endoftext|>) is refused unless --allow-special or --special-as-text says "
            "what it means.", _EXAMPLES_ENCODE),
    Command("decode", "token IDs to text", _configure_decode, _run_decode,
            "Decode token IDs (arguments, or standard input: integers separated by spaces or commas) "
            "and print the text. An unknown ID is an error. With a byte-level vocabulary, IDs that cut a "
            "UTF-8 character at either end print U+FFFD for its bytes.", _EXAMPLES_DECODE),
    Command("show", "where the token boundaries fall, for one or several tokenizers", _configure_show, _run_show,
            "Print each tokenizer's tokens of TEXT on one line, with the token count: whitespace made "
            "visible (␣ space, ↵ newline, → tab), a token holding part of a UTF-8 character as its hex "
            "bytes (<E4 B8>), each token on its own colour in a terminal, separated by | otherwise.",
            _EXAMPLES_SHOW),
)
