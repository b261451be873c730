"""WordPiece: worked examples, fast == reference, and ID-for-ID parity with HF `tokenizers`.

The HF side is built exactly as BERT pipelines build it: ``models.WordPiece``
with ``normalizers.BertNormalizer`` and ``pre_tokenizers.BertPreTokenizer``, no
post-processor, compared on ``encode(..., add_special_tokens=False).ids``.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

from toklab import bpe, corpus
from toklab import wordpiece as wp
from toklab.normalizers import bert as bert_norm
from toklab.pre_tokenizers import bert as bert_pre
from toklab.wordpiece import WordPiece

SPECIALS = list(wp.BERT_SPECIAL_TOKENS)
VOCAB_SIZE = 8000
NAMES = ("en", "zh", "code", "mixed")


# --------------------------------------------------------------------------
# Helpers: HF objects and cached training runs
# --------------------------------------------------------------------------


def hf_bert(vocab: list[str], *, lowercase: bool, strip_accents=None, max_chars: int = 100) -> Tokenizer:
    tok = Tokenizer(
        models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]", max_input_chars_per_word=max_chars)
    )
    tok.normalizer = normalizers.BertNormalizer(
        lowercase=lowercase, strip_accents=strip_accents, handle_chinese_chars=True, clean_text=True
    )
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    return tok


def hf_vocab_list(tok: Tokenizer) -> list[str]:
    items = sorted(tok.get_vocab().items(), key=lambda kv: kv[1])
    assert [i for _, i in items] == list(range(len(items)))
    return [t for t, _ in items]


@lru_cache(maxsize=None)
def docs() -> tuple[str, ...]:
    return tuple(corpus.load(name) for name in NAMES)


@lru_cache(maxsize=None)
def paragraphs() -> tuple[str, ...]:
    return tuple(p for d in docs() for p in d.split("\n\n") if p)


@lru_cache(maxsize=None)
def counts(lowercase: bool) -> Counter:
    return wp.word_counts(docs(), lowercase=lowercase)


@lru_cache(maxsize=None)
def hf_trained(lowercase: bool) -> list[str]:
    """HF WordPieceTrainer's vocabulary on the whole corpus, in ID order."""
    tok = hf_bert(["[UNK]"], lowercase=lowercase)
    trainer = trainers.WordPieceTrainer(vocab_size=VOCAB_SIZE, special_tokens=SPECIALS, show_progress=False)
    tok.train_from_iterator(list(docs()), trainer)
    return hf_vocab_list(tok)


@lru_cache(maxsize=None)
def ours_trained(lowercase: bool) -> list[str]:
    """Our likelihood-scored vocabulary on the whole corpus."""
    return wp.train_vocab(counts(lowercase), VOCAB_SIZE, special_tokens=SPECIALS)


