"""Normalization with offsets (`toklab.normalizers.forms`).

`normalize_with_offsets` is checked three ways: against `unicodedata.normalize`
(the normalized string must be identical, for every code point that any form
changes and for arbitrary text), against its own contract (slicing the
original by a span and normalizing it reproduces the character), and against
the alignments Hugging Face ``tokenizers`` computes for its normalizers, which
it exposes through ``Encoding.offsets``.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from functools import lru_cache

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toklab.normalizers import forms as tn

FORMS = tn.NORMAL_FORMS


# ---------------------------------------------------------------------------
# worked examples (the ones the book uses)
# ---------------------------------------------------------------------------


def test_nfkc_ligature_expands_one_to_three():
    assert tn.normalize_with_offsets("ﬃ", "NFKC") == ("ffi", [(0, 1)] * 3)
    assert tn.normalize_with_offsets("xﬃy", "NFKD") == ("xffiy", [(0, 1), (1, 2), (1, 2), (1, 2), (2, 3)])


def test_nfkc_fullwidth_and_circled_keep_length():
    assert tn.normalize_with_offsets("Ａ①", "NFKC") == ("A1", [(0, 1), (1, 2)])


def test_nfc_composes_two_to_one():
    assert tn.normalize_with_offsets("e\u0301", "NFC") == ("\u00e9", [(0, 2)])
    assert tn.normalize_with_offsets("Cafe\u0301!", "NFKC") == ("Caf\u00e9!", [(0, 1), (1, 2), (2, 3), (3, 5), (5, 6)])


def test_nfd_decomposes_one_to_two():
    assert tn.normalize_with_offsets("\u00e9", "NFD") == ("e\u0301", [(0, 1), (0, 1)])


def test_hangul_arithmetic_both_ways():
    # 한 = U+D55C = L U+1112 + V U+1161 + T U+11AB
    assert tn.normalize_with_offsets("한", "NFD") == ("\u1112\u1161\u11ab", [(0, 1)] * 3)
    assert tn.normalize_with_offsets("\u1112\u1161\u11ab", "NFC") == ("한", [(0, 3)])
    # an LV syllable followed by a T jamo composes further
    assert tn.normalize_with_offsets("\uac00\u11a8", "NFC") == ("\uac01", [(0, 2)])


def test_reordering_keeps_each_mark_with_its_source():
    # a + acute (230) + dot below (220): canonical order puts the dot first.
    text = "a\u0301\u0323"
    normalized, offsets = tn.normalize_with_offsets(text, "NFD")
    assert normalized == "a\u0323\u0301"
    assert offsets == [(0, 1), (2, 3), (1, 2)]
    # NFC: a + dot below compose to U+1EA1; the acute stays separate. The
    # composite's sources are positions 0 and 2, so its span is their hull.
    normalized, offsets = tn.normalize_with_offsets(text, "NFC")
    assert normalized == "\u1ea1\u0301"
    assert offsets == [(0, 3), (1, 2)]


def test_halfwidth_voiced_mark_composes_under_nfkc_only():
    text = "か\uff9e"  # HALFWIDTH KATAKANA VOICED SOUND MARK -> U+3099 under NFKD
    assert tn.normalize_with_offsets(text, "NFC") == (text, [(0, 1), (1, 2)])
    assert tn.normalize_with_offsets(text, "NFKC") == ("が", [(0, 2)])
    assert tn.normalize_with_offsets(text, "NFKD") == ("か\u3099", [(0, 1), (1, 2)])


def test_composition_blocked_by_a_starter_or_an_equal_class():
    # e, acute, acute: only the first acute can reach the e.
    assert tn.normalize_with_offsets("e\u0301\u0301", "NFC") == ("\u00e9\u0301", [(0, 2), (2, 3)])
    # a starter in between blocks: e, x, acute stays as it is
    assert tn.normalize_with_offsets("ex\u0301", "NFC") == ("ex\u0301", [(0, 1), (1, 2), (2, 3)])


def test_unknown_form_is_rejected():
    with pytest.raises(ValueError, match="NFKC"):
        tn.normalize_with_offsets("x", "nfkc")


def test_empty_and_already_normalized():
    for form in FORMS:
        assert tn.normalize_with_offsets("", form) == ("", [])
        assert tn.normalize_with_offsets("plain", form) == ("plain", [(i, i + 1) for i in range(5)])


# ---------------------------------------------------------------------------
# exhaustive: every code point that any normalization form touches
# ---------------------------------------------------------------------------


@lru_cache(maxsize=None)
def _changing_code_points() -> str:
    """Every character with a decomposition or a non-zero combining class, plus all of Hangul."""
    chars = []
    for cp in range(0x110000):
        ch = chr(cp)
        if unicodedata.decomposition(ch) or unicodedata.combining(ch) or 0xAC00 <= cp <= 0xD7A3:
            chars.append(ch)
    return "".join(chars)


@pytest.mark.parametrize("form", FORMS)
def test_every_changing_code_point_alone(form):
    chars = _changing_code_points()
    assert len(chars) > 15_000
    for ch in chars:
        normalized, offsets = tn.normalize_with_offsets(ch, form)
        assert normalized == unicodedata.normalize(form, ch)
        assert offsets == [(0, 1)] * len(normalized), (form, ch)


@pytest.mark.parametrize("form", FORMS)
def test_every_changing_code_point_after_a_base_letter(form):
    # Pairs exercise composition (base + mark), reordering (mark + mark) and
    # expansions next to each other; the whole run is one call.
    chars = _changing_code_points()
    for base in ("e", "\u1100", "\uac00", "\u0301"):
        text = "".join(base + ch for ch in chars)
        normalized, offsets = tn.normalize_with_offsets(text, form)
        assert normalized == unicodedata.normalize(form, text)
        _check_contract(text, form, normalized, offsets)


def test_every_primary_composite_from_its_two_halves():
    for (first, second), composite in tn.primary_composites().items():
        text = first + second
        expected = unicodedata.normalize("NFC", text)
        normalized, offsets = tn.normalize_with_offsets(text, "NFC")
        assert normalized == expected
        if expected == composite:
            assert offsets == [(0, 2)]


# ---------------------------------------------------------------------------
# properties on arbitrary text
# ---------------------------------------------------------------------------


def _is_submultiset(small: str, big: str) -> bool:
    return not (Counter(small) - Counter(big))


def _check_contract(text, form, normalized, offsets, *, strict=False):
    """The span of each normalized character holds everything it was made of.

    In general (marks may be reordered across original characters) the
    decomposition of the character is part of the decomposition of its span.
    With ``strict``, for text where nothing moves between characters:
    normalizing the span of the original gives the character back.
    """
    assert len(offsets) == len(normalized)
    decompose = "NFKD" if form.startswith("NFK") else "NFD"
    covered = set()
    for ch, (start, end) in zip(normalized, offsets):
        assert 0 <= start < end <= len(text)
        source = text[start:end]
        assert _is_submultiset(
            unicodedata.normalize(decompose, ch), unicodedata.normalize(decompose, source)
        ), (text, form, ch, start, end)
        if strict:
            assert ch in unicodedata.normalize(form, source), (text, form, ch, start, end)
        covered.update(range(start, end))
    assert covered == set(range(len(text))), "every original character must be covered"
    if form in ("NFD", "NFKD"):
        # decomposition is one-to-many: every output character has one source
        assert all(end - start == 1 for start, end in offsets)


# Combining marks and jamo are over-represented so that composition and
# reordering actually happen in generated text.
_INTERESTING = (
    "e\u0301\u0323\u0302\u0308\u0327aAo\u1100\u1161\u11a8\uac00ﬃＡ①½²ǅか\uff9e\u3099"
    "\u0344\u0f73\u0f81\u1e0b\u212b\u2126\ud7a3\u200d\U0001f468\ufe0f"
)
_text = st.text(
    st.one_of(st.characters(), st.sampled_from(_INTERESTING)),
    max_size=40,
)


@pytest.mark.parametrize("form", FORMS)
@given(text=_text)
def test_matches_unicodedata_and_contract(form, text):
    normalized, offsets = tn.normalize_with_offsets(text, form)
    assert normalized == unicodedata.normalize(form, text)
    _check_contract(text, form, normalized, offsets)


@given(text=_text)
def test_normalizing_twice_maps_back_through_both_maps(text):
    # NFKC is idempotent, so a second pass is the identity map.
    once, _ = tn.normalize_with_offsets(text, "NFKC")
    twice, offsets = tn.normalize_with_offsets(once, "NFKC")
    assert twice == once
    assert offsets == [(i, i + 1) for i in range(len(once))]


# ---------------------------------------------------------------------------
# Hugging Face tokenizers: the same normalizers, with alignments
# ---------------------------------------------------------------------------

tokenizers = pytest.importorskip("tokenizers")


@lru_cache(maxsize=None)
def _hf_per_char(form: str):
    """A tokenizer whose tokens are single normalized characters, so its offsets are the alignment."""
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

    tok = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.normalizer = getattr(normalizers, form)()
    # Oniguruma's (?m) is "dot matches newline" (Ruby syntax)
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"(?m)."), behavior="isolated")
    return tok


def _hf_alignment(text: str, form: str) -> tuple[str, list[tuple[int, int]]]:
    tok = _hf_per_char(form)
    normalized = tok.normalizer.normalize_str(text)
    offsets = [tuple(o) for o in tok.encode(text).offsets]
    assert len(offsets) == len(normalized)
    return normalized, offsets


@lru_cache(maxsize=None)
def _same_tables(ch: str) -> bool:
    """True when HF and `unicodedata` normalize ``ch`` alike under every form.

    They do not always: HF's tables are older than Python 3.11's Unicode
    14.0, so ~150 characters added since Unicode 12 normalize differently
    (see `test_hf_tables_are_older_than_pythons`). Alignments are only
    comparable where the normalized strings agree.
    """
    if unicodedata.category(ch) in ("Cs", "Cn"):
        return False
    return all(_hf_per_char(f).normalizer.normalize_str(ch) == unicodedata.normalize(f, ch) for f in FORMS)


def test_hf_tables_are_older_than_pythons():
    # U+32FF SQUARE ERA NAME REIWA (Unicode 12.1, 2019) is <square> 令和.
    assert unicodedata.normalize("NFKC", "㋿") == "令和"
    assert _hf_per_char("NFKC").normalizer.normalize_str("㋿") == "㋿"
    assert not _same_tables("㋿")
    assert _same_tables("ﬃ") and _same_tables("é")


@lru_cache(maxsize=None)
def _backward_combining() -> frozenset[str]:
    seconds = {second for _, second in tn.primary_composites()}
    seconds.update(chr(c) for c in range(0x1161, 0x1176))  # Hangul V
    seconds.update(chr(c) for c in range(0x11A8, 0x11C3))  # Hangul T
    return frozenset(seconds)


def _isolated(ch: str) -> bool:
    """True when ``ch`` neither composes with nor reorders around its neighbours under any form.

    On text made only of such characters each original character is
    normalized on its own, so every alignment is unambiguous.
    """
    if not _same_tables(ch) or ch in _backward_combining():
        return False
    for form in ("NFD", "NFKD"):
        pieces = unicodedata.normalize(form, ch)
        if unicodedata.combining(pieces[0]) or pieces[0] in _backward_combining():
            return False
    return unicodedata.combining(ch) == 0


_isolated_text = st.text(
    st.one_of(
        st.characters(blacklist_categories=("Cs", "Cn")),
        st.sampled_from("ﬃＡ①½²ǅ한é\u212b\u2126\u3371\U0001d400\ufdfa"),
    ).filter(_isolated),
    max_size=30,
)


@pytest.mark.parametrize("form", FORMS)
@given(text=_isolated_text)
def test_equals_hf_alignment_without_composition(form, text):
    ours = tn.normalize_with_offsets(text, form)
    assert ours == _hf_alignment(text, form)
    _check_contract(text, form, *ours, strict=True)


@pytest.mark.parametrize("form", FORMS)
def test_equals_hf_on_the_book_examples(form):
    for text in ("ﬃ", "Ａ①", "Straße ﬁnal ½", "한국어", "\u00e9t\u00e9", "\u3371 \U0001d400\U0001d401"):
        assert tn.normalize_with_offsets(text, form) == _hf_alignment(text, form)


def test_hf_gives_a_composed_character_only_its_first_source():
    # Where NFC composes, Hugging Face aligns the composite to its first source
    # and leaves the absorbed mark without any normalized character. Slicing
    # the original by that span loses the accent; our span reproduces it.
    text = "Cafe\u0301!"
    hf_norm, hf_offsets = _hf_alignment(text, "NFC")
    norm, offsets = tn.normalize_with_offsets(text, "NFC")
    assert hf_norm == norm == "Caf\u00e9!"
    assert hf_offsets[3] == (3, 4)
    assert offsets[3] == (3, 5)
    assert unicodedata.normalize("NFC", text[3:4]) == "e"
    assert unicodedata.normalize("NFC", text[3:5]) == "\u00e9"
    # the other characters agree
    assert [o for i, o in enumerate(hf_offsets) if i != 3] == [o for i, o in enumerate(offsets) if i != 3]


def _no_reordering(text: str) -> bool:
    """True when decomposing ``text`` whole equals decomposing it character by character."""
    if not all(_same_tables(c) for c in text):
        return False
    return all(
        unicodedata.normalize(f, text) == "".join(unicodedata.normalize(f, c) for c in text)
        for f in ("NFD", "NFKD")
    )


@pytest.mark.parametrize("form", FORMS)
@given(text=_text.filter(_no_reordering))
def test_hf_span_lies_inside_ours_when_no_mark_moves(form, text):
    # Where the two differ (compositions), HF's span is one of the sources we list.
    ours_norm, ours = tn.normalize_with_offsets(text, form)
    hf_norm, hf = _hf_alignment(text, form)
    assert hf_norm == ours_norm
    for (hs, he), (s, e) in zip(hf, ours):
        assert s <= hs and he <= e, (text, form, hf, ours)


def test_hf_aligns_reordered_marks_by_position():
    # Canonical ordering swaps dot below (class 220) in front of acute (230).
    # Hugging Face keeps the alignment positional, so it credits each mark to
    # where the *other* one was; ours follows the marks.
    text = "ạ́"
    assert _hf_alignment(text, "NFD") == ("ạ́", [(0, 1), (1, 2), (2, 3)])
    assert tn.normalize_with_offsets(text, "NFD") == ("ạ́", [(0, 1), (2, 3), (1, 2)])


# ---------------------------------------------------------------------------
# the reference: unicodedata.normalize, on real text
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("form", FORMS)
def test_normalize_with_offsets_equals_unicodedata_normalize_on_corpus(form, corpus_texts):
    """The mixed corpus file whole (many scripts, emoji, CRLF) and a slice of each other file.

    The span contract is checked on the first 20,000 characters of each (it is
    slow, and the code points that exercise it are covered exhaustively above).
    """
    texts = [corpus_texts["mixed"]] + [corpus_texts[name][:50_000] for name in ("en", "zh", "code")]
    for text in texts:
        normalized, offsets = tn.normalize_with_offsets(text, form)
        assert normalized == unicodedata.normalize(form, text)
        assert len(offsets) == len(normalized)
        head, head_offsets = tn.normalize_with_offsets(text[:20_000], form)
        _check_contract(text[:20_000], form, head, head_offsets)
