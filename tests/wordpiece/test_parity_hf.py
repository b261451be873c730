"""WordPiece ID for ID against Hugging Face `tokenizers`: trainer, encoder, decoder, [UNK] paths.

HF's ``WordPieceTrainer`` scores by frequency (it is BPE with a ``##``
prefix), so ``score="frequency"`` given HF's order of initial symbols must
reproduce its vocabulary; encoding must match on the whole bundled corpus.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models, pre_tokenizers

from toklab import wordpiece as wp
from toklab.data import corpus
from toklab.wordpiece import WordPiece

from .helpers import (
    SCORE_EXAMPLE,
    SPECIALS,
    VOCAB_SIZE,
    counts,
    hf_bert,
    hf_train_words,
    hf_trained,
    ours_trained,
    paragraphs,
)


def test_hf_wordpiece_trainer_scores_by_frequency():
    """[real] HF's WordPieceTrainer is BPE with a ## prefix: it merges (a, ##b), not (q, ##u)."""
    start = len(wp.initial_vocab(SCORE_EXAMPLE, ["[UNK]"]))
    hf = hf_train_words(SCORE_EXAMPLE, start + 2)
    ours = wp.train_vocab(SCORE_EXAMPLE, start + 2, special_tokens=["[UNK]"], score="frequency")
    assert hf[start] == "ab"
    assert sorted(hf) == sorted(ours)


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


# Without "#": when words contain the prefix characters, HF keeps stale pair
# counts after merges that rebuild an existing string, and the runs diverge
# (`toklab.wordpiece.reference`). BERT's pre-tokenizer never lets "#" into a longer word.
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
