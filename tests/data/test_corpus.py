"""The bundled corpus: present, valid UTF-8, as described in data/README.md, and sliceable."""

from __future__ import annotations

import hashlib
import re

import pytest
import regex

from toklab.data import corpus

NAMES = ("en", "zh", "code", "mixed")


@pytest.fixture(scope="module")
def readme_table() -> dict[str, tuple[int, str]]:
    """File name -> (bytes, SHA-256) as stated in data/README.md."""
    text = (corpus.data_dir() / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([\w.]+)` \| ([\d,]+) \| `([0-9a-f]{64})` \|", text, flags=re.M)
    return {f: (int(n.replace(",", "")), h) for f, n, h in rows}


@pytest.mark.parametrize("name", NAMES)
def test_file_is_valid_utf8_and_matches_readme(name, readme_table):
    path = corpus.corpus_path(name)
    raw = path.read_bytes()
    assert raw.decode("utf-8")  # strict: raises on invalid UTF-8
    assert not raw.startswith(b"\xef\xbb\xbf")
    assert raw.endswith(b"\n")
    assert b"\x00" not in raw
    assert readme_table[path.name] == (len(raw), hashlib.sha256(raw).hexdigest())
    # C0 controls: only TAB and LF (and CR, which the README allows in mixed.txt's CRLF block)
    allowed = {"\t", "\n", "\r"} if name == "mixed" else {"\t", "\n"}
    controls = set(regex.findall(r"[\x00-\x1f]", raw.decode("utf-8")))
    assert controls <= allowed, controls - allowed


@pytest.mark.parametrize("name", NAMES)
def test_load_returns_the_whole_file(name, corpus_texts):
    text = corpus.load(name)
    assert text == corpus_texts[name]
    assert text.encode("utf-8") == corpus.corpus_path(name).read_bytes()
    assert len(text) > 200_000


def test_sizes_and_scripts(corpus_texts):
    sizes = {n: len(t.encode("utf-8")) for n, t in corpus_texts.items()}
    assert all(900_000 < sizes[n] <= 1_000_000 for n in ("en", "zh", "code"))
    assert 300_000 < sizes["mixed"] < 400_000
    zh = corpus_texts["zh"]
    assert len(regex.findall(r"\p{Han}", zh)) > 0.3 * len(zh)
    assert "def " in corpus_texts["code"] and "import " in corpus_texts["code"]
    mixed = corpus_texts["mixed"]
    assert "\r\n" in mixed and "\u200d" in mixed  # the CRLF block and ZWJ emoji sequences
    assert "\r\n" not in corpus_texts["en"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("max_bytes", [1, 100, 4096, 50_000, 123_457])
def test_load_max_bytes_cuts_at_last_newline(name, max_bytes):
    raw = corpus.corpus_path(name).read_bytes()
    cut = corpus.load(name, max_bytes)
    data = cut.encode("utf-8")
    assert len(data) <= max_bytes
    assert raw.startswith(data)
    if data:
        assert data.endswith(b"\n")
    # no newline was given away: none between the cut and max_bytes
    assert b"\n" not in raw[len(data) : max_bytes]
    if b"\n" in raw[:max_bytes]:
        assert data


def test_load_max_bytes_at_least_file_size_is_whole_file(corpus_texts):
    n = len(corpus.corpus_path("mixed").read_bytes())
    assert corpus.load("mixed", n + 10) == corpus_texts["mixed"]
    assert corpus.load("mixed", 0) == ""


def test_load_all(corpus_texts):
    some = corpus.load_all(2000)
    assert set(some) == set(NAMES)
    assert all(corpus_texts[n].startswith(t) and t.endswith("\n") for n, t in some.items())


def test_bad_arguments(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="unknown corpus 'fr'"):
        corpus.load("fr")
    with pytest.raises(ValueError, match="max_bytes"):
        corpus.load("en", -1)
    monkeypatch.setenv("TOKLAB_DATA_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="TOKLAB_DATA_DIR"):
        corpus.load("en")
