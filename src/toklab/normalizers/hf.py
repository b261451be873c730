"""Hugging Face's normalizer steps, as a ``tokenizer.json`` lists them: `HFNormalizer`.

A ``tokenizer.json`` converted from sentencepiece (T5, ALBERT, XLNet, mT5) or trained
with ``tokenizers``' own Unigram trainer spells its normalizer as a chain of small
steps rather than sentencepiece's one loop: the compiled table (``Precompiled``),
``Nmt``, the Unicode normal forms, ``Lowercase``, ``StripAccents``, ``Replace`` (a
string or a regex), ``Prepend``, ``Strip``. `HFNormalizer` runs such a chain with
HF's own rules, step by step:

- ``Precompiled`` applies the table per grapheme cluster
  (`toklab.normalizers.precompiled.Charsmap.grapheme_chunks`);
- ``Nmt`` deletes the C0/C1 controls sentencepiece's ``nmt`` rule deletes and turns
  tabs, newlines, ``▁``, U+FFFD and other separators into spaces (HF's list);
- ``Lowercase`` lowercases character by character (no final-sigma rule, as Rust's
  ``char::to_lowercase``); ``StripAccents`` drops every combining mark (Mn, Mc, Me);
- ``Strip`` trims Unicode White_Space; ``Prepend`` adds its string to non-empty text;
- ``Replace`` replaces every match, an empty one included, found as HF's engine finds
  them (`toklab.base.limits.find_matches`, under a time limit).

`from_steps` reads the JSON steps (refusing an unknown one by name) and `to_hf`
writes them back as ``tokenizers.normalizers`` objects.
"""

from __future__ import annotations

import base64
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import regex

from ..base.limits import find_matches, limit_for, run_limited
from .precompiled import Charsmap

__all__ = ["STEPS", "HFNormalizer", "nmt"]

#: The step types `HFNormalizer` runs.
STEPS = ("Precompiled", "Nmt", "NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "Replace", "Prepend", "Strip")

_NMT_DELETE = {c: None for c in (*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F)}
_NMT_SPACE = {c: " " for c in (0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581,
                               0xFEFF, 0xFFFD)}
_NMT = _NMT_DELETE | _NMT_SPACE
_LEADING = regex.compile(r"\A\s+")
_TRAILING = regex.compile(r"\s+\Z")


def nmt(text: str) -> str:
    """HF's ``Nmt`` normalizer: delete control characters, turn other separators into spaces."""
    return text.translate(_NMT)


@dataclass(frozen=True)
class HFNormalizer:
    """A chain of Hugging Face normalizer steps, each a dict as ``tokenizer.json`` writes it."""

    steps: tuple[dict, ...]

    def __post_init__(self) -> None:
        for step in self.steps:
            kind = step.get("type")
            if kind not in STEPS:
                raise ValueError(f"normalizer {kind} is not implemented (toklab runs {', '.join(STEPS)})")
            if kind == "Replace":
                (pattern_kind, _), = step["pattern"].items()
                if pattern_kind not in ("String", "Regex") or not isinstance(step.get("content"), str):
                    raise ValueError(f"normalizer Replace({step['pattern']!r}, {step.get('content')!r}) is not a "
                                     "string or regex replacement")
        object.__setattr__(self, "_compiled", [self._compile(step) for step in self.steps])

    @classmethod
    def from_steps(cls, steps: Sequence[dict]) -> "HFNormalizer":
        """The chain of a ``tokenizer.json``'s (flattened) normalizer steps; ValueError naming one it cannot run."""
        return cls(tuple(dict(step) for step in steps))

    @staticmethod
    def _compile(step: dict) -> Any:
        kind = step["type"]
        if kind == "Precompiled":
            return Charsmap(base64.b64decode(step["precompiled_charsmap"]))
        if kind == "Replace":
            (pattern_kind, source), = step["pattern"].items()
            if pattern_kind == "String":
                return regex.compile(regex.escape(source)) if source else None
            return regex.compile(source)
        return None

    def normalize(self, text: str) -> str:
        for step, compiled in zip(self.steps, self._compiled):
            text = _apply(step, compiled, text)
        return text

    def to_hf(self):
        """The chain as ``tokenizers.normalizers`` objects (one, or a ``Sequence``)."""
        from tokenizers import Regex, normalizers

        out = []
        for step in self.steps:
            kind = step["type"]
            if kind == "Precompiled":
                out.append(normalizers.Precompiled(base64.b64decode(step["precompiled_charsmap"])))
            elif kind == "Replace":
                (pattern_kind, source), = step["pattern"].items()
                pattern = source if pattern_kind == "String" else Regex(source)
                out.append(normalizers.Replace(pattern, step["content"]))
            elif kind == "Prepend":
                out.append(normalizers.Prepend(step["prepend"]))
            elif kind == "Strip":
                out.append(normalizers.Strip(left=step.get("strip_left", True), right=step.get("strip_right", True)))
            else:
                out.append(getattr(normalizers, kind)())
        return out[0] if len(out) == 1 else normalizers.Sequence(out)


def _apply(step: dict, compiled: Any, text: str) -> str:
    kind = step["type"]
    if kind == "Precompiled":
        return "".join(compiled.grapheme_chunks(text))
    if kind == "Nmt":
        return nmt(text)
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return unicodedata.normalize(kind, text)
    if kind == "Lowercase":
        return "".join(map(str.lower, text)) if "\u03a3" in text else text.lower()  # no final sigma, as in Rust
    if kind == "StripAccents":
        return "".join(ch for ch in text if not unicodedata.category(ch).startswith("M"))
    if kind == "Prepend":
        return step["prepend"] + text if text else text
    if kind == "Strip":
        if step.get("strip_left", True):
            text = _LEADING.sub("", text)
        if step.get("strip_right", True):
            text = _TRAILING.sub("", text)
        return text
    return _replace(compiled, step["content"], text)


def _replace(rx: regex.Pattern | None, content: str, text: str) -> str:
    """HF's ``Replace``: every match (empty ones too) becomes ``content``, matches found as Oniguruma finds them."""
    if rx is None or not text:
        return text

    def run(timeout: float | None) -> str:
        return "".join(content if is_match else text[a:b] for a, b, is_match in find_matches(rx, text, timeout))

    return run_limited(run, limit_for(len(text)), lambda: f"the normalizer's Replace pattern {rx.pattern!r} ran "
                       f"longer than {limit_for(len(text)):.1f} s on {len(text):,} characters and was stopped")
