"""BERT's normalizer (HF ``normalizers.BertNormalizer``), character for character.

Four optional steps, in HF's order: clean-up (delete controls, map every
whitespace character to a space), spaces around CJK ideographs, accent
stripping (NFD, then drop nonspacing marks) and lowercasing. Every step but
NFD maps one character at a time, so consecutive steps are fused into
``str.translate`` tables that are filled lazily (`CharTable`); the BERT
pre-tokenizer (`toklab.pre_tokenizers.bert`) appends its own per-character
rule to the same tables to run normalizer and pre-tokenizer in one pass.

**Unicode tables.** HF's Rust code classifies characters with tables older
than Python 3.11's Unicode 14 database: about a hundred recent punctuation
characters are not punctuation for HF, thirteen recent format characters are
not removed, eighty-odd ranges of recent nonspacing marks survive accent
stripping, U+11938 is not decomposed, and ``char::is_whitespace`` (the
White_Space property) differs from ``str.isspace`` on U+001C..U+001F. Lowercasing
is per character (HF does not apply the Greek final-sigma rule that ``str.lower``
does), and HF lowercases 55 characters of Unicode 16 that Python 3.11 does not
know. The small tables at the end of this module record those differences; they
were measured by running HF on every code point, and a test re-checks all of
them against HF.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = [
    "ASCII_PUNCT",
    "WHITE_SPACE",
    "CJK_RANGES",
    "HF_NOT_PUNCT",
    "HF_EXTRA_PUNCT",
    "HF_NOT_FORMAT",
    "HF_NOT_MN",
    "HF_EXTRA_MN",
    "HF_NO_DECOMPOSE",
    "HF_EXTRA_LOWER",
    "is_whitespace",
    "is_control",
    "is_punctuation",
    "is_chinese_char",
    "is_nonspacing_mark",
    "CharTable",
    "char_tables",
    "nfd",
    "run_tables",
    "ideographs_apart",
    "normalize",
    "BertNormalizer",
]

Rule = Callable[[str], "str | None"]


def _ranges(spec: str) -> frozenset[int]:
    """Code points from a compact spec such as ``"061D 2E43-2E4F"`` (hex, inclusive)."""
    out: set[int] = set()
    for part in spec.split():
        lo, _, hi = part.partition("-")
        out.update(range(int(lo, 16), int(hi or lo, 16) + 1))
    return frozenset(out)


def is_whitespace(ch: str) -> bool:
    """HF's whitespace: Rust ``char::is_whitespace``, i.e. the Unicode White_Space property."""
    return ch in WHITE_SPACE


def is_control(ch: str) -> bool:
    """Characters BERT's clean-up deletes: categories Cc, Cf, Co, Cs, except tab, LF, CR.

    Tab, LF and CR are controls in Unicode, but BERT treats them as whitespace.
    """
    if ch in "\t\n\r":
        return False
    cat = unicodedata.category(ch)
    if cat == "Cf":
        return ord(ch) not in HF_NOT_FORMAT
    return cat in ("Cc", "Co", "Cs")


def is_punctuation(ch: str) -> bool:
    """BERT's punctuation: all ASCII symbols (``$``, ``+``, ``^``, ... too) and Unicode P*."""
    cp = ord(ch)
    if cp < 128:
        return ch in ASCII_PUNCT
    if cp in HF_EXTRA_PUNCT:
        return True
    return unicodedata.category(ch)[0] == "P" and cp not in HF_NOT_PUNCT


def is_chinese_char(ch: str) -> bool:
    """CJK ideographs (the blocks BERT lists); kana and hangul are not included."""
    cp = ord(ch)
    for lo, hi in CJK_RANGES:  # sorted by start
        if cp < lo:
            return False
        if cp <= hi:
            return True
    return False


def is_nonspacing_mark(ch: str) -> bool:
    cp = ord(ch)
    if cp in HF_EXTRA_MN:
        return True
    return unicodedata.category(ch) == "Mn" and cp not in HF_NOT_MN


def _lower(ch: str) -> str:
    return HF_EXTRA_LOWER.get(ord(ch)) or ch.lower()


