"""sentencepiece's named normalization rules, written as rules (no compiled table).

sentencepiece ships its normalizations as compiled tables inside each model
(`toklab.normalizers.precompiled.Charsmap`); this module states the same rules
in a form a reader can check: ``nmt_nfkc`` is NFKC plus a few deletions and
space mappings, measured by decompiling sentencepiece's tables. With a model's
table at hand, use the table: it is what sentencepiece runs.
"""

from __future__ import annotations

import unicodedata

__all__ = ["NORMALIZATIONS", "NMT_DELETE", "NMT_TO_SPACE", "NMT_KEEP", "nmt_nfkc", "normalize_rule"]

#: The normalization rules implemented by name (without a compiled table).
NORMALIZATIONS = ("identity", "nfkc", "nmt_nfkc")

#: Characters ``nmt_nfkc`` deletes: C0 controls except TAB, LF, FF, CR (and
#: except NUL, which no rule touches), DEL, and two C1 controls. Measured by
#: comparing sentencepiece's decompiled ``nmt_nfkc`` and ``nfkc`` tables.
NMT_DELETE = frozenset(
    [chr(c) for c in range(0x01, 0x09)]
    + ["\x0b"]
    + [chr(c) for c in range(0x0E, 0x20)]
    + ["\x7f", "\x8f", "\x9f"]
)

#: Characters ``nmt_nfkc`` turns into a plain space (on top of the spaces NFKC
#: already maps, such as U+00A0 and U+3000): TAB, LF, FF, CR, ARABIC LETTER
#: MARK, OGHAM SPACE MARK, ZERO WIDTH SPACE, ZWNJ, LRM, RLM, LINE and PARAGRAPH
#: SEPARATOR, the meta symbol ``▁`` itself, BOM/ZWNBSP and REPLACEMENT CHARACTER.
#: ZERO WIDTH JOINER (U+200D) is *not* in the list: emoji sequences survive.
NMT_TO_SPACE = frozenset(
    "\t\n\x0c\r\u061c\u1680\u200b\u200c\u200e\u200f\u2028\u2029\u2581\ufeff\ufffd"
)

#: Characters that NFKC changes but ``nmt_nfkc`` keeps: FULLWIDTH TILDE (U+FF5E;
#: NFKC makes it ``~``).
NMT_KEEP = frozenset("\uff5e")


def nmt_nfkc(text: str) -> str:
    """sentencepiece's default normalization, as rules: NFKC, then the NMT extras.

    NFKC runs first (on the pieces between `NMT_KEEP` characters, which stay
    as they are), then `NMT_DELETE` characters are removed and `NMT_TO_SPACE`
    characters become ``" "``. NFKC first matters: a deleted control between
    a letter and a combining mark still blocks their composition, as it does
    in sentencepiece (``"e\\x01\\u0301"`` -> ``"e\\u0301"``, not ``"é"``).

    Known differences from sentencepiece's compiled table (`Charsmap`), all
    measured in the tests: the table does not reorder combining marks or
    compose every sequence (``"ă\\u0301"`` stays two characters there, NFKC
    makes ``"ắ"``), and it was built from a newer Unicode version than
    Python 3.11's `unicodedata` (14.0), so it also maps a few code points that
    are unassigned here.
    """
    if any(ch in NMT_KEEP for ch in text):
        parts = []
        start = 0
        for i, ch in enumerate(text):
            if ch in NMT_KEEP:
                parts.append(unicodedata.normalize("NFKC", text[start:i]))
                parts.append(ch)
                start = i + 1
        parts.append(unicodedata.normalize("NFKC", text[start:]))
        text = "".join(parts)
    else:
        text = unicodedata.normalize("NFKC", text)
    if text.isascii() and text.isprintable():
        return text
    return "".join("" if ch in NMT_DELETE else " " if ch in NMT_TO_SPACE else ch for ch in text)


def normalize_rule(text: str, name: str) -> str:
    """Apply a named normalization (one of `NORMALIZATIONS`); no whitespace handling."""
    if name == "identity":
        return text
    if name == "nfkc":
        return unicodedata.normalize("NFKC", text)
    if name == "nmt_nfkc":
        return nmt_nfkc(text)
    raise ValueError(f"unknown normalization {name!r}; known: {', '.join(NORMALIZATIONS)}")