def hf_train_words(words: dict[str, int], vocab_size: int, specials: list[str] = ["[UNK]"]) -> list[str]:
    """HF WordPieceTrainer on given word counts (words fed as whitespace-separated text)."""
    tok = Tokenizer(models.WordPiece({"[UNK]": 0}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials, show_progress=False)
    tok.train_from_iterator([" ".join([w] * c) for w, c in words.items()], trainer)
    return hf_vocab_list(tok)


# --------------------------------------------------------------------------
# Worked examples (CONTENT.md §2, seed 004 §2.2, [D03])
# --------------------------------------------------------------------------

# f(a)=10, f(##b)=10, f(a ##b)=6 and f(q)=2, f(##u)=10, f(q ##u)=2; every other
# pair is rarer than 6 and scores below 0.1.
SCORE_EXAMPLE = {
    "ab": 6, "a": 4, "cb": 4, "c": 46,
    "qu": 2, "du": 2, "eu": 2, "fu": 2, "gu": 2, "d": 48, "e": 48, "f": 48, "g": 48,
}  # fmt: skip


def symbol_and_pair_counts(words: dict[str, int]) -> tuple[Counter, Counter]:
    symbols: Counter = Counter()
    pairs: Counter = Counter()
    for w, c in words.items():
        s = wp.split_word(w)
        for x in s:
            symbols[x] += c
        for p in zip(s, s[1:]):
            pairs[p] += c
    return symbols, pairs


def test_score_example_has_the_counts_of_the_worked_example():
    f, pairs = symbol_and_pair_counts(SCORE_EXAMPLE)
    assert (pairs["a", "##b"], f["a"], f["##b"]) == (6, 10, 10)
    assert (pairs["q", "##u"], f["q"], f["##u"]) == (2, 2, 10)
    assert pairs["a", "##b"] / (f["a"] * f["##b"]) == pytest.approx(0.06)
    assert pairs["q", "##u"] / (f["q"] * f["##u"]) == pytest.approx(0.1)
    # (a, ##b) is the most frequent pair and (q, ##u) the best-scoring one
    assert max(pairs, key=pairs.get) == ("a", "##b")
    assert max(pairs, key=lambda p: pairs[p] / (f[p[0]] * f[p[1]])) == ("q", "##u")


def test_bpe_merges_ab_but_wordpiece_merges_qu():
    start = len(wp.initial_vocab(SCORE_EXAMPLE))
    for train in (wp.reference_train, wp.train_vocab):
        assert train(SCORE_EXAMPLE, start + 1, score="likelihood")[start] == "qu"
        assert train(SCORE_EXAMPLE, start + 1, score="frequency")[start] == "ab"
    # toklab's BPE on the same symbol sequences makes the frequency choice
    split = {tuple(wp.split_word(w)): c for w, c in SCORE_EXAMPLE.items()}
    assert bpe.reference_train(split, 1) == [("a", "##b")]


def test_hf_wordpiece_trainer_scores_by_frequency():
    """[real] HF's WordPieceTrainer is BPE with a ## prefix: it merges (a, ##b), not (q, ##u)."""
    start = len(wp.initial_vocab(SCORE_EXAMPLE, ["[UNK]"]))
    hf = hf_train_words(SCORE_EXAMPLE, start + 2)
    ours = wp.train_vocab(SCORE_EXAMPLE, start + 2, special_tokens=["[UNK]"], score="frequency")
    assert hf[start] == "ab"
    assert sorted(hf) == sorted(ours)


def test_likelihood_score_rises_when_a_part_is_merged_away():
    # (a,##b): 1/(4*1) = 0.25 ties (a,##c): 3/(4*3) = 0.25; the more frequent (a,##c)
    # wins. Then f(a) drops to 1 and (a,##b) scores 1/(1*1) = 1 without any change
    # to the words containing it: the fast trainer must notice.
    words = {"ab": 1, "ac": 3}
    init = wp.initial_vocab(words)
    assert init == ["a", "b", "c", "##b", "##c"]
    expected = init + ["ac", "ab"]
    assert wp.reference_train(words, 7) == expected
    assert wp.train_vocab(words, 7) == expected


def test_tie_rule_prefers_older_ids():
    # every pair occurs once and scores 1/(1*1): the pair with the smaller left ID wins
    words = {"xy": 1, "ab": 1}
    vocab = wp.train_vocab(words, len(wp.initial_vocab(words)) + 1)
    assert vocab[-1] == "ab"
    assert wp.reference_train(words, len(vocab)) == vocab


def test_merge_reusing_an_existing_string_does_not_grow_the_vocabulary():
    # the special token "ab" already spells the first merge: its ID is reused
    words = {"ab": 3, "cd": 2}
    init = wp.initial_vocab(words, ["ab"])
    assert init == ["ab", "a", "b", "c", "d", "##b", "##d"]
    for train in (wp.reference_train, wp.train_vocab):
        assert train(words, 8, special_tokens=["ab"], score="frequency") == init + ["cd"]
    hf = hf_train_words(words, 8, ["ab"])  # HF orders ##b/##d at random, so pass its order on
    assert hf[7:] == ["cd"]
    assert wp.train_vocab(words, 8, special_tokens=["ab"], score="frequency", initial=hf[:7]) == hf


VOCAB_D03 = ["[UNK]", "a", "##b", "##bc"]


@pytest.mark.parametrize(
    "vocab, expected",
    [
        (VOCAB_D03, ["a", "##bc"]),  # ##bc is longer than ##b, so it wins
        (["[UNK]", "a", "##b"], ["[UNK]"]),  # a, ##b, then no ##c: the whole word fails
        (["[UNK]", "a", "ab", "##bc"], ["[UNK]"]),  # greedy ab, then no ##c; no backtracking to a + ##bc
    ],
)
def test_d03_longest_match_first_and_whole_word_unk(vocab, expected):
    assert wp.encode_word("abc", vocab) == expected
    tok = WordPiece(vocab)
    assert tok.encode_word("abc") == expected
    assert tok.tokenize("abc") == expected
    hf = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    assert hf.encode("abc").tokens == expected


def test_unk_replaces_the_whole_word_not_just_the_failing_piece():
    tok = WordPiece(["[UNK]", "a", "##b", "c"])
    assert tok.tokenize("ab abz c") == ["a", "##b", "[UNK]", "c"]


def test_max_input_chars_per_word_matches_hf():
    vocab = ["[UNK]", "a", "##a"]
    hf = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok = WordPiece(vocab)
    for n in (99, 100, 101):
        text = "a" * n
        assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids
    assert tok.tokenize("a" * 101) == ["[UNK]"]
    assert len(tok.tokenize("a" * 100)) == 100
    short = WordPiece(vocab, max_input_chars_per_word=3)
    assert short.tokenize("aaa aaaa") == ["a", "##a", "##a", "[UNK]"]


# --------------------------------------------------------------------------
# BERT normalizer and pre-tokenizer vs HF
# --------------------------------------------------------------------------


def every_code_point() -> str:
    """Each code point (surrogates excluded) between two a's, so no two interact."""
    return "a" + "a".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF) + "a"


