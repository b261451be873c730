"""`toklab.base.unicode`: GPT-2's byte-to-character table, UTF-8 facts, graphemes, coordinates,
byte spans and invisible characters."""

from __future__ import annotations

import json
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab.base import unicode as tu


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


# ---------------------------------------------------------------------------
# graphemes and coordinates
# ---------------------------------------------------------------------------

FAMILY_3 = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # man ZWJ woman ZWJ girl
FAMILY_4 = FAMILY_3 + "\u200d\U0001f466"  # ... ZWJ boy


def test_family_emoji_coordinates():
    assert tu.coordinates(FAMILY_3) == {"code_points": 5, "utf8_bytes": 18, "utf16_units": 8, "graphemes": 1}
    assert tu.coordinates(FAMILY_4) == {"code_points": 7, "utf8_bytes": 25, "utf16_units": 11, "graphemes": 1}


def test_graphemes_of_mixed_text():
    text = "e\u0301" + "🇯🇵" + "❤\ufe0f" + "한" + "\u1112\u1161\u11ab" + "\r\n" + FAMILY_3 + "a"
    assert tu.graphemes(text) == ["e\u0301", "🇯🇵", "❤\ufe0f", "한", "\u1112\u1161\u11ab", "\r\n", FAMILY_3, "a"]
    assert "".join(tu.graphemes(text)) == text


@given(st.text())
def test_coordinates_agree_with_the_codecs(text):
    text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    coords = tu.coordinates(text)
    assert coords["code_points"] == len(text)
    assert coords["utf8_bytes"] == len(text.encode("utf-8"))
    assert coords["utf16_units"] == len(text.encode("utf-16-le")) // 2 == tu.utf16_length(text)
    assert "".join(tu.graphemes(text)) == text
    assert coords["graphemes"] <= coords["code_points"]


def test_coordinates_reject_lone_surrogates():
    with pytest.raises(ValueError, match="surrogate"):
        tu.coordinates("a\ud800")


# ---------------------------------------------------------------------------
# byte spans -> character spans
# ---------------------------------------------------------------------------


def test_byte_span_to_char_span_examples():
    text = "a注b"  # bytes: a | E6 B3 A8 | b
    assert tu.byte_span_to_char_span(text, 0, 1) == (0, 1)
    assert tu.byte_span_to_char_span(text, 1, 2) == (1, 2)  # one byte of 注 widens to 注
    assert tu.byte_span_to_char_span(text, 2, 5) == (1, 3)
    assert tu.byte_span_to_char_span(text, 0, 5) == (0, 3)
    assert tu.byte_span_to_char_span(text, 2, 2) == (1, 1)
    assert tu.byte_span_to_char_span(text, 5, 5) == (3, 3)
    for bad in ((-1, 1), (3, 2), (0, 6)):
        with pytest.raises(ValueError):
            tu.byte_span_to_char_span(text, *bad)


@given(text=st.text(st.characters(blacklist_categories=("Cs",)), min_size=1), data=st.data())
def test_byte_span_to_char_span_is_the_smallest_cover(text, data):
    raw = text.encode("utf-8")
    start = data.draw(st.integers(0, len(raw)))
    end = data.draw(st.integers(start, len(raw)))
    first, last = tu.byte_span_to_char_span(text, start, end)
    char_start = len(text[:first].encode("utf-8"))
    char_end = len(text[:last].encode("utf-8"))
    if start < end:
        assert char_start <= start and end <= char_end  # covers
        assert first < last
        # smallest: dropping the first or last character would uncover a byte
        assert len(text[: first + 1].encode("utf-8")) > start
        assert len(text[: last - 1].encode("utf-8")) < end
    else:
        assert first == last and char_start <= start


# ---------------------------------------------------------------------------
# invisible characters
# ---------------------------------------------------------------------------


def test_invisible_chars_finds_each_kind():
    text = "a\u200bb\u2764\ufe0f\u202egnp\u202c\u00adx\U000e0041\u3164 \t\n"
    found = tu.invisible_chars(text)
    assert [(f.index, f.code_point, f.kind) for f in found] == [
        (1, "U+200B", "zero-width"),
        (4, "U+FE0F", "variation selector"),
        (5, "U+202E", "bidi control"),
        (9, "U+202C", "bidi control"),
        (10, "U+00AD", "format"),
        (12, "U+E0041", "tag"),
        (13, "U+3164", "filler"),
    ]
    assert found[0].name == "ZERO WIDTH SPACE"
    assert found[1].name == "VARIATION SELECTOR-16"
    assert tu.invisible_chars("plain text, ñ, 注, 🙂\n") == []


def test_every_format_character_is_reported():
    for cp in range(0x110000):
        ch = chr(cp)
        if unicodedata.category(ch) == "Cf":
            assert [f.char for f in tu.invisible_chars(ch)] == [ch]
