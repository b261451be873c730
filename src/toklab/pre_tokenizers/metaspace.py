"""sentencepiece's whitespace: the ``▁`` meta symbol, the dummy prefix, collapsing, word splits.

SentencePiece treats a space as an ordinary symbol, spelled ``▁`` (U+2581), so
decoding can put every space back. Around that, three rules shape what the
model sees (`whitespace_rules`, in sentencepiece's order): with
``remove_extra_whitespaces`` leading and trailing spaces go and runs of spaces
collapse to one; with ``add_dummy_prefix`` a space is put in front of non-empty
input, so that ``"world"`` alone and in ``"hello world"`` both start with ``▁``;
with ``escape_whitespaces`` every space becomes ``▁``. A literal ``▁`` in the
input decodes as a space: the escaping is not injective.

`split_words` is the *trainer's* split (sentencepiece's ``split_by_whitespace``
and ``split_digits``): where a learned piece may not cross. Encoding never
splits: a model trained this way has no piece that crosses those boundaries.
HF ``tokenizers`` calls this stage ``pre_tokenizers.Metaspace``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

__all__ = ["SPACE", "escape", "unescape", "is_split_digit", "split_words", "whitespace_rules"]

#: sentencepiece's meta symbol for a space (U+2581 LOWER ONE EIGHTH BLOCK).
SPACE = "\u2581"


def escape(text: str) -> str:
    """Every space as ``▁``: ``escape("a b") == "a▁b"``."""
    return text.replace(" ", SPACE)


def unescape(text: str) -> str:
    """Every ``▁`` as a space (a literal ``▁`` in the input comes back as a space too)."""
    return text.replace(SPACE, " ")


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


def whitespace_rules(
    chunks: Iterable[str],
    *,
    add_dummy_prefix: bool = True,
    remove_extra_whitespaces: bool = True,
    escape_whitespaces: bool = True,
) -> str:
    """Join normalized chunks the way sentencepiece's normalizer does; the result is what the model sees.

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
