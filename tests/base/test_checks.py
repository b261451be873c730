"""Bad input as a new user would try it: every public entry point names what it expected and what it got.

Each case is (call, exception type, a fragment the message must hold). The fragment is the
argument's name or what to do instead, so a message that merely fails is not enough.
"""

from __future__ import annotations

import warnings

import pytest

import toklab
import toklab.base.special
import toklab.base.unicode
import toklab.data.corpus
import toklab.measure.metrics
import toklab.measure.viz
import toklab.pre_tokenizers.patterns
from toklab import bpe, unigram, wordpiece
from toklab.base.checks import SmallVocabularyWarning, check_id, check_ids, check_int, check_str

TEXT = "the cat sat on the mat; the dog sat on the log. " * 40


@pytest.fixture(scope="module")
def byte_bpe():
    return bpe.train(TEXT, 300, allow_smaller=True)


@pytest.fixture(scope="module")
def unigram_model():
    return unigram.train(TEXT.replace(" ", "▁"), 60, allow_smaller=True)


@pytest.fixture(scope="module")
def wordpiece_tok():
    return wordpiece.train(TEXT, 80, allow_smaller=True)


def test_checks_name_the_argument():
    with pytest.raises(TypeError, match=r"vocab_size must be an int \(a whole number"):
        check_int(300.5, "vocab_size")
    with pytest.raises(TypeError, match="bool"):
        check_int(True, "n")
    with pytest.raises(ValueError, match="n must be >= 1, got 0"):
        check_int(0, "n", minimum=1)
    with pytest.raises(TypeError, match="decode it first"):
        check_str(b"abc")
    with pytest.raises(TypeError, match="item 1 is str"):
        check_ids([1, "2"])
    with pytest.raises(TypeError, match="got int 5"):
        check_ids(5)
    with pytest.raises(TypeError, match="token ID must be an int"):
        check_id(1.0)
    assert check_ids(iter([1, 2])) == [1, 2]


def test_byte_bpe_entry_points(byte_bpe):
    tok = byte_bpe
    cases = [
        (lambda: tok.encode(b"abc"), "text must be str, got bytes"),
        (lambda: tok.encode_ordinary(123), "text must be str, got int"),
        (lambda: tok.segment(b"ab"), "chunk must be str"),
        (lambda: tok.decode("abc"), "iterable of int token IDs, got str"),
        (lambda: tok.decode([1, None]), "item 1 is NoneType"),
        (lambda: tok.id_to_token("1"), "token ID must be an int"),
        (lambda: tok.token_to_id("a"), r"encode\('utf-8'\)"),
        (lambda: tok.encode_batch("one text"), "use encode for one text"),
        (lambda: list(tok.encode_iterable(["a", b"b"])), "each piece must be str"),
        (lambda: tok.tokens("12"), "got str"),
        (lambda: toklab.ByteBPE([("a", "b")]), "merge 0 must be a pair of bytes"),
        (lambda: toklab.ByteBPE("ab"), "merges must be a list"),
        (lambda: toklab.ByteBPE([], pattern=3), "pattern must be str"),
        (lambda: toklab.ByteBPE([], special_tokens="<|end|>"), "special_tokens must be a dict or a list"),
        (lambda: toklab.ByteBPE.from_ranks([b"a"], pattern="gpt2"), "ranks must be a mapping"),
    ]
    for call, fragment in cases:
        with pytest.raises(TypeError, match=fragment):
            call()


def test_trainers_refuse_wrong_types():
    cases = [
        (lambda: bpe.train(TEXT, 300.5), "vocab_size must be an int"),
        (lambda: bpe.train(TEXT, "300"), "vocab_size must be an int"),
        (lambda: bpe.train(b"bytes", 300), "decode it first"),
        (lambda: bpe.train(42, 300), "source must be a str"),
        (lambda: bpe.train(TEXT, 300, special_tokens="<|end|>"), "special_tokens must be a list"),
        (lambda: wordpiece.train(TEXT, 80.0), "vocab_size must be an int"),
        (lambda: wordpiece.train(b"x", 80), "source must be a str"),
        (lambda: wordpiece.train(TEXT, 80, special_tokens="[UNK]"), "special_tokens must be a list"),
        (lambda: unigram.train(TEXT, 60.5), "vocab_size must be an int"),
        (lambda: unigram.train(3.0, 60), "source must be text"),
        (lambda: bpe.reference_train({"ab": 2}, 1.5), "num_merges must be an int"),
        (lambda: bpe.reference_train(["ab"], 1), "words must map each word"),
        (lambda: bpe.reference_encode("ab", "ab"), "merges must be a sequence"),
    ]
    for call, fragment in cases:
        with pytest.raises(TypeError, match=fragment):
            call()


@pytest.mark.parametrize("trainer,size", [(bpe.train, 1000), (wordpiece.train, 1000), (unigram.train, 1000)])
def test_one_rule_for_a_vocabulary_the_corpus_cannot_fill(trainer, size):
    text = "aaaa aaaa" if trainer is not unigram.train else "aaaa▁aaaa"
    with pytest.warns(SmallVocabularyWarning, match="fewer than vocab_size=1000"):
        small = trainer(text, size)
    assert len(small) < size
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallVocabularyWarning)
        again = trainer(text, size, allow_smaller=True)
    assert len(again) == len(small)


