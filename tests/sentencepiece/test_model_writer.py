"""``.model`` files written by toklab: the ``sentencepiece`` library loads them and encodes as before.

Two round trips: a model trained by sentencepiece, read by toklab and written
back, must make sentencepiece give the same IDs as the original file on every
line of the bundled corpus; and a model *trained by toklab*
(`toklab.sentencepiece.train`), written as a file, must make sentencepiece give
toklab's IDs on the parity sample's lines (tests/helpers.py; toklab's encoder,
the slow side here, is proven on the whole corpus in test_parity.py). Then the writer's own contract: `serialize_model_proto` is the
inverse of `parse_model_proto`, and it refuses what sentencepiece would refuse
or run differently.
"""

from __future__ import annotations

import dataclasses
import random
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toklab import sentencepiece as tsp
from toklab.base.pieces import KINDS, SPACE, byte_piece
from toklab.data import corpus
from toklab.normalizers.tables import compile_rule
from toklab.sentencepiece import SentencePieceTokenizer, train_sentencepiece
from toklab.sentencepiece.model_file import SPConfig, SPPiece, parse_model_proto, serialize_model_proto

from ..helpers import sample_lines

spm = pytest.importorskip("sentencepiece")

TRAIN_BYTES = 120_000

TRICKY = [
    "", " ", "  ", "\t", "\n", "\r\n", "\x00", "\x01", "\x7f", "\u00a0", "\u3000", "\u200b", "\u200d", "\ufeff",
    SPACE, SPACE * 3, " " + SPACE, "Ａ", "①", "ﬃ", "é", "e\u0301", "\u0301", "¨", "～", "龘", "😀",
    "👨\u200d👩\u200d👧", "<s>", "</s>", "<unk>", "<0x41>", "<tag>", "  leading", "trailing  ", "a  b",
    "x" * 300, "-" * 57, "中文 and English, 日本語も。", "def f(x):\n    return x  # done\n",
]


def train_lines() -> list[str]:
    return [ln for name in ("en", "zh", "mixed") for ln in corpus.load(name, max_bytes=TRAIN_BYTES).split("\n") if ln]


@pytest.fixture(scope="module")
def corpus_lines() -> list[str]:
    """Every line of the four bundled corpus files."""
    return [ln for text in corpus.load_all().values() for ln in text.split("\n")]


@pytest.fixture(scope="module")
def lines_sample() -> list[str]:
    """A third of the parity sample's lines, and the tricky strings."""
    return list(sample_lines()[::3]) + TRICKY


# ----------------------------------------------------------------------------- sentencepiece -> toklab -> file

SP_CONFIGS = {
    "unigram-nmt": dict(model_type="unigram"),
    "bpe-nmt": dict(model_type="bpe"),
    "unigram-identity-bytes": dict(model_type="unigram", normalization_rule_name="identity", byte_fallback=True),
    "bpe-bytes-symbols": dict(model_type="bpe", byte_fallback=True, user_defined_symbols=["<tag>", "ab"],
                              control_symbols=["<ctl>"]),
    "bpe-keep-whitespace": dict(model_type="bpe", normalization_rule_name="identity", add_dummy_prefix=False,
                                remove_extra_whitespaces=False, split_digits=True, unk_surface="[?]"),
}


@pytest.mark.parametrize("name", sorted(SP_CONFIGS))
def test_sentencepiece_model_written_back_encodes_identically(name, corpus_lines, lines_sample):
    original = train_sentencepiece(train_lines(), vocab_size=3000, character_coverage=0.9995, **SP_CONFIGS[name])
    tok = SentencePieceTokenizer.from_sentencepiece(original)
    blob = tok.to_model_proto()
    again = spm.SentencePieceProcessor(model_proto=blob)
    assert again.encode(corpus_lines) == original.encode(corpus_lines)
    assert again.encode(TRICKY) == original.encode(TRICKY)
    assert again.encode(TRICKY, out_type=str) == original.encode(TRICKY, out_type=str)
    ids = original.encode(lines_sample)
    assert again.decode(ids) == original.decode(ids)
    size = original.get_piece_size()
    assert again.get_piece_size() == size
    for i in range(size):
        assert (again.id_to_piece(i), again.get_score(i)) == (original.id_to_piece(i), original.get_score(i))
        assert [getattr(again, f"is_{k}")(i) for k in ("unknown", "control", "unused", "byte")] == \
               [getattr(original, f"is_{k}")(i) for k in ("unknown", "control", "unused", "byte")]
    assert (again.unk_id(), again.bos_id(), again.eos_id(), again.pad_id()) == \
           (original.unk_id(), original.bos_id(), original.eos_id(), original.pad_id())
    # toklab reads its own file back to the same tokenizer.
    back = SentencePieceTokenizer.from_model_proto(blob)
    assert back.pieces == tok.pieces and back.config == tok.config


