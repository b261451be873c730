"""Choosing tokenizers on the command line: ``--vocab NAME`` and ``--model FILE``, and one way to use them.

`add_options` gives a command the options; `chosen` loads what was named, in
command-line order, as `Loaded` tokenizers that all encode, decode and name
their tokens the same way, whatever the class underneath (`toklab.ByteBPE`,
`toklab.WordPiece`, `toklab.SentencePieceTokenizer`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import formats
from ..base import special
from ..bpe import ByteBPE
from ..data import vocabs
from ..measure.viz import terminal_safe, token_label
from .base import CommandError

__all__ = ["VOCAB_NAMES", "SPECIALS", "Loaded", "add_options", "add_special_options", "chosen", "load_vocab"]

#: The real vocabularies ``--vocab`` names.
VOCAB_NAMES = tuple(vocabs.VOCABS)
#: ``--allow-special`` / ``--special-as-text``: what to do with a special token's spelling in the text.
SPECIALS = ("refuse", "allow", "text")


class _AppendTokenizer(argparse.Action):
    """Collect ``--vocab`` and ``--model`` into one list, keeping the order they were given in."""

    def __call__(self, parser, namespace, value, option_string=None):
        items = list(getattr(namespace, "tokenizers", None) or [])
        items.append(("vocab" if option_string == "--vocab" else "model", value))
        namespace.tokenizers = items


def add_options(parser: argparse.ArgumentParser, *, many: bool) -> None:
    """``--vocab`` / ``--model`` (repeatable when ``many``) and the options a WordPiece vocab.txt needs."""
    group = parser.add_argument_group("tokenizer" + ("s (repeat to compare several, in order)" if many else ""))
    group.add_argument("--vocab", metavar="NAME", choices=VOCAB_NAMES, action=_AppendTokenizer, dest="tokenizers",
                       help=f"a real vocabulary: {', '.join(VOCAB_NAMES)}")
    group.add_argument("--model", metavar="FILE", action=_AppendTokenizer, dest="tokenizers",
                       help="a tokenizer file: toklab-bpe or toklab-sentencepiece JSON, WordPiece vocab.txt, "
                            "sentencepiece .model, tiktoken ranks, HF tokenizer.json (the format is read from the content)")
    wp = parser.add_argument_group("WordPiece vocab.txt options (the file stores no normalizer settings)")
    wp.add_argument("--cased", action="store_true", help="do not lowercase (for a cased vocabulary)")
    wp.add_argument("--strip-accents", choices=("auto", "yes", "no"), default=None,
                    help="strip accents: auto (= with lowercasing, BERT's rule), yes, or no")
    wp.add_argument("--unk-token", metavar="TOKEN", default=None, help="the unknown token (default [UNK])")
    parser.set_defaults(tokenizers=[])


def add_special_options(parser: argparse.ArgumentParser) -> None:
    """What to do when the text spells a special token (``<|endoftext|>``): refuse, by default."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--allow-special", dest="specials", action="store_const", const="allow",
                       help="encode a special token's spelling in the text as that special token")
    group.add_argument("--special-as-text", dest="specials", action="store_const", const="text",
                       help="encode it as ordinary text (by default such text is refused)")
    parser.set_defaults(specials="refuse")


def _wordpiece_options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if getattr(args, "cased", False):
        options["lowercase"] = False
    accents = getattr(args, "strip_accents", None)
    if accents is not None:
        options["strip_accents"] = {"auto": None, "yes": True, "no": False}[accents]
    if getattr(args, "unk_token", None) is not None:
        options["unk_token"] = args.unk_token
    return options


def load_vocab(name: str) -> ByteBPE:
    """One of the real vocabularies; CommandError (one line) if its file is missing or damaged."""
    try:
        return ByteBPE.from_tiktoken(name)
    except (FileNotFoundError, ValueError) as exc:
        raise CommandError(str(exc)) from None


def chosen(args: argparse.Namespace, *, many: bool) -> list[Loaded]:
    """The tokenizers named by ``--vocab``/``--model``, loaded; CommandError if none (or, unless ``many``, several)."""
    items = list(args.tokenizers)
    if not items:
        raise CommandError(f"choose a tokenizer: --vocab {'|'.join(VOCAB_NAMES)}, or --model FILE", status=2)
    if len(items) > 1 and not many:
        raise CommandError("give one tokenizer (one --vocab or --model)", status=2)
    options = _wordpiece_options(args)
    out = []
    for kind, value in items:
        if kind == "vocab":
            out.append(Loaded(value, "vocab", load_vocab(value)))
        else:
            fmt, tokenizer = formats.load(value, wordpiece_options=options)
            out.append(Loaded(terminal_safe(Path(value).name), fmt, tokenizer))
    if options and not any(t.format == "wordpiece" for t in out):
        raise CommandError("--cased, --strip-accents and --unk-token apply to a WordPiece vocab.txt given with "
                           "--model, and none was given", status=2)
    return out


@dataclass(frozen=True)
class Loaded:
    """A tokenizer as the commands use it: a display name, its format, and the object."""

    name: str
    format: str
    tokenizer: Any

    @property
    def special_tokens(self) -> dict[str, int]:
        """The special tokens cut out of text before encoding (none for a sentencepiece model)."""
        return dict(getattr(self.tokenizer, "special_tokens", None) or {})

    def encode(self, text: str, specials: str = "refuse") -> list[int]:
        """IDs of ``text``; ``specials`` is one of `SPECIALS` (a sentencepiece model never cuts specials out)."""
        registered = self.special_tokens
        if not registered:
            return list(self.tokenizer.encode(text))
        if specials == "refuse":
            found = special.special_regex(frozenset(registered)).search(text)
            if found:
                raise CommandError(
                    f"the text contains the special token {found.group()!r} (at character {found.start()}); "
                    "pass --allow-special to encode it as that token, or --special-as-text to encode its characters"
                )
        if specials == "allow":
            return list(self.tokenizer.encode(text, allowed_special="all"))
        return list(self.tokenizer.encode(text, disallowed_special=()))

    def decode(self, ids: list[int]) -> str:
        """Text of ``ids`` (byte-level: a character cut by the sequence's ends becomes U+FFFD)."""
        return self.tokenizer.decode(ids)

    def tokens(self, ids: list[int]) -> list[bytes | str]:
        """Each ID's token: bytes for byte-level BPE, the token string otherwise."""
        if isinstance(self.tokenizer, ByteBPE):
            return self.tokenizer.tokens(ids)
        return [self.tokenizer.id_to_token(i) for i in ids]

    def labels(self, ids: list[int]) -> list[str]:
        """Printable labels of the tokens (`toklab.measure.viz.token_label`: visible whitespace, hex for cut
        characters), with control characters shown rather than sent to the terminal (`terminal_safe`)."""
        return [terminal_safe(token_label(t if isinstance(t, bytes) else t.encode("utf-8"))) for t in self.tokens(ids)]
