"""The ByteBPE object: streaming, files, errors, specials, tiktoken export, dropout."""

from __future__ import annotations

import json
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toklab import bpe, corpus
from toklab.bpe import ByteBPE

EOT = "<|endoftext|>"
PAD = "<|pad|>"


@pytest.fixture(scope="module")
def tok():
    docs = [corpus.load(name, 25_000) for name in corpus.CORPUS]
    return bpe.train(docs, 256 + 600 + 2, special_tokens=[EOT, PAD])


@pytest.fixture(scope="module")
def exported(tok):
    """The trained tokenizer as a real tiktoken.Encoding."""
    return tok.to_tiktoken()


@pytest.fixture(scope="module")
def sample():
    """~40 KB of mixed text with special tokens between the documents."""
    parts = [corpus.load(name, 40_000)[25_000:35_000] for name in corpus.CORPUS]
    return EOT.join(parts) + PAD + EOT


# ------------------------------------------------------------------ streaming


def _chunks(text: str, cuts: list[int]) -> list[str]:
    cuts = sorted(set(c for c in cuts if 0 < c < len(text)))
    bounds = [0] + cuts + [len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


@settings(max_examples=40)
@given(data=st.data())
def test_encode_iterable_random_chunkings(tok, real, sample, data):
    r50k = real("r50k_base")[1]
    cuts = data.draw(st.lists(st.integers(0, len(sample)), max_size=40))
    # also cut inside some of the special tokens
    starts = [i for i in range(len(sample)) if sample.startswith(EOT, i)]
    for s in data.draw(st.lists(st.sampled_from(starts), max_size=3)):
        cuts.append(s + data.draw(st.integers(1, len(EOT) - 1)))
    pieces = _chunks(sample, cuts)
    assert "".join(pieces) == sample
    assert list(tok.encode_iterable(pieces, allowed_special="all")) == tok.encode(sample, allowed_special="all")
    assert list(r50k.encode_iterable(pieces, allowed_special="all")) == r50k.encode(sample, allowed_special="all")
    assert list(tok.encode_iterable(pieces, disallowed_special=())) == tok.encode(sample, disallowed_special=())


@pytest.mark.parametrize("split_at", range(1, len(EOT)))
def test_encode_iterable_special_split_across_items(tok, split_at):
    filler = corpus.load("en", 6000)  # > 4096 chars, so the stream does cut its buffer
    text = filler + EOT + " and more text" + EOT
    first, second = filler + EOT[:split_at], EOT[split_at:] + " and more text" + EOT
    ids = list(tok.encode_iterable([first, second], allowed_special="all"))
    assert ids == tok.encode(text, allowed_special="all")
    assert ids.count(tok.special_tokens[EOT]) == 2
    # with the default contract the reassembled special must still be refused
    with pytest.raises(ValueError, match=r"<\|endoftext\|>"):
        list(tok.encode_iterable([first, second]))


@pytest.mark.parametrize("fname", ["en", "zh", "code", "mixed"])
def test_encode_iterable_lines_of_corpus(fname, real, corpus_texts):
    text = corpus_texts[fname]
    for name in ("r50k_base", "o200k_base") if fname in ("code", "mixed") else ("r50k_base",):
        t = real(name)[1]
        lines = text.splitlines(keepends=True)
        assert list(t.encode_iterable(lines)) == t.encode(text), name


def test_encode_iterable_is_lazy(real, corpus_texts):
    t = real("r50k_base")[1]
    text = corpus_texts["en"]
    lines = text.splitlines(keepends=True)
    t.encode(text)  # warm the piece cache, so the measurement sees only the stream's buffer
    copies = 5
    total_chars = len(text) * copies
    assert total_chars > 4_900_000

    pulled = 0

    def stream():
        nonlocal pulled
        for _ in range(copies):
            for line in lines:
                pulled += 1
                yield line

    it = t.encode_iterable(stream())
    next(it)
    assert pulled < len(lines) // 10, "the first ID only came after most of the input was read"

    tracemalloc.start()
    try:
        count = 1 + sum(1 for _ in it)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == copies * len(t.encode(text))
    assert peak < total_chars / 5, f"peak {peak} bytes while streaming {total_chars} chars"


# ------------------------------------------------------------------ files


def test_save_load_round_trip(tok, sample, tmp_path):
    path = tmp_path / "tok.json"
    tok.save(path)
    back = ByteBPE.load(path)
    assert back.merges == tok.merges
    assert back.vocab == tok.vocab
    assert back.special_tokens == tok.special_tokens
    assert back.pattern == tok.pattern
    assert back.fingerprint() == tok.fingerprint()
    assert back.encode(sample, allowed_special="all") == tok.encode(sample, allowed_special="all")
    payload = json.loads(path.read_text(encoding="utf-8"))
    assert payload["sha256"] == tok.fingerprint()
    assert payload["format"] == "toklab-bpe"
    # merges are stored readably in GPT-2's proxy alphabet
    assert all(len(line.split(" ")) == 2 for line in payload["merges"])


def test_save_load_real_vocab(real, tmp_path, corpus_texts):
    """r50k's IDs are not 'bytes then merges', so the file must carry the vocab too."""
    _, t, enc = real("r50k_base")
    path = tmp_path / "r50k.json"
    t.save(path)
    back = ByteBPE.load(path)
    text = corpus_texts["mixed"][:50_000]
    assert back.encode(text) == t.encode(text) == enc.encode(text)
    assert back.fingerprint() == t.fingerprint()
    assert back.n_vocab == 50_257


def test_fingerprint_changes_with_content(tok):
    other = ByteBPE(tok.merges[:-1], pattern=tok.pattern, special_tokens=list(tok.special_tokens))
    assert other.fingerprint() != tok.fingerprint()
    other = ByteBPE(tok.merges, pattern="cl100k", special_tokens=list(tok.special_tokens))
    assert other.fingerprint() != tok.fingerprint()
    other = ByteBPE(tok.merges, pattern=tok.pattern, special_tokens=[EOT])
    assert other.fingerprint() != tok.fingerprint()
    same = ByteBPE(tok.merges, pattern=tok.pattern, special_tokens=list(tok.special_tokens))
    assert same.fingerprint() == tok.fingerprint()


def test_tampered_file_fails_sha256(tok, tmp_path):
    path = tmp_path / "tok.json"
    tok.save(path)
    payload = json.loads(path.read_text(encoding="utf-8"))
    payload["merges"][10], payload["merges"][11] = payload["merges"][11], payload["merges"][10]
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=1), encoding="utf-8")
    with pytest.raises(ValueError, match="SHA-256"):
        ByteBPE.load(path)