@pytest.fixture
def fresh_char_tables():
    """The sweeps fill the lazy per-character tables with every code point; empty them after."""
    yield
    bert_norm.char_tables.cache_clear()
    bert_pre.clear_cache()


@pytest.mark.slow
def test_normalizer_matches_hf_on_every_code_point(fresh_char_tables):
    """[real] All 1,112,064 scalar values through every step (clean-up, CJK, accents, lowercase).

    Each step is a per-character rule, so one run with all of them on checks
    every rule on every character; the tricky-text cases below check the options.
    """
    text = every_code_point()
    assert bert_norm.normalize(text) == normalizers.BertNormalizer().normalize_str(text)


@pytest.mark.slow
def test_pre_tokenizer_matches_hf_on_every_code_point(fresh_char_tables):
    text = every_code_point()
    hf = [w for w, _ in pre_tokenizers.BertPreTokenizer().pre_tokenize_str(text)]
    assert bert_pre.pre_tokenize(text) == hf


@pytest.mark.parametrize(
    "text",
    [
        "Hey friend!     How are you?!?",
        "ΟΔΟΣ Σ ΣΑΣ",  # no final-sigma rule
        "İstanbul Straße ǅemal ﬃ",  # multi-character lowercase, no NFKC
        "Cafe\u0301 cafe\u0301\u0316 a\u0301\u1ac0\u0316",  # NFD reordering, recent marks
        "x\U00011938y \U00011935\U00011930",  # decomposed by Python, not by HF
        "\x1c\x1d\x1e\x1f x\x0by\x0cz\x85w\u00a0v\u2028u\u3000t",  # whitespace vs control
        "a\x00b\ufffdc\u200bd\u200de\ue000f\U000f0000g",  # deleted by clean-up
        "北京大学 \U0002b820\U0002b920 かな 한국어",  # CJK ideographs only, and HF's Extension E range
        "e-mail don't $5+3=8 ^_^ ‹a› «b» ⁅c⁆ \u2e43 \u166d",
        "\t\n\r  \r\n",
        "",
    ],
)
@pytest.mark.parametrize("lowercase", [True, False])
def test_bert_pipeline_matches_hf_on_tricky_text(text, lowercase):
    hf_norm = normalizers.BertNormalizer(lowercase=lowercase)
    normalized = bert_norm.normalize(text, lowercase=lowercase)
    assert normalized == hf_norm.normalize_str(text)
    hf_words = [w for w, _ in pre_tokenizers.BertPreTokenizer().pre_tokenize_str(normalized)]
    assert bert_pre.pre_tokenize(normalized) == hf_words
    assert WordPiece(["[UNK]"], lowercase=lowercase).words(text) == hf_words


