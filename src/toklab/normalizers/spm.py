"""sentencepiece's normalizer: the compiled table (or a named rule), user symbols, whitespace.

What a sentencepiece model sees is produced in one loop (sentencepiece's
``normalizer.cc``): at each position a user-defined symbol (longest first) is
copied as it is; otherwise the longest entry of the model's compiled table is
replaced (`toklab.normalizers.precompiled.Charsmap`); otherwise one character is
copied. The chunks then pass through the whitespace rules and the ``▁`` escaping
(`whitespace_rules`). Without a compiled table the named rule
(`toklab.normalizers.nmt.normalize_rule`) runs on the text between user symbols.

The settings come from the model (`toklab.sentencepiece.model_file.SPConfig`, or
anything with the same attributes); `SentencePieceNormalizer.to_hf` writes the whole
front end as Hugging Face normalizer steps, which `toklab.sentencepiece.hf` reads back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..base.checks import check_str
from ..base.pieces import SPACE, escape
from ..base.unicode import replace_surrogates, utf8_sequence_length
from .nmt import normalize_rule
from .precompiled import Charsmap

__all__ = ["SentencePieceNormalizer", "whitespace_rules", "HF_STRIP_ENDS", "HF_COLLAPSE", "HF_TRAILING"]

_COLLAPSE = re.compile(" {2,}")

#: The regexes of the HF ``Replace`` steps `SentencePieceNormalizer.to_hf` writes for
#: ``remove_extra_whitespaces`` (spaces at either end, runs of spaces, a trailing ``▁``);
#: `toklab.sentencepiece.hf` recognises the steps by them.
HF_STRIP_ENDS = "^ +| +$"
HF_COLLAPSE = " {2,}"
HF_TRAILING = SPACE + "+$"


class SentencePieceNormalizer:
    """The normalizer of a sentencepiece model: ``normalize(text)`` is what its model segments."""

    def __init__(self, config: Any, user_symbols: Sequence[str] = ()) -> None:
        self.config = config
        self.charsmap = Charsmap(config.charsmap) if config.charsmap else None
        #: The user-defined symbols, longest first (the order sentencepiece tries them).
        self.user_symbols = sorted(set(user_symbols), key=len, reverse=True)
        self._user = [u.encode("utf-8") for u in self.user_symbols]

    def user_match(self, data: bytes, pos: int) -> int:
        """Length in bytes of the longest user-defined symbol at ``data[pos:]`` (0 if none)."""
        for u in self._user:
            if data.startswith(u, pos):
                return len(u)
        return 0

    def chunks(self, text: str) -> Iterator[str]:
        """Normalized chunks; user-defined symbols pass through untouched.

        With a compiled table this is sentencepiece's loop exactly: at each
        position a user-defined symbol (longest) wins, else the longest table
        entry, else one character (with ``engine="tokenizers"``, HF's
        per-grapheme rule instead: `Charsmap.grapheme_chunks`). With a named rule, the text between
        user-defined symbols is normalized as a whole (NFKC composes across
        characters), one chunk per output character.
        """
        if self.config.engine == "tokenizers":
            if self._user:
                raise ValueError("user-defined symbols have no equivalent in Hugging Face tokenizers' normalizers")
            if self.charsmap is not None:
                yield from self.charsmap.grapheme_chunks(text)
            else:
                yield from normalize_rule(text, self.config.normalization)
            return
        data = text.encode("utf-8")
        if self.charsmap is not None:
            yield from self.charsmap.chunks(data, self.user_match if self._user else None)
            return
        name = self.config.normalization
        if not self._user:
            yield from normalize_rule(text, name)
            return
        pos = start = 0
        while pos < len(data):
            length = self.user_match(data, pos)
            if length:
                yield from normalize_rule(data[start:pos].decode("utf-8"), name)
                yield data[pos : pos + length].decode("utf-8")
                pos += length
                start = pos
            else:
                pos += utf8_sequence_length(data[pos])
        yield from normalize_rule(data[start:].decode("utf-8"), name)

    def normalize(self, text: str) -> str:
        """``text`` as the model sees it: normalized, whitespace handled, spaces escaped to ``▁``.

        Equals sentencepiece's ``SentencePieceProcessor.normalize``. A lone surrogate
        becomes U+FFFD first (`toklab.base.unicode.replace_surrogates`).
        """
        check_str(text)
        if not text:
            return ""
        # toklab's one rule for a lone surrogate, which has no UTF-8 form: it becomes U+FFFD, as in
        # tiktoken and every other toklab tokenizer (the sentencepiece library refuses such a str).
        text = replace_surrogates(text)
        cfg = self.config
        if cfg.engine == "tokenizers":
            return self._hf_chain("".join(self.chunks(text)))
        return whitespace_rules(
            self.chunks(text),
            add_dummy_prefix=cfg.add_dummy_prefix,
            remove_extra_whitespaces=cfg.remove_extra_whitespaces,
            escape_whitespaces=cfg.escape_whitespaces,
        )

    def _hf_chain(self, text: str) -> str:
        """The whitespace steps as HF's normalizer chain runs them (`toklab.sentencepiece.hf`)."""
        cfg = self.config
        if cfg.remove_extra_whitespaces:
            text = _COLLAPSE.sub(" ", text.strip(" "))
        if cfg.add_dummy_prefix and text:
            text = " " + text
        if cfg.escape_whitespaces:
            text = escape(text)
            if cfg.remove_extra_whitespaces:
                text = text.rstrip(SPACE)
        return text

    def to_hf(self):
        """This normalizer as Hugging Face ``tokenizers`` steps (None when there is nothing to do).

        The compiled table is ``Precompiled``; ``remove_extra_whitespaces`` is two
        ``Replace`` steps (spaces at either end, runs of spaces) and, after the escaping,
        a trailing-``▁`` strip; the dummy prefix is ``Prepend``; the escaping is
        ``Replace(" ", "▁")``. A named rule is refused (HF's own NFKC follows other
        Unicode tables), and so is a table replacement holding two spaces in a row,
        which HF's ``Replace`` would collapse but sentencepiece does not.
        """
        from tokenizers import Regex, normalizers

        if self.user_symbols:
            raise ValueError(
                f"user-defined symbols ({self.user_symbols[0]!r}, ...) have no HF equivalent: sentencepiece keeps them "
                "inside the text its whitespace rules see, HF cuts added tokens out first"
            )
        config = self.config
        steps = []
        if config.charsmap:
            steps.append(normalizers.Precompiled(config.charsmap))
        elif config.normalization != "identity":
            raise ValueError(
                f"normalization {config.normalization!r} is applied by rule, and HF's own NFKC follows other Unicode "
                "tables: give the model a compiled table (toklab.normalizers.tables.compile_rule) first"
            )
        if config.remove_extra_whitespaces:
            replacements = self.charsmap.replacements() if self.charsmap is not None else ()
            doubled = next((r for r in replacements if "  " in r), None)
            if doubled is not None:
                raise ValueError(f"the table replaces a character by {doubled!r}, whose double space HF would collapse")
            steps += [normalizers.Replace(Regex(HF_STRIP_ENDS), ""), normalizers.Replace(Regex(HF_COLLAPSE), " ")]
        if config.add_dummy_prefix:
            steps.append(normalizers.Prepend(SPACE if config.escape_whitespaces else " "))
        if config.escape_whitespaces:
            steps.append(normalizers.Replace(" ", SPACE))
            if config.remove_extra_whitespaces:
                steps.append(normalizers.Replace(Regex(HF_TRAILING), ""))
        if not steps:
            return None
        return steps[0] if len(steps) == 1 else normalizers.Sequence(steps)


