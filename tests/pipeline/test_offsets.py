"""toklab.pipeline.offsets: spans in the original text, against HF tokenizers and tiktoken.

The corpus comparisons run on the parity sample (tests/helpers.py: a fixed slice holding
every script and kind of run of the corpus, as multi-line texts and line by line); the
encoders under the offsets are proven on the whole corpus in their own parity tests.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toklab
from toklab.normalizers import UnicodeNormalizer
from toklab.pipeline import offsets

from ..helpers import sample_blocks, sample_lines, small_wordpiece

REAL_NAMES = ("r50k_base", "cl100k_base", "o200k_base")


def _hf_offsets(encoding):
    return [tuple(o) for o in encoding.offsets]


@pytest.mark.parametrize("name", REAL_NAMES)
def test_byte_level_offsets_equal_hf_on_the_parity_sample(real, name):
    _, tok, _ = real(name)
    hf = tok.as_pipeline().to_hf()
    for text in sample_blocks():
        ours = tok.encode_with_offsets(text, disallowed_special=())
        theirs = hf.encode(text, add_special_tokens=False)
        assert list(ours.ids) == theirs.ids, text
        assert list(ours.offsets) == _hf_offsets(theirs), text


def test_wordpiece_offsets_equal_hf_on_the_parity_sample():
    wp = small_wordpiece()
    hf = wp.to_hf()
    for line in sample_blocks():
        ours = wp.encode_with_offsets(line)
        theirs = hf.encode(line)
        assert list(ours.ids) == theirs.ids, line
        assert list(ours.offsets) == _hf_offsets(theirs), line


def _real_bert(name):
    from toklab.data import vocabs

    if name not in _HF_CACHE:
        vocab = vocabs.bert_vocab(name)
        unk = "[UNK]" if "[UNK]" in vocab else "[unk]"  # blingfire's table spells its specials in lower case
        wp = toklab.WordPiece(vocab, unk_token=unk, lowercase=name.endswith("uncased"))
        _HF_CACHE[name] = (wp, wp.to_hf())
    return _HF_CACHE[name]


@pytest.mark.parametrize("name", ["bert-base-uncased", "bert-base-cased"])
def test_real_bert_offsets_equal_hf_on_the_parity_sample(name):
    wp, hf = _real_bert(name)
    for line in sample_blocks():
        ours, theirs = wp.encode_with_offsets(line), hf.encode(line)
        assert list(ours.ids) == theirs.ids, line
        assert list(ours.offsets) == _hf_offsets(theirs), line


@settings(max_examples=200)
@given(text=st.lists(st.sampled_from(["Caf\u00e9", " NA\u00cfVE", "\u0130stanbul", " \u6ce8\u610f", "\ufb01le", "\uff21",
                                       "e\u0301", " un", "##", "believable", "\u00df", "\t", "\n", "  ", "'s", ",",
                                       "\U0001f642", "\x00", "\u200d", "\u00a0", "[UNK]", "[SEP]"]),
                     max_size=10).map("".join),
       name=st.sampled_from(["bert-base-uncased", "bert-base-cased"]))
def test_real_bert_offsets_equal_hf_on_adversarial_text(text, name):
    wp, hf = _real_bert(name)
    ours, theirs = wp.encode_with_offsets(text), hf.encode(text)
    assert list(ours.ids) == theirs.ids
    assert list(ours.offsets) == _hf_offsets(theirs)


def test_bert_cases_lowercase_accents_cjk():
    wp = small_wordpiece()
    hf = wp.to_hf()
    for text in ("Héllo, WORLD! 注意事项", "naïve café İstanbul", "ﬁle\u00a0x\tY", "e\u0301 x\u0308y"):
        assert list(wp.encode_with_offsets(text).offsets) == _hf_offsets(hf.encode(text)), text


def _composes_or_reorders(text, form="NFKC"):
    """True where normalization merges characters or moves combining marks (HF aligns those differently)."""
    _, align = offsets.alignment(UnicodeNormalizer(form), text)
    return any(b - a != 1 for a, b in align) or any(x[0] > y[0] for x, y in zip(align, align[1:]))


def test_nfkc_offsets_equal_hf_where_nothing_composes(real):
    _, tok, _ = real("cl100k_base")
    pipe = toklab.Pipeline(tok, normalizer="NFKC")
    hf = pipe.to_hf()
    lines = sample_lines()
    different = 0
    for line in lines:
        ours = pipe.encode_with_offsets(line, disallowed_special=())
        theirs = hf.encode(line, add_special_tokens=False)
        assert list(ours.ids) == theirs.ids
        if _composes_or_reorders(line):  # by design: see the chapter and tests/normalizers
            different += list(ours.offsets) != _hf_offsets(theirs)
            continue
        assert list(ours.offsets) == _hf_offsets(theirs), line
    assert different < len(lines) / 100
    # the lossy cases of the chapter: 1 -> 3, same length, 2 -> 1
    text = "\ufb03 \uff21 cafe\u0301"
    ours = pipe.encode_with_offsets(text)
    assert [text[a:b] for a, b in ours.offsets] == ["\ufb03", " \uff21", " cafe\u0301"]
    # HF credits a composed character to its first source only: the accent is left out
    theirs = hf.encode(text, add_special_tokens=False)
    assert [text[a:b] for a, b in _hf_offsets(theirs)][-1] == " cafe"


def test_nfc_many_to_one_and_nfd_one_to_many():
    tok = toklab.ByteBPE.from_tiktoken("r50k_base")
    for form, text, spans in (("NFC", "cafe\u0301!", None), ("NFD", "caf\u00e9!", None)):
        pipe = toklab.Pipeline(tok, normalizer=UnicodeNormalizer(form))
        enc = pipe.encode_with_offsets(text)
        covered = "".join(text[a:b] for a, b in enc.offsets)
        assert covered.replace("\u0301", "").startswith("caf")
        assert enc.offsets[-1] == (len(text) - 1, len(text))
    assert list(enc.ids) == pipe.encode(text)


def _same_decode_with_offsets(tok, enc, ids):
    """Both decode to the same text and offsets, or both refuse IDs that are not valid UTF-8."""
    try:
        expected = enc.decode_with_offsets(ids)
    except UnicodeDecodeError:
        with pytest.raises(ValueError, match="valid UTF-8"):
            tok.decode_with_offsets(ids)
    else:
        assert tok.decode_with_offsets(ids) == expected


@pytest.mark.parametrize("name", REAL_NAMES)
def test_decode_with_offsets_equals_tiktoken(real, name):
    _, tok, enc = real(name)
    for text in sample_blocks():
        ids = tok.encode(text, disallowed_special=())
        assert tok.decode_with_offsets(ids) == enc.decode_with_offsets(ids), text
    rng = random.Random(0)
    ordinary = sorted(tok.vocab)
    for _ in range(500):  # random IDs: valid UTF-8 or not, both libraries agree on which
        ids = [rng.choice(ordinary) for _ in range(rng.randint(0, 6))]
        _same_decode_with_offsets(tok, enc, ids)
    special = tok.special_tokens["<|endoftext|>"]
    ids = tok.encode("a<|endoftext|>b", allowed_special="all")
    assert special in ids and tok.decode_with_offsets(ids) == enc.decode_with_offsets(ids)


def test_partial_characters_share_a_code_point_span_but_not_bytes(real):
    _, tok, _ = real("cl100k_base")
    hf = tok.as_pipeline().to_hf()
    text = " \u9f98!"  # 龘 is three tokens
    ours = tok.encode_with_offsets(text)
    assert list(ours.offsets) == _hf_offsets(hf.encode(text, add_special_tokens=False))
    assert ours.offsets == ((0, 2), (1, 2), (1, 2), (2, 3))
    assert ours.byte_offsets == ((0, 2), (2, 3), (3, 4), (4, 5))


def test_specials_and_post_processor_tokens():
    tok = toklab.ByteBPE.from_tiktoken("cl100k_base")
    pipe = toklab.Pipeline(tok, eos="<|endoftext|>")
    text = "hi<|endoftext|>there"
    enc = pipe.encode_with_offsets(text, allowed_special="all")
    assert list(enc.ids) == pipe.encode(text, allowed_special="all")
    assert enc.offsets == ((0, 2), (2, 15), (15, 20), (0, 0))
    assert pipe.encode_with_offsets(text, allowed_special="all", add_special_tokens=False).ids == enc.ids[:-1]
    with pytest.raises(ValueError, match="disallowed"):
        pipe.encode_with_offsets(text)
    assert tok.encode_with_offsets("") == offsets.Encoding((), (), ())


def test_unsupported_stages_and_tokens_are_refused():
    wp = small_wordpiece()
    with pytest.raises(TypeError, match="byte-level"):
        wp.decode_with_offsets(wp.encode("hello"))

    class Shouting:
        def normalize(self, text):
            return text.upper()

    with pytest.raises(TypeError, match="Shouting normalizer"):
        offsets.alignment(Shouting(), "x")
    with pytest.raises(TypeError, match="Pipeline or ByteBPE"):
        offsets.encode_with_offsets(object(), "x")


_TEXT = st.lists(st.sampled_from(list("ab AB1 \n\t.,'") + ["\u00e9", "e\u0301", "\u6ce8", "\U0001f642", "\ufb03",
                                                           "\uff21", "\u200d", "\udc80", "  "]),
                 max_size=12).map("".join)


@settings(max_examples=200)
@given(text=_TEXT, name=st.sampled_from(REAL_NAMES), form=st.sampled_from([None, "NFC", "NFKC", "NFD"]))
def test_offsets_contract(real, text, name, form):
    _, tok, _ = real(name)
    pipe = toklab.Pipeline(tok, normalizer=form)
    enc = pipe.encode_with_offsets(text)
    assert list(enc.ids) == pipe.encode(text)
    clean = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    data = clean.encode("utf-8")
    starts = [0]
    for ch in clean:
        starts.append(starts[-1] + len(ch.encode("utf-8")))
    for (a, b), (x, y) in zip(enc.offsets, enc.byte_offsets):
        assert 0 <= a < b <= len(clean) and 0 <= x < y <= len(data)
    if form is None:  # unnormalized byte-level: the byte spans tile the text exactly
        assert b"".join(data[x:y] for x, y in enc.byte_offsets) == data
        assert all(data[x:y] == tok.id_to_token(i) for i, (x, y) in zip(enc.ids, enc.byte_offsets))
        for (a, b), (x, y) in zip(enc.offsets, enc.byte_offsets):  # the smallest covering characters
            assert starts[a] <= x and y <= starts[b] and starts[a + 1] > x and starts[b - 1] < y
    # the spans advance through the text
    assert [a for a, _ in enc.offsets] == sorted(a for a, _ in enc.offsets)


# Adversarial text: whitespace of every kind, CR/LF, digits, apostrophes, combining marks,
# ligatures and full-width letters, CJK, emoji pieces and joiners, a lone surrogate, specials.
_HARD = st.lists(st.sampled_from(list("ab AB'1 \n\r\t.,-") + [
    "\u00e9", "e\u0301", "\u0301", "\u6ce8", "\u610f", "\U0001f642", "\U0001f468\u200d", "\ufe0f", "\u00a0",
    "\u3000", "\u2028", "\u0085", "\ufb03", "\ufb01", "\uff21", "\uff11", "\u0130", "\u00df", "\u0627\u064e",
    "\x0b", "\x1c", "'s", "'LL", "  ", "\r\n", "<|endoftext|>", "\udc80", "\ufffd", "\u9f98"]),
    max_size=14).map("".join)


def _hf_text(text):
    """What HF sees for ``text``: a Python str with a lone surrogate cannot cross into Rust."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


