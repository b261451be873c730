"""GPT-2's byte-to-character table and the UTF-8 facts in toklab.unicode."""

from __future__ import annotations

import json
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab import unicode as tu


def _is_plain_printable(b: int) -> bool:
    # Independent characterisation of the bytes GPT-2 keeps: everything whose
    # Latin-1 character is not a control (Cc), format (Cf) or separator (Z*).
    return unicodedata.category(chr(b))[0] not in "CZ"


def test_table_is_a_bijection_onto_printable_characters():
    table = tu.bytes_to_unicode()
    assert sorted(table) == list(range(256))
    chars = [table[b] for b in range(256)]
    assert len(set(chars)) == 256
    for ch in chars:
        assert len(ch) == 1
        assert ch.isprintable() and not ch.isspace(), f"U+{ord(ch):04X} does not print visibly"
        assert unicodedata.category(ch)[0] not in "CZ"
    inverse = tu.unicode_to_bytes()
    assert len(inverse) == 256
    assert all(inverse[table[b]] == b for b in range(256))


def test_188_kept_and_68_shifted_in_byte_order():
    table = tu.bytes_to_unicode()
    kept = [b for b in range(256) if table[b] == chr(b)]
    shifted = [b for b in range(256) if table[b] != chr(b)]
    assert len(kept) == 188
    assert len(shifted) == 68
    assert kept == [b for b in range(256) if _is_plain_printable(b)]
    # the shifted bytes go to U+0100, U+0101, ... in increasing byte order
    assert [table[b] for b in shifted] == [chr(0x100 + i) for i in range(68)]
    # the kept ones are exactly '!'..'~', '¡'..'¬', '®'..'ÿ'
    assert kept[0] == ord("!") and kept[-1] == 0xFF
    assert 0xA0 in shifted and 0xAD in shifted and 0x7F in shifted and 0x20 in shifted


def test_named_bytes():
    table = tu.bytes_to_unicode()
    assert table[0x20] == "Ġ" == "\u0120"
    assert table[0x0A] == "Ċ" == "\u010a"
    assert table[0x00] == "\u0100"
    assert table[0x09] == "ĉ"
    assert table[ord("A")] == "A"
    assert tu.to_proxy(b" hello\n") == "Ġhello\u010a"


def test_equals_tiktoken_data_gym_alphabet(tmp_path, monkeypatch):
    """tiktoken's GPT-2 file converter decodes our proxy strings to the same bytes.

    `data_gym_to_mergeable_bpe_ranks` reads GPT-2's original vocab.bpe/encoder.json
    (proxy-alphabet text). We write local files in our alphabet: one merge (b, b)
    per byte value b, and an encoder giving byte b the rank b. If any of our
    proxy characters meant a different byte to tiktoken, the ranks it returns
    would be attached to different bytes (or its decoder would raise KeyError).
    """
    import tiktoken.load

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # read local files, cache nothing
    table = tu.bytes_to_unicode()
    merges = [f"{table[b]} {table[b]}" for b in range(256)]
    (tmp_path / "vocab.bpe").write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")
    encoder = {tu.to_proxy(bytes([b])): b for b in range(256)}
    encoder.update({tu.to_proxy(bytes([b, b])): 256 + b for b in range(256)})
    (tmp_path / "encoder.json").write_text(json.dumps(encoder), encoding="utf-8")
    ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(
        str(tmp_path / "vocab.bpe"), str(tmp_path / "encoder.json"), clobber_one_byte_tokens=True
    )
    assert len(ranks) == 512
    for b in range(256):
        assert ranks[bytes([b])] == b
        assert ranks[bytes([b, b])] == 256 + b


def test_equals_hf_tokenizers_bytelevel():
    from tokenizers import decoders
    from tokenizers.pre_tokenizers import ByteLevel

    assert set(ByteLevel.alphabet()) == set(tu.bytes_to_unicode().values())
    # Byte for byte: HF's ByteLevel pre-tokenizer maps text to the same proxy string.
    text = "".join(chr(c) for c in range(0x800)) + "注意\u0800\uffee\U00010000\U0001f600\U0010fffd"
    hf = ByteLevel(add_prefix_space=False, use_regex=False).pre_tokenize_str(text)
    assert "".join(piece for piece, _ in hf) == tu.to_proxy(text.encode("utf-8"))
    assert decoders.ByteLevel().decode([tu.to_proxy(text.encode("utf-8"))]) == text


@settings(max_examples=300)
@given(st.binary(max_size=300))
def test_proxy_round_trip(data):
    proxy = tu.to_proxy(data)
    assert len(proxy) == len(data)
    assert tu.from_proxy(proxy) == data


def test_from_proxy_names_the_bad_character():
    with pytest.raises(ValueError, match=r"' '.*U\+0020.*position 2"):
        tu.from_proxy("Ġa b")
    first_outside = chr(0x100 + 68)  # U+0144, one past the shifted block
    with pytest.raises(ValueError, match=r"U\+0144"):
        tu.from_proxy(first_outside)
    with pytest.raises(ValueError, match="U\\+6CE8"):
        tu.from_proxy("注")


@pytest.mark.parametrize(
    "ch, n",
    [
        ("a", 1), ("\x00", 1), ("\x7f", 1),
        ("\x80", 2), ("é", 2), ("\u07ff", 2),
        ("\u0800", 3), ("注", 3), ("中", 3), ("\uffff", 3), ("\ufeff", 3),
        ("\U00010000", 4), ("😀", 4), ("\U00020000", 4), ("\U0010ffff", 4),
    ],
)
def test_utf8_length_table(ch, n):
    assert tu.utf8_length(ch) == n == len(ch.encode("utf-8"))


@given(st.characters(blacklist_categories=("Cs",)))
def test_utf8_length_matches_python(ch):
    assert tu.utf8_length(ch) == len(ch.encode("utf-8"))


def test_bmp_han_is_3_and_supplementary_han_is_4():
    assert tu.utf8_length("汉") == 3  # U+6C49, BMP
    assert tu.utf8_length("\U00020BB7") == 4  # 𠮷, CJK Extension B (supplementary plane)


@pytest.mark.parametrize("bad", ["\ud800", "\udbff", "\udc00", "\udfff"])
def test_utf8_length_rejects_surrogates(bad):
    with pytest.raises(ValueError, match="surrogate"):
        tu.utf8_length(bad)


def test_utf8_length_needs_one_code_point():
    with pytest.raises(ValueError):
        tu.utf8_length("ab")
    with pytest.raises(ValueError):
        tu.utf8_length("")


def test_worked_example_zhu():
    d = tu.describe_char("注")
    assert ord("注") == 0x6CE8
    assert "注".encode("utf-8") == b"\xe6\xb3\xa8"
    assert d["code point"] == "U+6CE8"
    assert d["utf8"] == "E6 B3 A8"
    assert d["bytes"] == 3
    # E6, B3, A8 are all printable Latin-1 bytes, so they stand for themselves
    assert d["proxy"] == "\u00e6\u00b3\u00a8" == "æ³¨"
    assert d["name"] == "CJK UNIFIED IDEOGRAPH-6CE8"
    assert d["category"] == "Lo"
