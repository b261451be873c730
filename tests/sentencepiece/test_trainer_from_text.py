"""`toklab.sentencepiece.train`: a sentencepiece model from raw text, normalized and escaped by the trainer itself.

The trainer sees each sentence as the model will (table, whitespace rules,
dummy prefix, ``▁``), so what it learns is what encoding meets. Checked here:
the vocabulary's layout and scores as sentencepiece writes them, what the
options change, what never becomes a piece, the size rule, and how close the
result is to sentencepiece's own trainer on the same lines (measured; the two
trainers differ in known details, see `toklab.sentencepiece.trainer`).
"""

from __future__ import annotations

import struct
import warnings

import pytest

from toklab import sentencepiece as tsp
from toklab.base.checks import SmallVocabularyWarning
from toklab.base.pieces import SPACE, byte_piece
from toklab.data import corpus
from toklab.normalizers.spm import SentencePieceNormalizer
from toklab.normalizers.tables import compile_rule
from toklab.sentencepiece import train_sentencepiece
from toklab.sentencepiece.trainer import covered_chars, script_runs, word_counts


def lines(name: str, size: int, start: int = 0) -> list[str]:
    return [ln for ln in corpus.held_out(name, start, size).split("\n") if ln]


@pytest.fixture(scope="module")
def text() -> list[str]:
    return lines("en", 60_000) + lines("zh", 40_000) + lines("code", 30_000)


def test_the_trainer_escapes_and_normalizes_itself(text):
    tok = tsp.train(text, 1500, model_type="unigram")
    normal = [p.piece for p in tok.pieces if p.kind == "normal"]
    assert not any(" " in p for p in normal)  # spaces are ▁ ...
    assert all(SPACE not in p[1:] for p in normal)  # ... and only ever a piece's first character
    assert "Ａ" not in normal and "\u3000" not in "".join(normal)  # nmt_nfkc ran before counting
    assert tok.config.charsmap == compile_rule("nmt_nfkc")
    assert tok.encode_as_pieces("Hello world")[0].startswith(SPACE)  # the dummy prefix
    raw = tsp.train(text, 1500, model_type="unigram", normalization="identity", add_dummy_prefix=False)
    assert raw.config.charsmap is None and not raw.encode_as_pieces("Hello")[0].startswith(SPACE)


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_vocabulary_layout_is_sentencepiece_s(text, model_type):
    tok = tsp.train(text, 1500, model_type=model_type, byte_fallback=True, user_defined_symbols=["<tag>"],
                    control_symbols=["<s>", "</s>", "<ctl>"])
    kinds = [p.kind for p in tok.pieces]
    assert len(tok) == 1500
    assert kinds[:5] == ["unknown", "control", "control", "control", "user"]
    assert [p.piece for p in tok.pieces[5:261]] == [byte_piece(b) for b in range(256)]
    assert set(kinds[261:]) == {"normal"}
    scores = [p.score for p in tok.pieces[261:]]
    assert all(struct.unpack("<f", struct.pack("<f", s))[0] == s for s in scores)  # float32, as a file stores them
    assert scores == sorted(scores, reverse=True) or model_type == "unigram"
    if model_type == "bpe":
        # sentencepiece's BPE scores: merge i scores -i, then the characters, most frequent first.
        assert scores == [-float(i) for i in range(len(scores))]
        chars = [p.piece for p in tok.pieces if p.kind == "normal" and len(p.piece) == 1]
        assert [p.piece for p in tok.pieces[-len(chars):]] == chars
        assert all(len(p.piece) > 1 for p in tok.pieces[261 : len(tok) - len(chars)])


def test_what_never_becomes_a_piece(text):
    tagged = [ln.replace("the", "<tag>") + " <s> <0x41> <unk>" for ln in text[:400]]
    tok = tsp.train(tagged, 800, model_type="bpe", byte_fallback=True, user_defined_symbols=["<tag>"])
    normal = [p.piece for p in tok.pieces if p.kind == "normal"]
    for reserved in ("<tag>", "<s>", "<0x41>", "<unk>"):
        assert not any(reserved in p for p in normal)
    assert tok.encode_as_pieces("a<tag>b")[1] == "<tag>"


