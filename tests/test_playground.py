"""`toklab.teaching.playground`: the vocabularies and Unicode classes written into the site.

The browser's side (``book/_static/playground.js`` encoding with them) is checked in
``tests/site/test_playground.py``; here, that what is written is what it stands for.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
import regex

from toklab.data import vocabs
from toklab.measure import viz
from toklab.teaching import playground

ROOT = Path(__file__).resolve().parents[1]


def data_of(script: str) -> dict:
    """The object a playground data script stores (its text after ``] = ``)."""
    match = re.fullmatch(r"/\* .* \*/\n\(window\.toklabPlaygroundData = window\.toklabPlaygroundData \|\| \{\}\)"
                         r"\[\"(\w+)\"\] = (\{.*\});\n", script, re.S)
    assert match, script[:300]
    return json.loads(match.group(2))


@pytest.mark.parametrize("name", playground.NAMES)
def test_a_vocabulary_round_trips_to_its_ranks(name):
    spec = vocabs.load(name)
    data = data_of(playground.vocab_script(name))
    assert playground.expand(data) == spec.ranks
    assert (data["name"], data["pattern"], data["special_tokens"]) == (name, spec.pattern, spec.special_tokens)
    assert data["sha256"] == vocabs.VOCABS[name].sha256 and data["format"] == playground.FORMAT


def test_compact_form_of_a_small_table_and_its_errors():
    ranks = {b"a": 0, b"b": 1, b"ab": 3, bytes(range(200, 255)): 4}
    data = playground.compact(ranks)
    assert playground.expand(data) == ranks
    # rank 2 has no token: its length is 0, and the bytes run on without it
    assert list(base64.b64decode(data["lengths"])) == [1, 1, 0, 2, 55]
    with pytest.raises(ValueError, match="has 0 bytes"):
        playground.compact({b"": 0})
    with pytest.raises(ValueError, match="has 256 bytes"):
        playground.compact({b"x" * 256: 0})
    with pytest.raises(ValueError, match="given to two tokens"):
        playground.compact({b"a": 0, b"b": 0})
    with pytest.raises(ValueError, match="cover 1 bytes of 2"):
        playground.expand({"lengths": "AQ==", "bytes": "YWI="})


def decode_ranges(code: str) -> set[int]:
    """Code points of a class as ``playground.js`` reads them: base-36 gap, width pairs."""
    numbers = [int(n, 36) for n in code.split(",")]
    out, end = set(), -1
    for gap, width in zip(numbers[::2], numbers[1::2]):
        first = end + 1 + gap
        end = first + width
        out.update(range(first, end + 1))
    return out


def test_unicode_classes_hold_exactly_what_regex_matches():
    data = data_of(playground.unicode_script())
    assert set(data["classes"]) == set(playground.CLASSES)
    everything = "".join(map(chr, [*range(0xD800), *range(0xE000, 0x110000)]))
    for name, code in data["classes"].items():
        members = {ord(c) for c in regex.findall(rf"\p{{{name}}}", everything)}
        assert decode_ranges(code) == members, name
    # the classes the gap between Unicode versions shows up in
    # (Unicode 17 made U+0295 a Lo and U+1ACF a mark; tiktoken's tables are older)
    assert 0x0295 in decode_ranges(data["classes"]["Ll"]) and 0x1ACF not in decode_ranges(data["classes"]["M"])
    assert 0xFEFF not in decode_ranges(data["classes"]["White_Space"])
    assert 0x0085 in decode_ranges(data["classes"]["White_Space"])


def test_class_ranges_split_at_the_surrogates():
    # a run of matches over all code points can step from U+D7FF to U+E000
    ranges = playground.class_ranges("Cn")
    assert (0xD7FC, 0xD7FF) in ranges and ranges[-1] == (0x10FFFE, 0x10FFFF)
    assert all(not (first < 0xD800 <= last) for first, last in ranges)
    assert playground.class_ranges("Any") == [(0, 0xD7FF), (0xE000, 0x10FFFF)]
    assert playground.class_ranges("L")[:2] == [(0x41, 0x5A), (0x61, 0x7A)]


def test_site_files_are_written_once(tmp_path):
    paths = playground.write_site_files(tmp_path)
    assert sorted(p.name for p in paths) == sorted(f"{k}.js" for k in (*playground.NAMES, "unicode"))
    assert all(p.parent == tmp_path / "playground" for p in paths)
    stamps = {p: p.stat().st_mtime_ns for p in paths}
    playground.write_site_files(tmp_path)
    assert {p: p.stat().st_mtime_ns for p in paths} == stamps
    # a file from another source (or format) is written again
    stale = tmp_path / "playground" / "r50k_base.js"
    stale.write_text("/* toklab playground data r50k_base, format 0 */\n", encoding="utf-8")
    playground.write_site_files(tmp_path)
    assert playground.expand(data_of(stale.read_text(encoding="utf-8"))) == vocabs.load("r50k_base").ranks


def test_placeholder_carries_the_text_and_options():
    markup = playground.playground_html('a "quoted" <tag> & café\n  x', watch="o200k_base", chunk=" x", page=True)
    assert 'data-text="a &quot;quoted&quot; &lt;tag&gt; &amp; café\n  x"' in markup
    assert 'data-watch="o200k_base"' in markup and 'data-chunk=" x"' in markup and 'data-size="page"' in markup
    with pytest.raises(ValueError, match="must be one of r50k_base, cl100k_base, o200k_base, got 'gpt4'"):
        playground.playground_html("x", watch="gpt4")


def test_the_script_draws_chips_in_vizs_colours():
    script = (ROOT / "book" / "_static" / "playground.js").read_text(encoding="utf-8")
    ours = re.findall(r"#[0-9a-f]{6}", re.search(r"const COLORS = \[(.*?)\];", script).group(1))
    html = viz.boundaries_html({"x": [str(k) for k in range(12)]})
    theirs = list(dict.fromkeys(re.findall(r"background:(#[0-9a-f]{6})", html)))
    assert ours == theirs and len(ours) == 6


def test_the_script_names_every_vocabulary_and_pattern():
    script = (ROOT / "book" / "_static" / "playground.js").read_text(encoding="utf-8")
    assert re.search(r"const NAMES = \[(.*?)\];", script).group(1) == ", ".join(f'"{n}"' for n in playground.NAMES)
    for name in playground.NAMES:
        assert re.search(rf"^    {vocabs.VOCABS[name].pattern}: ", script, re.M), vocabs.VOCABS[name].pattern
