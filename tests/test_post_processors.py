"""`toklab.post_processors`: templates around one sequence or a pair, undone by `strip`, as in HF."""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toklab.data import corpus
from toklab.decoders import WordPieceDecoder
from toklab.normalizers import BertNormalizer
from toklab.pipeline import Pipeline
from toklab.post_processors import TemplateProcessing, bos_eos
from toklab.pre_tokenizers import BertPreTokenizer
from toklab.wordpiece import WordPieceModel

from .helpers import small_wordpiece

SPECIALS = {"[CLS]": 101, "[SEP]": 102, "<s>": 1, "</s>": 2}
BERT = TemplateProcessing("[CLS] $A [SEP]", SPECIALS, pair="[CLS] $A [SEP] $B [SEP]")


def test_single_and_pair_templates():
    assert BERT.process([7, 8]) == [101, 7, 8, 102]
    assert BERT.process([7], [9, 9]) == [101, 7, 102, 9, 9, 102]
    assert BERT.process([]) == [101, 102]
    gpt = TemplateProcessing("<s> $A", SPECIALS)
    assert gpt.process([5]) == [1, 5]
    with pytest.raises(ValueError, match="no pair template"):
        gpt.process([5], [6])


@given(st.lists(st.integers(0, 200), max_size=12))
def test_strip_undoes_process(ids):
    for template in (BERT, TemplateProcessing("<s> $A </s>", SPECIALS), TemplateProcessing("$A </s>", SPECIALS)):
        assert template.strip(template.process(ids)) == ids


def test_strip_drops_one_template_and_only_where_present():
    assert BERT.strip([7, 8]) == [7, 8]  # nothing to undo
    assert BERT.strip([101, 7]) == [7] and BERT.strip([7, 102]) == [7]
    assert BERT.strip([101, 101, 7, 102, 102]) == [101, 7, 102]  # one head, one tail


@pytest.mark.parametrize(
    "single, pair, message",
    [
        ("[CLS] [SEP]", None, r"\$A once"),
        ("$A $A", None, r"\$A once"),
        ("$A $B", None, r"\$A once"),
        ("[CLS] $A", "[CLS] $A [SEP]", r"\$A once and \$B once"),
        ("[MASK] $A", None, "'\\[MASK\\]', which is not in special_tokens"),
    ],
)
def test_bad_templates_are_refused_with_the_reason(single, pair, message):
    with pytest.raises(ValueError, match=message):
        TemplateProcessing(single, SPECIALS, pair=pair)


def test_bos_eos():
    assert bos_eos(SPECIALS) is None
    assert bos_eos(SPECIALS, bos="<s>").process([5]) == [1, 5]
    assert bos_eos(SPECIALS, eos="</s>").process([5]) == [5, 2]
    assert bos_eos(SPECIALS, "<s>", "</s>") == TemplateProcessing("<s> $A </s>", {"<s>": 1, "</s>": 2})


@lru_cache(maxsize=None)
def _bert_pipeline() -> Pipeline:
    vocab = small_wordpiece().get_vocab()
    template = TemplateProcessing(
        "[CLS] $A [SEP]", {"[CLS]": vocab["[CLS]"], "[SEP]": vocab["[SEP]"]}, pair="[CLS] $A [SEP] $B [SEP]"
    )
    return Pipeline(
        WordPieceModel(vocab), normalizer=BertNormalizer(), pre_tokenizer=BertPreTokenizer(),
        post_processor=template, decoder=WordPieceDecoder(),
    )


def test_template_equals_hugging_face_for_single_and_pair():
    """[real] The same template as HF's ``processors.TemplateProcessing``, on corpus paragraphs."""
    pipe = _bert_pipeline()
    hf = pipe.to_hf()
    paragraphs = [p for p in corpus.load("en", 30_000).split("\n\n") if p][:40]
    for a, b in zip(paragraphs, paragraphs[1:]):
        assert hf.encode(a).ids == pipe.encode(a)
        ids_a, ids_b = (pipe.encode(x, add_special_tokens=False) for x in (a, b))
        assert hf.encode(a, b).ids == pipe.post_processor.process(ids_a, ids_b)
        assert pipe.decode(pipe.encode(a)) == pipe.decode(ids_a)  # decode undoes the template
