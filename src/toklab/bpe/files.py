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

from ..base.files import atomic_write
from ..base.unicode import from_proxy, to_proxy

__all__ = ["FORMAT", "FORMAT_VERSION", "payload", "fingerprint", "write", "parse_json", "read_checked", "read",
           "hf_model"]

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
    """Write ``content`` plus its ``sha256`` as indented JSON (`toklab.base.files.atomic_write`: all or nothing)."""
    data = dict(content)
    data["sha256"] = fingerprint(content)
    atomic_write(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n")


def parse_json(text: str, source: Any, name: str = "JSON", **options: Any) -> Any:
    """``json.loads(text)``, with a ValueError naming ``source`` for text that is not JSON or is nested too deeply.

    Python's parser recurses once per level, so a file of 100,000 ``[`` would
    otherwise end in a RecursionError rather than a message about the file.
    """
    try:
        return json.loads(text, **options)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source} is not a valid {name} file (truncated or not JSON: {exc})") from None
    except RecursionError:
        raise ValueError(f"{source} is not a valid {name} file: its JSON is nested too deeply to be one") from None


def read_checked(path: Path, fmt: str, version: int, name: str) -> dict[str, Any]:
    """The JSON object in a file written by `write`, without its ``sha256``, after
    checking format field ``fmt``, ``version`` and the fingerprint.

    Raises ValueError naming the file (and calling the format ``name``) for
    anything else than an intact file of that format and version.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text: {exc}") from None
    content = parse_json(text, path, name)
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
    missing = [key for key in ("pattern", "special_tokens", "merges", "vocab") if key not in content]
    if missing:
        raise ValueError(f"{path} lacks the field{'s' * (len(missing) > 1)} {', '.join(missing)} a toklab-bpe file holds")
    pattern, specials, lines, table = (content[k] for k in ("pattern", "special_tokens", "merges", "vocab"))
    _expect(path, "pattern", pattern, isinstance(pattern, str) and bool(pattern), "a regular expression or a pattern "
            "name (a non-empty string)")
    _expect(path, "special_tokens", specials, isinstance(specials, dict) and all(
        isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in specials.values()),
        "an object mapping each special token to its ID (a non-negative integer)")
    _expect(path, "merges", lines, isinstance(lines, list) and all(isinstance(m, str) for m in lines),
            'a list of "left right" strings')
    _expect(path, "vocab", table, table is None or (isinstance(table, dict) and all(
        isinstance(t, str) for t in table.values())), "null or an object mapping IDs to tokens")
    merges = []
    for k, line in enumerate(lines):
        a, sep, b = line.partition(" ")
        if not sep or not a or not b:
            raise ValueError(f"{path}: merge {k} is malformed: {line!r}")
        merges.append((_bytes(path, f"merge {k}", a), _bytes(path, f"merge {k}", b)))
    vocab = None
    if table is not None:
        vocab = {}
        for i, t in table.items():
            if not (i.isascii() and i.isdigit()):
                raise ValueError(f"{path}: vocab has the key {i!r}, which is not an ID (a non-negative integer)")
            vocab[int(i)] = _bytes(path, f"vocab entry {i}", t)
    return {"merges": merges, "vocab": vocab, "pattern": pattern, "special_tokens": specials}


def _bytes(path: Path, where: str, proxy: str) -> bytes:
    try:
        return from_proxy(proxy)
    except ValueError as exc:
        raise ValueError(f"{path}: {where}: {exc}") from None


def _expect(path: Path, field: str, value: Any, ok: bool, what: str) -> None:
    if not ok:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise ValueError(f"{path}: the field {field!r} must be {what}, got {type(value).__name__} {shown}")


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