def test_strip_accents_defaults_to_lowercase():
    assert bert_norm.normalize("Café") == "cafe"
    assert bert_norm.normalize("Café", lowercase=False) == "Café"
    assert bert_norm.normalize("Café", lowercase=False, strip_accents=True) == "Cafe"
    assert bert_norm.normalize("Café", strip_accents=False) == "café"


# --------------------------------------------------------------------------
# Fast training == textbook training
# --------------------------------------------------------------------------

SLICES = [("en", 20_000, 120), ("zh", 8_000, 60), ("code", 20_000, 120), ("mixed", 12_000, 80)]


@pytest.mark.parametrize("score", ["likelihood", "frequency"])
@pytest.mark.parametrize("name, size, merges", SLICES)
def test_fast_train_equals_reference_on_corpus(name, size, merges, score):
    words = wp.word_counts(corpus.load(name, size))
    size = len(wp.initial_vocab(words, SPECIALS)) + merges
    ref = wp.reference_train(words, size, special_tokens=SPECIALS, score=score)
    assert len(ref) == size
    assert wp.train_vocab(words, size, special_tokens=SPECIALS, score=score) == ref


@pytest.mark.parametrize("score", ["likelihood", "frequency"])
@pytest.mark.parametrize("min_frequency", [2, 5])
def test_min_frequency_fast_equals_reference(score, min_frequency):
    words = wp.word_counts(corpus.load("en", 15_000))
    size = len(wp.initial_vocab(words)) + 400
    ref = wp.reference_train(words, size, score=score, min_frequency=min_frequency)
    assert wp.train_vocab(words, size, score=score, min_frequency=min_frequency) == ref
    # every merge was eligible: check by retraining one step at a time is the reference's job;
    # here check the stop: fewer entries than asked means no pair was frequent enough
    assert len(ref) <= size


def test_min_frequency_skips_rare_pairs_instead_of_stopping():
    words = {"xy": 1, "ab": 3}
    init = wp.initial_vocab(words)
    # likelihood prefers (x,##y): 1/(1*1) > 3/(3*3); min_frequency=2 excludes it, and training goes on
    assert wp.train_vocab(words, len(init) + 1)[-1] == "xy"
    assert wp.train_vocab(words, len(init) + 5, min_frequency=2) == init + ["ab"]
    assert wp.reference_train(words, len(init) + 5, min_frequency=2) == init + ["ab"]


def test_likelihood_and_frequency_really_differ_on_corpus():
    words = wp.word_counts(corpus.load("en", 20_000))
    size = len(wp.initial_vocab(words)) + 100
    assert wp.train_vocab(words, size) != wp.train_vocab(words, size, score="frequency")


word_dicts = st.dictionaries(
    st.text(alphabet="abcd#é", min_size=1, max_size=7), st.integers(min_value=1, max_value=6), min_size=1, max_size=12
)


@settings(max_examples=150)
@given(
    words=word_dicts,
    extra=st.integers(min_value=0, max_value=25),
    score=st.sampled_from(["likelihood", "frequency"]),
    min_frequency=st.integers(min_value=0, max_value=4),
)
def test_fast_train_equals_reference_on_random_words(words, extra, score, min_frequency):
    size = len(wp.initial_vocab(words, ["[UNK]"])) + extra
    ref = wp.reference_train(words, size, special_tokens=["[UNK]"], score=score, min_frequency=min_frequency)
    fast = wp.train_vocab(words, size, special_tokens=["[UNK]"], score=score, min_frequency=min_frequency)
    assert fast == ref
    assert len(set(ref)) == len(ref) <= size


# Without "#": when words contain the prefix characters, HF keeps stale pair
# counts after merges that rebuild an existing string, and the runs diverge
# (module docstring). BERT's pre-tokenizer never lets "#" into a longer word.
hf_word_dicts = st.dictionaries(
    st.text(alphabet="abcdé", min_size=1, max_size=7), st.integers(min_value=1, max_value=6), min_size=1, max_size=12
)


