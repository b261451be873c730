"""Tokenizer files: which format a file is in, and loading it (``--model FILE`` on the command line).

`detect` looks at a file's content (never only at its name) and returns one of
`FORMATS`:

``toklab-bpe``
    the JSON file `toklab.ByteBPE.save` writes (``train bpe``);
``toklab-sentencepiece``
    the JSON file `toklab.formats.sentencepiece_json.save_sentencepiece` writes
    (``train unigram``);
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

Anything else is refused with a `FormatError` (a ValueError) that says what the file looks
like (a sentencepiece ``.vocab``, plain text, text in another encoding, ...) and which
formats are read. Only regular files are read: a FIFO, a device (``/dev/zero``) or a
socket is refused before it is opened, since it may block or never end.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from ..base.files import file_kind
from ..bpe import ByteBPE
from ..sentencepiece import load as load_model_file
from ..wordpiece import WordPiece
from .hf_json import from_hf_json
from .sentencepiece_json import SP_FORMAT, load_sentencepiece

__all__ = ["FORMATS", "READS", "FormatError", "detect", "load"]

FORMATS = ("toklab-bpe", SP_FORMAT, "sentencepiece", "wordpiece", "tiktoken", "hf-tokenizer")

#: What the error messages say toklab reads.
READS = (
    "toklab reads: a toklab-bpe JSON file (train bpe, ByteBPE.save), a toklab-sentencepiece JSON file "
    "(train unigram), a WordPiece vocab.txt, a sentencepiece .model file, a tiktoken rank file, or a Hugging "
    "Face tokenizer.json"
)

_HEAD = 1 << 16  # bytes looked at to decide
_RANK_LINE = re.compile(rb"[A-Za-z0-9+/]+={0,2} \d+\r?")


class FormatError(ValueError):
    """A file that is not a tokenizer file toklab reads, or a damaged one; the message says which and why."""


@contextmanager
def _opened(path: Path) -> Iterator[BinaryIO]:
    """``open(path, "rb")``, with a missing file, a folder or a read error as a one-line `FormatError`."""
    try:
        with open(path, "rb") as fh:
            yield fh
    except FileNotFoundError:
        raise FormatError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise FormatError(f"{path} is a directory, not a tokenizer file") from None
    except OSError as exc:
        raise FormatError(f"{path}: cannot read it ({exc.strerror or exc})") from None


def _head(path: Path) -> bytes:
    try:
        kind = file_kind(path)
    except FileNotFoundError:
        raise FormatError(f"{path}: no such file") from None
    except OSError as exc:
        raise FormatError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if kind == "directory":
        raise FormatError(f"{path} is a directory, not a tokenizer file")
    if kind != "file":
        raise FormatError(f"{path} is a {kind}, not a regular file: toklab reads tokenizer files only from ordinary "
                          "files (a pipe or a device may block or never end)")
    with _opened(path) as fh:
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
    except RecursionError:  # nested too deeply for Python's parser: JSON-like all the same
        return True
    return True


def _json_kind(path: Path) -> str:
    try:
        content = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FormatError(f"{path} starts like JSON but does not parse ({exc}); {READS}") from None
    except RecursionError:
        raise FormatError(f"{path} starts like JSON but is nested too deeply to be a tokenizer file; {READS}") from None
    if not isinstance(content, dict):
        raise FormatError(f"{path} is JSON but not a tokenizer file; {READS}")
    fmt = content.get("format")
    if fmt in ("toklab-bpe", SP_FORMAT):
        return fmt
    if "model" in content and ("normalizer" in content or "pre_tokenizer" in content or "added_tokens" in content):
        return "hf-tokenizer"
    shown = f"format field {fmt!r}" if fmt is not None else "no format field"
    raise FormatError(f"{path} is JSON but not a tokenizer file toklab reads ({shown}); {READS}")


def detect(path: str | Path, *, unk_token: str = "[UNK]") -> str:
    """The format of the tokenizer file at ``path`` (one of `FORMATS`); FormatError otherwise."""
    path = Path(path)
    head = _head(path)
    if not head:
        raise FormatError(f"{path} is empty; {READS}")
    if head[:2] == b"\x1f\x8b":
        try:
            with gzip.open(path, "rb") as fh:
                inner = fh.read(_HEAD)
        except (OSError, EOFError) as exc:
            raise FormatError(f"{path} is a damaged gzip file ({exc})") from None
        if _is_rank_file(inner) and path.suffix == ".gz":
            return "tiktoken"
        raise FormatError(f"{path} is gzip-compressed but not a tiktoken rank file named *.gz; {READS}")
    text = _utf8_prefix(head)
    if text is None:
        return "sentencepiece"  # binary: loading it says whether it really is a .model
    if text.lstrip().startswith("{"):
        return _json_kind(path)
    if text.lstrip().startswith("[") and _is_json(path):  # a vocab.txt may start with "[PAD]"
        raise FormatError(f"{path} is JSON but not a tokenizer file; {READS}")
    if _is_rank_file(head):
        return "tiktoken"
    lines = text.splitlines()
    if lines and all("\t" in line for line in lines[:20] if line):
        raise FormatError(
            f"{path} looks like a sentencepiece .vocab file (pieces and scores, tab-separated), which "
            "cannot encode on its own; pass the .model file trained with it"
        )
    full = path.read_bytes().decode("utf-8", errors="replace")
    if unk_token in full.splitlines():
        return "wordpiece"
    raise FormatError(
        f"{path} is a text file but not a tokenizer file toklab reads: as a WordPiece vocab.txt it would "
        f"need a line holding the unknown token {unk_token!r} (set --unk-token if yours is spelled "
        f"differently); {READS}"
    )


def _not_a_model(path: Path, exc: ValueError) -> str:
    """Why a file that is not UTF-8 text failed to load as a ``.model``: text in another encoding, or binary."""
    head = _head(path)
    if b"\x00" not in head:
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as bad:
            if bad.start < len(head) - 3:
                return (f"{path} is neither UTF-8 text nor a sentencepiece .model: byte 0x{head[bad.start]:02X} at "
                        f"offset {bad.start} is not UTF-8 (a text file in another encoding, such as Latin-1? convert "
                        f"it to UTF-8); {READS}")
    return f"{path} is a binary file but not a sentencepiece .model ({exc}); {READS}"


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
            raise FormatError(_not_a_model(path, exc)) from None
        if fmt == "hf-tokenizer":
            raise FormatError(f"{path}: a Hugging Face tokenizer.json toklab cannot load: {exc}") from None
        raise FormatError(str(exc)) from None
