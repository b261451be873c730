"""Tests for toklab.measure.metrics (fertility with declared units, UNK rate, BPB, inflation).

The §1 exercise checkers are tested in ``tests/teaching/exercises/test_chapter_checkers.py``."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from toklab import bpe
from toklab.measure import metrics

# ----------------------------------------------------------------------------- BPB


def test_bpb_worked_example_two_and_four_tokens():
    # Same text, same total NLL (4.0 nats), B = 8 bytes; A cuts it into 2 tokens, B into 4.
    nll_a = [2.5, 1.5]
    nll_b = [1.0, 1.25, 0.75, 1.0]
    assert sum(nll_a) == sum(nll_b) == 4.0
    assert metrics.loss_per_token(sum(nll_a), len(nll_a)) == 2.0
    assert metrics.loss_per_token(sum(nll_b), len(nll_b)) == 1.0
    bpb_a = metrics.bits_per_byte(sum(nll_a), 8)
    bpb_b = metrics.bits_per_byte(sum(nll_b), 8)
    assert bpb_a == bpb_b
    assert round(bpb_a, 4) == 0.7213
    assert bpb_a == pytest.approx(4.0 / (8 * math.log(2)), rel=1e-15)


def test_bpb_known_values():
    assert metrics.bits_per_byte(0.0, 10) == 0.0
    assert metrics.bits_per_byte(8 * math.log(2), 8) == pytest.approx(1.0)
    assert metrics.bits_per_byte(3, 3) == pytest.approx(1 / math.log(2))  # ints accepted


@pytest.mark.parametrize(
    "nll, n_bytes, error",
    [
        (4.0, 0, ValueError),
        (4.0, -8, ValueError),
        (-0.5, 8, ValueError),
        (float("nan"), 8, ValueError),
        (float("inf"), 8, ValueError),
        (4.0, 8.0, TypeError),
        (4.0, True, TypeError),
        ("4.0", 8, TypeError),
    ],
)
def test_bpb_rejects_bad_input(nll, n_bytes, error):
    with pytest.raises(error):
        metrics.bits_per_byte(nll, n_bytes)


def test_loss_per_token_rejects_bad_input():
    with pytest.raises(ValueError):
        metrics.loss_per_token(4.0, 0)
    with pytest.raises(ValueError):
        metrics.loss_per_token(-1.0, 2)


def test_bpb_message_names_the_problem():
    with pytest.raises(ValueError, match="n_bytes must be > 0"):
        metrics.bits_per_byte(1.0, 0)
    with pytest.raises(ValueError, match="finite and >= 0"):
        metrics.bits_per_byte(-1.0, 4)


# ------------------------------------------------------------------- units, fertility

MIXED = "héllo 世界 🙂"  # 1+2+1+1+1 + space + 3+3 + space + 4 bytes


def test_count_units_bytes_and_chars():
    assert metrics.count_units(MIXED, "bytes") == len(MIXED.encode("utf-8")) == 18
    assert metrics.count_units(MIXED, "chars") == 10
    family = "👨\u200d👩\u200d👧"
    assert metrics.count_units(family, "chars") == 5
    assert metrics.count_units(family, "bytes") == 18


def test_words_need_a_named_segmenter():
    with pytest.raises(ValueError, match="named word segmenter"):
        metrics.count_units("a b c", "words")
    with pytest.raises(ValueError, match="unknown word segmenter"):
        metrics.count_units("a b c", "words", "spacy")
    with pytest.raises(ValueError, match="only applies to unit='words'"):
        metrics.count_units("a b c", "bytes", "whitespace")
    with pytest.raises(ValueError, match="unknown unit"):
        metrics.count_units("a b c", "tokens")


def test_whitespace_words_drop_bare_punctuation():
    assert metrics.words("Hello, world — it works !", "whitespace") == ["Hello,", "world", "it", "works"]
    assert metrics.count_units("  two\twords\n", "words", "whitespace") == 2


def test_jieba_segments_a_known_sentence():
    text = "我们在北京大学学习人工智能。"
    assert metrics.words(text, "jieba") == ["我们", "在", "北京大学", "学习", "人工智能"]
    assert metrics.count_units(text, "words", "jieba") == 5
    # The whitespace segmenter sees one "word" in unspaced Chinese: why the segmenter must be named.
    assert metrics.count_units(text, "words", "whitespace") == 1


def test_jieba_is_silent_on_first_use():
    code = (
        "from toklab.measure import metrics\n"
        "print(metrics.count_units('我们在北京大学学习人工智能。', 'words', 'jieba'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "5\n"
    assert out.stderr == ""


def test_fertility_carries_its_unit():
    f = metrics.Fertility(tokens=6, denominator_count=18, unit="bytes")
    assert f.tokens_per_unit == pytest.approx(1 / 3)
    assert f.units_per_token == 3.0
    assert f.label == "tokens/byte"
    assert str(f) == "0.3333 tokens/byte = 6 tokens / 18 bytes"
    w = metrics.Fertility(10, 4, "words", "jieba")
    assert w.label == "tokens/word (jieba)"
    assert "jieba" in str(w)


@pytest.mark.parametrize(
    "args",
    [
        (3, 4, "words"),  # words without segmenter
        (3, 4, "bytes", "jieba"),  # segmenter with bytes
        (3, 0, "chars"),  # zero denominator
        (-1, 4, "bytes"),
        (3, 4, "tokens"),
    ],
)
def test_fertility_rejects_undeclared_or_empty_denominators(args):
    with pytest.raises(ValueError):
        metrics.Fertility(*args)


def test_units_per_token_needs_tokens():
    with pytest.raises(ValueError):
        metrics.Fertility(0, 5, "bytes").units_per_token


class _ByteTokenizer:
    """One token per UTF-8 byte."""

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))


def test_byte_tokenizer_has_fertility_one_per_byte():
    assert metrics.tokens_per_byte(_ByteTokenizer(), MIXED) == 1.0
    assert metrics.bytes_per_token(_ByteTokenizer(), MIXED) == 1.0
    f = metrics.fertility(_ByteTokenizer(), MIXED, "chars")
    assert (f.tokens, f.denominator_count) == (18, 10)


def test_measure_gives_every_denominator_from_one_encoding():
    calls = []

    def counting(text):
        calls.append(text)
        return list(text.encode("utf-8"))

    stats = metrics.measure(counting, "我们在北京大学学习", segmenter="jieba")
    assert len(calls) == 1
    assert (stats.tokens, stats.bytes, stats.chars, stats.words) == (27, 27, 9, 4)
    assert stats.bytes_per_token == 1.0
    assert stats.chars_per_token == pytest.approx(1 / 3)
    assert stats.tokens_per_word == pytest.approx(27 / 4)
    assert stats.fertility("words").segmenter == "jieba"
    no_words = metrics.measure(counting, "abc")
    with pytest.raises(ValueError, match="named word segmenter"):
        no_words.fertility("words")


# ---------------------------------------------------- any tokenizer: adapters and parity


@pytest.fixture(scope="module")
def r50k():
    return bpe.ByteBPE.from_tiktoken("r50k_base")


def test_bytebpe_and_tiktoken_give_the_same_fertility(r50k):
    import tiktoken

    from toklab.data import vocabs
    from toklab.pre_tokenizers import patterns

    spec = vocabs.load("r50k_base")
    enc = tiktoken.Encoding(
        spec.name, pat_str=patterns.resolve(spec.pattern), mergeable_ranks=spec.ranks, special_tokens=spec.special_tokens
    )
    text = "Tokenizers measure text in tokens; 分词器按 token 计数. <|endoftext|> stays text here.\n"
    a = metrics.fertility(r50k, text, "bytes")
    b = metrics.fertility(enc, text, "bytes")
    assert a == b
    assert a.tokens == len(enc.encode_ordinary(text))


def test_hf_tokenizer_is_adapted_without_specials():
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    vocab = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "token": 3, "##ization": 4, "is": 5, "un": 6, "##known": 7}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]
    )
    text = "tokenization is unknown"
    assert tok.encode(text).ids == [1, 3, 4, 5, 6, 7, 2]  # the library adds [CLS]/[SEP]
    assert metrics.encode_ids(tok, text) == [3, 4, 5, 6, 7]  # the measurement does not
    assert metrics.HFTokenizerAdapter(tok, add_special_tokens=True).encode(text)[0] == 1
    # WordPiece: one unknown piece anywhere makes the whole word [UNK].
    rate = metrics.unk_rate(tok, "tokenization is unknowable", unk_id=0)
    assert (rate.unk, rate.tokens) == (1, 4)
    assert rate.rate == 0.25


def test_sentencepiece_unk_and_byte_fallback(tmp_path):
    import io

    import sentencepiece as spm

    lines = ["北京大学的学生在学习人工智能。", "我们在北京学习中文和英文。", "人工智能是计算机科学的一个分支。"] * 20

    def train(byte_fallback: bool):
        buf = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines), model_writer=buf, vocab_size=300, model_type="unigram",
            character_coverage=1.0, byte_fallback=byte_fallback, num_threads=1, minloglevel=2,
            hard_vocab_limit=False, shuffle_input_sentence=False,
        )
        return spm.SentencePieceProcessor(model_proto=buf.getvalue())

    plain = train(False)
    rate = metrics.unk_rate(plain, "龘在北京", unk_id=plain.unk_id())
    assert rate.unk == 1 and rate.tokens >= 2
    fallback = train(True)
    assert metrics.unk_rate(fallback, "龘在北京", unk_id=fallback.unk_id()).unk == 0


def test_encode_ids_rejects_non_int_output():
    with pytest.raises(TypeError, match="expected integers"):
        metrics.encode_ids(lambda text: text.split(), "a b")
    with pytest.raises(TypeError, match="cannot encode"):
        metrics.encode_ids(42, "a b")


def test_count_unk_validates_the_id():
    assert metrics.count_unk([0, 5, 0, 7], 0) == metrics.UnkRate(2, 4)
    assert metrics.count_unk([], 0).rate == 0.0
    with pytest.raises(TypeError):
        metrics.count_unk([0, 1], "0")


# ------------------------------------------------------------------ length inflation


def test_length_inflation_is_relative_to_the_reference(r50k):
    slices = {"en": "The cat sat on the mat. " * 20, "zh": "猫坐在垫子上。" * 20}
    infl = metrics.length_inflation(r50k, slices, reference="en")
    assert list(infl) == ["en", "zh"]
    assert infl["en"] == 1.0
    expected = metrics.tokens_per_byte(r50k, slices["zh"]) / metrics.tokens_per_byte(r50k, slices["en"])
    assert infl["zh"] == pytest.approx(expected)
    assert infl["zh"] > 1.0
    with pytest.raises(ValueError, match="reference slice"):
        metrics.length_inflation(r50k, slices, reference="fr")


def test_byte_inflation_of_a_byte_tokenizer_is_one():
    slices = {"en": "plain ascii", "zh": "中文文本", "emoji": "🙂🙃"}
    assert metrics.length_inflation(_ByteTokenizer(), slices) == {"en": 1.0, "zh": 1.0, "emoji": 1.0}