@settings(max_examples=60)
@given(words=hf_word_dicts, extra=st.integers(min_value=0, max_value=25))
def test_frequency_score_equals_hf_trainer_on_random_words(words, extra):
    """[real] Same vocabulary, same IDs, given HF's order of initial symbols."""
    size = len(wp.initial_vocab(words, ["[UNK]"])) + extra
    hf = hf_train_words(words, size)
    start = len(wp.initial_vocab(words, ["[UNK]"]))
    ours = wp.train_vocab(words, size, special_tokens=["[UNK]"], score="frequency", initial=hf[:start])
    assert ours == hf


# --------------------------------------------------------------------------
# [real] Parity with HF on the whole bundled corpus
# --------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("lowercase", [True, False])
def test_frequency_trainer_reproduces_hf_wordpiece_trainer(lowercase):
    """HF's ##-symbol IDs follow a randomly seeded hash order; given that order, we match every ID."""
    hf = hf_trained(lowercase)
    start = len(wp.initial_vocab(counts(lowercase), SPECIALS))
    assert sorted(hf[:start]) == sorted(wp.initial_vocab(counts(lowercase), SPECIALS))
    ours = wp.train_vocab(counts(lowercase), VOCAB_SIZE, special_tokens=SPECIALS, score="frequency", initial=hf[:start])
    assert len(hf) == VOCAB_SIZE
    assert ours == hf


@pytest.mark.slow
@pytest.mark.parametrize("source", ["hf", "ours"])
@pytest.mark.parametrize("lowercase", [True, False])
def test_encode_and_decode_match_hf_on_whole_corpus(source, lowercase):
    vocab = hf_trained(lowercase) if source == "hf" else ours_trained(lowercase)
    assert len(vocab) == VOCAB_SIZE
    hf = hf_bert(vocab, lowercase=lowercase)
    tok = WordPiece(vocab, lowercase=lowercase)
    texts = list(paragraphs())
    expected = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    got = [tok.encode(t) for t in texts]
    mismatches = [i for i, (a, b) in enumerate(zip(got, expected)) if a != b]
    assert not mismatches, f"{len(mismatches)} paragraphs differ, first: {texts[mismatches[0]][:80]!r}"
    assert sum(map(len, got)) > 500_000  # the comparison covers real work
    sample = got[::7]
    assert [tok.decode(ids) for ids in sample] == hf.decode_batch(sample, skip_special_tokens=False)


@pytest.mark.slow
@pytest.mark.parametrize("max_chars", [100, 8])
def test_unk_paths_match_hf(max_chars):
    """A vocabulary from English prose meets Chinese, code and emoji: many whole-word [UNK]s."""
    words = wp.word_counts(corpus.load("en", 200_000))
    vocab = wp.train_vocab(words, 3000, special_tokens=SPECIALS)
    hf = hf_bert(vocab, lowercase=True, max_chars=max_chars)
    tok = WordPiece(vocab, max_input_chars_per_word=max_chars)
    texts = [p for name in ("zh", "code", "mixed") for p in corpus.load(name, 150_000).split("\n\n")]
    expected = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    got = [tok.encode(t) for t in texts]
    assert got == expected
    unk = tok.token_to_id("[UNK]")
    assert sum(ids.count(unk) for ids in got) > 1000


def test_train_end_to_end_and_frequency_option():
    text = corpus.load("en", 30_000)
    tok = wp.train(text, 600)
    assert isinstance(tok, WordPiece) and len(tok) == 600
    assert [tok.id_to_token(i) for i in range(5)] == SPECIALS
    assert tok.unk_id == 1
    freq = wp.train(text, 600, score="frequency")
    assert [freq.id_to_token(i) for i in range(600)] == wp.train_vocab(
        wp.word_counts(text), 600, special_tokens=SPECIALS, score="frequency"
    )


def test_train_from_file_equals_train_from_text(tmp_path):
    text = corpus.load("mixed", 60_000)  # has CRLF line endings
    path = tmp_path / "mixed.txt"
    path.write_text(text, encoding="utf-8", newline="")
    assert wp.word_counts(path) == wp.word_counts(text)
    a, b = wp.train(path, 1500), wp.train([text], 1500)
    assert a.vocab == b.vocab