def whitespace_rules(
    chunks: Iterable[str],
    *,
    add_dummy_prefix: bool = True,
    remove_extra_whitespaces: bool = True,
    escape_whitespaces: bool = True,
) -> str:
    """Join normalized chunks as sentencepiece's normalizer does: what the model sees.

    ``chunks`` are the normalizer's outputs in order (one per matched table
    entry or character). With ``remove_extra_whitespaces`` a chunk's leading
    spaces are dropped while the previous output ended in a space (at the start
    of the text, too), so runs collapse and leading spaces vanish; the dummy
    prefix is one space before non-empty input; at the end trailing spaces (or
    ``▁``, literal ones included) are removed. The caller returns ``""`` for
    empty input before calling this (sentencepiece adds no dummy prefix then).
    """
    rew, escape_ws = remove_extra_whitespaces, escape_whitespaces
    chunks = iter(chunks)
    pending = None
    if rew:  # drop leading chunks that are a single space
        for chunk in chunks:
            if chunk != " ":
                pending = chunk
                break
        else:
            return ""
    out: list[str] = []
    if add_dummy_prefix:
        out.append(SPACE if escape_ws else " ")
    prev_space = rew
    for chunk in _prepend(pending, chunks):
        if prev_space and rew:
            chunk = chunk.lstrip(" ")
        if chunk:
            out.append(escape(chunk) if escape_ws else chunk)
            prev_space = chunk.endswith(" ")
        if not rew:
            prev_space = False
    result = "".join(out)
    if rew:
        result = result.rstrip(SPACE if escape_ws else " ")
    return result


def _prepend(first: str | None, rest: Iterator[str]) -> Iterator[str]:
    if first is not None:
        yield first
    yield from rest