@settings(max_examples=300)
@given(text=_HARD, name=st.sampled_from(REAL_NAMES))
def test_byte_level_offsets_equal_hf_on_adversarial_text(real, text, name):
    _, tok, _ = real(name)
    hf = _hf_pipeline(tok, None)
    ours = tok.encode_with_offsets(text, allowed_special="all")
    theirs = hf.encode(_hf_text(text), add_special_tokens=False)
    assert list(ours.ids) == theirs.ids
    assert list(ours.offsets) == _hf_offsets(theirs)


@settings(max_examples=300)
@given(text=_HARD, name=st.sampled_from(REAL_NAMES), form=st.sampled_from(["NFC", "NFKC", "NFD", "NFKD"]))
def test_normalized_offsets_equal_hf_on_adversarial_text_except_by_design(real, text, name, form):
    """Equal to HF unless normalization composes or reorders characters: there HF credits
    the first source only, toklab every source (see test_nfkc_offsets_equal_hf_where_nothing_composes)."""
    _, tok, _ = real(name)
    pipe = toklab.Pipeline(tok, normalizer=form)
    ours = pipe.encode_with_offsets(text, allowed_special="all")
    theirs = _hf_pipeline(tok, form).encode(_hf_text(text), add_special_tokens=False)
    assert list(ours.ids) == theirs.ids
    if not _composes_or_reorders(_hf_text(text), form):
        assert list(ours.offsets) == _hf_offsets(theirs)
    else:  # by design: toklab's span covers HF's
        for (a, b), (x, y) in zip(ours.offsets, _hf_offsets(theirs)):
            assert a <= x and y <= b


