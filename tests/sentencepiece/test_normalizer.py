"""sentencepiece's front end (`toklab.normalizers.spm`): rule or table, dummy prefix, whitespace, ``▁``."""

from __future__ import annotations

import random
import unicodedata

import pytest

from toklab.base.pieces import SPACE
from toklab.sentencepiece.model_file import iter_fields

from .helpers import TRICKY, tiny_tokenizer

spm = pytest.importorskip("sentencepiece")


@pytest.mark.parametrize("rule", ["identity", "nfkc", "nmt_nfkc"])
def test_normalizer_flags_equal_sentencepiece(rule):
    """Every combination of dummy prefix, whitespace removal and escaping, rule and compiled table."""
    rng = random.Random(7)
    texts = ["", " ", "   ", "a", " a", "a ", "  a  b ", "a\t\tb", SPACE, "a" + SPACE, " " + SPACE + "a",
             "a " + SPACE + " b", "\x01 a", "¨a", "a ¨b", "a\u3000\u3000b", "\u200bq", "x" + SPACE * 2 + "y"]
    texts += ["".join(rng.choice(TRICKY + list("ab  ")) for _ in range(rng.randint(1, 10))) for _ in range(400)]
    for dummy in (True, False):
        for rew in (True, False):
            for escape in (True, False):
                ref = spm.SentencePieceNormalizer(rule_name=rule, add_dummy_prefix=dummy,
                                                  remove_extra_whitespaces=rew, escape_whitespaces=escape)
                spec = {n: v for n, _w, v in iter_fields(ref.serialized_normalizer_spec())}
                flags = dict(normalization=rule, add_dummy_prefix=dummy, remove_extra_whitespaces=rew,
                             escape_whitespaces=escape)
                table = tiny_tokenizer(charsmap=spec.get(2), **flags)
                by_rule = tiny_tokenizer(**flags)
                for t in texts:
                    expected = ref.Normalize(t)
                    assert table.normalize(t) == expected, (t, flags)
                    if rule == "identity" or unicodedata.normalize("NFC", expected) == expected:
                        assert by_rule.normalize(t) == expected, (t, flags)


def test_whitespace_rules():
    tok = tiny_tokenizer(normalization="identity")
    assert tok.normalize("  a  b ") == SPACE + "a" + SPACE + "b"  # collapsed, trimmed, dummy prefix
    assert tok.normalize("   ") == "" and tok.normalize("") == ""  # no dummy prefix for blank input
    assert tok.normalize("a\tb") == SPACE + "a\tb"  # only U+0020 counts as whitespace under identity
    keep = tiny_tokenizer(normalization="identity", remove_extra_whitespaces=False)
    assert keep.normalize("  a ") == SPACE * 3 + "a" + SPACE
    assert keep.normalize("") == ""
    nmt = tiny_tokenizer(normalization="nmt_nfkc")
    assert nmt.normalize("a\t\u3000\u00a0b") == SPACE + "a" + SPACE + "b"  # nmt_nfkc makes them spaces first


def test_literal_meta_symbol():
    """A literal ▁ in the input: kept as a character by identity, turned into a space by nmt_nfkc.

    Either way it decodes as a space: the escaping is not injective.
    """
    ident = tiny_tokenizer(normalization="identity", remove_extra_whitespaces=False, add_dummy_prefix=False)
    assert ident.normalize("a" + SPACE + "b") == ident.normalize("a b") == "a" + SPACE + "b"
    assert ident.decode(ident.encode("a" + SPACE + "b")) == "a b"
    collapse = tiny_tokenizer(normalization="identity")
    # identity + whitespace removal: a literal ▁ is not collapsed with spaces, but a trailing one is trimmed
    assert collapse.normalize("a " + SPACE + " b") == SPACE + "a" + SPACE * 3 + "b"
    assert collapse.normalize("a" + SPACE) == SPACE + "a"
    nmt = tiny_tokenizer(normalization="nmt_nfkc")
    assert nmt.normalize("a " + SPACE + " b") == SPACE + "a" + SPACE + "b"  # ▁ -> " ", then collapsed
