"""Versioning a tokenizer: one fingerprint for everything that decides its IDs.

The IDs a tokenizer produces depend on more than its vocabulary file: the
normalizer, the pre-tokenizer's regex, the merges (their order), the special
tokens and their IDs, the post-processor's template, the decoder, the chat
template, and the code that runs them (toklab's version, the Unicode tables of
``unicodedata`` and of the ``regex`` module). `describe` writes each of these
*components* as plain JSON data; `component_hashes` hashes each one, so two
tokenizers can be compared component by component (`diff`); `fingerprint`
hashes them all together. A manifest (`write_manifest`, `check_manifest`)
records the fingerprint and the component hashes next to a saved tokenizer and
names what changed when a tokenizer no longer matches it; `save` writes a
tokenizer's own file and its manifest in one call, so the record cannot be
forgotten.

Every toklab tokenizer can be described: a `toklab.Pipeline` (and so
`toklab.WordPiece`), a `toklab.ByteBPE`, a `toklab.Unigram`, a
`toklab.SentencePieceTokenizer`. Stages are read through their public
attributes (frozen dataclasses by their fields). A chat template is a
function, so it is described by what it renders for a fixed set of probe
conversations: two templates that render every probe identically get the same
hash. Hashes are SHA-256 of canonical JSON, the same in every process and under
every ``PYTHONHASHSEED``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import unicodedata
from importlib import metadata
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

import regex

from ..base.files import atomic_write

__all__ = [
    "COMPONENTS",
    "PROBE_CHATS",
    "describe",
    "describe_value",
    "library_versions",
    "component_hashes",
    "fingerprint",
    "diff",
    "write_manifest",
    "check_manifest",
    "manifest_path",
    "save",
]

#: The components of a fingerprint, in pipeline order.
COMPONENTS: tuple[str, ...] = (
    "normalizer",
    "pre_tokenizer",
    "model",
    "special_tokens",
    "post_processor",
    "decoder",
    "chat_template",
    "library",
)

#: Conversations a chat template is rendered on to describe it.
PROBE_CHATS: tuple[tuple[tuple[tuple[str, str], ...], bool], ...] = (
    ((("user", "Hi"),), False),
    ((("user", "Hi"),), True),
    ((("system", "Be brief."), ("user", "What is 2+2?"), ("assistant", "4")), False),
    ((("system", "Be brief."), ("user", "What is 2+2?"), ("assistant", "4")), True),
    ((("user", ""),), True),
    ((("user", "a\nb <|endoftext|> c"),), True),
)

_MANIFEST_FORMAT = "toklab-tokenizer-manifest"
# A byte-level BPE's merges and IDs, hashed once per object (toklab's models are not
# changed after construction); recovering cl100k's merges and hashing 100k tokens takes seconds.
_TABLE_HASHES: "WeakKeyDictionary[Any, str]" = WeakKeyDictionary()


def _canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _sha256(data: Any) -> str:
    return hashlib.sha256(_canonical(data).encode("utf-8")).hexdigest()


def describe_value(value: Any) -> Any:
    """``value`` as plain JSON data (sorted where order carries no meaning).

    Handles None, bool, int, float, str, bytes (as hex), mappings, sequences,
    sets and frozen dataclasses (by class name and fields). Anything else
    raises TypeError naming its type, rather than being described by a repr
    that might hide a difference.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else repr(value)
    if isinstance(value, (bytes, bytearray)):
        return {"bytes": bytes(value).hex()}
    if isinstance(value, Mapping):
        items = [[describe_value(k), describe_value(v)] for k, v in value.items()]
        return {"map": sorted(items, key=_canonical)}
    if isinstance(value, (set, frozenset)):
        return {"set": sorted((describe_value(v) for v in value), key=_canonical)}
    if isinstance(value, (list, tuple)):
        return [describe_value(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: describe_value(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"class": type(value).__qualname__, "fields": fields}
    raise TypeError(f"cannot describe a {type(value).__name__} for a fingerprint: {value!r:.80}")


def library_versions() -> dict[str, str]:
    """The versions of the code that decides IDs: toklab itself and the two Unicode tables it uses."""
    return {"toklab": metadata.version("toklab"), "unicodedata": unicodedata.unidata_version,
            "regex": regex.__version__}


def _template(template: Callable[..., Any] | None) -> Any:
    if template is None:
        return None
    rendered = []
    for chat, add_generation_prompt in PROBE_CHATS:
        messages = [{"role": role, "content": content} for role, content in chat]
        segments = template(messages, add_generation_prompt)
        rendered.append([[str(text), bool(trusted)] for text, trusted in segments])
    return {"renders": rendered}


def _pattern(pattern: str) -> dict[str, str]:
    from ..pre_tokenizers import resolve

    return {"class": "RegexSplit", "pattern": resolve(pattern)}


def _model(model: Any) -> Any:
    """The model component, from the model's public attributes."""
    name = type(model).__qualname__
    if hasattr(type(model), "merges") and hasattr(model, "pattern"):  # byte-level BPE (class check: no property call)
        digest = _TABLE_HASHES.get(model)
        if digest is None:
            digest = _sha256({"merges": [[a.hex(), b.hex()] for a, b in model.merges],
                              "vocab": describe_value(model.vocab)})
            _TABLE_HASHES[model] = digest
        return {"class": name, "merges_and_ids_sha256": digest}
    if hasattr(model, "prefix") and hasattr(model, "unk_token"):  # WordPiece
        return {"class": name, "vocab": describe_value(model.vocab), "unk_token": model.unk_token,
                "prefix": model.prefix, "max_input_chars_per_word": model.max_input_chars_per_word}
    if hasattr(model, "entries"):  # Unigram
        return {"class": name, "entries": describe_value([tuple(e) for e in model.entries()]),
                "byte_fallback": model.byte_fallback, "unk_penalty": model.unk_penalty, "float32": model.float32}
    if hasattr(model, "pieces") and hasattr(model, "config"):  # a sentencepiece model
        return {"class": name, "pieces": describe_value([tuple(p) for p in model.pieces])}
    raise TypeError(f"cannot describe a model of type {name} for a fingerprint")


def describe(tokenizer: Any) -> dict[str, Any]:
    """Every component of ``tokenizer`` (see `COMPONENTS`) as plain JSON data."""
    if hasattr(tokenizer, "model") and hasattr(tokenizer, "post_processor"):  # a Pipeline
        pre = tokenizer.pre_tokenizer
        return {
            "normalizer": describe_value(tokenizer.normalizer),
            "pre_tokenizer": _pattern(pre.pattern) if hasattr(pre, "pattern") else describe_value(pre),
            "model": _model(tokenizer.model),
            "special_tokens": describe_value(dict(tokenizer.special_tokens)),
            "post_processor": describe_value(tokenizer.post_processor),
            "decoder": describe_value(tokenizer.decoder),
            "chat_template": _template(tokenizer.chat_template),
            "library": library_versions(),
        }
    if hasattr(type(tokenizer), "merges") and hasattr(tokenizer, "pattern"):  # ByteBPE on its own
        return describe(tokenizer.as_pipeline())
    if hasattr(tokenizer, "config") and hasattr(tokenizer, "pieces"):  # SentencePieceTokenizer
        config = describe_value(tokenizer.config)
        return {
            "normalizer": config,  # rule, charsmap, whitespace handling: all in the model's config
            "pre_tokenizer": {"class": "Metaspace", "split_by_whitespace": tokenizer.config.split_by_whitespace},
            "model": _model(tokenizer),
            "special_tokens": describe_value({p.piece: i for i, p in enumerate(tokenizer.pieces)
                                              if p.kind in ("control", "user", "unknown")}),
            "post_processor": None,
            "decoder": describe_value(tokenizer.decoder),
            "chat_template": None,
            "library": library_versions(),
        }
    if hasattr(tokenizer, "entries"):  # a Unigram model used as a tokenizer
        return {
            "normalizer": None, "pre_tokenizer": None, "model": _model(tokenizer),
            "special_tokens": describe_value({p: i for i, (p, _, kind) in enumerate(tokenizer.entries())
                                              if kind in ("control", "unknown")}),
            "post_processor": None, "decoder": None, "chat_template": None, "library": library_versions(),
        }
    raise TypeError(f"cannot fingerprint a {type(tokenizer).__name__}: expected a toklab tokenizer")


def component_hashes(tokenizer: Any) -> dict[str, str]:
    """SHA-256 of each component, in `COMPONENTS` order."""
    parts = describe(tokenizer)
    return {name: _sha256(parts[name]) for name in COMPONENTS}


def fingerprint(tokenizer: Any) -> str:
    """SHA-256 over all the component hashes: equal iff every component is equal."""
    return _sha256(component_hashes(tokenizer))


def diff(a: Any, b: Any) -> list[str]:
    """The components in which two tokenizers (or component-hash dicts) differ, in pipeline order."""
    ha = a if isinstance(a, Mapping) else component_hashes(a)
    hb = b if isinstance(b, Mapping) else component_hashes(b)
    return [name for name in COMPONENTS if ha.get(name) != hb.get(name)]


def write_manifest(tokenizer: Any, path: str | os.PathLike) -> dict[str, Any]:
    """Write ``{format, fingerprint, components}`` as JSON to ``path``; returns what was written."""
    hashes = component_hashes(tokenizer)
    manifest = {"format": _MANIFEST_FORMAT, "fingerprint": _sha256(hashes), "components": hashes,
                "library": library_versions()}
    atomic_write(path, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def check_manifest(tokenizer: Any, path: str | os.PathLike) -> None:
    """Raise ValueError naming every component in which ``tokenizer`` differs from the manifest."""
    try:
        manifest = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not a readable tokenizer manifest: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != _MANIFEST_FORMAT:
        raise ValueError(f"{path} is not a toklab tokenizer manifest (format is not {_MANIFEST_FORMAT!r})")
    changed = diff(tokenizer, manifest.get("components", {}))
    if changed:
        raise ValueError(
            f"the tokenizer does not match {path}: its {', '.join(changed)} changed "
            f"(fingerprint {fingerprint(tokenizer)[:12]}..., manifest {str(manifest.get('fingerprint'))[:12]}...)"
        )


def manifest_path(path: str | os.PathLike) -> Path:
    """Where `save` puts the manifest of a tokenizer saved at ``path``: ``<path>.manifest.json``."""
    path = Path(path)
    return path.with_name(path.name + ".manifest.json")


def save(tokenizer: Any, path: str | os.PathLike) -> dict[str, Any]:
    """Save ``tokenizer`` with its own ``save(path)`` and its manifest at `manifest_path` ``(path)``.

    Returns the manifest. The file holds what the tokenizer's format holds (a
    `toklab.ByteBPE` file: pattern, merges, specials; BERT's ``vocab.txt``: the
    vocabulary only); the manifest holds every component, so whoever loads the
    file can `check_manifest` that nothing was lost or set differently. A
    tokenizer without a ``save`` method (a `toklab.Pipeline` around a model)
    raises TypeError: save its model and call `write_manifest` for the whole.
    """
    writer = getattr(tokenizer, "save", None)
    if not callable(writer):
        raise TypeError(
            f"a {type(tokenizer).__name__} has no save(path): save its parts and call "
            "versioning.write_manifest(tokenizer, path) for the whole"
        )
    writer(path)
    return write_manifest(tokenizer, manifest_path(path))
