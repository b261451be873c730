"""Custom pre-tokenizer patterns: what they leave unmatched is kept, never dropped, and they cannot hang.

A pattern from a file or a user need not match every character (``[a-z]+`` skips
capitals and punctuation) and may match the empty string; toklab keeps every gap as
a chunk, as Hugging Face's ``Split`` does, so decoding gives the text back and IDs
equal HF's. Such a pattern may also backtrack for ever (``(a|aa)+$``): it runs under
a time limit and fails with `PatternTimeout` (a ValueError), from the constructor,
a toklab-bpe file, a tokenizer.json, another thread, or the command line.
"""

from __future__ import annotations

import json
import threading

import pytest

import toklab
from toklab import ByteBPE
from toklab.base import limits
from toklab.bpe import files
from toklab.cli import main
from toklab.formats.hf_json import from_hf_json
from toklab.pre_tokenizers import patterns
from toklab.pre_tokenizers.behaviors import BEHAVIORS, split_behaved

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, Tokenizer, pre_tokenizers  # noqa: E402

TEXTS = ["Hello world!", "", "aaa", "a b  c", "xxaxx", "héllo Wörld 42!", "😀a😀 B", "\n\nTHE END\n", "abc" * 50]
# Gaps of every kind: capitals and punctuation left out, empty matches, matches only at some places.
GAPPY = [r"[a-z]+", r"x*", r"\s", r"(?=a)", r"a|", r"\p{Lu}", r"[o]"]
BAD = "(a|aa)+$"
SLOW_TEXT = "a" * 41 + "b"


@pytest.fixture(scope="module")
def merges() -> list[tuple[bytes, bytes]]:
    return toklab.train_bpe("hello world the quick brown fox jumps over the lazy dog " * 20, 300).merges


@pytest.mark.parametrize("pattern", [r"[a-z]+", r"x*", r"(?=a)", r"\p{Lu}"])
def test_a_custom_pattern_keeps_the_text_it_does_not_match(merges, pattern):
    tok = ByteBPE(merges, pattern=pattern)
    for text in TEXTS:
        assert tok.decode(tok.encode(text)) == text
    assert patterns.split("Hello world!", r"[a-z]+") == ["H", "ello", " ", "world", "!"]
    assert ByteBPE(merges, pattern=r"x*").encode("Hello") != []  # an empty-matching pattern once gave []


def test_a_gappy_pattern_read_from_a_toklab_bpe_file_keeps_the_gaps(merges, tmp_path):
    path = tmp_path / "gappy.json"
    ByteBPE(merges, pattern="cl100k").save(path)
    content = json.loads(path.read_text(encoding="utf-8"))
    del content["sha256"]
    content["pattern"] = r"[a-z]+"
    files.write(path, content)  # anyone can recompute the checksum
    tok = ByteBPE.load(path)
    assert tok.decode(tok.encode("Hello world!")) == "Hello world!"


def test_tiktoken_is_given_the_gaps_too(merges):
    tok = ByteBPE(merges, pattern=r"[a-z]+")
    enc = tok.to_tiktoken()
    for text in TEXTS:
        assert enc.encode(text) == tok.encode(text)
    with pytest.raises(ValueError, match="matches the empty string"):
        ByteBPE(merges, pattern=r"x*").to_tiktoken()  # tiktoken cannot represent it: said, not dropped


@pytest.mark.parametrize("pattern", GAPPY)
@pytest.mark.parametrize("behavior", BEHAVIORS)
@pytest.mark.parametrize("invert", [False, True])
def test_split_behaviours_equal_hugging_face(pattern, behavior, invert):
    hf = pre_tokenizers.Split(Regex(pattern), behavior=behavior, invert=invert)
    rx = patterns.compiled(pattern)
    for text in TEXTS:
        assert split_behaved(rx, text, behavior, invert) == [p for p, _ in hf.pre_tokenize_str(text)], text


