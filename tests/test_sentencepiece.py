"""The SentencePiece-style front end against the real ``sentencepiece`` library.

Models are trained by sentencepiece itself (small vocabularies, character
coverage below 1 so that unknowns and byte fallback actually happen) on a
slice of the bundled English, Chinese and mixed corpora, and evaluated on
held-out lines of the same files plus Python source (indentation exercises
the whitespace rules). Our tokenizer reads each trained model and must give
sentencepiece's IDs on every line, for both model types, byte fallback on
and off, dummy prefix on and off, identity and ``nmt_nfkc`` normalization.

Then: what the configuration flags do, where decode(encode(x)) == x holds
and exactly where and why it does not, the measured differences between
``nmt_nfkc`` done by rules (NFKC + extras) and sentencepiece's compiled
table, BPE against its plain reference, unused pieces, and errors.
"""

from __future__ import annotations

import io
import random
import unicodedata
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toklab import corpus
from toklab.normalizers import Charsmap
from toklab.normalizers.nmt import NMT_DELETE, NMT_KEEP, NMT_TO_SPACE, nmt_nfkc
from toklab.pre_tokenizers.metaspace import SPACE
from toklab.pre_tokenizers.metaspace import split_words as metaspace_split_words
from toklab.sentencepiece import SentencePieceTokenizer, bpe_segment, load, reference_bpe_segment
from toklab.sentencepiece_model import SPConfig, SPPiece, parse_model_proto
from toklab.sentencepiece_model import iter_fields


def split_words(text, config):
    return metaspace_split_words(text, split_by_whitespace=config.split_by_whitespace, split_digits=config.split_digits)

spm = pytest.importorskip("sentencepiece")

TRAIN_BYTES = 120_000  # per language, for training
EVAL_BYTES = 60_000  # per language, held out (the bytes right after the training slice)
VOCAB_SIZE = 3000
COVERAGE = 0.9995  # < 1: rare characters stay out of the vocabulary


# --------------------------------------------------------------------------
# Fixtures: a training file, cached models, evaluation lines
# --------------------------------------------------------------------------


@pytest.fixture(scope="session")
def train_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("spm") / "train.txt"
    text = "".join(corpus.load(name, max_bytes=TRAIN_BYTES) for name in ("en", "zh", "mixed"))
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def sp_model(train_file):
    """``sp_model(**trainer_options) -> SentencePieceProcessor``, trained once per option set."""
    cache: dict = {}

    def get(**options):
        key = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in options.items()))
        if key not in cache:
            buf = io.BytesIO()
            args = dict(
                input=str(train_file), model_writer=buf, vocab_size=VOCAB_SIZE, character_coverage=COVERAGE,
                num_threads=1, minloglevel=2,
            )
            args.update(options)
            spm.SentencePieceTrainer.train(**args)
            cache[key] = spm.SentencePieceProcessor(model_proto=buf.getvalue())
        return cache[key]

    return get


@pytest.fixture(scope="session")
def eval_lines() -> list[str]:
    """Held-out lines of en, zh and mixed, plus Python source (never trained on)."""
    lines = []
    for name in ("en", "zh", "mixed"):
        seen = corpus.load(name, max_bytes=TRAIN_BYTES)
        lines += corpus.load(name, max_bytes=TRAIN_BYTES + EVAL_BYTES)[len(seen) :].split("\n")
    lines += corpus.load("code", max_bytes=EVAL_BYTES).split("\n")
    return lines


def _mismatches(sp, tok, lines):
    return [ln for ln in lines if sp.encode(ln) != tok.encode(ln)]


# --------------------------------------------------------------------------
# Parity with sentencepiece on the corpus
# --------------------------------------------------------------------------

MATRIX = [
    (model_type, norm, bf, adp)
    for model_type in ("unigram", "bpe")
    for norm in ("identity", "nmt_nfkc")
    for bf in (False, True)
    for adp in (True, False)
]