# --------------------------------------------------------------------------
# Decoding, files, errors
# --------------------------------------------------------------------------


def test_decode_follows_hf_wordpiece_decoder():
    vocab = ["[UNK]", "hello", "##world", ",", "don", "'", "t", "it", "s", "n't", ".", "##a", "do", "not"]
    tok = WordPiece(vocab)
    ids = list(range(1, len(vocab)))
    for cleanup in (True, False):
        hf = decoders.WordPiece(cleanup=cleanup)
        assert tok.decode(ids, cleanup=cleanup) == hf.decode([vocab[i] for i in ids])
    assert tok.decode([11, 1]) == "##a hello"  # a leading ## piece keeps its prefix, as in HF
    assert tok.decode([]) == ""


def test_save_load_round_trip_and_hf_compatibility(tmp_path):
    vocab = ours_small()
    tok = WordPiece(vocab, lowercase=False)
    path = tmp_path / "vocab.txt"
    tok.save(path)
    assert path.read_text(encoding="utf-8") == "".join(t + "\n" for t in vocab)
    back = WordPiece.load(path, lowercase=False)
    assert back.vocab == tok.vocab and back.lowercase is False
    assert models.WordPiece.read_file(str(path)) == tok.get_vocab()
    hf = Tokenizer(models.WordPiece(tok.get_vocab(), unk_token="[UNK]"))
    hf.model.save(str(tmp_path), "hf")
    assert WordPiece.load(tmp_path / "hf-vocab.txt").vocab == tok.vocab


@lru_cache(maxsize=None)
def ours_small() -> list[str]:
    return wp.train_vocab(wp.word_counts(corpus.load("en", 20_000), lowercase=False), 700, special_tokens=SPECIALS)


@pytest.mark.parametrize(
    "content, message",
    [
        ("[UNK]\na\nb\na\n", "line 4 repeats token 'a' from line 2"),
        ("[UNK]\n\nb\n", "line 2 is empty"),
        ("", "empty"),
    ],
)
def test_load_rejects_bad_files(tmp_path, content, message):
    path = tmp_path / "vocab.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        WordPiece.load(path)


def test_load_rejects_invalid_utf8_naming_the_line(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"[UNK]\nok\nbad\xff\n")
    with pytest.raises(ValueError, match="line 3 is not valid UTF-8"):
        WordPiece.load(path)


def test_load_accepts_crlf(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"[UNK]\r\na\r\n##b\r\n")
    assert WordPiece.load(path).get_vocab() == {"[UNK]": 0, "a": 1, "##b": 2}


def test_unknown_ids_and_tokens_are_named():
    tok = WordPiece(VOCAB_D03)
    with pytest.raises(ValueError, match=r"unknown token ID 99: not in this vocabulary \(IDs 0..3, 4 entries\) \(at position 1\)"):
        tok.decode([1, 99])
    with pytest.raises(ValueError, match="unknown token ID 7"):
        tok.id_to_token(7)
    with pytest.raises(KeyError, match="token 'zz' is not in the vocabulary"):
        tok.token_to_id("zz")


def test_constructor_errors():
    with pytest.raises(ValueError, match="unk_token '\\[UNK\\]' is not in the vocabulary"):
        WordPiece(["a", "##b"])
    with pytest.raises(ValueError, match="'a' appears twice"):
        WordPiece(["[UNK]", "a", "a"])
    with pytest.raises(ValueError, match="ID 1 is given to both"):
        WordPiece({"[UNK]": 0, "a": 1, "b": 1})
    with pytest.raises(ValueError, match="gaps"):
        WordPiece({"[UNK]": 0, "a": 5}).save("/nonexistent/never-written.txt")
    assert WordPiece({"[UNK]": 3, "a": 0}).encode("a a z") == [0, 0, 3]


