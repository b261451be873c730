"""The ``toklab-sentencepiece`` file: a `toklab.SentencePieceTokenizer` as readable, checksummed JSON.

Version 1 of the format stores the tokenizer losslessly::

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
import json
from pathlib import Path
from typing import Any

from ..base.files import atomic_write
from ..bpe.files import fingerprint, read_checked
from ..sentencepiece import SentencePieceTokenizer
from ..sentencepiece.model_file import SPConfig

__all__ = ["SP_FORMAT", "SP_VERSION", "sentencepiece_content", "save_sentencepiece", "load_sentencepiece"]

SP_FORMAT = "toklab-sentencepiece"
SP_VERSION = 1

_CONFIG_FIELDS = tuple(f.name for f in dataclasses.fields(SPConfig) if f.name != "charsmap")



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
    atomic_write(path, f'{body[:-2]},\n "pieces": [\n{pieces}\n ]\n}}\n')


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