def test_truncated_file_raises(tok, tmp_path):
    path = tmp_path / "tok.json"
    tok.save(path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(ValueError, match="truncated"):
        ByteBPE.load(path)


def test_wrong_format_and_version_raise(tok, tmp_path):
    path = tmp_path / "tok.json"
    tok.save(path)
    good = json.loads(path.read_text(encoding="utf-8"))
    for field, value, msg in [("format", "hf-tokenizer", "format"), ("version", 99, "version")]:
        bad = dict(good, **{field: value})
        path.write_text(json.dumps(bad), encoding="utf-8")
        with pytest.raises(ValueError, match=msg):
            ByteBPE.load(path)
    path.write_text("[1, 2, 3]", encoding="utf-8")
    with pytest.raises(ValueError, match="format"):
        ByteBPE.load(path)
    no_hash = dict(good)
    del no_hash["sha256"]
    path.write_text(json.dumps(no_hash), encoding="utf-8")
    with pytest.raises(ValueError, match="sha256"):
        ByteBPE.load(path)


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize("bad", [10**9, -1, 256 + 600 + 2])
def test_decode_unknown_id_names_it(tok, bad):
    with pytest.raises(ValueError, match=rf"unknown token ID {bad}\b"):
        tok.decode([1, 2, bad])
    with pytest.raises(ValueError, match=str(bad)):
        tok.decode_bytes([bad])
    with pytest.raises(ValueError, match=str(bad)):
        tok.token_bytes(bad)


def test_decode_bytes_of_an_iterator_with_unknown_id(tok):
    """decode_bytes accepts any iterable of IDs; a bad ID must give the same clear error."""
    assert tok.decode_bytes(iter([104, 105])) == b"hi"
    with pytest.raises(ValueError, match=r"unknown token ID 1000000000 at position 1"):
        tok.decode_bytes(iter([104, 10**9]))
    with pytest.raises(ValueError, match=r"unknown token ID -1\b"):
        tok.decode_bytes(i for i in [-1])


@pytest.mark.parametrize("gap", [100256, 100261, 100275])
def test_decode_gap_id_in_cl100k(gap, real):
    _, t, _ = real("cl100k_base")
    assert gap < t.n_vocab
    with pytest.raises(ValueError, match=rf"\b{gap}\b"):
        t.decode([100257, gap])
    assert t.decode([100257]) == EOT


def test_training_errors():
    with pytest.raises(ValueError, match=r"vocab_size=100 is too small.*256"):
        bpe.train("some text here", 100)
    with pytest.raises(ValueError, match=r"vocab_size=257 is too small.*258"):
        bpe.train("some text here", 257, special_tokens=[EOT, PAD])
    with pytest.raises(ValueError, match="empty"):
        bpe.train("", 300)
    with pytest.raises(ValueError, match="empty"):
        bpe.train(EOT + EOT, 300, special_tokens=[EOT])
    with pytest.raises(ValueError, match="empty"):
        bpe.train([], 300)
    with pytest.raises(ValueError, match=r"'gtp2'.*known names"):
        bpe.train("some text", 300, pattern="gtp2")
    with pytest.raises(ValueError, match="gtp2"):
        ByteBPE([], pattern="gtp2")
    with pytest.raises(ValueError, match="dropout"):
        ByteBPE([]).encode("x", dropout=1.5)


def test_smallest_vocab_and_progress_bar():
    t = bpe.train("some text here", 256 + 1, special_tokens=[EOT])
    assert t.merges == [] and t.special_tokens == {EOT: 256} and t.n_vocab == 257
    text = corpus.load("en", 20_000)
    quiet = bpe.train(text, 400)
    assert bpe.train(text, 400, progress=True).merges == quiet.merges


def test_training_stops_when_nothing_left_to_merge():
    # pre-tokens: "ab" x1, " ab" x2 -> (a,b) 3, then (" ", "ab") 2, then no pair is left
    t = bpe.train("ab ab ab", 10_000)
    assert t.merges == [(b"a", b"b"), (b" ", b"ab")]
    assert len(t.vocab) == 256 + len(t.merges)


def test_special_tokens_list_vs_dict(tok):
    merges = tok.merges
    base = 256 + len(merges)
    as_list = ByteBPE(merges, special_tokens=["<|x|>", "<|y|>", "<|x|>"])
    assert as_list.special_tokens == {"<|x|>": base, "<|y|>": base + 1}
    as_dict = ByteBPE(merges, special_tokens={"<|x|>": 5000, "<|y|>": 5001})
    assert as_dict.special_tokens == {"<|x|>": 5000, "<|y|>": 5001}
    text = "a<|y|>b<|x|>"
    ids_l = as_list.encode(text, allowed_special="all")
    ids_d = as_dict.encode(text, allowed_special="all")
    assert ids_l[-1] == base and base + 1 in ids_l
    assert ids_d[-1] == 5000 and 5001 in ids_d
    assert [i for i in ids_l if i < base] == [i for i in ids_d if i < base]
    assert as_list.decode(ids_l) == as_dict.decode(ids_d) == text
    assert as_dict.n_vocab == 5002 and len(as_dict) == base + 2
    with pytest.raises(ValueError, match=str(base + 5)):
        as_dict.decode([base + 5])
    with pytest.raises(ValueError, match="share an ID"):
        ByteBPE(merges, special_tokens={"<|x|>": 5000, "<|y|>": 5000})
    with pytest.raises(ValueError, match="already uses"):
        ByteBPE(merges, special_tokens={"<|x|>": 65})


def test_overlapping_specials_longest_wins(tok):
    t = ByteBPE(tok.merges, special_tokens=["<|a|>", "<|a|>b"])
    short, long_ = t.special_tokens["<|a|>"], t.special_tokens["<|a|>b"]
    ids = t.encode("x<|a|>by<|a|>z<|a|>", allowed_special="all")
    assert ids.count(long_) == 1 and ids.count(short) == 2
    assert ids.index(long_) < ids.index(short)
    assert t.decode(ids) == "x<|a|>by<|a|>z<|a|>"
    # only the short one allowed: the long one is disallowed and must be refused
    with pytest.raises(ValueError, match=r"<\|a\|>b"):
        t.encode("x<|a|>by", allowed_special={"<|a|>"})


# ------------------------------------------------------------------ tiktoken export


def test_to_tiktoken_matches_on_corpus(tok, sample):
    enc = tok.to_tiktoken("toklab-test")
    assert enc.n_vocab == tok.n_vocab
    for name in corpus.CORPUS:
        text = corpus.load(name, 80_000)[40_000:]
        assert enc.encode(text) == tok.encode(text), name
    assert enc.encode(sample, allowed_special="all") == tok.encode(sample, allowed_special="all")
    assert enc.encode(sample, disallowed_special=()) == tok.encode(sample, disallowed_special=())
    ids = tok.encode(sample, allowed_special={PAD}, disallowed_special=())
    assert enc.encode(sample, allowed_special={PAD}, disallowed_special=()) == ids
    assert tok.special_tokens[PAD] in ids and tok.special_tokens[EOT] not in ids


@settings(max_examples=200)
@given(
    text=st.one_of(
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=120),
        st.lists(st.sampled_from(["the", " ", "\n", "注意", EOT, PAD, "12345", "'s", "😀", "def", "("]), max_size=40).map(
            "".join
        ),
    )
)
def test_to_tiktoken_matches_on_random_text(tok, exported, text):
    enc = exported
    assert enc.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
    assert enc.encode(text, disallowed_special=()) == tok.encode(text, disallowed_special=())


