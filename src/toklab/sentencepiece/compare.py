"""toklab against the ``sentencepiece`` library: its trainer run in memory, and our Unigram trainer against it.

`train_sentencepiece` trains a model with the real library (in memory, quietly, on one
thread) for the chapters and tests to compare with; `compare_with_sentencepiece` trains
our Unigram trainer and sentencepiece's on the same lines under the same settings
(`SENTENCEPIECE_OPTIONS`) and measures both models (`SentencePieceComparison`).
The library is imported when one of them runs, not when this module is imported.
"""

from __future__ import annotations

import io
import math
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..base.pieces import escape
from ..pre_tokenizers.metaspace import split_words
from ..unigram.lattice import Lattice, piece_lookup
from ..unigram.model import Unigram
from ..unigram.trainer import train
from .tokenizer import load_unigram

__all__ = ["train_sentencepiece", "SENTENCEPIECE_OPTIONS", "SentencePieceComparison", "normalised_log_likelihood",
           "compare_with_sentencepiece"]


def train_sentencepiece(lines: str | Iterable[str], **options: Any):
    """Train a sentencepiece model in memory, quietly, on one thread; return its ``SentencePieceProcessor``.

    ``lines`` is a list of sentences, or text cut into its non-empty lines.
    ``options`` go to ``SentencePieceTrainer.train`` as they are (``vocab_size``,
    ``model_type``, ``byte_fallback``, ...); only ``num_threads=1`` (so the
    result does not depend on thread timing) and ``minloglevel=2`` (no log on
    stderr) are defaults here, and ``model_writer`` keeps the model out of the
    file system. The model's bytes are ``processor.serialized_model_proto()``.
    """
    import sentencepiece as spm

    if isinstance(lines, str):
        lines = [line for line in lines.splitlines() if line.strip()]
    buffer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(list(lines)), model_writer=buffer, **{"num_threads": 1, "minloglevel": 2, **options}
    )
    return spm.SentencePieceProcessor(model_proto=buffer.getvalue())


#: The sentencepiece options that make its Unigram trainer see exactly what
#: `train` sees: no normalization, spaces kept as they are and escaped to ``▁``,
#: words split before ``▁``, pieces free to mix scripts and digits, every
#: character kept, no line dropped for length, no shuffling, one thread.
SENTENCEPIECE_OPTIONS: dict[str, Any] = dict(
    model_type="unigram",
    normalization_rule_name="identity",
    add_dummy_prefix=False,
    remove_extra_whitespaces=False,
    split_by_whitespace=True,
    split_by_unicode_script=False,
    split_by_number=False,
    byte_fallback=False,
    character_coverage=1.0,
    max_sentence_length=1 << 20,
    shuffle_input_sentence=False,
    hard_vocab_limit=False,
    minloglevel=2,
)


@dataclass
class SentencePieceComparison:
    """`compare_with_sentencepiece`'s measurements (``*_sp`` = sentencepiece's model).

    Log-likelihoods are natural logs over the evaluation lines, computed with
    each model's scores renormalised to sum to 1 over its ordinary pieces
    (both trainers' digamma scores sum to less than 1), each model scoring
    the text with its own pieces. ``*_viterbi_ll`` scores the best
    segmentation, ``*_marginal_ll`` sums over all segmentations (always the
    larger). ``seconds_*`` are wall-clock training times: they vary from run
    to run and with machine load.
    """

    vocab_size: int
    lines: int
    bytes: int
    tokens: int
    tokens_sp: int
    viterbi_ll: float
    viterbi_ll_sp: float
    marginal_ll: float
    marginal_ll_sp: float
    pieces: int
    pieces_sp: int
    shared_pieces: int
    jaccard: float
    seconds: float
    seconds_sp: float
    model: Unigram = field(repr=False)
    model_sp: Unigram = field(repr=False)
    proto_sp: bytes = field(repr=False)

    @property
    def tokens_per_byte(self) -> float:
        return self.tokens / self.bytes

    @property
    def tokens_per_byte_sp(self) -> float:
        return self.tokens_sp / self.bytes

    @property
    def compression_gap(self) -> float:
        """Our token count relative to sentencepiece's, minus 1 (negative: we use fewer tokens)."""
        return self.tokens / self.tokens_sp - 1

    def rows(self) -> list[tuple[str, float, float]]:
        """``(measure, ours, sentencepiece)`` rows for a table."""
        bits = self.bytes * math.log(2)
        return [
            ("ordinary pieces", self.pieces, self.pieces_sp),
            ("tokens", self.tokens, self.tokens_sp),
            ("tokens per byte", self.tokens_per_byte, self.tokens_per_byte_sp),
            ("Viterbi bits per byte", -self.viterbi_ll / bits, -self.viterbi_ll_sp / bits),
            ("marginal bits per byte", -self.marginal_ll / bits, -self.marginal_ll_sp / bits),
        ]


