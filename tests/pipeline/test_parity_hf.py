"""The same pipeline built from Hugging Face `tokenizers` components (`Pipeline.to_hf`).

Identical IDs, stage outputs and decoded text on the bundled corpus, for a
BPE trained here and for the real cl100k_base vocabulary.
"""

from __future__ import annotations

import pytest

from toklab import bpe
from toklab.base.unicode import to_proxy
from toklab.data import corpus
from toklab.pipeline import Pipeline

from .helpers import trained


def check_hf_parity(pipe: Pipeline, texts) -> None:
    hf = pipe.to_hf()
    for text in texts:
        ours = pipe.encode(text)
        enc = hf.encode(text)
        assert enc.ids == ours
        assert hf.decode(enc.ids, skip_special_tokens=True) == pipe.decode(ours, skip_special_tokens=True)
    # stage by stage on a few lines
    for line in texts[0].splitlines()[:50]:
        stages = {s.name: s.output for s in pipe.trace(line)}
        if pipe.normalizer is not None:
            assert hf.normalizer.normalize_str(line) == stages["normalizer"]
        hf_pre = [p for p, _ in hf.pre_tokenizer.pre_tokenize_str(stages["normalizer"])]
        assert hf_pre == [to_proxy(p.encode("utf-8")) for p in stages["pre_tokenizer"]]
        hf_tokens = hf.encode(line, add_special_tokens=False).tokens
        assert hf_tokens == [to_proxy(p) for pieces in stages["model"] for p in pieces]


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_hf_equivalent_pipeline_trained_bpe(pattern):
    pipe = Pipeline(trained(pattern), normalizer="NFKC", bos="<|bos|>", eos="<|eos|>")
    check_hf_parity(pipe, [corpus.load(name, max_bytes=150_000) for name in ("en", "zh", "code", "mixed")])


@pytest.mark.slow
def test_hf_equivalent_pipeline_cl100k():
    tok = bpe.ByteBPE.from_tiktoken("cl100k_base")
    pipe = Pipeline(tok, normalizer="NFKC", eos="<|endoftext|>")
    check_hf_parity(pipe, [corpus.load(name, max_bytes=300_000) for name in ("en", "zh", "code", "mixed")])
