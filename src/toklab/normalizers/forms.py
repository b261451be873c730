"""Unicode's four normal forms: as a pipeline stage, and with an alignment map back to the original text.

`UnicodeNormalizer` is the stage (HF ``normalizers.NFC`` and friends). A tokenizer that
normalizes its input (NFKC, say) hands out token offsets in the *normalized* text, but
the reader, the highlighter and the NER label all live in the *original* text.
`normalize_with_offsets` keeps the bridge between the two; the plain
`unicodedata.normalize` is its reference (the result must be equal, and the function
checks that it is).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["NORMAL_FORMS", "UnicodeNormalizer", "normalize_with_offsets", "primary_composites"]

#: The four Unicode normalization forms. NFKC/NFKD are lossy: ``"Ａ①"`` becomes
#: ``"A1"`` and nothing downstream can undo it.
NORMAL_FORMS: tuple[str, ...] = ("NFC", "NFD", "NFKC", "NFKD")

# Hangul syllables compose and decompose by arithmetic, not by table
# (Unicode §3.12): S = SBase + (L - LBase) * 588 + (V - VBase) * 28 + (T - TBase).
_S_BASE, _L_BASE, _V_BASE, _T_BASE = 0xAC00, 0x1100, 0x1161, 0x11A7
_L_COUNT, _V_COUNT, _T_COUNT = 19, 21, 28
_S_COUNT = _L_COUNT * _V_COUNT * _T_COUNT


@lru_cache(maxsize=None)
def primary_composites() -> dict[tuple[str, str], str]:
    """``(first, second) -> composite`` for every canonical pair that NFC recomposes.

    Read off `unicodedata` itself, so it matches the Unicode version Python
    ships: a character with a two-character canonical decomposition is a
    *primary composite* unless it is excluded from composition, which shows
    as NFC not giving the character back (``NFC(c) != c``). Hangul syllables
    are not listed: `_compose` handles them arithmetically. One scan of all
    code points (a fraction of a second), cached.
    """
    table: dict[tuple[str, str], str] = {}
    for cp in range(0x110000):
        ch = chr(cp)
        decomposition = unicodedata.decomposition(ch)
        if not decomposition or decomposition.startswith("<"):
            continue  # none, or a compatibility mapping (never recomposed)
        parts = decomposition.split()
        if len(parts) != 2 or unicodedata.normalize("NFC", ch) != ch:
            continue  # a singleton, or excluded from composition
        table[chr(int(parts[0], 16)), chr(int(parts[1], 16))] = ch
    return table


def _compose(first: str, second: str) -> str | None:
    """The primary composite of ``first + second``, or None."""
    a, b = ord(first), ord(second)
    if _L_BASE <= a < _L_BASE + _L_COUNT and _V_BASE <= b < _V_BASE + _V_COUNT:
        return chr(_S_BASE + ((a - _L_BASE) * _V_COUNT + (b - _V_BASE)) * _T_COUNT)
    if (
        _S_BASE <= a < _S_BASE + _S_COUNT
        and (a - _S_BASE) % _T_COUNT == 0
        and _T_BASE < b < _T_BASE + _T_COUNT
    ):
        return chr(a + b - _T_BASE)
    return primary_composites().get((first, second))


def normalize_with_offsets(text: str, form: str) -> tuple[str, list[tuple[int, int]]]:
    """Normalize ``text`` and say where in ``text`` each normalized character came from.

    Returns ``(normalized, offsets)``: ``normalized`` equals
    ``unicodedata.normalize(form, text)``, and ``offsets[i] = (start, end)``
    is the span of original code points that produced ``normalized[i]``.
    A tokenizer reports offsets in the normalized text; this alignment map is
    what turns them back into offsets a user of the original text can use.

    The map is exact because it is built by running the normalization
    algorithm itself (UAX #15) with a source index attached to every
    character, rather than by diffing strings afterwards:

    1. *decompose* each original character on its own (NFD or NFKD), so
       every piece knows the one character it came from (``ﬃ`` -> ``f f i``,
       all three from position 0);
    2. *reorder* runs of combining marks by canonical combining class (a
       stable sort; the marks carry their sources with them);
    3. for NFC/NFKC, *compose*: a character absorbed into a composite hands
       its source to it, and the composite's span is the smallest span that
       covers all its sources (``e`` + U+0301 -> ``é``, span ``(0, 2)``).

    So the one-to-many case (NFKC ``ﬃ`` -> ``ffi``: three
    characters, each ``(0, 1)``) and the many-to-one case (NFC ``e`` + U+0301
    -> ``é``: ``(0, 2)``) both come out right. The guarantee: the
    decomposition of ``normalized[i]`` is part of the decomposition of
    ``text[start:end]``; where no mark moves between two original characters
    (almost all real text), simply ``normalized[i] in
    unicodedata.normalize(form, text[start:end])``. Normalization never
    deletes a character, so every original position lies in some span.
    (Hugging Face ``tokenizers`` gives a composed character only the span of
    its *first* source.)
    """
    if form not in NORMAL_FORMS:
        raise ValueError(f"form must be one of {NORMAL_FORMS}, got {form!r}")
    if unicodedata.is_normalized(form, text):
        return text, [(i, i + 1) for i in range(len(text))]

    decompose = "NFKD" if form.startswith("NFK") else "NFD"
    # Step 1: full decomposition of each character, tagged with its position.
    chars: list[str] = []
    sources: list[int] = []
    for i, ch in enumerate(text):
        if ch < "\u00c0":  # nothing below U+00C0 decomposes canonically...
            if ch < "\u00a0" or decompose == "NFD":  # ...or, below U+00A0, at all
                chars.append(ch)
                sources.append(i)
                continue
        for piece in unicodedata.normalize(decompose, ch):
            chars.append(piece)
            sources.append(i)

    # Step 2: canonical ordering - sort each run of non-starters by class, stably.
    classes = [unicodedata.combining(c) for c in chars]
    k = 0
    while k < len(chars):
        if classes[k] == 0:
            k += 1
            continue
        end = k
        while end < len(chars) and classes[end] != 0:
            end += 1
        if end - k > 1:
            run = sorted(range(k, end), key=classes.__getitem__)
            chars[k:end] = [chars[j] for j in run]
            sources[k:end] = [sources[j] for j in run]
            classes[k:end] = [classes[j] for j in run]
        k = end

    if form in ("NFD", "NFKD"):
        normalized = "".join(chars)
        offsets = [(s, s + 1) for s in sources]
    else:
        # Step 3: canonical composition. A character can join the last
        # starter if nothing between them blocks it: the previous kept
        # character is the starter itself, or has a lower combining class.
        out: list[str] = []
        spans: list[list[int]] = []  # [start, end] per output character
        starter = -1  # index into out of the last starter, -1 before any
        last_class = -1
        for ch, src, cc in zip(chars, sources, classes):
            if starter >= 0 and (last_class == 0 or (0 < last_class < cc)):
                composite = _compose(out[starter], ch)
                if composite is not None:
                    out[starter] = composite
                    span = spans[starter]
                    span[0], span[1] = min(span[0], src), max(span[1], src + 1)
                    continue
            if cc == 0:
                starter = len(out)
            last_class = cc if starter >= 0 else 256
            out.append(ch)
            spans.append([src, src + 1])
        normalized = "".join(out)
        offsets = [(a, b) for a, b in spans]

    expected = unicodedata.normalize(form, text)
    if normalized != expected:  # would be a bug here, not a property of the input
        raise RuntimeError(
            "normalize_with_offsets disagrees with "
            f"unicodedata.normalize({form!r}, ...) "
            f"on {text!r}: {normalized!r} != {expected!r}; please report this input"
        )
    return normalized, offsets


@dataclass(frozen=True)
class UnicodeNormalizer:
    """One normal form (``"NFC"``, ``"NFD"``, ``"NFKC"`` or ``"NFKD"``), applied to the whole text."""

    form: str

    def __post_init__(self) -> None:
        if self.form not in NORMAL_FORMS:
            raise ValueError(f"normalizer must be one of the normal forms {NORMAL_FORMS}, got {self.form!r}")

    def normalize(self, text: str) -> str:
        return unicodedata.normalize(self.form, text)

    def normalize_with_offsets(self, text: str) -> tuple[str, list[tuple[int, int]]]:
        """The normalized text and, per output character, its span in ``text`` (see `normalize_with_offsets`)."""
        return normalize_with_offsets(text, self.form)

    def to_hf(self):
        """The same normalizer as a Hugging Face ``tokenizers`` component."""
        from tokenizers import normalizers

        return getattr(normalizers, self.form)()