def test_training_errors():
    with pytest.raises(ValueError, match="corpus is empty"):
        wp.train("", 100)
    with pytest.raises(ValueError, match="corpus is empty"):
        wp.train(["  \t\n", "\x00\ufffd"], 100)
    # a, b, c and ##b, ##c after the 5 specials
    with pytest.raises(ValueError, match=r"vocab_size=9 is too small: the 5 special tokens and 5 characters"):
        wp.train("abc abc", 9)
    initial = SPECIALS + ["a", "b", "c", "##b", "##c"]
    assert wp.train("abc abc", 10).get_vocab() == {t: i for i, t in enumerate(initial)}
    # training stops early once no pair is left
    assert wp.train("abc abc", 20).get_vocab() == {t: i for i, t in enumerate(initial + ["ab", "abc"])}
    with pytest.raises(ValueError, match="score must be"):
        wp.train_vocab({"ab": 1}, 10, score="pmi")
    with pytest.raises(ValueError, match="unk_token '<unk>' must be one of special_tokens"):
        wp.train("abc", 20, unk_token="<unk>")
    with pytest.raises(ValueError, match="lacks 1 required entries"):
        wp.train_vocab({"ab": 1}, 10, initial=["a", "b"])
    with pytest.raises(TypeError, match="must be str"):
        wp.train([b"bytes"], 20)


# --------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------


@lru_cache(maxsize=None)
def trained_small(lowercase: bool) -> WordPiece:
    return wp.train([corpus.load(n, 15_000) for n in NAMES], 1500, lowercase=lowercase)


@settings(max_examples=200)
@given(text=st.text(max_size=200), lowercase=st.booleans())
def test_tokenize_never_crashes_and_stays_in_vocab(text, lowercase):
    tok = trained_small(lowercase)
    ids = tok.encode(text)
    assert all(i in tok.vocab for i in ids)
    assert tok.tokenize(text) == [tok.id_to_token(i) for i in ids]
    tok.decode(ids)


# Characters clean-up keeps (no controls, formats, private use, surrogates, U+FFFD),
# plus the whitespace characters it turns into spaces.
kept_chars = st.characters(blacklist_categories=("Cc", "Cf", "Co", "Cs"), blacklist_characters="\ufffd")
spacing = st.sampled_from(" \t\n\r\u00a0\u3000\u2028")


@settings(max_examples=200)
@given(text=st.text(st.one_of(kept_chars, spacing), max_size=60), extra=st.lists(st.text(min_size=2, max_size=4)))
def test_pieces_rebuild_the_text_without_whitespace(text, extra):
    chars = sorted(set(text))
    vocab = ["[UNK]"] + chars + ["##" + c for c in chars] + [t for t in extra if t not in chars and t != "[UNK]"]
    tok = WordPiece(list(dict.fromkeys(vocab)), lowercase=False, strip_accents=False)
    pieces = tok.tokenize(text)
    assert "[UNK]" not in pieces
    rebuilt = "".join(p[2:] if p.startswith("##") else p for p in pieces)
    assert rebuilt == "".join(c for c in text if not (c in "\t\n\r" or bert_norm.is_whitespace(c)))


@settings(max_examples=200)
@given(
    word=st.text(alphabet="abc#", min_size=1, max_size=12),
    vocab=st.lists(st.text(alphabet="abc#", min_size=1, max_size=5), max_size=20),
)
def test_fast_encode_word_equals_plain_encode_word(word, vocab):
    tokens = ["[UNK]"] + vocab
    tok = WordPiece(list(dict.fromkeys(tokens)), max_input_chars_per_word=10)
    assert tok.encode_word(word) == wp.encode_word(word, set(tokens), max_input_chars_per_word=10)


def test_chinese_is_one_word_per_ideograph():
    tok = trained_small(True)
    assert tok.words("北京大学，in 2024年") == ["北", "京", "大", "学", "，", "in", "2024", "年"]


def test_unicode_category_tables_are_consistent():
    # the exception tables only name characters whose Python category says otherwise
    assert all(unicodedata.category(chr(c))[0] == "P" for c in bert_norm.HF_NOT_PUNCT)
    assert all(unicodedata.category(chr(c))[0] != "P" for c in bert_norm.HF_EXTRA_PUNCT)
    assert all(unicodedata.category(chr(c)) == "Cf" for c in bert_norm.HF_NOT_FORMAT)
    assert all(unicodedata.category(chr(c)) == "Mn" for c in bert_norm.HF_NOT_MN)
    assert all(unicodedata.category(chr(c)) != "Mn" for c in bert_norm.HF_EXTRA_MN)