def test_save_writes_a_file_sentencepiece_loads(tmp_path, lines_sample):
    original = train_sentencepiece(train_lines(), vocab_size=2000, model_type="bpe", byte_fallback=True)
    path = tmp_path / "m.model"
    SentencePieceTokenizer.from_sentencepiece(original).save(path)
    from_file = spm.SentencePieceProcessor(model_file=str(path))
    assert from_file.encode(lines_sample) == original.encode(lines_sample)
    assert tsp.load(path).encode("héllo wörld") == original.encode("héllo wörld")


# ----------------------------------------------------------------------------- toklab-trained -> file -> sentencepiece

TOKLAB_CONFIGS = {
    "unigram": dict(model_type="unigram"),
    "bpe": dict(model_type="bpe"),
    "unigram-identity-bytes-digits": dict(model_type="unigram", normalization="identity", byte_fallback=True,
                                          split_digits=True, remove_extra_whitespaces=False),
    "bpe-nfkc-bytes-symbols": dict(model_type="bpe", normalization="nfkc", byte_fallback=True, add_dummy_prefix=False,
                                   user_defined_symbols=["<tag>", "ab"], control_symbols=["<s>", "</s>", "<ctl>"]),
}
FULL_SAMPLE = {"unigram", "bpe"}  # every line of the parity sample; the other two on a third of them


@pytest.mark.parametrize("name", sorted(TOKLAB_CONFIGS))
def test_model_trained_by_toklab_encodes_identically_in_sentencepiece(name, lines_sample):
    tok = tsp.train(train_lines(), 3000, **TOKLAB_CONFIGS[name])
    assert len(tok) == 3000
    sp = spm.SentencePieceProcessor(model_proto=tok.to_model_proto())
    lines = list(sample_lines()) + TRICKY if name in FULL_SAMPLE else lines_sample
    ours = [tok.encode(ln) for ln in lines]
    assert sp.encode(lines) == ours
    sample = lines[::5]
    assert sp.encode(sample, out_type=str) == [tok.encode_as_pieces(ln) for ln in sample]
    assert [sp.decode(ids) for ids in ours[::5]] == [tok.decode(ids) for ids in ours[::5]]
    assert [sp.normalize(ln) for ln in sample] == [tok.normalize(ln) for ln in sample]
    assert sp.encode("hello", add_bos=True, add_eos=True) == tok.encode("hello", add_bos=True, add_eos=True)


@pytest.fixture(scope="module")
def small_models():
    lines = train_lines()[::4]
    return {mt: tsp.train(lines, 1500, model_type=mt, byte_fallback=True, character_coverage=0.995)
            for mt in ("unigram", "bpe")}


TEXT = st.lists(st.one_of(st.sampled_from(TRICKY), st.characters(blacklist_categories=("Cs",))), max_size=20).map("".join)


@given(TEXT)
def test_random_text_encodes_identically_in_sentencepiece(small_models, text):
    for tok in small_models.values():
        sp = spm.SentencePieceProcessor(model_proto=tok.to_model_proto())
        ids = tok.encode(text)
        assert sp.encode(text) == ids
        assert sp.decode(ids) == tok.decode(ids)


def test_training_is_deterministic_across_hash_seeds():
    code = (
        "import hashlib; from toklab import sentencepiece as tsp; from toklab.data import corpus\n"
        "text = corpus.load('mixed', max_bytes=40_000)\n"
        "for mt in ('unigram', 'bpe'):\n"
        "    print(hashlib.sha256(tsp.train(text, 900, model_type=mt).to_model_proto()).hexdigest())\n"
    )
    runs = {
        subprocess.run([sys.executable, "-c", code], env={"PYTHONHASHSEED": seed, "PATH": ""},
                       capture_output=True, text=True, check=True).stdout
        for seed in ("0", "1", "12345")
    }
    assert len(runs) == 1


# ----------------------------------------------------------------------------- the writer's contract

