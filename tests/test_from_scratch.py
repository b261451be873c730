"""§7's single file, ``book/code/tokenization_from_scratch.py``, tied to the real thing.

The file imports nothing from toklab (a reader downloads it alone), so these tests are
what connect it to the package and the real libraries: its BPE training gives
`toklab.bpe.reference_train`'s merges on real text; its byte-level encoder, given the
real ``r50k_base`` ranks, gives tiktoken's IDs; its Viterbi and forward give toklab's
Unigram segmentation and log-probabilities. Its chunk pattern, written for the standard
library's ``re``, splits the whole corpus as GPT-2's pattern does (as the ``regex``
module runs it) and differs exactly where the file's comment says it does. Run on its
own, the file prints eight PASS lines; with one part broken, that check FAILs.
"""

from __future__ import annotations

import ast
import importlib.util
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from toklab import bpe, unigram
from toklab.data import corpus
from toklab.pre_tokenizers import patterns

FILE = Path(__file__).resolve().parents[1] / "book" / "code" / "tokenization_from_scratch.py"
MAX_LINES = 440  # "at most about 400"; the eight checks and their runner take a quarter
MAX_FUNCTION_LINES = 20


def load(path: Path = FILE):
    spec = importlib.util.spec_from_file_location(f"scratch_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def fs():
    return load()


def run_alone(path: Path) -> subprocess.CompletedProcess:
    """The file as a reader runs it after a download: ``-S``, so nothing but the standard library is importable."""
    return subprocess.run([sys.executable, "-S", path.name], cwd=path.parent, capture_output=True, text=True,
                          timeout=60)


# ---------------------------------------------------------------------------- the file itself


def test_runs_alone_and_prints_eight_pass_lines(tmp_path):
    copy = tmp_path / FILE.name
    copy.write_bytes(FILE.read_bytes())
    out = run_alone(copy)
    lines = out.stdout.splitlines()
    assert out.returncode == 0 and not out.stderr, out.stdout + out.stderr
    assert [line.split(":")[0].split(" ", 2)[:2] for line in lines] == [["PASS", str(k)] for k in range(1, 9)]


def test_a_broken_part_fails_its_check_and_the_exit_status(tmp_path):
    # An encoder that merges the pair most frequent in its own input: training again at encode time.
    broken = FILE.read_text(encoding="utf-8").replace('if __name__ == "__main__":', (
        "def encode_word(symbols, ranks):\n"
        "    word = list(symbols)\n"
        "    while len(word) > 1:\n"
        "        known = [p for p in zip(word, word[1:]) if p[0] + p[1] in ranks]\n"
        "        if not known:\n"
        "            break\n"
        "        pair = max(known, key=known.count)\n"
        "        word = list(merge_pair(tuple(word), pair))\n"
        "    return word\n\n\n"
        'if __name__ == "__main__":'))
    copy = tmp_path / FILE.name
    copy.write_text(broken, encoding="utf-8")
    out = run_alone(copy)
    failed = [line for line in out.stdout.splitlines() if line.startswith("FAIL")]
    assert out.returncode == 1
    assert [line.split(" ", 2)[1] for line in failed] == ["2"], out.stdout
    assert "'abcbc' -> ['a', 'bc', 'bc']" in failed[0]


def test_standard_library_only_short_lines_short_functions():
    source = FILE.read_text(encoding="utf-8")
    tree = ast.parse(source)
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= sys.stdlib_module_names, imported - sys.stdlib_module_names
    lines = source.splitlines()
    assert len(lines) <= MAX_LINES
    assert [n for n, line in enumerate(lines, 1) if len(line) > 79] == []
    long = {f.name: f.end_lineno - f.lineno + 1 for f in tree.body if isinstance(f, ast.FunctionDef)
            if f.end_lineno - f.lineno + 1 > MAX_FUNCTION_LINES}
    assert not long, long


def test_every_function_a_check_calls_is_in_the_file(fs):
    from toklab.teaching import sanity

    assert sanity.missing_names(fs) == []


# ---------------------------------------------------------------------------- tied to toklab and tiktoken


def test_training_gives_reference_train_merges_on_real_text(fs):
    text = "\n".join(corpus.load(name, 6_000) for name in ("en", "zh", "code"))
    words = Counter(tuple(fs.to_chars(chunk.encode("utf-8"))) for chunk in fs.split(text))
    merges = fs.train(words, 120)
    assert len(merges) == 120
    assert merges == bpe.reference_train(words, 120)
    assert fs.train_on_text(text, 120) == merges


def test_pattern_splits_the_corpus_as_gpt2s(fs, corpus_texts):
    for name, text in corpus_texts.items():
        assert fs.split(text) == patterns.split(text, "gpt2"), name


@pytest.mark.parametrize(("text", "gpt2"), [
    ("x² ½ Ⅻ①", ["x", "²", " ½", " Ⅻ①"]),  # numbers that are not decimal digits
    ("a \x1cb", ["a", " \x1c", "b"]),        # a separator that re's \s takes for whitespace
])
def test_pattern_differs_where_the_file_says(fs, text, gpt2):
    assert patterns.split(text, "gpt2") == gpt2
    assert fs.split(text) != gpt2


def test_encoder_with_r50k_ranks_gives_tiktokens_ids(fs, real, corpus_texts):
    """On the corpus, which the file's re pattern chunks as GPT-2's does (the test above)."""
    spec, _, enc = real("r50k_base")
    ranks = {fs.to_chars(token): rank for token, rank in spec.ranks.items()}
    assert list(ranks.values())[:256] == list(range(256)) and list(ranks)[:256] == list(fs.vocab([]))
    for name, text in corpus_texts.items():
        sample = text[:60_000]
        ids = fs.encode(sample, ranks)
        assert ids == enc.encode_ordinary(sample), name
        assert fs.decode(ids, ranks) == sample


def test_viterbi_and_forward_give_toklab_unigrams_answers(fs):
    text = corpus.load("en", 30_000) + "\n" + corpus.load("zh", 15_000)
    model = unigram.train(text, 1_000)
    logp = model.pieces
    held = corpus.held_out("en", 30_000, 6_000) + "\n" + corpus.held_out("zh", 15_000, 3_000)
    lines = [line for line in held.splitlines() if line and all(char in logp for char in line)]
    assert len(lines) > 50
    for line in lines:
        pieces, score = fs.viterbi(line, logp)
        assert pieces == model.viterbi(line)
        assert math.isclose(score, model.log_prob(pieces), rel_tol=1e-12)
        assert math.isclose(fs.forward(line, logp), model.marginal_likelihood(line), rel_tol=1e-9)


def test_byte_fallback_segments_as_toklabs_unigram_with_byte_fallback(fs):
    logp = {piece: -float(k + 1) for k, piece in enumerate(["a", "b", "ab", " ", "é", "ba"])}
    model = unigram.Unigram(logp, byte_fallback=True)
    for text in ("ab 龘ba", "éé🙂a\x00", "龘", "", "a b"):
        assert fs.segment(text, logp) == model.viterbi(text)
        assert fs.decode_pieces(fs.segment(text, logp)) == text
