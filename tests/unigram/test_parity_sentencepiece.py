"""The Unigram model and trainer against the real ``sentencepiece`` library.

Our Viterbi on a sentencepiece-trained model must give sentencepiece's
segmentation on every line of a real corpus slice, and our trainer must
compress as well as sentencepiece's on the same text.
"""

from __future__ import annotations

import io

import pytest

from toklab.data import corpus
from toklab.sentencepiece import SENTENCEPIECE_OPTIONS, compare_with_sentencepiece, load_unigram


def _slice_lines(kb: int = 300) -> list[str]:
    lines: list[str] = []
    for name in ("en", "zh"):
        lines += [ln for ln in corpus.load(name, max_bytes=kb * 1000).split("\n") if ln]
    return lines


@pytest.fixture(scope="module")
def comparison():
    pytest.importorskip("sentencepiece")
    return compare_with_sentencepiece(_slice_lines(), 4000)


def test_viterbi_equals_sentencepiece_on_corpus(comparison):
    """Every line of ~600 KB of English + Chinese segments exactly as sentencepiece segments it.

    sentencepiece runs Viterbi over the whole normalized line (not word by
    word; no piece contains an inner ▁, so the lattice splits at word
    boundaries anyway), adding scores in single precision. We feed our
    Viterbi the same normalized line: with the identity rule, no dummy prefix
    and no whitespace removal that is the line with " " replaced by "▁".
    """
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_proto=comparison.proto_sp)
    model = load_unigram(sp)
    assert model.float32 and len(model) == sp.get_piece_size() == 4000
    for i in range(sp.get_piece_size()):
        assert model.id_to_piece(i) == sp.id_to_piece(i)
        assert model.score(sp.id_to_piece(i)) == sp.get_score(i)
    lines = _slice_lines()
    theirs = sp.encode(lines, out_type=str)
    ours = [model.viterbi(ln.replace(" ", "\u2581")) for ln in lines]
    mismatches = [i for i, (a, b) in enumerate(zip(theirs, ours)) if a != b]
    assert len(lines) > 7000 and not mismatches, f"{len(mismatches)} lines differ, first {mismatches[:5]}"
    ids = sp.encode(lines[:500])
    assert ids == [model.encode(ln.replace(" ", "\u2581")) for ln in lines[:500]]

    # n-best: same best path and the same sequence of scores. The order among
    # exactly tied segmentations can differ (sentencepiece's A* search pops
    # equal single-precision scores in heap order), so only scores are compared.
    for ln in [ln for ln in lines[::40] if len(ln) < 200]:
        their = sp.nbest_encode(ln, nbest_size=5, out_type=str)
        ours_nb = model.nbest(ln.replace(" ", "\u2581"), 5)
        assert their[0] == ours_nb[0][0]
        assert len(their) == len(ours_nb)
        assert all(abs(model.log_prob(a) - b[1]) < 1e-3 for a, b in zip(their, ours_nb))

    # Lines with characters the model has never seen (unknown runs are merged).
    mixed = [ln for ln in corpus.load("mixed").split("\n") if ln and "\t" not in ln and "\r" not in ln][:400]
    assert any(model.unk_id in model.encode(ln.replace(" ", "\u2581")) for ln in mixed)
    assert sp.encode(mixed, out_type=str) == [model.viterbi(ln.replace(" ", "\u2581")) for ln in mixed]
    assert sp.encode(mixed) == [model.encode(ln.replace(" ", "\u2581")) for ln in mixed]


def test_byte_fallback_and_nbest_match_sentencepiece():
    spm = pytest.importorskip("sentencepiece")
    lines = [ln for ln in corpus.load("zh", max_bytes=30_000).split("\n") if ln]
    buf = io.BytesIO()
    options = dict(SENTENCEPIECE_OPTIONS, byte_fallback=True)
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=buf, vocab_size=1200,
                                   num_threads=1, **options)
    sp = spm.SentencePieceProcessor(model_proto=buf.getvalue())
    model = load_unigram(buf.getvalue())
    assert model.byte_fallback and model.kind("<0x41>") == "byte"
    probe = ["龘在北京 hello", "这是🙂测试", "英文 and 中文"]
    for text in probe:
        assert sp.encode(text, out_type=str) == model.viterbi(text.replace(" ", "\u2581"))
        assert sp.encode(text) == model.encode(text.replace(" ", "\u2581"))
        their = sp.nbest_encode(text, nbest_size=5, out_type=str)
        assert their == [p for p, _ in model.nbest(text.replace(" ", "\u2581"), 5)]
    with pytest.raises(TypeError):
        load_unigram(12)


def test_user_defined_pieces_match_sentencepiece():
    """User-defined pieces score about -0.1 in sentencepiece's lattice (its max_score_ starts at FLT_MIN)."""
    spm = pytest.importorskip("sentencepiece")
    lines = [ln for ln in corpus.load("en", max_bytes=60_000).split("\n") if ln]
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines[:300]), model_writer=buf, vocab_size=800,
                                   num_threads=1, user_defined_symbols=["<mask>", "the", "ion"],
                                   **SENTENCEPIECE_OPTIONS)
    sp = spm.SentencePieceProcessor(model_proto=buf.getvalue())
    model = load_unigram(buf.getvalue())
    assert [model.kind(i) for i in range(6)] == ["unknown", "control", "control", "user", "user", "user"]
    probe = lines + ["the <mask> is the question", "nation motion", "<mask><mask>", "xthex", "either"]
    assert sp.encode(probe, out_type=str) == [model.viterbi(t.replace(" ", "\u2581")) for t in probe]
    assert model.viterbi("either") == ["e", "i", "the", "r"]  # a len * max_score bonus would give e|ith|er


def test_our_trainer_matches_sentencepiece_compression(comparison):
    """Same lines, same vocabulary size: our trainer's tokens are within 1% of sentencepiece's.

    Measured (en + zh, 300 KB each, vocab 4,000): ours 161,265 tokens,
    sentencepiece 161,714 (-0.28%); Jaccard overlap of the pieces ~0.65.
    """
    c = comparison
    assert c.pieces == c.pieces_sp == 3997
    assert c.lines > 7000 and c.bytes > 500_000
    assert abs(c.compression_gap) < 0.01, f"compression gap {c.compression_gap:+.4f}"
    assert c.tokens <= c.tokens_sp * 1.01
    assert c.marginal_ll >= c.viterbi_ll and c.marginal_ll_sp >= c.viterbi_ll_sp
    assert c.marginal_ll >= 0.99 * c.marginal_ll_sp  # at least as likely, within 1% (logs are negative)
    assert 0.5 < c.jaccard < 1.0
    assert [r[0] for r in c.rows()][:3] == ["ordinary pieces", "tokens", "tokens per byte"]
    # the trained model is an ordinary Unigram: it round-trips every line
    for ln in _slice_lines(20):
        assert "".join(c.model.viterbi(ln.replace(" ", "\u2581"))) == ln.replace(" ", "\u2581")