@pytest.mark.parametrize("model_type,norm,byte_fallback,dummy", MATRIX)
def test_encode_equals_sentencepiece_on_corpus(sp_model, eval_lines, model_type, norm, byte_fallback, dummy):
    sp = sp_model(model_type=model_type, normalization_rule_name=norm, byte_fallback=byte_fallback,
                  add_dummy_prefix=dummy)
    tok = SentencePieceTokenizer.from_sentencepiece(sp)
    # The settings read from the model are the trainer arguments we used.
    c = tok.config
    assert (c.model_type, c.normalization, c.byte_fallback, c.add_dummy_prefix) == (model_type, norm, byte_fallback, dummy)
    assert c.remove_extra_whitespaces and c.escape_whitespaces and c.split_by_whitespace and not c.split_digits
    assert (c.charsmap is None) == (norm == "identity")

    assert _mismatches(sp, tok, eval_lines) == []
    sample = eval_lines[::25]
    assert [sp.encode(ln, out_type=str) for ln in sample] == [tok.encode_as_pieces(ln) for ln in sample]
    assert [sp.normalize(ln) for ln in sample] == [tok.normalize(ln) for ln in sample]
    # Coverage below 1 really leaves characters out: unknowns (or their bytes) occur.
    ids = [i for ln in eval_lines for i in tok.encode(ln)]
    if byte_fallback:
        assert sum(tok.kind(i) == "byte" for i in ids) > 100 and tok.unk_id not in ids
    else:
        assert ids.count(tok.unk_id) > 100
    assert [sp.decode(sp.encode(ln)) for ln in sample] == [tok.decode(tok.encode(ln)) for ln in sample]


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_whitespace_kept_equals_sentencepiece(sp_model, eval_lines, model_type):
    """remove_extra_whitespaces=False: runs of spaces (Python indentation) are kept and escaped."""
    sp = sp_model(model_type=model_type, normalization_rule_name="identity", byte_fallback=True,
                  remove_extra_whitespaces=False)
    tok = SentencePieceTokenizer.from_sentencepiece(sp)
    assert not tok.config.remove_extra_whitespaces
    assert _mismatches(sp, tok, eval_lines) == []
    assert tok.normalize("    return x  ") == SPACE * 5 + "return" + SPACE + "x" + SPACE * 2


def test_multiline_text_and_whole_files(sp_model):
    """Newlines inside one input: nmt_nfkc maps them to spaces, identity keeps them (as bytes here)."""
    text = corpus.load("mixed", max_bytes=20_000)
    for norm in ("nmt_nfkc", "identity"):
        sp = sp_model(model_type="unigram", normalization_rule_name=norm, byte_fallback=True)
        tok = SentencePieceTokenizer.from_sentencepiece(sp)
        assert tok.encode(text) == sp.encode(text)
    nmt = SentencePieceTokenizer.from_sentencepiece(sp_model(model_type="unigram", byte_fallback=True))
    assert "\n" not in nmt.normalize("a\nb") and nmt.normalize("a\nb") == SPACE + "a" + SPACE + "b"


# --------------------------------------------------------------------------
# Random text and random IDs (sentencepiece as the oracle)
# --------------------------------------------------------------------------

TRICKY = [
    " ", "  ", "\t", "\n", "\r\n", "\x00", "\x01", "\x7f", "\u00a0", "\u3000", "\u200b", "\u200d", "\ufeff",
    SPACE, "Ａ", "①", "ﬃ", "é", "e\u0301", "\u0301", "¨", "～", "龘", "😀", "👨\u200d👩\u200d👧", "\ufe0f",
    "<s>", "</s>", "<unk>", "<0x41>", "<tag>", "ab", "2024", "中文", "ă\u0301", "\u0651\u064e", "\U0001f3fb",
]
TEXT = st.lists(
    st.one_of(st.sampled_from(TRICKY), st.characters(blacklist_categories=("Cs",))), max_size=24
).map("".join)

ORACLE_CONFIGS = {
    "unigram-nmt-bf-user": dict(model_type="unigram", byte_fallback=True, user_defined_symbols=["<tag>", "ab", "Ａ"],
                                control_symbols=["<ctl>"]),
    "bpe-nmt-user": dict(model_type="bpe", user_defined_symbols=["<tag>", "ab", "Ａ"], control_symbols=["<ctl>"]),
    "unigram-identity-keepws": dict(model_type="unigram", normalization_rule_name="identity",
                                    remove_extra_whitespaces=False, add_dummy_prefix=False),
    "bpe-identity-bf-keepws": dict(model_type="bpe", normalization_rule_name="identity", byte_fallback=True,
                                   remove_extra_whitespaces=False),
    "bpe-nfkc-bf": dict(model_type="bpe", normalization_rule_name="nfkc", byte_fallback=True),
}