def test_unigram_and_wordpiece_entry_points(unigram_model, wordpiece_tok):
    cases = [
        (lambda: unigram_model.encode(b"cat"), "text must be str"),
        (lambda: unigram_model.viterbi(1), "text must be str"),
        (lambda: unigram_model.nbest(b"cat", 2), "text must be str"),
        (lambda: unigram_model.decode("12"), "got str"),
        (lambda: unigram_model.forward(None), "text must be str"),
        (lambda: toklab.Unigram([("a", "-1.0")]), "must be a number"),
        (lambda: wordpiece_tok.encode(b"cat"), "text must be str"),
        (lambda: wordpiece_tok.decode("12"), "got str"),
    ]
    for call, fragment in cases:
        with pytest.raises(TypeError, match=fragment):
            call()


def test_pipeline_refuses_what_is_not_a_stage(byte_bpe):
    with pytest.raises(TypeError, match="lacks"):
        toklab.Pipeline(model=object())
    with pytest.raises(TypeError, match="pre_tokenizer must have a pre_tokenize"):
        toklab.Pipeline(model=byte_bpe, pre_tokenizer="gpt2")
    pipe = toklab.Pipeline(model=byte_bpe)
    with pytest.raises(TypeError, match="text must be str"):
        pipe.encode(b"cat")
    with pytest.raises(TypeError, match="text must be str"):
        pipe.trace(b"cat")
    with pytest.raises(TypeError, match="got str"):
        pipe.decode("12")


def test_small_modules():
    cases = [
        (lambda: toklab.data.corpus.load("en", 1.5), "max_bytes must be an int"),
        (lambda: toklab.data.corpus.held_out("en", "0"), "start must be an int"),
        (lambda: toklab.pre_tokenizers.patterns.split(b"x"), "text must be str"),
        (lambda: toklab.base.special.chatml("hi"), "messages must be a list"),
        (lambda: toklab.base.special.chatml(["hi"]), "message 0 must be a dict"),
        (lambda: toklab.base.unicode.to_proxy("abc"), "to_proxy takes bytes"),
        (lambda: toklab.base.unicode.from_proxy(b"abc"), "from_proxy takes"),
        (lambda: toklab.base.unicode.graphemes(b"abc"), "graphemes takes a str"),
        (lambda: toklab.measure.viz.token_label("abc"), "token_label takes"),
        (lambda: toklab.measure.metrics.count_unk("12", 0), "ids must be token IDs"),
        (lambda: toklab.SentencePieceTokenizer.from_model_proto("x.model"), "toklab.sentencepiece.load"),
    ]
    for call, fragment in cases:
        with pytest.raises(TypeError, match=fragment):
            call()


def test_empty_and_well_formed_input_still_work(byte_bpe, unigram_model):
    assert byte_bpe.encode("") == []
    assert byte_bpe.decode([]) == ""
    assert byte_bpe.decode(iter(byte_bpe.encode("the cat"))) == "the cat"
    assert byte_bpe.token_to_id(bytearray(b"t")) == byte_bpe.token_to_id(b"t")
    assert unigram_model.encode("") == []
    assert toklab.pre_tokenizers.patterns.split("") == []


def test_training_files_that_are_not_utf8_are_named(tmp_path):
    import pathlib

    from toklab import sentencepiece as tsp

    path = tmp_path / "latin1.txt"
    path.write_bytes("café au lait\n".encode("latin-1") * 50)
    for train in (lambda p: bpe.train(p, 300), lambda p: wordpiece.train(p, 80), lambda p: tsp.train(p, 60)):
        with pytest.raises(ValueError, match=r"latin1\.txt is not UTF-8 text \(invalid continuation byte: byte 0xe9\)"):
            train(pathlib.Path(path))


def test_a_file_name_given_as_text_is_refused_with_the_fix(tmp_path, monkeypatch):
    """``train_bpe("corpus.txt")`` once trained on the ten characters of the name, with only a size warning."""
    import pathlib

    from toklab import sentencepiece as tsp

    monkeypatch.chdir(tmp_path)
    (tmp_path / "corpus").write_text(TEXT, encoding="utf-8")  # an existing file, whatever its name
    trainers = {"train_bpe": lambda s: toklab.train_bpe(s, 300), "train_wordpiece": lambda s: wordpiece.train(s, 80),
                "train_unigram": lambda s: unigram.train(s, 60), "sentencepiece.train": lambda s: tsp.train(s, 60)}
    for name, train in trainers.items():
        for given in ("corpus.txt", "data/wiki.jsonl", "corpus"):
            with pytest.raises(ValueError, match=rf"source {given!r} looks like a file name.*pathlib.Path"):
                train(given)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert toklab.train_bpe(pathlib.Path("corpus"), 300).merges == bpe.train(TEXT, 300).merges
        assert len(wordpiece.train("notes on corpus.txt and more", 40, allow_smaller=True)) > 5  # text that names one
