"""sentencepiece's normalizer: the compiled table (or a named rule), user symbols, whitespace.

What a sentencepiece model sees is produced in one loop (sentencepiece's
``normalizer.cc``): at each position a user-defined symbol (longest first) is
copied as it is; otherwise the longest entry of the model's compiled table is
replaced (`toklab.normalizers.precompiled.Charsmap`); otherwise one character is
copied. The chunks then pass through the whitespace rules and the ``▁`` escaping
of `toklab.pre_tokenizers.metaspace.whitespace_rules`. Without a compiled table
the named rule (`toklab.normalizers.nmt.normalize_rule`) runs on the text
between user symbols.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from ..base.checks import check_str
from ..pre_tokenizers.metaspace import SPACE, escape, whitespace_rules
from ..sentencepiece.hf import hf_normalizer
from ..sentencepiece.model_file import SPConfig
from ..base.unicode import utf8_sequence_length
from .nmt import normalize_rule
from .precompiled import Charsmap

__all__ = ["SentencePieceNormalizer"]

_COLLAPSE = re.compile(" {2,}")


class SentencePieceNormalizer:
    """The normalizer of a sentencepiece model: ``normalize(text)`` is what its model segments."""

    def __init__(self, config: SPConfig, user_symbols: Sequence[str] = ()) -> None:
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

        Equals sentencepiece's ``SentencePieceProcessor.normalize``.
        """
        check_str(text)
        if not text:
            return ""
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            # The sentencepiece library cannot take such a string either; say where it is.
            raise ValueError(
                f"text holds a lone surrogate (U+{ord(text[exc.start]):04X}) at position {exc.start}, which has "
                "no UTF-8 form; replace it first (toklab.base.unicode.replace_surrogates)"
            ) from None
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
        """This normalizer as Hugging Face ``tokenizers`` steps (see `toklab.sentencepiece.hf.hf_normalizer`)."""
        if self.user_symbols:
            raise ValueError(
                f"user-defined symbols ({self.user_symbols[0]!r}, ...) have no HF equivalent: sentencepiece keeps them "
                "inside the text its whitespace rules see, HF cuts added tokens out first"
            )
        return hf_normalizer(self.config, self.charsmap.replacements() if self.charsmap is not None else ())