def test_from_ranks_recovers_merges(tok):
    back = ByteBPE.from_ranks(tok.mergeable_ranks(), pattern=tok.pattern, special_tokens=tok.special_tokens)
    assert back.merges == tok.merges


def test_r50k_merges_are_consistent(real):
    spec, t, _ = real("r50k_base")
    merges = t.merges
    assert len(merges) == 50_000
    ranks = spec.ranks
    for k, (a, b) in enumerate(merges):
        r = ranks[a + b]
        assert ranks[a] < r and ranks[b] < r
        assert r == 256 + k
    assert merges[0] == (b" ", b"t")  # GPT-2's first merge: "Ġ t"


# ------------------------------------------------------------------ BPE-dropout


def test_dropout(tok):
    text = corpus.load("en", 3000) + corpus.load("zh", 1500)
    normal = tok.encode(text)
    assert tok.encode(text, dropout=0.0) == normal
    assert tok.encode(text, dropout=0.0, seed=5) == normal
    a = tok.encode(text, dropout=0.1, seed=1)
    assert a == tok.encode(text, dropout=0.1, seed=1)
    b = tok.encode(text, dropout=0.1, seed=2)
    assert a != b
    assert a != normal
    for seed in range(5):
        for p in (0.05, 0.3, 0.9):
            ids = tok.encode(text, dropout=p, seed=seed)
            assert tok.decode(ids) == text
    only_bytes = tok.encode(text, dropout=1.0, seed=0)
    assert only_bytes == list(text.encode("utf-8"))
    assert all(len(t) == 1 for t in tok.tokens(only_bytes))