def test_options_reach_the_model(text):
    digits = tsp.train(text, 1500, model_type="bpe", split_digits=True)
    assert not any(len(p.piece) > 1 and any(c.isdigit() for c in p.piece) for p in digits.pieces if p.kind == "normal")
    keep = tsp.train(text, 1500, model_type="bpe", remove_extra_whitespaces=False, normalization="identity")
    assert keep.normalize("a  b ") == SPACE + "a" + SPACE * 2 + "b" + SPACE
    assert tsp.train(text, 1500, model_type="bpe", unk_surface="??").config.unk_surface == "??"


def test_character_coverage_leaves_the_rarest_characters_out(text):
    counts = word_counts(text, SentencePieceNormalizer(tsp.train(text[:50], 300).config))
    every = covered_chars(counts, 1.0)
    most = covered_chars(counts, 0.99)
    assert set(most) < set(every) and every[: len(most)] == most
    full = tsp.train(text, 3000, character_coverage=1.0)
    less = tsp.train(text, 3000, character_coverage=0.99)
    singles = lambda tok: {p.piece for p in tok.pieces if p.kind == "normal" and len(p.piece) == 1}
    assert singles(full) >= set(every) and not singles(less) & (set(every) - set(most))
    rare = next(ch for ch in every if ch not in most and ch != SPACE)
    assert less.encode(rare)[-1] == less.unk_id


def test_size_rule(text):
    with pytest.warns(SmallVocabularyWarning, match=r"learned \d+ entries, fewer than vocab_size=5000"):
        small = tsp.train(["hello world"], 5000, model_type="bpe")
    assert len(small) < 5000
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(tsp.train(["hello world"], 5000, model_type="bpe", allow_smaller=True)) == len(small)
        assert len(tsp.train(text, 1500)) == 1500
    with pytest.raises(ValueError, match="too small"):
        tsp.train(text, 50)  # fewer places than characters
    with pytest.raises(ValueError, match=r"too small: 259 entries are reserved"):
        tsp.train(text, 259, byte_fallback=True)


def test_bad_arguments(tmp_path):
    with pytest.raises(TypeError, match="vocab_size must be an int.*float 300.5"):
        tsp.train("some text", 300.5)
    with pytest.raises(TypeError, match="must be a str, a path"):
        tsp.train(b"some text", 300)
    with pytest.raises(TypeError, match="item 1 is int"):
        tsp.train(["a", 3], 300)
    with pytest.raises(ValueError, match="model_type"):
        tsp.train("text", 300, model_type="word")
    with pytest.raises(ValueError, match="normalization"):
        tsp.train("text", 300, normalization="nfkc_cf")
    with pytest.raises(ValueError, match="character_coverage"):
        tsp.train("text", 300, character_coverage=0)
    with pytest.raises(TypeError, match="byte_fallback must be True or False"):
        tsp.train("text", 300, byte_fallback="yes")
    with pytest.raises(ValueError, match="given twice"):
        tsp.train("text", 300, control_symbols=["<unk>"])
    with pytest.raises(ValueError, match="whitespace"):
        tsp.train("text", 300, user_defined_symbols=["a b"])
    with pytest.raises(ValueError, match="empty"):
        tsp.train(["", "   "], 300)
    with pytest.raises(ValueError, match="not a file"):
        tsp.train(tmp_path / "missing.txt", 300)
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines("en", 20_000)), encoding="utf-8")
    assert tsp.train(path, 400).pieces == tsp.train(lines("en", 20_000), 400).pieces


# ----------------------------------------------------------------------------- against sentencepiece's trainer