class CharTable(dict):
    """A ``str.translate`` table that computes each character's replacement on first use.

    Building full tables would mean classifying all 1.1 million code points up
    front; text only ever uses a few thousand of them.
    """

    def __init__(self, rule: Callable[[str], str | None]) -> None:
        super().__init__()
        self.rule = rule
        #: set by `char_tables` on its first table: the ASCII fast path (`_ascii_plan`)
        self.ascii: tuple[dict[int, str | None], tuple[tuple[str, str], ...]] | None = None

    def __missing__(self, code: int) -> str | None:
        value = self.rule(chr(code))
        self[code] = value
        return value


def _clean_rule(ch: str) -> str | None:
    cp = ord(ch)
    if cp == 0 or cp == 0xFFFD or is_control(ch):
        return None
    return " " if ch in "\t\n\r" or is_whitespace(ch) else ch


def _cjk_rule(ch: str) -> str:
    return f" {ch} " if is_chinese_char(ch) else ch


def _drop_mn_rule(ch: str) -> str | None:
    return None if is_nonspacing_mark(ch) else ch


def _compose(rules: Sequence[Callable[[str], str | None]]) -> Callable[[str], str | None]:
    """Chain per-character rules; each rule sees every character the previous one produced."""

    def rule(ch: str) -> str | None:
        text = ch
        for r in rules:
            if len(text) == 1:  # the usual case: one character in, at most one out
                text = r(text) or ""
            else:
                text = "".join(r(c) or "" for c in text)
            if not text:
                return None
        return text

    return rule




@lru_cache(maxsize=None)
def char_tables(
    clean_text: bool, handle_chinese_chars: bool, strip_accents: bool, lowercase: bool, extra: Rule | None = None
) -> tuple[CharTable, CharTable | None]:
    """The per-character steps fused into ``str.translate`` tables: one before NFD, one after.

    Every step except NFD maps characters one at a time, so consecutive
    steps can run as one pass. NFD reorders combining marks across
    characters, so accent stripping splits the work in two. ``extra`` is a
    further per-character rule run last (the BERT pre-tokenizer's split).
    """
    before = [r for on, r in ((clean_text, _clean_rule), (handle_chinese_chars, _cjk_rule)) if on]
    after = [r for on, r in ((strip_accents, _drop_mn_rule), (lowercase, _lower)) if on]
    if extra is not None:
        after.append(extra)
    if not strip_accents:
        tables = CharTable(_compose(before + after)), None
    else:
        tables = CharTable(_compose(before)), CharTable(_compose(after))
    tables[0].ascii = _ascii_plan(*tables)
    return tables


def _ascii_plan(before: CharTable, after: CharTable | None):
    """What the tables do to ASCII text, split so CPython can run it fast.

    ``str.translate`` on ASCII text stays in C's fast loop only while every
    character maps to at most one ASCII character; the first character that
    maps to several (punctuation, which the pre-tokenizer puts between
    spaces) sends it to the slow general loop for the rest of the text. So
    the plan is one table of the one-to-one maps and deletions, then one
    ``str.replace`` per character that becomes several. That equals the
    per-character mapping as long as no output of either step holds another
    character that a replacement would rewrite; if one does, the plan is None.
    """
    single: dict[int, str | None] = {}
    multi: dict[str, str] = {}
    for code in range(128):
        ch = chr(code)
        out = ch.translate(before)
        if after is not None:
            out = nfd(out).translate(after)
        if out == ch:
            continue
        if len(out) <= 1 and out.isascii():
            single[code] = out or None
        else:
            multi[ch] = out
    if any(v in multi for v in single.values() if v) or any((set(v) - {k}) & multi.keys() for k, v in multi.items()):
        return None
    return single, tuple(multi.items())


def nfd(text: str) -> str:
    """NFD as HF's tables do it (one character, U+11938, is left whole)."""
    if HF_NO_DECOMPOSE in text:  # HF's tables predate this decomposition
        return HF_NO_DECOMPOSE.join(unicodedata.normalize("NFD", p) for p in text.split(HF_NO_DECOMPOSE))
    return unicodedata.normalize("NFD", text)


def run_tables(text: str, tables: tuple[CharTable, CharTable | None]) -> str:
    """Apply `char_tables` output: the first table, then (if any) NFD and the second."""
    before, after = tables
    if before.ascii is not None and text.isascii():
        single, multi = before.ascii
        text = text.translate(single)
        for ch, out in multi:
            text = text.replace(ch, out)
        return text
    text = text.translate(before)
    if after is not None:
        text = nfd(text).translate(after)
    return text


