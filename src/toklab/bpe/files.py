"""Byte-level BPE on disk and in other libraries: the ``toklab-bpe`` format, tiktoken, HF.

A saved tokenizer holds everything that decides its output: the pre-tokenizer
pattern, the special tokens and their IDs, the merges (in GPT-2's printable
proxy alphabet, one ``"left right"`` line each) and, only when IDs are not the
default ``byte = ID``, ``merge k = 256 + k``, the full ID table. The
fingerprint is the SHA-256 of that content in a canonical JSON form; `read`
refuses a file whose content does not hash to its stored fingerprint, so a
truncated or hand-edited file fails loudly instead of tokenizing differently.

`hf_model` hands the same tables to HF ``tokenizers`` (`ByteBPE.to_tiktoken` to
tiktoken); the parity tests check that both then give toklab's IDs.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..base.unicode import from_proxy, to_proxy

__all__ = ["FORMAT", "FORMAT_VERSION", "payload", "fingerprint", "write", "read_checked", "read", "hf_model"]

FORMAT = "toklab-bpe"
FORMAT_VERSION = 1


def payload(
    pattern: str,
    merges: Sequence[tuple[bytes, bytes]],
    vocab: Mapping[int, bytes],
    special_tokens: Mapping[str, int],
) -> dict[str, Any]:
    """The content of a file (without its fingerprint) for these tables."""
    default_ids = (
        len(vocab) == 256 + len(merges)
        and all(vocab.get(i) == bytes([i]) for i in range(256))
        and all(vocab.get(256 + k) == a + b for k, (a, b) in enumerate(merges))
    )
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "pattern": pattern,
        "special_tokens": dict(sorted(special_tokens.items(), key=lambda kv: kv[1])),
        "merges": [f"{to_proxy(a)} {to_proxy(b)}" for a, b in merges],
        "vocab": None if default_ids else {str(i): to_proxy(t) for i, t in sorted(vocab.items())},
    }


def fingerprint(content: Mapping[str, Any]) -> str:
    """SHA-256 of ``content`` as canonical JSON (sorted keys, no spaces): the same in every process."""
    canonical = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def write(path: str | os.PathLike, content: Mapping[str, Any]) -> None:
    """Write ``content`` plus its ``sha256`` as indented JSON."""
    data = dict(content)
    data["sha256"] = fingerprint(content)
    Path(path).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def read_checked(path: Path, fmt: str, version: int, name: str) -> dict[str, Any]:
    """The JSON object in a file written by `write`, without its ``sha256``, after
    checking format field ``fmt``, ``version`` and the fingerprint.

    Raises ValueError naming the file (and calling the format ``name``) for
    anything else than an intact file of that format and version.
    """
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not a valid {name} file (truncated or not JSON: {exc})") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text: {exc}") from None
    if not isinstance(content, dict) or content.get("format") != fmt:
        raise ValueError(f"{path} is not a {name} file (format field is not {fmt!r})")
    if content.get("version") != version:
        raise ValueError(f"{path} has format version {content.get('version')!r}; this toklab reads {version}")
    expected = content.pop("sha256", None)
    if expected is None:
        raise ValueError(f"{path} has no sha256 fingerprint")
    actual = fingerprint(content)
    if actual != expected:
        raise ValueError(
            f"{path} fails its SHA-256 check (stored {str(expected)[:16]}..., content hashes to "
            f"{actual[:16]}...): the file was modified or truncated"
        )
    return content


def read(path: str | os.PathLike) -> dict[str, Any]:
    """The constructor arguments of `ByteBPE` stored in a file, after checking its fingerprint.

    Returns ``{"merges": ..., "vocab": ..., "pattern": ..., "special_tokens": ...}``.
    Raises ValueError naming the file for anything else than an intact
    ``toklab-bpe`` file of this version.
    """
    path = Path(path)
    content = read_checked(path, FORMAT, FORMAT_VERSION, "toklab BPE")
    merges = []
    for k, line in enumerate(content["merges"]):
        a, sep, b = line.partition(" ")
        if not sep or not a or not b:
            raise ValueError(f"{path}: merge {k} is malformed: {line!r}")
        merges.append((from_proxy(a), from_proxy(b)))
    vocab = None
    if content["vocab"] is not None:
        vocab = {int(i): from_proxy(t) for i, t in content["vocab"].items()}
    return {"merges": merges, "vocab": vocab, "pattern": content["pattern"], "special_tokens": content["special_tokens"]}


def hf_model(tokenizer: Any):
    """HF ``models.BPE`` with ``tokenizer``'s vocabulary and merges in GPT-2's proxy alphabet.

    ``ignore_merges=True``: a chunk that is already a token is taken whole, as
    tiktoken and `ByteBPE` do. Special tokens get their own IDs in the vocabulary.
    """
    from tokenizers import models

    vocab = {to_proxy(token): i for i, token in tokenizer.vocab.items()}
    vocab.update(tokenizer.special_tokens)
    merges = [(to_proxy(a), to_proxy(b)) for a, b in tokenizer.merges]
    return models.BPE(vocab, merges, ignore_merges=True)
