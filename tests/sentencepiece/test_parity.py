"""The SentencePiece-style front end against the real ``sentencepiece`` library.

Models are trained by sentencepiece itself (small vocabularies, character
coverage below 1 so that unknowns and byte fallback actually happen) on a
slice of the bundled English, Chinese and mixed corpora, and evaluated on
held-out lines of the same files plus Python source (indentation exercises
the whitespace rules). Our tokenizer reads each trained model and must give
sentencepiece's IDs on every line, for both model types, byte fallback on
and off, dummy prefix on and off, identity and ``nmt_nfkc`` normalization. Unused pieces and the
trainer-only split flags are checked the same way.
"""


from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toklab.base.pieces import SPACE
from toklab.data import corpus
from toklab.sentencepiece import SentencePieceTokenizer
from toklab.sentencepiece.model_file import SPConfig, encode_varint, iter_fields

from ..helpers import VOCAB_SIZE
from .helpers import ORACLE_CONFIGS, TEXT, mismatches, split_words

spm = pytest.importorskip("sentencepiece")


# ---------------------------------------------------- parity on the corpus


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

    ours = [tok.encode(ln) for ln in eval_lines]
    assert [ln for ln, theirs, mine in zip(eval_lines, sp.encode(eval_lines), ours) if theirs != mine] == []
    sample = eval_lines[::25]
    assert [sp.encode(ln, out_type=str) for ln in sample] == [tok.encode_as_pieces(ln) for ln in sample]
    assert [sp.normalize(ln) for ln in sample] == [tok.normalize(ln) for ln in sample]
    # Coverage below 1 really leaves characters out: unknowns (or their bytes) occur.
    ids = [i for line_ids in ours for i in line_ids]
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
    assert mismatches(sp, tok, eval_lines) == []
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


# ---------------- random text and random IDs (sentencepiece as the oracle)


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


# ----------------------------------------------------------- unused pieces


_varint = encode_varint  # the writer's own varint, to build hand-made model files


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
    assert mismatches(sp2, tok, lines) == []
    assert not any(tok.kind(i) == "unused" for ln in lines for i in tok.encode(ln))


# -- split_digits and split_by_whitespace: trainer flags, not encoder flags


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
    assert mismatches(digits, d, lines) == [] and mismatches(joined, j, lines) == []

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
        assert mismatches(after, tok_after, lines[:400]) == []


def test_split_words():
    cfg = SPConfig(split_digits=True)
    assert split_words(SPACE + "in" + SPACE + "2024ab", cfg) == [SPACE + "in", SPACE, "2", "0", "2", "4", "ab"]
    assert split_words("x１２", cfg) == ["x", "１", "２"]  # fullwidth digits count
    assert split_words("٣٤", cfg) == ["٣٤"]  # Arabic-Indic digits do not (measured)
    assert split_words("a" + SPACE + "b", SPConfig(split_by_whitespace=False)) == ["a" + SPACE + "b"]