@pytest.mark.parametrize("name", sorted(ORACLE_CONFIGS))
def test_random_text_and_ids_equal_sentencepiece(sp_model, name):
    sp = sp_model(**ORACLE_CONFIGS[name])
    tok = SentencePieceTokenizer.from_sentencepiece(sp)
    n = len(tok)
    assert n == sp.get_piece_size()

    @given(TEXT)
    def check_text(text):
        assert tok.normalize(text) == sp.normalize(text)
        assert tok.encode(text) == sp.encode(text)
        assert tok.encode_as_pieces(text) == sp.encode(text, out_type=str)

    @given(st.lists(st.integers(0, n - 1), max_size=12), st.lists(st.integers(0, 8), max_size=6))
    def check_ids(ids, low_ids):
        # low IDs are <unk>, <s>, </s>, user-defined symbols and byte pieces:
        # the ones decode treats specially.
        for seq in (ids, low_ids, low_ids + ids):
            assert tok.decode(seq) == sp.decode(seq)

    check_text()
    check_ids()


# --------------------------------------------------------------------------
# Whitespace, dummy prefix, the literal ▁
# --------------------------------------------------------------------------


def _tiny(**config) -> SentencePieceTokenizer:
    """A small hand-made vocabulary: enough to test the front end without training."""
    pieces = [SPPiece("<unk>", 0.0, "unknown"), SPPiece("<s>", 0.0, "control"), SPPiece("</s>", 0.0, "control")]
    pieces += [SPPiece(p, -float(i)) for i, p in enumerate([SPACE, "a", "b", SPACE + "a", SPACE + "b", "ab"])]
    return SentencePieceTokenizer(pieces, SPConfig(**config))


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
                table = _tiny(charsmap=spec.get(2), **flags)
                by_rule = _tiny(**flags)
                for t in texts:
                    expected = ref.Normalize(t)
                    assert table.normalize(t) == expected, (t, flags)
                    if rule == "identity" or unicodedata.normalize("NFC", expected) == expected:
                        assert by_rule.normalize(t) == expected, (t, flags)


def test_whitespace_rules():
    tok = _tiny(normalization="identity")
    assert tok.normalize("  a  b ") == SPACE + "a" + SPACE + "b"  # collapsed, trimmed, dummy prefix
    assert tok.normalize("   ") == "" and tok.normalize("") == ""  # no dummy prefix for blank input
    assert tok.normalize("a\tb") == SPACE + "a\tb"  # only U+0020 counts as whitespace under identity
    keep = _tiny(normalization="identity", remove_extra_whitespaces=False)
    assert keep.normalize("  a ") == SPACE * 3 + "a" + SPACE
    assert keep.normalize("") == ""
    nmt = _tiny(normalization="nmt_nfkc")
    assert nmt.normalize("a\t\u3000\u00a0b") == SPACE + "a" + SPACE + "b"  # nmt_nfkc makes them spaces first


def test_literal_meta_symbol():
    """A literal ▁ in the input: kept as a character by identity, turned into a space by nmt_nfkc.

    Either way it decodes as a space: the escaping is not injective.
    """
    ident = _tiny(normalization="identity", remove_extra_whitespaces=False, add_dummy_prefix=False)
    assert ident.normalize("a" + SPACE + "b") == ident.normalize("a b") == "a" + SPACE + "b"
    assert ident.decode(ident.encode("a" + SPACE + "b")) == "a b"
    collapse = _tiny(normalization="identity")
    # identity + whitespace removal: a literal ▁ is not collapsed with spaces, but a trailing one is trimmed
    assert collapse.normalize("a " + SPACE + " b") == SPACE + "a" + SPACE * 3 + "b"
    assert collapse.normalize("a" + SPACE) == SPACE + "a"
    nmt = _tiny(normalization="nmt_nfkc")
    assert nmt.normalize("a " + SPACE + " b") == SPACE + "a" + SPACE + "b"  # ▁ -> " ", then collapsed


# --------------------------------------------------------------------------
# Round trips: where decode(encode(x)) == x holds, and where and why it does not
# --------------------------------------------------------------------------

