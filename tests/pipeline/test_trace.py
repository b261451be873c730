"""`toklab.trace`: every stage's output for one string, for every tokenizer toklab offers.

The stages come in `toklab.pipeline.STAGES` order, each with a name and an
output; the ``ids`` stage is what the model produced, the ``post_processor``
stage is what ``encode`` returns.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from toklab.normalizers import NORMAL_FORMS as NORMALIZERS
from toklab.pipeline import STAGES, Pipeline
from toklab.unicode import to_proxy

from .helpers import sample_texts, trained


def check_trace(pipe: Pipeline, text: str, **options) -> None:
    stages = pipe.trace(text, **options)
    assert tuple(s.name for s in stages) == STAGES
    out = {s.name: s.output for s in stages}
    assert out["input"] == text
    assert "".join(p for p, _ in out["specials"]) == text
    assert "".join(out["pre_tokenizer"]) == out["normalizer"]
    assert len(out["model"]) == len(out["pre_tokenizer"])
    for pretoken, pieces in zip(out["pre_tokenizer"], out["model"]):
        assert b"".join(pieces) == pretoken.encode("utf-8")
    flat = [p for pieces in out["model"] for p in pieces]
    assert pipe.model.tokens(out["ids"]) == flat
    assert out["post_processor"] == pipe.post_process(out["ids"])
    assert out["post_processor"] == pipe.encode(text, **options)
    assert len(stages[4]) == len(out["ids"])


def test_trace_is_consistent_on_the_corpus():
    pipe = Pipeline(trained(), normalizer="NFKC", bos="<|bos|>", eos="<|eos|>")
    for text in sample_texts():
        for line in text.splitlines(keepends=True)[:200]:
            check_trace(pipe, line)
    check_trace(pipe, "x<|im_end|>y\n", allowed_special="all")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40), st.sampled_from([None, *NORMALIZERS]))
def test_trace_is_consistent_on_random_text(text, normalizer):
    check_trace(Pipeline(trained(), normalizer=normalizer, eos="<|eos|>"), text, disallowed_special=())


def test_trace_shows_proxy_pieces():
    pipe = Pipeline(trained(), normalizer="NFKC")
    stages = {s.name: s for s in pipe.trace("Ａ① hi")}
    assert stages["normalizer"].output == "A1 hi"
    assert stages["model"].show().split(" | ")[-1].replace(" ", "") == to_proxy(b" hi")