@lru_cache(maxsize=1)
def _ideograph_table() -> np.ndarray:
    """``table[cp]``: whether code point ``cp`` is a CJK ideograph (`CJK_RANGES`), up to the last one."""
    table = np.zeros(max(hi for _, hi in CJK_RANGES) + 2, dtype=bool)  # the last entry: every code point above
    for lo, hi in CJK_RANGES:
        table[lo : hi + 1] = True
    return table


def ideographs_apart(text: str) -> tuple[str, dict[int, int]]:
    """``text`` with its CJK ideographs taken out, and how often each occurred (code point -> count).

    Each run of ideographs becomes one space. With ``handle_chinese_chars``
    every ideograph is a word of its own, whatever surrounds it: the spaces
    put around it are starters, so NFD cannot reorder or join anything
    across them, and no later step removes a space. So the words of ``text``
    are the words of what this returns, plus one word per ideograph; a
    counter can take the ideographs from here in one numpy pass rather than
    as hundreds of thousands of one-character strings.
    """
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    table = _ideograph_table()
    mask = table[np.minimum(codes, len(table) - 1)]
    if not mask.any():
        return text, {}
    found = codes[mask]
    low = int(found.min())
    counts = np.bincount(found - low)
    seen = np.flatnonzero(counts)
    tally = dict(zip((seen + low).tolist(), counts[seen].tolist()))
    keep = ~mask
    keep[0] = True
    keep[1:] |= ~mask[:-1]  # the first ideograph of each run stays, as a space
    rest = np.where(mask, np.uint32(32), codes)[keep]
    return rest.astype("<u4").tobytes().decode("utf-32-le", "surrogatepass"), tally


def normalize(
    text: str,
    *,
    lowercase: bool = True,
    strip_accents: bool | None = None,
    handle_chinese_chars: bool = True,
    clean_text: bool = True,
) -> str:
    """BERT's normalizer (HF ``BertNormalizer``), applied in HF's order.

    1. ``clean_text``: delete NUL, U+FFFD and control/format/private-use
       characters; turn every whitespace character (tab, newline, NBSP,
       ideographic space, ...) into a plain space.
    2. ``handle_chinese_chars``: put spaces around each CJK ideograph, so the
       pre-tokenizer makes every ideograph a word of its own.
    3. ``strip_accents``: decompose (NFD) and drop nonspacing marks:
       ``"Café"`` -> ``"Cafe"``. ``None`` means "same as ``lowercase``", as in
       HF and in the original BERT uncased models.
    4. ``lowercase``: character by character (``"ΟΔΟΣ"`` -> ``"οδοσ"``, without
       the final-sigma rule of ``str.lower``).
    """
    if strip_accents is None:
        strip_accents = lowercase
    return run_tables(text, char_tables(clean_text, handle_chinese_chars, strip_accents, lowercase))


@dataclass(frozen=True)
class BertNormalizer:
    """`normalize` with fixed options, as a pipeline stage (HF ``normalizers.BertNormalizer``).

    ``strip_accents=None`` means "same as ``lowercase``", as in HF.
    """

    lowercase: bool = True
    strip_accents: bool | None = None
    handle_chinese_chars: bool = True
    clean_text: bool = True

    def __post_init__(self) -> None:
        if self.strip_accents is None:
            object.__setattr__(self, "strip_accents", self.lowercase)

    @property
    def flags(self) -> tuple[bool, bool, bool, bool]:
        """``(clean_text, handle_chinese_chars, strip_accents, lowercase)``, `char_tables`' order."""
        return (self.clean_text, self.handle_chinese_chars, bool(self.strip_accents), self.lowercase)

    def normalize(self, text: str) -> str:
        return run_tables(text, char_tables(*self.flags))

    def to_hf(self):
        """The same normalizer as a Hugging Face ``tokenizers`` component."""
        from tokenizers import normalizers

        return normalizers.BertNormalizer(
            clean_text=self.clean_text,
            handle_chinese_chars=self.handle_chinese_chars,
            strip_accents=self.strip_accents,
            lowercase=self.lowercase,
        )


# --------------------------------------------------------------------------
# Character tables
# --------------------------------------------------------------------------

ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")

# The Unicode White_Space property (what Rust's char::is_whitespace tests).
# str.isspace() would add U+001C..U+001F, which HF treats as ordinary characters.
WHITE_SPACE = frozenset(chr(c) for c in _ranges("0009-000D 0020 0085 00A0 1680 2000-200A 2028-2029 202F 205F 3000"))