NO_META = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters=SPACE), max_size=40)


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
@pytest.mark.parametrize("dummy", [True, False])
def test_lossless_configuration_round_trips(sp_model, model_type, dummy):
    """identity + whitespace kept + byte fallback: decode(encode(x)) == x for any text without a literal ▁."""
    sp = sp_model(model_type=model_type, normalization_rule_name="identity", byte_fallback=True,
                  remove_extra_whitespaces=False, add_dummy_prefix=dummy)
    tok = SentencePieceTokenizer.from_sentencepiece(sp)

    @given(st.one_of(NO_META, st.lists(st.sampled_from([t for t in TRICKY if t != SPACE])).map("".join)))
    def check(text):
        ids = tok.encode(text)
        assert tok.decode(ids) == text
        assert ids == sp.encode(text)

    check()
    # The one exception: a literal ▁ comes back as a space.
    assert tok.decode(tok.encode("x" + SPACE + "y")) == "x y"


def test_where_round_trips_break(sp_model):
    nmt_bf = SentencePieceTokenizer.from_sentencepiece(sp_model(model_type="unigram", byte_fallback=True))
    # NFKC rewrites compatibility characters: the original spelling is gone.
    assert nmt_bf.decode(nmt_bf.encode("Ａ①")) == "A1"
    # Whitespace removal: runs collapse, ends are trimmed.
    ws = SentencePieceTokenizer.from_sentencepiece(sp_model(model_type="unigram", normalization_rule_name="identity",
                                                            byte_fallback=True))
    assert ws.decode(ws.encode("  a  b ")) == "a b"
    # Without byte fallback an uncovered character becomes <unk> and is lost.
    unk = SentencePieceTokenizer.from_sentencepiece(sp_model(model_type="unigram", normalization_rule_name="identity"))
    assert "龘" not in unk.get_vocab() and unk.encode("a龘b").count(unk.unk_id) == 1
    assert unk.decode(unk.encode("a龘b")) == "a \u2047 b"
    # The dummy prefix is dropped again by decode of a whole sequence...
    dummy = SentencePieceTokenizer.from_sentencepiece(sp_model(model_type="unigram", normalization_rule_name="identity",
                                                               byte_fallback=True, remove_extra_whitespaces=False))
    ids = dummy.encode("hello world")
    assert dummy.normalize("hello world") == SPACE + "hello" + SPACE + "world"
    assert dummy.decode(ids) == "hello world"
    # ...but decoding token by token strips it from every token that starts with ▁:
    # the spaces between words vanish (a streaming-detokenization trap).
    assert "".join(dummy.decode([i]) for i in ids) == "helloworld"


def test_d05_nfkc_lossy_byte_fallback_lossless(sp_model):
    """D05 (CONTENT.md §7): coverage and fidelity are separate questions."""
    nfkc = _tiny(normalization="nfkc")
    assert nfkc.normalize("Ａ①") == SPACE + "A1"
    assert unicodedata.normalize("NFKC", "Ａ①") == "A1"
    sp = sp_model(model_type="bpe", normalization_rule_name="identity", byte_fallback=True, add_dummy_prefix=False)
    tok = SentencePieceTokenizer.from_sentencepiece(sp)
    assert "龘" not in tok.get_vocab()
    assert tok.encode_as_pieces("龘") == ["<0xE9>", "<0xBE>", "<0x98>"] == sp.encode("龘", out_type=str)
    assert "龘".encode("utf-8") == b"\xe9\xbe\x98"
    assert tok.decode(tok.encode("龘")) == "龘"


