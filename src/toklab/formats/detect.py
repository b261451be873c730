"""Tokenizer files: which format a file is in, loading it, and the ``toklab-sentencepiece`` JSON format.

`detect` looks at a file's content (never only at its name) and returns one of
`FORMATS`:

``toklab-bpe``
    the JSON file `toklab.ByteBPE.save` writes (``train bpe``);
``toklab-sentencepiece``
    the JSON file `save_sentencepiece` writes (``train unigram``), below;
``sentencepiece``
    a sentencepiece ``.model`` file (a serialized ModelProto);
``wordpiece``
    BERT's ``vocab.txt``: one token per line, the line number is the ID
    (`toklab.WordPiece.save` writes it; ``train wordpiece``);
``tiktoken``
    a tiktoken rank file, one ``base64(token) rank`` line each (``.gz`` too);
``hf-tokenizer``
    a Hugging Face ``tokenizer.json``, loaded by `toklab.formats.hf_json.from_hf_json`
    for the component combinations toklab implements; any other component is
    refused by name.

Anything else is refused with a `CommandError` that says what the file looks
like (a sentencepiece ``.vocab``, plain text, ...) and which formats are read.

The ``toklab-sentencepiece`` format (version 1) stores a
`toklab.SentencePieceTokenizer` losslessly as readable JSON::

    {"format": "toklab-sentencepiece", "version": 1,
     "config": {"model_type": "unigram", "normalization": "nmt_nfkc", ...},
     "charsmap": null,
     "pieces": [["<unk>", 0.0, "unknown"], ["<s>", 0.0, "control"], ["▁the", -3.2, "normal"], ...],
     "sha256": "..."}

``config`` holds the fields of `toklab.sentencepiece.model_file.SPConfig` but its
compiled normalization table, which is ``charsmap`` (base64, or null when the
named rule normalizes); ``pieces`` is the vocabulary in ID order, each entry
``[piece, score, kind]``. ``sha256`` is the fingerprint of everything else,
computed as for ``toklab-bpe`` files (`toklab.bpe.files.fingerprint`), so a
truncated or hand-edited file is refused instead of tokenizing differently.
``train unigram`` writes this format rather than sentencepiece's ``.model``
(which `toklab.SentencePieceTokenizer.save` also writes) because it is readable
and carries its own checksum.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import gzip
import json
import re
from pathlib import Path
from typing import Any

from ..bpe import ByteBPE
from ..bpe.files import fingerprint, read_checked
from .hf_json import from_hf_json
from ..sentencepiece.tokenizer import SentencePieceTokenizer
from ..sentencepiece.tokenizer import load as load_model_file
from ..sentencepiece.model_file import SPConfig
from ..wordpiece import WordPiece
from ..cli.base import CommandError, opened

__all__ = ["FORMATS", "SP_FORMAT", "SP_VERSION", "READS", "detect", "load", "save_sentencepiece", "load_sentencepiece"]

FORMATS = ("toklab-bpe", "toklab-sentencepiece", "sentencepiece", "wordpiece", "tiktoken", "hf-tokenizer")
SP_FORMAT = "toklab-sentencepiece"
SP_VERSION = 1

#: What the error messages say toklab reads.
READS = (
    "toklab reads: a toklab-bpe JSON file (train bpe, ByteBPE.save), a toklab-sentencepiece JSON file "
    "(train unigram), a WordPiece vocab.txt, a sentencepiece .model file, a tiktoken rank file, or a Hugging "
    "Face tokenizer.json"
)

_HEAD = 1 << 16  # bytes looked at to decide
_RANK_LINE = re.compile(rb"[A-Za-z0-9+/]+={0,2} \d+\r?")
_CONFIG_FIELDS = tuple(f.name for f in dataclasses.fields(SPConfig) if f.name != "charsmap")


def _head(path: Path) -> bytes:
    with opened(path, "a tokenizer file") as fh:
        return fh.read(_HEAD)


def _is_rank_file(head: bytes) -> bool:
    lines = head.split(b"\n")
    if len(head) == _HEAD:
        lines.pop()  # the last line may be cut
    lines = [line for line in lines if line.strip()][:100]
    return bool(lines) and all(_RANK_LINE.fullmatch(line) for line in lines)


def _utf8_prefix(head: bytes) -> str | None:
    """``head`` decoded, allowing only a character cut at the very end; None for binary data."""
    if b"\x00" in head:  # no text format holds NUL; a .model file does (float32 scores of 0.0)
        return None
    for cut in range(4):
        try:
            return head[: len(head) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
    return None


def _is_json(path: Path) -> bool:
    try:
        json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return False
    return True


def _json_kind(path: Path) -> str:
    try:
        content = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CommandError(f"{path} starts like JSON but does not parse ({exc}); {READS}") from None
    if not isinstance(content, dict):
        raise CommandError(f"{path} is JSON but not a tokenizer file; {READS}")
    fmt = content.get("format")
    if fmt in ("toklab-bpe", SP_FORMAT):
        return fmt
    if "model" in content and ("normalizer" in content or "pre_tokenizer" in content or "added_tokens" in content):
        return "hf-tokenizer"
    shown = f"format field {fmt!r}" if fmt is not None else "no format field"
    raise CommandError(f"{path} is JSON but not a tokenizer file toklab reads ({shown}); {READS}")


def detect(path: str | Path, *, unk_token: str = "[UNK]") -> str:
    """The format of the tokenizer file at ``path`` (one of `FORMATS`); CommandError otherwise."""
    path = Path(path)
    head = _head(path)
    if not head:
        raise CommandError(f"{path} is empty; {READS}")
    if head[:2] == b"\x1f\x8b":
        try:
            with gzip.open(path, "rb") as fh:
                inner = fh.read(_HEAD)
        except (OSError, EOFError) as exc:
            raise CommandError(f"{path} is a damaged gzip file ({exc})") from None
        if _is_rank_file(inner) and path.suffix == ".gz":
            return "tiktoken"
        raise CommandError(f"{path} is gzip-compressed but not a tiktoken rank file named *.gz; {READS}")
    text = _utf8_prefix(head)
    if text is None:
        return "sentencepiece"  # binary: loading it says whether it really is a .model
    if text.lstrip().startswith("{"):
        return _json_kind(path)
    if text.lstrip().startswith("[") and _is_json(path):  # a vocab.txt may start with "[PAD]"
        raise CommandError(f"{path} is JSON but not a tokenizer file; {READS}")
    if _is_rank_file(head):
        return "tiktoken"
    lines = text.splitlines()
    if lines and all("\t" in line for line in lines[:20] if line):
        raise CommandError(
            f"{path} looks like a sentencepiece .vocab file (pieces and scores, tab-separated), which "
            "cannot encode on its own; pass the .model file trained with it"
        )
    full = path.read_bytes().decode("utf-8", errors="replace")
    if unk_token in full.splitlines():
        return "wordpiece"
    raise CommandError(
        f"{path} is a text file but not a tokenizer file toklab reads: as a WordPiece vocab.txt it would "
        f"need a line holding the unknown token {unk_token!r} (set --unk-token if yours is spelled "
        f"differently); {READS}"
    )


def load(path: str | Path, *, wordpiece_options: dict[str, Any] | None = None) -> tuple[str, Any]:
    """``(format, tokenizer)`` for the file at ``path``.

    ``wordpiece_options`` go to `toklab.WordPiece.load` when the file is a
    ``vocab.txt`` (which stores no normalizer settings: ``lowercase``,
    ``strip_accents`` and ``unk_token`` must be given again); other formats
    carry their settings and ignore them.
    """
    path = Path(path)
    options = dict(wordpiece_options or {})
    fmt = detect(path, unk_token=options.get("unk_token", "[UNK]"))
    try:
        if fmt == "toklab-bpe":
            return fmt, ByteBPE.load(path)
        if fmt == SP_FORMAT:
            return fmt, load_sentencepiece(path)
        if fmt == "sentencepiece":
            return fmt, load_model_file(path)
        if fmt == "tiktoken":
            return fmt, ByteBPE.from_tiktoken(path)
        if fmt == "hf-tokenizer":
            return fmt, from_hf_json(path)
        return fmt, WordPiece.load(path, **options)
    except ValueError as exc:
        if fmt == "sentencepiece":
            raise CommandError(f"{path} is a binary file but not a sentencepiece .model ({exc}); {READS}") from None
        if fmt == "hf-tokenizer":
            raise CommandError(f"{path}: a Hugging Face tokenizer.json toklab cannot load: {exc}") from None
        raise CommandError(str(exc)) from None


# ---------------------------------------------------------------------------- toklab-sentencepiece


def sentencepiece_content(tokenizer: SentencePieceTokenizer) -> dict[str, Any]:
    """The content of a ``toklab-sentencepiece`` file for ``tokenizer`` (without its fingerprint)."""
    config = tokenizer.config
    charsmap = config.charsmap
    return {
        "format": SP_FORMAT,
        "version": SP_VERSION,
        "config": {name: getattr(config, name) for name in _CONFIG_FIELDS},
        "charsmap": None if charsmap is None else base64.b64encode(charsmap).decode("ascii"),
        "pieces": [[p.piece, p.score, p.kind] for p in tokenizer.pieces],
    }


def save_sentencepiece(tokenizer: SentencePieceTokenizer, path: str | Path) -> None:
    """Write ``tokenizer`` as a ``toklab-sentencepiece`` JSON file (see the module docstring)."""
    content = sentencepiece_content(tokenizer)
    head = {k: v for k, v in content.items() if k != "pieces"} | {"sha256": fingerprint(content)}
    body = json.dumps(head, ensure_ascii=False, indent=1)  # "{\n ...\n}": one piece a line follows
    pieces = ",\n".join("  " + json.dumps(p, ensure_ascii=False) for p in content["pieces"])
    Path(path).write_text(f'{body[:-2]},\n "pieces": [\n{pieces}\n ]\n}}\n', encoding="utf-8")


def load_sentencepiece(path: str | Path) -> SentencePieceTokenizer:
    """Read a ``toklab-sentencepiece`` file, checking its fingerprint; ValueError naming the file otherwise."""
    path = Path(path)
    content = read_checked(path, SP_FORMAT, SP_VERSION, SP_FORMAT)
    config = content.get("config")
    if not isinstance(config, dict) or set(config) - set(_CONFIG_FIELDS):
        unknown = sorted(set(config) - set(_CONFIG_FIELDS)) if isinstance(config, dict) else config
        raise ValueError(f"{path}: config has unknown settings {unknown!r}; known: {', '.join(_CONFIG_FIELDS)}")
    try:
        charsmap = None if content.get("charsmap") is None else base64.b64decode(content["charsmap"], validate=True)
    except (binascii.Error, TypeError) as exc:
        raise ValueError(f"{path}: charsmap is not base64 ({exc})") from None
    pieces = content.get("pieces")
    if not isinstance(pieces, list) or not all(isinstance(p, list) and len(p) == 3 for p in pieces):
        raise ValueError(f"{path}: pieces must be a list of [piece, score, kind] entries")
    try:
        return SentencePieceTokenizer([tuple(p) for p in pieces], SPConfig(**config, charsmap=charsmap))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from None