def test_dropout_stream_equals_dropout_encode(tok):
    """encode_iterable promises the IDs of encode("".join(texts)) with the same options.

    With a seeded dropout the stream must therefore reproduce encode's random
    segmentation, not restart the random generator at every buffered piece.
    """
    text = corpus.load("en", 20_000)
    lines = text.splitlines(keepends=True)
    whole = tok.encode(text, dropout=0.1, seed=3)
    streamed = list(tok.encode_iterable(lines, dropout=0.1, seed=3))
    assert tok.decode(streamed) == text
    assert streamed == whole


def test_dropout_keeps_specials(tok):
    text = "hello" + EOT + "world"
    ids = tok.encode(text, allowed_special="all", dropout=0.5, seed=3)
    assert tok.special_tokens[EOT] in ids
    assert tok.decode(ids) == text


def test_dropout_on_real_vocab_gives_bytes_only(real):
    _, t, _ = real("cl100k_base")
    ids = t.encode("tokenization 注意", dropout=1.0, seed=0)
    assert [t.token_bytes(i) for i in ids] == [bytes([b]) for b in "tokenization 注意".encode("utf-8")]


def test_repr_and_len(tok):
    r = repr(tok)
    assert "gpt2" in r and "merges=600" in r and "special_tokens=2" in r
    assert len(tok) == 256 + 600 + 2


def test_training_text_with_lone_surrogate_is_rejected_with_a_clear_error():
    with pytest.raises(ValueError, match="lone surrogate"):
        bpe.train("hello a\ud800b world", 300)