# --------------------------------------------------------------------------
# Symbols: user-defined, control, unknown, bytes
# --------------------------------------------------------------------------


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_user_defined_and_control_symbols(sp_model, model_type):
    sp = sp_model(**ORACLE_CONFIGS["unigram-nmt-bf-user" if model_type == "unigram" else "bpe-nmt-user"])
    tok = SentencePieceTokenizer.from_sentencepiece(sp)
    kinds = {p.piece: p.kind for p in tok.pieces}
    assert kinds["<tag>"] == kinds["ab"] == kinds["Ａ"] == "user"
    assert kinds["<s>"] == kinds["</s>"] == kinds["<ctl>"] == "control"
    # User-defined symbols are cut out whole, wherever they occur...
    pieces = tok.encode_as_pieces("x<tag>yabz<tag><tag>")
    assert pieces.count("<tag>") == 3 and "ab" in pieces
    # ...and are exempt from normalization (Ａ stays fullwidth, Ｂ becomes B).
    assert tok.normalize("ＡＢ") == SPACE + "ＡB" == sp.normalize("ＡＢ")
    # Control symbols never come from text, only from the caller.
    for text in ("<s>", "</s>", "<ctl>", "a<s>b"):
        assert not any(tok.kind(i) == "control" for i in tok.encode(text))
        assert tok.encode(text) == sp.encode(text)
    ids = tok.encode("ab", add_bos=True, add_eos=True)
    assert ids == sp.encode("ab", add_bos=True, add_eos=True)
    assert ids[0] == tok.piece_to_id("<s>") and ids[-1] == tok.piece_to_id("</s>")
    assert tok.decode(ids) == "ab" == sp.decode(ids)  # control pieces vanish in decode


def test_unknown_runs_and_bytes(sp_model):
    for model_type in ("unigram", "bpe"):
        sp = sp_model(model_type=model_type, normalization_rule_name="identity")
        tok = SentencePieceTokenizer.from_sentencepiece(sp)
        # A run of uncovered characters is one <unk>; its surface is the run itself.
        assert tok.encode_as_pieces("龘龘x")[-2:] == ["龘龘", "x"] == sp.encode("龘龘x", out_type=str)[-2:]
        assert tok.encode("龘龘x").count(tok.unk_id) == 1
        bf = SentencePieceTokenizer.from_sentencepiece(sp_model(model_type=model_type, normalization_rule_name="identity",
                                                                byte_fallback=True))
        assert [bf.id_to_piece(i) for i in bf.encode("龘龘")][-6:] == ["<0xE9>", "<0xBE>", "<0x98>"] * 2
    # Byte pieces that are not valid UTF-8 decode to one U+FFFD per byte, as in sentencepiece.
    b = [bf.piece_to_id(f"<0x{x:02X}>") for x in (0xF0, 0x9F, 0x98)] + [bf.piece_to_id("a")]
    assert bf.decode(b) == "\ufffd" * 3 + "a" == sp_model(model_type="bpe", normalization_rule_name="identity",
                                                          byte_fallback=True).decode(b)
    assert b"\xf0\x9f\x98a".decode("utf-8", "replace") == "\ufffda"  # Python would merge them
    # A byte-fallback ▁ decodes as a literal ▁, not as a space.
    meta = [bf.piece_to_id(f"<0x{x:02X}>") for x in SPACE.encode("utf-8")]
    assert bf.decode(meta) == SPACE


# --------------------------------------------------------------------------
# nmt_nfkc: rules versus sentencepiece's compiled table
# --------------------------------------------------------------------------


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


# --------------------------------------------------------------------------
# BPE: the rule, the fast version, unused pieces
# --------------------------------------------------------------------------


def test_bpe_rule_examples():
    scores = {"ab": -1.0, "bc": -1.0, "abc": -2.0, "aa": -0.5}
    assert reference_bpe_segment(list("abc"), scores) == ["abc"]  # ab (leftmost of the tie), then ab+c
    assert reference_bpe_segment(list("abc"), {"ab": -1.0, "bc": 0.0}) == ["a", "bc"]  # higher score first
    assert reference_bpe_segment(list("aaa"), scores) == ["aa", "a"]  # overlap: left first
    assert bpe_segment(list("aaaa"), scores) == ["aa", "aa"]


@given(st.text("abc", max_size=14), st.dictionaries(st.text("abc", min_size=2, max_size=4),
                                                    st.sampled_from([-3.0, -2.0, -1.0, -0.5]), max_size=12))
def test_bpe_fast_equals_reference(text, scores):
    assert bpe_segment(list(text), scores) == reference_bpe_segment(list(text), scores)


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _field(number: int, wire: int, value) -> bytes:
    key = _varint(number << 3 | wire)
    if wire == 0:
        return key + _varint(value)
    if wire == 2:
        return key + _varint(len(value)) + value
    return key + value