SAME_SPLIT = dict(split_by_unicode_script=False, split_by_number=False, max_sentence_length=1 << 20)


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_close_to_sentencepiece_s_own_trainer(model_type):
    """Measured at 2,000 pieces on 120 KB each of en, zh, mixed and code (held-out: the next 30 KB of each).

    BPE: the first 121 merged pieces are sentencepiece's, in its order (then a tie between
    equally frequent pairs goes the other way), the vocabularies share 99.9% (Jaccard) and
    our model needs 0.1% fewer tokens. Unigram: Jaccard 0.96, and 2.5% more tokens than
    sentencepiece's model; that gap is the Unigram trainer's own (`toklab.sentencepiece.compare`
    shows it with identity normalization too), not the front end's.
    """
    train = [ln for name in ("en", "zh", "mixed", "code") for ln in lines(name, 120_000)]
    held = [ln for name in ("en", "zh", "mixed", "code") for ln in lines(name, 30_000, start=120_000)]
    ours = tsp.train(train, 2000, model_type=model_type, split_by_unicode_script=False, split_by_number=False)
    sp = train_sentencepiece(train, vocab_size=2000, model_type=model_type, **SAME_SPLIT)
    theirs = tsp.SentencePieceTokenizer.from_sentencepiece(sp)
    a = [p.piece for p in ours.pieces if p.kind == "normal"]
    b = [p.piece for p in theirs.pieces if p.kind == "normal"]
    jaccard = len(set(a) & set(b)) / len(set(a) | set(b))
    gap = sum(len(ours.encode(ln)) for ln in held) / sum(len(ids) for ids in sp.encode(held)) - 1
    if model_type == "bpe":
        assert a[:100] == b[:100]
        assert jaccard > 0.99 and abs(gap) < 0.005
    else:
        assert jaccard > 0.9 and abs(gap) < 0.04


def test_script_runs():
    assert script_runs("▁GPT-4o是") == ["▁GPT", "-4", "o", "是"]  # Latin | Common | Latin | Han
    assert script_runs("▁GPT-4o", split_by_number=False) == ["▁GPT", "-4o"]  # a digit joins any script
    assert script_runs("カタカナと漢字ー") == ["カタカナと漢字ー"]  # kana and ー count as Han
    assert script_runs("▁e\u0301t.") == ["▁e\u0301t", "."]  # a combining mark takes the script before it
    assert script_runs("▁") == ["▁"] and script_runs("▁▁x") == ["▁▁x"]
    assert script_runs("abc") == ["abc"] and script_runs("") == [""]


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_no_piece_mixes_scripts_and_defaults_are_close_to_sentencepiece(model_type):
    """With both trainers at their defaults (script splitting on), no toklab piece crosses a script
    boundary, and the vocabularies stay close: measured 0.986 (BPE) and 0.80 (Unigram) on 100 KB
    each of en and zh at 2,000 pieces; 0.959 and 0.72 before toklab split by script."""
    train = [ln for name in ("en", "zh") for ln in lines(name, 100_000)]
    ours = tsp.train(train, 2000, model_type=model_type, byte_fallback=True)
    normal = [p.piece for p in ours.pieces if p.kind == "normal"]
    assert all(len(script_runs(p)) == 1 for p in normal)
    sp = train_sentencepiece(train, vocab_size=2000, model_type=model_type, byte_fallback=True)
    theirs = {sp.id_to_piece(i) for i in range(sp.get_piece_size())}
    mine = {p.piece for p in ours.pieces}
    jaccard = len(theirs & mine) / len(theirs | mine)
    assert jaccard > (0.98 if model_type == "bpe" else 0.78)
    off = tsp.train(train, 2000, model_type=model_type, byte_fallback=True, split_by_unicode_script=False)
    assert any(len(script_runs(p.piece)) > 1 for p in off.pieces if p.kind == "normal")


def test_sentences_longer_than_max_sentence_length_are_skipped_and_counted():
    from toklab.base.checks import LongSentenceWarning

    text = lines("en", 20_000)
    huge = "qwertyuiopasdfghjklzxcvbnm" * 7_700  # one 200,000-byte "sentence" without a space
    with pytest.warns(LongSentenceWarning, match=r"toklab.sentencepiece.train skipped 1 sentence longer than "
                                                 r"max_sentence_length=4,192 UTF-8 bytes \(the longest had 200,200\)"):
        tok = tsp.train([*text[:5], huge, *text[5:]], 600)
    assert [p.piece for p in tok.pieces] == [p.piece for p in tsp.train(text, 600).pieces]
    with pytest.raises(ValueError, match="longer than max_sentence_length=10 bytes"), pytest.warns(LongSentenceWarning):
        tsp.train(["a long enough sentence", "another one"], 100, max_sentence_length=10)