@settings(max_examples=300)
@given(text=_HARD)
def test_wordpiece_offsets_equal_hf_on_adversarial_text(text):
    wp = small_wordpiece()
    ours = wp.encode_with_offsets(text)
    theirs = _hf_wordpiece().encode(_hf_text(text))
    assert list(ours.ids) == theirs.ids
    assert list(ours.offsets) == _hf_offsets(theirs)


_HF_CACHE: dict = {}


def _hf_pipeline(tok, form):
    key = (tok.n_vocab, form)
    if key not in _HF_CACHE:
        _HF_CACHE[key] = toklab.Pipeline(tok, normalizer=form).to_hf()
    return _HF_CACHE[key]


def _hf_wordpiece():
    if "wp" not in _HF_CACHE:
        _HF_CACHE["wp"] = small_wordpiece().to_hf()
    return _HF_CACHE["wp"]


@settings(max_examples=300)
@given(text=_HARD, name=st.sampled_from(REAL_NAMES), cut=st.integers(0, 3))
def test_decode_with_offsets_equals_tiktoken_on_adversarial_text(real, text, name, cut):
    """Whole encodings and encodings cut short (which may end inside a character)."""
    _, tok, enc = real(name)
    ids = tok.encode(text, allowed_special="all")
    ids = ids[: max(0, len(ids) - cut)]
    _same_decode_with_offsets(tok, enc, ids)


