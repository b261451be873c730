"""sentencepiece's word split: where a learned piece may not cross (before ``▁``, around digits).

SentencePiece treats a space as an ordinary symbol, spelled ``▁`` (U+2581,
`toklab.base.pieces.SPACE`); its normalizer escapes the spaces and applies the
whitespace rules (`toklab.normalizers.spm.whitespace_rules`), so the model sees the
text whole. `split_words` is the *trainer's* split (sentencepiece's
``split_by_whitespace`` and ``split_digits``): where a learned piece may not cross.
Encoding never splits: a model trained this way has no piece that crosses those
boundaries.

Hugging Face ``tokenizers`` has no sentencepiece normalizer: its sentencepiece-style
files (T5, ALBERT, XLNet, Llama 2, any Unigram its trainer makes) do the escaping in a
pre-tokenizer, ``Metaspace``, which `Metaspace` reproduces: every space becomes
``▁``; with ``prepend_scheme="always"`` a ``▁`` goes before each piece of text that
does not start with one, with ``"first"`` only before the piece at the very start of
the input (not after an added token), with ``"never"`` nowhere; with ``split`` the
text is then cut before every ``▁``. ``whitespace_split`` runs HF's
``WhitespaceSplit`` first (older T5 files: words, whitespace dropped).
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from ..base.checks import check_str
from ..base.pieces import SPACE

__all__ = ["PREPEND_SCHEMES", "Metaspace", "is_split_digit", "split_words"]

#: HF's ``prepend_scheme`` values.
PREPEND_SCHEMES = ("always", "first", "never")
_WHITESPACE = regex.compile(r"\S+")


@dataclass(frozen=True)
class Metaspace:
    """HF's ``Metaspace`` pre-tokenizer (optionally after ``WhitespaceSplit``), for a `toklab.Pipeline`.

    ``pre_tokenize(text, first=...)`` takes the normalized text of one segment;
    ``first`` says whether that segment starts the input, which the ``"first``"
    scheme needs (`toklab.Pipeline` passes it, since ``positional`` is true).
    """

    replacement: str = SPACE
    prepend_scheme: str = "always"
    split: bool = True
    whitespace_split: bool = False

    positional = True

    def __post_init__(self) -> None:
        if not isinstance(self.replacement, str) or len(self.replacement) != 1:
            raise ValueError(f"replacement must be one character, got {self.replacement!r}")
        if self.prepend_scheme not in PREPEND_SCHEMES:
            raise ValueError(f"prepend_scheme must be one of {', '.join(PREPEND_SCHEMES)}, got {self.prepend_scheme!r}")

    def pre_tokenize(self, text: str, *, first: bool = True) -> list[str]:
        check_str(text)
        if self.whitespace_split:
            words = [(m.group(), first and m.start() == 0) for m in _WHITESPACE.finditer(text)]
        else:
            words = [(text, first)] if text else []
        out: list[str] = []
        rep = self.replacement
        for word, at_start in words:
            word = word.replace(" ", rep)
            if not word.startswith(rep) and (self.prepend_scheme == "always" or (
                    self.prepend_scheme == "first" and at_start)):
                word = rep + word
            if not self.split:
                out.append(word)
                continue
            start = 0
            for k in range(1, len(word)):
                if word[k] == rep:
                    out.append(word[start:k])
                    start = k
            out.append(word[start:])
        return out

    def to_hf(self):
        """HF's ``Metaspace`` (after ``WhitespaceSplit`` when ``whitespace_split``)."""
        from tokenizers import pre_tokenizers

        meta = pre_tokenizers.Metaspace(replacement=self.replacement, prepend_scheme=self.prepend_scheme,
                                        split=self.split)
        if not self.whitespace_split:
            return meta
        return pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), meta])


def is_split_digit(ch: str) -> bool:
    """A digit for ``split_digits``: ASCII 0-9 and fullwidth ０-９ (measured: Arabic-Indic ٣ is not)."""
    return "0" <= ch <= "9" or "\uff10" <= ch <= "\uff19"


def split_words(text: str, *, split_by_whitespace: bool = True, split_digits: bool = False) -> list[str]:
    """Cut escaped text where sentencepiece's trainer forbids a piece to cross.

    With ``split_by_whitespace`` a new word starts at every ``▁``, so a piece
    holds ``▁`` only as its first character: ``"ab▁cd▁▁e"`` -> ``["ab", "▁cd",
    "▁", "▁e"]``. With ``split_digits`` every digit is a word of its own,
    without even a ``▁`` in front. (The trainer also splits at changes of
    Unicode script and around numbers by default; those rules are not
    reproduced here.)
    """
    words: list[str] = []
    prev_digit = False
    for ch in text:
        digit = split_digits and is_split_digit(ch)
        if not words or digit or prev_digit or (split_by_whitespace and ch == SPACE):
            words.append(ch)
        else:
            words[-1] += ch
        prev_digit = digit
    return words
