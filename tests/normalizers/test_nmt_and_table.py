"""sentencepiece's ``nmt_nfkc``: written out as rules (`toklab.normalizers.nmt`) versus its compiled
table (`toklab.normalizers.precompiled.Charsmap`) and the real library, on every code point and the corpus."""

from __future__ import annotations

import unicodedata
from dataclasses import replace

import pytest

from toklab.data import corpus
from toklab.normalizers import Charsmap
from toklab.normalizers.nmt import NMT_DELETE, NMT_KEEP, NMT_TO_SPACE, nmt_nfkc
from toklab.sentencepiece import SentencePieceTokenizer
from toklab.sentencepiece.model_file import iter_fields

spm = pytest.importorskip("sentencepiece")


def test_nmt_rules_are_the_difference_of_the_two_tables():
    """The NMT extras, read off sentencepiece's own rule tables (decompiled)."""

    def table(name):
        ref = spm.SentencePieceNormalizer(rule_name=name, add_dummy_prefix=False, remove_extra_whitespaces=False,
                                          escape_whitespaces=False)
        return dict(ref.Decompile())

    nfkc, nmt = table("nfkc"), table("nmt_nfkc")
    diff = {k for k in nfkc.keys() | nmt.keys() if nfkc.get(k) != nmt.get(k)}
    assert diff == NMT_DELETE | NMT_TO_SPACE | NMT_KEEP
    assert all(nmt[k] == "" for k in NMT_DELETE)
    assert all(nmt[k] == " " for k in NMT_TO_SPACE)
    assert all(k not in nmt and nfkc[k] != k for k in NMT_KEEP)
    assert "\x00" not in nmt and "\u200d" not in nmt  # NUL and the emoji joiner are untouched


def test_every_code_point_normalizes_like_sentencepiece():
    """All 1,112,063 scalar values, one at a time (joined by NUL, which nothing rewrites or composes with)."""
    ref = spm.SentencePieceNormalizer(rule_name="nmt_nfkc", add_dummy_prefix=False, remove_extra_whitespaces=False,
                                      escape_whitespaces=False)
    spec = {n: v for n, _w, v in iter_fields(ref.serialized_normalizer_spec())}
    cps = [c for c in range(1, 0x110000) if not 0xD800 <= c < 0xE000]
    joined = "\x00".join(map(chr, cps))
    expected = ref.Normalize(joined).split("\x00")
    assert len(expected) == len(cps)
    # The compiled table, read by our Charsmap: identical everywhere.
    assert Charsmap(spec[2]).normalize(joined).split("\x00") == expected
    # The rules (Python NFKC + NMT extras): different only where Python's Unicode
    # database (14.0 in Python 3.11) has no character yet; sentencepiece's table
    # was built from a newer Unicode version.
    ours = nmt_nfkc(joined).split("\x00")
    differ = [cp for cp, a, b in zip(cps, ours, expected) if a != b]
    assert all(unicodedata.category(chr(cp)) == "Cn" for cp in differ)
    if unicodedata.unidata_version == "14.0.0":
        assert len(differ) == 99  # e.g. U+1CCD6..U+1CCF9 outlined letters/digits, U+1E030.. Cyrillic modifiers


KNOWN_DIFFERENCES = {
    # text: (sentencepiece's table, NFKC by rule). The table rewrites greedily
    # and has no entry for these sequences; NFKC reorders and composes.
    "ă\u0301": ("ă\u0301", "\u1eaf"),  # precomposed letter + mark: NFKC composes to ắ
    "ư\u0323": ("ư\u0323", "\u1ef1"),  # ự
    "가\u11a8": ("가\u11a8", "각"),  # Hangul syllable + trailing jamo
    "e\u0301\u0323": ("\u00e9\u0323", "\u1eb9\u0301"),  # marks not put in canonical order
    "q\u0307\u0323": ("q\u0307\u0323", "q\u0323\u0307"),
    "د\u0651\u064e": ("د\u0651\u064e", "د\u064e\u0651"),  # Arabic shadda + fatha: reordered by NFKC
}


def test_known_differences_rules_vs_table():
    ref = spm.SentencePieceNormalizer(rule_name="nmt_nfkc", add_dummy_prefix=False, remove_extra_whitespaces=False,
                                      escape_whitespaces=False)
    spec = {n: v for n, _w, v in iter_fields(ref.serialized_normalizer_spec())}
    table = Charsmap(spec[2])
    for text, (sp_out, rule_out) in KNOWN_DIFFERENCES.items():
        assert ref.Normalize(text) == table.normalize(text) == sp_out
        assert nmt_nfkc(text) == rule_out == unicodedata.normalize("NFKC", text)
        assert unicodedata.normalize("NFC", sp_out) == rule_out  # same text up to canonical equivalence
    # The rule order matters once: NFKC first, then deletion. A deleted control
    # still blocks composition, as in sentencepiece.
    assert nmt_nfkc("e\x01\u0301") == "e\u0301" == ref.Normalize("e\x01\u0301")


def test_rule_based_nmt_nfkc_on_the_corpus(sp_model):
    """Without the compiled table: the mismatch rate on the whole corpus, and what the mismatches are."""
    sp = sp_model(model_type="unigram", byte_fallback=True)
    exact = SentencePieceTokenizer.from_sentencepiece(sp)
    by_rule = SentencePieceTokenizer.from_sentencepiece(sp, replace(exact.config, charsmap=None))
    total = 0
    differing = []
    for name in corpus.CORPUS:
        lines = corpus.load(name).split("\n")
        total += len(lines)
        differing += [ln for ln in lines if by_rule.normalize(ln) != sp.normalize(ln)]
    assert total == 55_694
    # 6 lines of 55,694, all in the mixed file (Vietnamese ă+◌́, Arabic shadda
    # followed by a vowel mark): sentencepiece leaves them uncomposed or
    # unordered, NFKC does not. Canonically equivalent in every case.
    assert len(differing) == 6
    assert all(unicodedata.normalize("NFC", sp.normalize(ln)) == by_rule.normalize(ln) for ln in differing)
    assert all(sp.encode(ln) != by_rule.encode(ln) for ln in differing)  # and the IDs differ too
    # With the table, the whole corpus matches, newlines included.
    for name in corpus.CORPUS:
        text = corpus.load(name)
        assert exact.normalize(text) == sp.normalize(text)