def _rewrite(blob: bytes, fn) -> bytes:
    """Re-serialize a message, letting ``fn(number, wire, value)`` replace each field's value."""
    return b"".join(_field(n, w, fn(n, w, v)) for n, w, v in iter_fields(blob))


def _mark_unused(blob: bytes, ids: set[int]) -> bytes:
    count = iter(range(1 << 30))

    def piece(n, w, v):
        if n != 1 or next(count) not in ids:
            return v
        # type = UNUSED (5); NORMAL is the default and is usually not written at all
        return b"".join(_field(n2, w2, v2) for n2, w2, v2 in iter_fields(v) if n2 != 3) + _field(3, 0, 5)

    return _rewrite(blob, piece)


def _set_trainer_flags(blob: bytes, **flags: int) -> bytes:
    numbers = {"split_by_whitespace": 22, "split_digits": 25}

    def trainer(n, w, v):
        if n != 2:
            return v
        drop = {numbers[k] for k in flags}
        kept = b"".join(_field(n2, w2, v2) for n2, w2, v2 in iter_fields(v) if n2 not in drop)
        return kept + b"".join(_field(numbers[k], 0, val) for k, val in flags.items())

    return _rewrite(blob, trainer)


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_unused_pieces(sp_model, eval_lines, model_type):
    """Pieces marked unused: BPE still merges into them, then splits them back; Unigram never uses them."""
    sp = sp_model(model_type=model_type, normalization_rule_name="identity", byte_fallback=True)
    blob = _mark_unused(sp.serialized_model_proto(), set(range(300, VOCAB_SIZE, 7)))
    sp2 = spm.SentencePieceProcessor(model_proto=blob)
    assert sum(sp2.is_unused(i) for i in range(VOCAB_SIZE)) == 386
    tok = SentencePieceTokenizer.from_sentencepiece(sp2)
    lines = eval_lines[::3]
    assert sum(sp.encode(ln) != sp2.encode(ln) for ln in lines) > 100  # the marks matter
    assert _mismatches(sp2, tok, lines) == []
    assert not any(tok.kind(i) == "unused" for ln in lines for i in tok.encode(ln))


# --------------------------------------------------------------------------
# split_digits and split_by_whitespace: trainer flags, not encoder flags
# --------------------------------------------------------------------------


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_split_flags_shape_the_vocabulary_only(sp_model, eval_lines, model_type):
    digits = sp_model(model_type=model_type, normalization_rule_name="identity", split_digits=True)
    joined = sp_model(model_type=model_type, normalization_rule_name="identity", split_by_whitespace=False)
    plain = sp_model(model_type=model_type, normalization_rule_name="identity")
    lines = eval_lines[::2]
    d = SentencePieceTokenizer.from_sentencepiece(digits)
    j = SentencePieceTokenizer.from_sentencepiece(joined)
    p = SentencePieceTokenizer.from_sentencepiece(plain)
    assert d.config.split_digits and not j.config.split_by_whitespace
    assert _mismatches(digits, d, lines) == [] and _mismatches(joined, j, lines) == []

    def crossing(tok, config):
        return [e.piece for e in tok.pieces if e.kind == "normal" and split_words(e.piece, config) != [e.piece]]

    strict = SPConfig(split_digits=True, split_by_whitespace=True)
    # A trainer with the flag learns no piece across the boundary...
    assert crossing(d, d.config) == [] and crossing(p, p.config) == []
    assert all(len(e.piece) == 1 for e in d.pieces if e.kind == "normal" and any("0" <= c <= "9" for c in e.piece))
    # ...without it, such pieces appear ("▁200", "of▁the")...
    assert any(any("0" <= c <= "9" for c in x) for x in crossing(p, strict))
    assert any(SPACE in x[1:] for x in crossing(j, strict))
    assert d.encode_as_pieces("in 2024")[-4:] == ["2", "0", "2", "4"]
    # ...and the encoder ignores the flags: flipping them in the model file
    # changes nothing in sentencepiece, and nothing here.
    flipped = spm.SentencePieceProcessor(
        model_proto=_set_trainer_flags(plain.serialized_model_proto(), split_digits=1, split_by_whitespace=1)
    )
    flipped2 = spm.SentencePieceProcessor(
        model_proto=_set_trainer_flags(joined.serialized_model_proto(), split_digits=1, split_by_whitespace=1)
    )
    for before, after in ((plain, flipped), (joined, flipped2)):
        tok_after = SentencePieceTokenizer.from_sentencepiece(after)
        assert tok_after.config.split_digits and tok_after.config.split_by_whitespace
        assert [after.encode(ln) for ln in lines[:400]] == [before.encode(ln) for ln in lines[:400]]
        assert _mismatches(after, tok_after, lines[:400]) == []


