"""Compiled normalization tables written by toklab: read back by `Charsmap` and by sentencepiece, key for key."""

from __future__ import annotations

import random
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toklab.normalizers import Charsmap
from toklab.normalizers.nmt import NMT_DELETE, NMT_TO_SPACE, nmt_nfkc
from toklab.normalizers.tables import compile_charsmap, compile_rule, rule_mapping


def longest_match(text: str, mapping: dict[str, str]) -> str:
    """The table's rule, written plainly: at each position the longest key (in UTF-8 bytes) is replaced."""
    data = text.encode("utf-8")
    keys = {k.encode("utf-8"): v for k, v in mapping.items()}
    out, pos = [], 0
    while pos < len(data):
        best = max((k for k in keys if data.startswith(k, pos)), key=len, default=None)
        if best is None:
            n = 1
            while n < 4 and pos + n < len(data) and data[pos + n] & 0xC0 == 0x80:
                n += 1
            out.append(data[pos : pos + n].decode("utf-8"))
            pos += n
        else:
            out.append(keys[best])
            pos += len(best)
    return "".join(out)


KEY = st.text(st.sampled_from("abc\u00e9\u4e2d\U0001f600\u0301"), min_size=1, max_size=4)


@given(st.dictionaries(KEY, st.text("xyz\u00e9 ", max_size=3), min_size=1, max_size=30),
       st.text(st.sampled_from("abcd\u00e9\u4e2d\U0001f600\u0301\u0000"), max_size=30))
def test_compiled_table_replaces_the_longest_key(mapping, text):
    assert Charsmap(compile_charsmap(mapping)).normalize(text) == longest_match(text, mapping)


def test_every_key_of_a_large_table_reads_back():
    rng = random.Random(0)
    alphabet = [chr(c) for c in range(0x20, 0x3000) if unicodedata.category(chr(c))[0] in "LNPS"]
    mapping = {"".join(rng.choices(alphabet, k=rng.randint(1, 3))): "".join(rng.choices(alphabet, k=rng.randint(0, 3)))
               for _ in range(5000)}
    table = Charsmap(compile_charsmap(mapping))
    # Looking a key up in itself finds the key: no longer key fits in it, and shorter ones lose.
    assert all(table.longest_match(k.encode("utf-8"), 0) == (len(k.encode("utf-8")), v) for k, v in mapping.items())


def test_rule_tables_follow_the_rule_character_by_character():
    nmt = rule_mapping("nmt_nfkc")
    assert rule_mapping("identity") == {} and compile_rule("identity") is None
    for ch in ["Ａ", "①", "ﬃ", "\u3000", "\u200b", "\ufeff", "\u2581", "\x01", "\x7f"]:
        assert nmt[ch] == nmt_nfkc(ch)
    assert "～" not in nmt and "a" not in nmt and "\x00" not in nmt  # kept as they are
    assert all(nmt[ch] == "" for ch in NMT_DELETE) and all(nmt[ch] == " " for ch in NMT_TO_SPACE)
    assert nmt["e\u0301"] == "é" and rule_mapping("nfkc")["Ａ"] == "A"  # decomposed forms compose again
    single = [k for k in nmt if len(k) == 1]
    assert all(nmt[k] == nmt_nfkc(k) for k in single)
    assert all(nmt_nfkc(ch) == ch for ch in map(chr, range(0x20, 0x7F)) if ch not in nmt)


@pytest.mark.parametrize("name", ["nfkc", "nmt_nfkc"])
def test_sentencepiece_runs_the_compiled_table_as_toklab_does(name):
    spm = pytest.importorskip("sentencepiece")
    from toklab.sentencepiece import SentencePieceTokenizer
    from toklab.sentencepiece.model_file import SPConfig, SPPiece

    pieces = [SPPiece("<unk>", 0.0, "unknown")] + [SPPiece(ch, -1.0 - i) for i, ch in enumerate("▁abcA1f")]
    tok = SentencePieceTokenizer(pieces, SPConfig(normalization=name, charsmap=compile_rule(name)))
    sp = spm.SentencePieceProcessor(model_proto=tok.to_model_proto())
    rng = random.Random(1)
    code_points = [chr(c) for c in range(1, 0x30000) if not 0xD800 <= c < 0xE000]
    tricky = list("Ａ①ﬃé\u0301 \t\n\r\u3000\u200b▁～¨ǅ\x00") + ["e\u0301", "\r\n", "ㄱㅏ"]
    texts = ["".join(rng.choice(code_points) if rng.random() < 0.5 else rng.choice(tricky)
                     for _ in range(rng.randint(1, 8))) for _ in range(4000)]
    assert [sp.normalize(t) for t in texts] == [tok.normalize(t) for t in texts]
    assert [sp.encode(t) for t in texts] == [tok.encode(t) for t in texts]


def test_errors():
    with pytest.raises(ValueError, match="empty mapping"):
        compile_charsmap({})
    with pytest.raises(ValueError, match="NUL"):
        compile_charsmap({"a\x00": "b"})
    with pytest.raises(ValueError, match="NUL"):
        compile_charsmap({"a": "\x00"})
    with pytest.raises(ValueError, match="unknown normalization"):
        rule_mapping("nfkc_cf")