def normalised_log_likelihood(model: Unigram, word_counts: Mapping[str, int]) -> tuple[float, float]:
    """(Viterbi, marginal) log-likelihood of words under ``model``'s renormalised scores.

    Runs on distinct words with `Lattice` (no piece of either model crosses a
    ``▁`` boundary, so a line's likelihood is the sum over its words). A
    character no piece covers is scored like the model does, with its
    unknown score.
    """
    pieces = model.pieces
    names = list(pieces)
    scores = np.array([pieces[p] for p in names])
    log_norm = float(np.logaddexp.reduce(scores))
    unknown = sorted({ch for w in word_counts for ch in w} - set(pieces))
    names += unknown
    scores = np.concatenate([scores, np.full(len(unknown), model.unk_score)]) - log_norm
    words = sorted(word_counts)
    counts = np.array([float(word_counts[w]) for w in words])
    lattice = Lattice(words, piece_lookup(names))
    best, _, _ = lattice.viterbi(scores)
    _, log_z = lattice.forward_backward(scores, counts)
    return float(counts @ best), float(counts @ log_z)


def compare_with_sentencepiece(
    lines: str | Sequence[str],
    vocab_size: int,
    *,
    eval_lines: str | Sequence[str] | None = None,
    max_piece_length: int = 16,
    **train_options,
) -> SentencePieceComparison:
    """Train our Unigram trainer and sentencepiece's on the same lines; compare the two models.

    ``lines`` is raw text (cut into lines) or a list of lines; empty lines are
    skipped. Both trainers see the same thing: sentencepiece gets the raw lines
    with `SENTENCEPIECE_OPTIONS` (identity normalization, no dummy prefix,
    spaces kept), and escapes ``" "`` to ``▁`` itself; `train` gets the
    lines with ``" "`` replaced by ``▁`` (what sentencepiece's normalizer
    does under those options), plus the special tokens ``<s>`` and ``</s>``
    so that both vocabularies hold ``vocab_size - 3`` ordinary pieces.

    Measured on ``eval_lines`` (default: the training lines): tokens from each
    model's own encoder (sentencepiece's ``encode`` for its model), Viterbi
    and marginal log-likelihood, and the overlap of the ordinary pieces.
    sentencepiece is imported here, not when this module is imported.
    """
    import sentencepiece as spm

    def as_lines(x: str | Sequence[str]) -> list[str]:
        return [ln for ln in (x.split("\n") if isinstance(x, str) else x) if ln]

    train_lines = as_lines(lines)
    test_lines = as_lines(eval_lines) if eval_lines is not None else train_lines
    if not train_lines:
        raise ValueError("no lines to train on")

    buf = io.BytesIO()
    t0 = time.perf_counter()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(train_lines), model_writer=buf, vocab_size=vocab_size,
        max_sentencepiece_length=max_piece_length, num_threads=1, **SENTENCEPIECE_OPTIONS,
    )
    seconds_sp = time.perf_counter() - t0
    proto = buf.getvalue()
    processor = spm.SentencePieceProcessor(model_proto=proto)
    theirs = load_unigram(proto)

    t0 = time.perf_counter()
    ours = train([escape(ln) for ln in train_lines], vocab_size,
                 special_tokens=("<s>", "</s>"), max_piece_length=max_piece_length, **train_options)
    seconds = time.perf_counter() - t0

    escaped = [escape(ln) for ln in test_lines]
    word_counts = Counter(w for ln in escaped for w in split_words(ln))
    v_ours, m_ours = normalised_log_likelihood(ours, word_counts)
    v_sp, m_sp = normalised_log_likelihood(theirs, word_counts)
    a, b = set(ours.pieces), set(theirs.pieces)
    return SentencePieceComparison(
        vocab_size=vocab_size,
        lines=len(test_lines),
        bytes=sum(len(ln.encode("utf-8")) for ln in test_lines),
        tokens=sum(len(ours.encode(ln)) for ln in escaped),
        tokens_sp=sum(len(ids) for ids in processor.encode(test_lines)),
        viterbi_ll=v_ours,
        viterbi_ll_sp=v_sp,
        marginal_ll=m_ours,
        marginal_ll_sp=m_sp,
        pieces=len(a),
        pieces_sp=len(b),
        shared_pieces=len(a & b),
        jaccard=len(a & b) / len(a | b),
        seconds=seconds,
        seconds_sp=seconds_sp,
        model=ours,
        model_sp=theirs,
        proto_sp=proto,
    )