@pytest.mark.parametrize("behavior", BEHAVIORS)
def test_a_tokenizer_json_with_a_gappy_split_gives_hugging_faces_ids(merges, behavior):
    document = json.loads(ByteBPE(merges, pattern=r"[a-z]+").to_hf_json())
    assert [s["type"] for s in document["pre_tokenizer"]["pretokenizers"]] == ["Split", "ByteLevel"]
    document["pre_tokenizer"]["pretokenizers"][0]["behavior"] = {
        "isolated": "Isolated", "removed": "Removed", "merged_with_previous": "MergedWithPrevious",
        "merged_with_next": "MergedWithNext", "contiguous": "Contiguous"}[behavior]
    real = Tokenizer.from_str(json.dumps(document))
    tok = from_hf_json(document)
    for text in TEXTS:
        assert tok.encode(text) == real.encode(text).ids, text
    if behavior == "isolated":
        assert tok.decode(tok.encode("Hello world!")) == "Hello world!"


@pytest.mark.parametrize("split", [{"String": "o"}, {"String": "-"}, {"Regex": "o"}, {"Regex": "gpt2"}])
def test_a_split_on_a_word_is_literal_text_not_a_pattern_name(merges, split):
    document = json.loads(ByteBPE(merges, pattern=r"[a-z]+").to_hf_json())
    document["pre_tokenizer"]["pretokenizers"][0]["pattern"] = split
    real = Tokenizer.from_str(json.dumps(document))
    tok = from_hf_json(document)
    for text in [*TEXTS, "gpt2-o-gpt2", "--o--"]:
        assert tok.encode(text) == real.encode(text).ids, text


# ----------------------------------------------------------------------------- time limits


@pytest.fixture
def short_limit(monkeypatch):
    """A quarter-second limit, so that each runaway pattern below costs the test suite little."""
    monkeypatch.setattr(limits, "BASE_SECONDS", 0.25)


def test_a_runaway_pattern_in_the_constructor_stops_with_a_named_error(merges, short_limit):
    tok = ByteBPE(merges, pattern=BAD)
    with pytest.raises(patterns.PatternTimeout, match=r"\(a\|aa\)\+\$.*42 characters"):
        tok.encode(SLOW_TEXT)
    assert tok.decode(tok.encode("aab")) == "aab"  # short runs are fine, and the timer is gone afterwards
    assert issubclass(patterns.PatternTimeout, ValueError)


def test_a_runaway_pattern_stops_in_another_thread_too(merges, short_limit):
    tok = ByteBPE(merges, pattern=BAD)
    caught = []

    def run():
        try:
            tok.encode(SLOW_TEXT)
        except patterns.PatternTimeout as exc:
            caught.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(60)
    assert not worker.is_alive() and len(caught) == 1  # regex's timeout= there, no signal


def test_a_runaway_pattern_from_a_file_or_a_tokenizer_json_stops(merges, short_limit, tmp_path, capsys):
    path = tmp_path / "slow.json"
    ByteBPE(merges, pattern="gpt2").save(path)
    content = json.loads(path.read_text(encoding="utf-8"))
    del content["sha256"]
    content["pattern"] = BAD
    files.write(path, content)
    with pytest.raises(patterns.PatternTimeout):
        ByteBPE.load(path).encode(SLOW_TEXT)
    document = json.loads(ByteBPE(merges, pattern=BAD).to_hf_json())
    with pytest.raises(patterns.PatternTimeout):
        from_hf_json(document).encode(SLOW_TEXT)
    assert main(["encode", SLOW_TEXT, "--model", str(path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("toklab encode: error: ") and "ran longer than" in err[0]


def test_catalogue_patterns_run_without_a_limit():
    """The time limit guards only patterns that are not toklab's own (their speed and output stay)."""
    for name, source in patterns.PATTERNS.items():
        for spelling in (name, source):
            assert patterns.splitter(spelling)._fast is not None
    assert patterns.splitter(r"[a-z]+")._fast is None