# BERT's "Chinese character" blocks: CJK Unified Ideographs and Extensions A-F,
# CJK Compatibility Ideographs and their Supplement. Google's BERT starts the
# Extension E range at 0x2B820; HF writes 0x2B920, so U+2B820..U+2B91F are not
# split by HF. We follow HF.
CJK_RANGES = (
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0x2F800, 0x2FA1F),
)

# Where HF tokenizers 0.23 (Rust tables) and Python 3.11 (Unicode 14.0) disagree.
# Measured by running HF's BertNormalizer / BertPreTokenizer on every code point;
# tests/normalizers/test_bert.py and tests/pre_tokenizers/test_bert.py repeat the measurement.
# Punctuation (P*) in Unicode 14 that HF does not isolate:
HF_NOT_PUNCT = _ranges(
    "061D 09FD 0A76 0C77 0C84 1B7D-1B7E 2E43-2E4F 2E52-2E5D 10EAD 10F55-10F59 10F86-10F89 "
    "1144B-1144F 1145A-1145B 1145D 11660-1166C 116B9 1183B 11944-11946 119E2 11A3F-11A46 "
    "11A9A-11A9C 11A9E-11AA2 11C41-11C45 11C70-11C71 11EF7-11EF8 11FFF 12FF1-12FF2 "
    "16E97-16E9A 16FE2 1E95E-1E95F"
)
# Not punctuation in Unicode 14 (reclassified as So / Mn) but still punctuation for HF:
HF_EXTRA_PUNCT = _ranges("166D 111C9")
# Format characters (Cf) in Unicode 14 that HF's clean-up keeps:
HF_NOT_FORMAT = _ranges("0890-0891 08E2 110CD 13430-13438")
# Nonspacing marks (Mn) in Unicode 14 that HF's accent stripping keeps:
HF_NOT_MN = _ranges(
    "07FD 0898-089F 08CA-08E1 09FE 0AFA-0AFF 0B55 0C04 0C3C 0D00 0D3B-0D3C 0D81 0EBA 180F "
    "1885-1886 1ABF-1ACE 1DF6-1DFB A82C A8C5 A8FF A9BD 10D24-10D27 10EAB-10EAC 10F46-10F50 "
    "10F82-10F85 11070 11073-11074 110C2 111C9 111CF 1123E 1133B 11438-1143F 11442-11444 "
    "11446 1145E 1182F-11837 11839-1183A 1193B-1193C 1193E 11943 119D4-119D7 119DA-119DB "
    "119E0 11A01-11A0A 11A33-11A38 11A3B-11A3E 11A47 11A51-11A56 11A59-11A5B 11A8A-11A96 "
    "11A98-11A99 11C30-11C36 11C38-11C3D 11C3F 11C92-11CA7 11CAA-11CB0 11CB2-11CB3 "
    "11CB5-11CB6 11D31-11D36 11D3A 11D3C-11D3D 11D3F-11D45 11D47 11D90-11D91 11D95 11D97 "
    "11EF3-11EF4 16F4F 16FE4 1CF00-1CF2D 1CF30-1CF46 1E000-1E006 1E008-1E018 1E01B-1E021 "
    "1E023-1E024 1E026-1E02A 1E130-1E136 1E2AE 1E2EC-1E2EF 1E944-1E94A"
)
# A spacing mark (Mc) in Unicode 14 that HF strips as a nonspacing mark:
HF_EXTRA_MN = _ranges("1734")
# Decomposed by Python's NFD (U+11935 U+11930) but left whole by HF's:
HF_NO_DECOMPOSE = "\U00011938"
# Unicode 16 case pairs that HF lowercases and Python 3.11 does not know:
HF_EXTRA_LOWER: dict[int, str] = {
    0x1C89: "\u1c8a",
    0xA7CB: "\u0264",
    0xA7CC: "\ua7cd",
    0xA7CE: "\ua7cf",
    0xA7D2: "\ua7d3",
    0xA7D4: "\ua7d5",
    0xA7DA: "\ua7db",
    0xA7DC: "\u019b",
    **{cp: chr(cp + 0x20) for cp in range(0x10D50, 0x10D66)},
    **{cp: chr(cp + 0x1B) for cp in range(0x16EA0, 0x16EB9)},
}

