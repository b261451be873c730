"""sentencepiece's word split: where a learned piece may not cross (before ``▁``, around digits).

SentencePiece treats a space as an ordinary symbol, spelled ``▁`` (U+2581,
`toklab.base.pieces.SPACE`); its normalizer escapes the spaces and applies the
whitespace rules (`toklab.normalizers.spm.whitespace_rules`), so the model sees the
text whole. `split_words` is the *trainer's* split (sentencepiece's
``split_by_whitespace`` and ``split_digits``): where a learned piece may not cross.
Encoding never splits: a model trained this way has no piece that crosses those
boundaries. HF ``tokenizers`` calls this stage ``pre_tokenizers.Metaspace``.
"""

from __future__ import annotations

from ..base.pieces import SPACE

__all__ = ["is_split_digit", "split_words"]


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