def test_split_words():
    cfg = SPConfig(split_digits=True)
    assert split_words(SPACE + "in" + SPACE + "2024ab", cfg) == [SPACE + "in", SPACE, "2", "0", "2", "4", "ab"]
    assert split_words("x１２", cfg) == ["x", "１", "２"]  # fullwidth digits count
    assert split_words("٣٤", cfg) == ["٣٤"]  # Arabic-Indic digits do not (measured)
    assert split_words("a" + SPACE + "b", SPConfig(split_by_whitespace=False)) == ["a" + SPACE + "b"]


# --------------------------------------------------------------------------
# Loading models and errors
# --------------------------------------------------------------------------


def test_load_model_file(sp_model, tmp_path, eval_lines):
    sp = sp_model(model_type="bpe", byte_fallback=True)
    path = tmp_path / "m.model"
    path.write_bytes(sp.serialized_model_proto())
    tok = load(path)
    assert tok.config.charsmap is not None and tok.config.model_type == "bpe"
    assert [tok.encode(ln) for ln in eval_lines[::20]] == [sp.encode(ln) for ln in eval_lines[::20]]
    # The hand-written config and the one read from the model agree.
    by_hand = SPConfig(model_type="bpe", normalization="nmt_nfkc", byte_fallback=True)
    assert replace(tok.config, charsmap=None) == by_hand
    pieces, config = parse_model_proto(sp.serialized_model_proto())
    assert [p.piece for p in pieces] == [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    assert config == tok.config


def test_errors(sp_model, tmp_path):
    garbage = tmp_path / "garbage.model"
    garbage.write_bytes(b"this is not a sentencepiece model\xff\xfe")
    with pytest.raises(ValueError, match="garbage.model"):
        load(garbage)
    blob = sp_model(model_type="unigram").serialized_model_proto()
    truncated = tmp_path / "truncated.model"
    for cut in [*range(1, 40), *range(1000, 1040), len(blob) // 2, len(blob) - 1]:
        truncated.write_bytes(blob[:cut])
        with pytest.raises(ValueError, match="truncated.model"):
            load(truncated)
    empty = tmp_path / "empty.model"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="empty.model"):
        load(empty)
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing.model")

    tok = _tiny()
    with pytest.raises(ValueError, match=f"unknown token ID {len(tok)}: valid IDs are 0..{len(tok) - 1}"):
        tok.decode([0, len(tok)])
    with pytest.raises(ValueError, match="unknown token ID -1"):
        tok.id_to_piece(-1)
    with pytest.raises(KeyError, match="not a piece"):
        tok.token_to_id("zzz")
    assert tok.piece_to_id("zzz") == tok.unk_id  # sentencepiece's rule for its own lookup
    with pytest.raises(KeyError):
        tok.decode_pieces(["a", "zzz"])
    with pytest.raises(TypeError):
        tok.encode(b"bytes")
    with pytest.raises(ValueError, match="model_type"):
        SPConfig(model_type="word")
    with pytest.raises(ValueError, match="normalization"):
        SPConfig(normalization="nfkc_cf")
    with pytest.raises(ValueError, match="byte_fallback"):
        _tiny(byte_fallback=True)
    with pytest.raises(ValueError, match="unknown piece"):
        SentencePieceTokenizer([("a", 0.0)], SPConfig())
    with pytest.raises(ValueError, match="twice"):
        SentencePieceTokenizer([("<unk>", 0.0, "unknown"), ("a", 0.0), ("a", -1.0)])
    with pytest.raises(ValueError, match="kind"):
        SentencePieceTokenizer([("<unk>", 0.0, "unknown"), ("a", 0.0, "special")])
    no_bos = SentencePieceTokenizer([("<unk>", 0.0, "unknown"), ("a", 0.0)], SPConfig(normalization="identity"))
    with pytest.raises(ValueError, match="<s>"):
        no_bos.encode("a", add_bos=True)
