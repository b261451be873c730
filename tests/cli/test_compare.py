"""``compare``: the numbers are `toklab.measure.metrics.measure`'s, side by side, in the order the tokenizers were given."""

from __future__ import annotations

import json

import pytest

from toklab import formats
from toklab.measure import metrics


def test_compare_reports_measures_numbers_for_each_tokenizer(toklab, texts, trained, real):
    result = toklab("compare", texts["zh"], "--vocab", "r50k_base", "--model", trained["bpe"], "--vocab",
                    "o200k_base", "--json")
    assert result.status == 0, result.err
    rows = json.loads(result.out)
    assert [r["tokenizer"] for r in rows] == ["r50k_base", "bpe.json", "o200k_base"]
    text = texts["zh"].read_text(encoding="utf-8")
    tokenizers = [real("r50k_base")[1], formats.load(trained["bpe"])[1], real("o200k_base")[1]]
    for row, tok in zip(rows, tokenizers):
        stats = metrics.measure(tok, text)
        assert (row["tokens"], row["bytes"], row["chars"]) == (stats.tokens, stats.bytes, stats.chars)
        assert row["bytes_per_token"] == pytest.approx(stats.bytes_per_token)
        assert row["chars_per_token"] == pytest.approx(stats.chars_per_token)
        assert row["tokens_vs_first"] == pytest.approx(stats.tokens / rows[0]["tokens"])
        assert row["vocab_size"] == len(tok)
    assert rows[2]["tokens"] < rows[0]["tokens"]  # o200k needs far fewer tokens than GPT-2's vocabulary on Chinese


def test_the_table_lines_up_the_same_numbers(toklab, texts):
    table = toklab("compare", texts["en"], "--vocab", "r50k_base", "--vocab", "cl100k_base")
    rows = json.loads(toklab("compare", texts["en"], "--vocab", "r50k_base", "--vocab", "cl100k_base", "--json").out)
    head, columns, *body = table.out.splitlines()
    assert f"{rows[0]['bytes']:,} UTF-8 bytes, {rows[0]['chars']:,} characters" in head
    assert columns.split()[:5] == ["tokenizer", "vocab", "tokens", "bytes/token", "chars/token"]
    for line, row in zip(body, rows):
        cells = line.split()
        assert cells[0] == row["tokenizer"] and cells[2] == f"{row['tokens']:,}"
        assert cells[3] == f"{row['bytes_per_token']:.3f}" and cells[4] == f"{row['chars_per_token']:.3f}"
    assert len({len(line) for line in [columns, *body]}) == 1  # aligned columns


def test_text_that_spells_a_special_token_is_measured_as_text(toklab, tmp_path, real):
    path = tmp_path / "special.txt"
    path.write_text("a<|endoftext|>b", encoding="utf-8")
    (row,) = json.loads(toklab("compare", path, "--vocab", "cl100k_base", "--json").out)
    assert row["tokens"] == len(real("cl100k_base")[1].encode_ordinary("a<|endoftext|>b"))


def test_compare_reads_standard_input(toklab):
    (row,) = json.loads(toklab("compare", "-", "--vocab", "r50k_base", "--json", stdin="hello world").out)
    assert (row["tokens"], row["bytes"]) == (2, 11)


def test_bad_input_is_one_line(toklab, tmp_path, trained):
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    blank = tmp_path / "blank.txt"
    blank.write_text("   \n", encoding="utf-8")
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("naïve".encode("latin-1"))
    cases = [
        (("compare", empty, "--vocab", "r50k_base"), 1, "nothing to measure"),
        (("compare", blank, "--model", trained["wordpiece"]), 1, "encodes the text to no tokens"),
        (("compare", latin1, "--vocab", "r50k_base"), 1, "byte 0xEF at offset 2"),
        (("compare", tmp_path / "missing.txt", "--vocab", "r50k_base"), 1, "no such file"),
        (("compare", tmp_path, "--vocab", "r50k_base"), 1, "is a directory"),
        (("compare", empty), 2, "choose a tokenizer"),
        (("compare", "--vocab", "r50k_base"), 2, "required: FILE"),
    ]
    for argv, status, phrase in cases:
        result = toklab(*argv)
        assert result.status == status, (argv, result)
        assert phrase in result.error(), (argv, result.err)
