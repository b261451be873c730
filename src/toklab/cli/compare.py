"""``compare FILE --vocab ... --model ...``: token counts, bytes/token and chars/token side by side.

The numbers are `toklab.measure.metrics.measure`'s: one encoding of the whole file per
tokenizer, UTF-8 bytes and code points counted on the same text. Text that
spells a special token is measured as the plain text it is (as
`toklab.measure.metrics.encode_ids` does).
"""

from __future__ import annotations

import argparse
import json

from ..measure.metrics import measure
from . import tokenizers
from .base import Command, CommandError, read_text_file

__all__ = ["COMMANDS", "rows", "table"]


def rows(chosen: list[tokenizers.Loaded], text: str) -> list[dict]:
    """One dict per tokenizer: name, format, vocabulary size, tokens, bytes/token, chars/token, tokens vs the first."""
    out = []
    for tok in chosen:
        stats = measure(tok.tokenizer, text)
        if not stats.tokens:
            raise CommandError(f"{tok.name} encodes the text to no tokens (it is all whitespace its normalizer "
                               "drops), so there is no ratio to show")
        out.append({"tokenizer": tok.name, "format": tok.format, "vocab_size": len(tok.tokenizer),
                    "tokens": stats.tokens, "bytes": stats.bytes, "chars": stats.chars,
                    "bytes_per_token": stats.bytes_per_token, "chars_per_token": stats.chars_per_token})
    first = out[0]["tokens"]
    for row in out:
        row["tokens_vs_first"] = row["tokens"] / first
    return out


def table(results: list[dict], source: str) -> str:
    """The results as an aligned text table, with a line naming the text measured."""
    head = ("tokenizer", "vocab", "tokens", "bytes/token", "chars/token", f"tokens vs {results[0]['tokenizer']}")
    body = [(r["tokenizer"], f"{r['vocab_size']:,}", f"{r['tokens']:,}", f"{r['bytes_per_token']:.3f}",
             f"{r['chars_per_token']:.3f}", f"{r['tokens_vs_first']:.3f}") for r in results]
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    lines = [f"{source}: {results[0]['bytes']:,} UTF-8 bytes, {results[0]['chars']:,} characters"]
    for row in [head, *body]:
        lines.append("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))))
    return "\n".join(lines)


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="a UTF-8 text file (-: standard input)")
    tokenizers.add_options(parser, many=True)
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON, one object per tokenizer")


def _run(args: argparse.Namespace) -> int:
    chosen = tokenizers.chosen(args, many=True)
    text = read_text_file(args.file)
    if not text:
        raise CommandError(f"{args.file} is empty: there is nothing to measure")
    results = rows(chosen, text)
    print(json.dumps(results, indent=1) if args.json else table(results, args.file))
    return 0


_EXAMPLES = """examples:
  python -m toklab compare article.txt --vocab r50k_base --vocab cl100k_base --vocab o200k_base
  python -m toklab compare article.txt --vocab o200k_base --model my_bpe.json --json"""

COMMANDS = (
    Command("compare", "token counts, bytes/token and chars/token of a file, tokenizer by tokenizer", _configure, _run,
            "Encode FILE with each tokenizer (in the order given) and print, side by side, the token count, "
            "UTF-8 bytes per token, characters per token and the token count relative to the first tokenizer.",
            _EXAMPLES),
)