def entry(kind: str):
    piece = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=5)
    score = st.floats(-50, 0, width=32)
    return st.builds(SPPiece, piece, score, st.just(kind))


CONFIG = st.builds(
    SPConfig,
    model_type=st.sampled_from(["unigram", "bpe"]),
    normalization=st.sampled_from(["identity", "nmt_nfkc"]),
    add_dummy_prefix=st.booleans(),
    remove_extra_whitespaces=st.booleans(),
    escape_whitespaces=st.booleans(),
    split_digits=st.booleans(),
    split_by_whitespace=st.booleans(),
    unk_surface=st.sampled_from([" \u2047 ", "?", "<unk>"]),
)


@given(st.lists(st.one_of(entry("normal"), entry("control"), entry("user"), entry("unused")), max_size=30,
                unique_by=lambda e: e.piece), CONFIG, st.booleans())
def test_serialize_is_the_inverse_of_parse(entries, config, byte_fallback):
    pieces = [SPPiece("<unk>", 0.0, "unknown")] + [e for e in entries if e.piece != "<unk>"]
    if byte_fallback:
        pieces = [p for p in pieces if not (p.piece.startswith("<0x") and p.piece.endswith(">"))]
        pieces += [SPPiece(byte_piece(b), 0.0, "byte") for b in range(256)]
    if config.normalization != "identity":
        config = dataclasses.replace(config, charsmap=compile_rule(config.normalization))
    config = dataclasses.replace(config, byte_fallback=byte_fallback)
    assert parse_model_proto(serialize_model_proto(pieces, config)) == (pieces, config)


def test_writer_refuses_what_sentencepiece_would_refuse_or_run_differently():
    unk, a = SPPiece("<unk>", 0.0, "unknown"), SPPiece("a", -1.0)
    plain = SPConfig(normalization="identity")
    with pytest.raises(ValueError, match="exactly one unknown piece, found 0"):
        serialize_model_proto([a], plain)
    with pytest.raises(ValueError, match="exactly one unknown piece, found 2"):
        serialize_model_proto([unk, SPPiece("<u2>", 0.0, "unknown")], plain)
    with pytest.raises(ValueError, match="byte pieces but byte_fallback is off"):
        serialize_model_proto([unk, a, SPPiece("<0x41>", 0.0, "byte")], plain)
    with pytest.raises(ValueError, match="256 byte pieces"):
        serialize_model_proto([unk, a, SPPiece("<0x41>", 0.0, "byte")], dataclasses.replace(plain, byte_fallback=True))
    with pytest.raises(ValueError, match="spelled <0xXX>"):
        serialize_model_proto([unk, SPPiece("<0x4>", 0.0, "byte")], plain)
    with pytest.raises(ValueError, match="twice"):
        serialize_model_proto([unk, a, a], plain)
    with pytest.raises(ValueError, match="non-empty"):
        serialize_model_proto([unk, SPPiece("", 0.0)], plain)
    with pytest.raises(ValueError, match="unknown kind"):
        serialize_model_proto([unk, SPPiece("b", 0.0, "special")], plain)
    with pytest.raises(TypeError, match="SPConfig"):
        serialize_model_proto([unk, a], {"model_type": "bpe"})
    # A rule applied by toklab's code, not by a table: sentencepiece would not normalize at all.
    by_rule = SentencePieceTokenizer([unk, a], SPConfig(normalization="nmt_nfkc"))
    with pytest.raises(ValueError, match="compiled tables"):
        by_rule.to_model_proto()
    assert set(KINDS) == {"normal", "unknown", "control", "user", "byte", "unused"}


def test_written_scores_are_float32_and_kinds_survive():
    rng = random.Random(0)
    pieces = [SPPiece("<unk>", 0.0, "unknown"), SPPiece("<s>", 0.0, "control"), SPPiece("<t>", 0.0, "user")]
    pieces += [SPPiece(f"p{i}", -rng.random() * 20) for i in range(50)]
    back, _ = parse_model_proto(serialize_model_proto(pieces, SPConfig(normalization="identity")))
    assert [(p.piece, p.kind) for p in back] == [(p.piece, p.kind) for p in pieces]
    assert all(abs(b.score - p.score) <= 1e-6 * max(1.0, abs(p.score)) for b, p in zip(back, pieces))
    assert parse_model_proto(serialize_model_proto(back, SPConfig(normalization="identity")))[0] == back