def test_original_span_covers_every_source_and_places_empty_spans():
    # NFD turns "é" (1 character) into "e" + U+0301: both come from original 0:1
    normalized, align = offsets.alignment(UnicodeNormalizer("NFD"), "\u00e9a")
    assert normalized == "e\u0301a"
    assert offsets.original_span(align, 0, 1, 2) == (0, 1)
    assert offsets.original_span(align, 1, 3, 2) == (0, 2)
    # sources out of order (a reordered mark) still give the covering span
    assert offsets.original_span([(3, 4), (1, 2)], 0, 2, 5) == (1, 4)
    assert offsets.original_span(align, 2, 2, 2) == (1, 1)  # empty: where "a" starts
    assert offsets.original_span(align, 3, 3, 2) == (2, 2)  # empty at the end
    with pytest.raises(ValueError, match="not inside"):
        offsets.original_span(align, 2, 4, 2)


def test_utf16_offsets_count_surrogate_pairs():
    from toklab.base.unicode import utf16_length

    assert offsets.utf16_offsets("") == [0]
    assert offsets.utf16_offsets("a\U0001f642\u9f98") == [0, 1, 3, 4]
    text = "x\U0001f468\u200d\U0001f469\U00010348 e\u0301"
    assert offsets.utf16_offsets(text) == [utf16_length(text[:k]) for k in range(len(text) + 1)]
