"""Checkers for the coding exercises of §1 (how to measure a tokenizer).

* ``ch01-ex1``, `check_bits_per_byte`: your ``corpus_bits_per_byte(documents, nlls,
  normalize=None)``, the bits per byte of a corpus over the bytes the model actually
  scored, against toklab's `reference_corpus_bits_per_byte` (built on
  `toklab.measure.metrics.bits_per_byte`), including the inputs it must refuse.
* ``ch01-ex2``, `check_corpus_fertility`: your ``corpus_fertility(tokenizer, documents,
  unit, segmenter=None)``, tokens per byte, per character or per word of a named
  segmenter over a whole corpus, against `reference_corpus_fertility` (built on
  `toklab.measure.metrics`), including the units it must refuse.
* ``ch01-ex6``, `check_unigram_bits_per_byte`: your ``unigram_bits_per_byte(train_ids,
  test_ids, n_test_bytes, vocab_size)``, the bits per byte of an add-one smoothed unigram
  language model over token IDs, against `reference_unigram_bits_per_byte`.

They report in the format of `toklab.teaching.exercises.harness`; the hints name the usual slips
(nats for bits, the mean of per-document ratios, the raw bytes of normalized text, chars
for bytes, one encode of the joined corpus, probability zero for an unseen token, a
smoothing denominator that does not cover the vocabulary). The fertility checker builds a
small byte-level BPE of its own (`exercise_tokenizer`), so no corpus file is needed.
"""

from __future__ import annotations

import math
import random
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache

from ...bpe import ByteBPE, train
from ...measure import metrics
from .harness import Run, Shown, exercise

__all__ = [
    "check_bits_per_byte",
    "check_corpus_fertility",
    "check_unigram_bits_per_byte",
    "exercise_tokenizer",
    "reference_corpus_bits_per_byte",
    "reference_corpus_fertility",
    "reference_unigram_bits_per_byte",
]

_LN2 = math.log(2)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _is_number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _check_losses(losses: Sequence[float], where: str) -> float:
    total = 0.0
    for k, loss in enumerate(losses):
        if isinstance(loss, bool) or not isinstance(loss, (int, float)):
            raise TypeError(f"{where}: loss {k} is a {type(loss).__name__}, not a number")
        if not math.isfinite(loss) or loss < 0:
            raise ValueError(f"{where}: loss {k} is {loss!r}; a per-token NLL is finite and >= 0")
        total += loss
    return total


# ---------------------------------------------------------------------------- ch01-ex1


def reference_corpus_bits_per_byte(
    documents: Sequence[str], nlls: Sequence[Sequence[float]], normalize: Callable[[str], str] | None = None
) -> float:
    """Bits per byte of a corpus: all the NLL (nats) over all the bytes the model scored.

    ``nlls[i]`` holds the per-token NLLs of document ``i``; the model scored
    ``normalize(documents[i])`` (the document itself without ``normalize``), so
    those are the bytes counted. A document may contribute losses and no bytes
    (an empty text whose end-of-text token was scored). Raises ValueError when
    the lists differ in length, a loss is negative, NaN or infinite, or the
    scored text has no bytes at all.
    """
    if len(nlls) != len(documents):
        raise ValueError(f"{len(documents)} documents but {len(nlls)} lists of losses")
    total_nll, n_bytes = 0.0, 0
    for i, (doc, losses) in enumerate(zip(documents, nlls)):
        total_nll += _check_losses(losses, f"document {i}")
        scored = doc if normalize is None else normalize(doc)
        n_bytes += metrics.count_units(scored, "bytes")
    if n_bytes == 0:
        raise ValueError("the scored text has no bytes, so it has no bits per byte")
    return metrics.bits_per_byte(total_nll, n_bytes)


def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _bpb_cases() -> list[tuple[str, list[str], list[list[float]], Callable[[str], str] | None]]:
    """(description, documents, nlls, normalize) with known answers."""
    rng = random.Random(1)
    cases: list[tuple[str, list[str], list[list[float]], Callable[[str], str] | None]] = [
        ("the chapter's worked example: 4.0 nats over 8 bytes", ["abcdefgh"], [[2.5, 1.5]], None),
        ("the same text as two documents", ["abcd", "efgh"], [[2.5], [1.5]], None),
        ("a perfect model", ["zero loss"], [[0.0, 0.0, 0.0]], None),
        ("a short and a long document (weight each by its bytes)",
         ["Hi.", "A much longer second document, with many more bytes to predict."], [[3.0, 1.0], [0.5] * 14], None),
        ("Chinese: three bytes per character", ["分词器", "先规范化文本，再切分。"], [[1.2, 0.8], [0.9, 1.1, 0.7, 1.3]], None),
        ("an emoji and an accented word", ["café 🙂", "naïve"], [[1.0, 2.0, 3.0], [0.25, 0.75]], None),
        ("an empty document whose end-of-text token was scored", ["", "some text"], [[0.3], [1.0, 1.0]], None),
        ("NFKC before scoring: the model saw fewer bytes", ["Ｈｅｌｌｏ，世界！", "① ﬁ"],
         [[1.5, 0.5, 1.0], [2.0, 1.0]], _nfkc),
        ("NFKC that changes nothing", ["plain ASCII text"], [[0.5, 0.7, 0.2]], _nfkc),
    ]
    words = ["tokens", "bytes", "分词", "模型", "🙂", "café", "x²", "Ａ"]
    for k in range(25):
        docs = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 12))) for _ in range(rng.randint(1, 5))]
        nlls = [[round(rng.uniform(0, 6), 3) for _ in range(rng.randint(1, 10))] for _ in docs]
        if sum(metrics.count_units(d, "bytes") for d in docs):
            cases.append((f"random corpus {k}", docs, nlls, _nfkc if k % 3 == 0 else None))
    return cases


LARGE_BPB = "large: 1,000 documents of the mixed corpus, 175,000 losses (timed)"


def _large_bpb() -> tuple[str, list[str], list[list[float]], Callable[[str], str] | None]:
    from ...data import corpus

    docs = [line for line in corpus.load("mixed", 40_000).splitlines() if line.strip()][:1_000]
    losses = [(k * 7_919 % 6_000) / 1_000 for k in range(200)]  # 0.0 to 5.999, spread out
    nlls = [losses[k % 50 :] for k in range(len(docs))]
    return LARGE_BPB, docs, nlls, None


def _bpb_hint(got: float, docs: list[str], nlls: list[list[float]], normalize: Callable[[str], str] | None) -> str:
    total = sum(map(sum, nlls))
    scored = [d if normalize is None else normalize(d) for d in docs]
    n_bytes = sum(metrics.count_units(s, "bytes") for s in scored)
    raw_bytes = sum(metrics.count_units(d, "bytes") for d in docs)
    n_chars = sum(len(s) for s in scored)
    n_tokens = sum(map(len, nlls))
    per_doc = [sum(x) / (metrics.count_units(s, "bytes") * _LN2) for s, x in zip(scored, nlls) if s]
    if per_doc and _close(got, sum(per_doc) / len(per_doc)) and len(per_doc) > 1:
        return ("that is the mean of the per-document BPBs, which weights a short document like a long one; "
                "sum the NLL and the bytes over the whole corpus first, then divide once.")
    if normalize is not None and raw_bytes != n_bytes and _close(got, total / (raw_bytes * _LN2)):
        return ("you divided by the bytes of the raw documents, but the model scored normalize(doc): count "
                "the bytes of the text it actually scored.")
    if _close(got, total / n_bytes):
        return "that is nats per byte: divide by ln 2 to turn nats into bits."
    if _close(got, total / (n_bytes * math.log(10))):
        return "that divides by ln 10; bits need ln 2."
    if n_chars != n_bytes and _close(got, total / (n_chars * _LN2)):
        return "that divides by code points; bits per byte counts UTF-8 bytes (text.encode('utf-8'))."
    if n_tokens and _close(got, total / (n_tokens * _LN2)):
        return "that is bits per token: the denominator is the bytes of the scored text, not the tokens."
    if total and _close(got, n_bytes * _LN2 / total):
        return "the fraction is upside down: NLL goes on top, bytes below."
    return (f"bits per byte = total NLL / (bytes scored * ln 2) = {total!r} / ({n_bytes} * ln 2), summing over "
            "every document, empty ones included.")


_BPB_REFUSED: list[tuple[list[str], list[list[float]], str]] = [
    (["one", "two"], [[1.0]], "there must be one list of losses per document"),
    (["text"], [[1.0, -0.5]], "a per-token NLL is -log p with p <= 1, so it cannot be negative"),
    (["text"], [[float("nan")]], "NaN is not a loss"),
    (["text"], [[1.0, float("inf")]], "an infinite NLL (a token of probability zero) has no finite BPB"),
    ([""], [[0.5]], "a corpus whose scored text has no bytes has no bits per byte"),
    ([], [], "an empty corpus has no bits per byte"),
]


def _bpb_input(docs: list[str], nlls: list[list[float]], normalize: Callable[[str], str] | None) -> Shown:
    tail = "" if normalize is None else ", normalize=lambda t: unicodedata.normalize('NFKC', t)"
    return Shown(f"corpus_bits_per_byte({docs!r}, {nlls!r}{tail})")


@exercise("ch01-ex1", title="Bits per byte of a corpus", function="corpus_bits_per_byte",
          reference=reference_corpus_bits_per_byte, against="reference_corpus_bits_per_byte")
def check_bits_per_byte(run: Run, fn: Callable[..., float]) -> None:
    """Check ``fn(documents, nlls, normalize=None) -> bits per byte`` of the corpus.

    It must return the corpus's total NLL over (the UTF-8 bytes of the scored
    text · ln 2), and raise ValueError on input that has no BPB.
    """
    for what, docs, nlls, normalize in _bpb_cases() + [_large_bpb()]:
        args = (list(docs), [list(x) for x in nlls]) + (() if normalize is None else (normalize,))
        want, seconds = run.timed(reference_corpus_bits_per_byte, *args)
        case = run.case(what, expected=want, input=_bpb_input(docs, nlls, normalize), seconds=seconds if what ==
                        LARGE_BPB else None, slow_hint="one pass over the documents, adding up the NLL and the bytes; "
                        "re-summing the whole corpus for each document grows with its square")
        got = case.call(fn, *args)
        if not _is_number(got):
            case.fail(got, "return the bits per byte as a float.")
        if not _close(got, want):
            case.fail(got, _bpb_hint(got, docs, nlls, normalize))
    for docs, nlls, why in _BPB_REFUSED:
        run.case(f"refuse input that has no BPB: {why}", expected=None,
                 input=_bpb_input(docs, nlls, None)).expect_error(fn, list(docs), [list(x) for x in nlls], why=why)


# ---------------------------------------------------------------------------- ch01-ex2

# Training text for the checkers' own tokenizer: English, Chinese, emoji and code.
_TRAINING_TEXT = (
    "A tokenizer turns text into tokens; fertility counts tokens per unit of text.\n"
    "分词器把文本切成词元，再把词元映射成整数。\n"
    "def count(tokens):\n    return len(tokens)  # four spaces of indentation\n"
    "Emoji 🙂 and accents (café, naïve) take more than one byte each.\n"
) * 6


@lru_cache(maxsize=1)
def exercise_tokenizer() -> ByteBPE:
    """The small byte-level BPE the fertility checker encodes with (handy for trying your function)."""
    return train(_TRAINING_TEXT, 256 + 150, pattern="cl100k")


def reference_corpus_fertility(tokenizer, documents: Sequence[str], unit: str, segmenter: str | None = None) -> float:
    """Tokens per ``unit`` over a whole corpus: every document's tokens over every document's units.

    Each document is encoded on its own. ``unit`` is ``"bytes"`` (UTF-8),
    ``"chars"`` (code points) or ``"words"``, which needs a named
    ``segmenter`` (`toklab.measure.metrics.SEGMENTERS`); a segmenter with another unit,
    an unknown unit or segmenter, and a corpus with no units raise ValueError.
    """
    units = sum(metrics.count_units(doc, unit, segmenter) for doc in documents)
    tokens = sum(len(metrics.encode_ids(tokenizer, doc)) for doc in documents)
    return metrics.Fertility(tokens, units, unit, segmenter).tokens_per_unit


_CORPORA: list[tuple[str, list[str]]] = [
    ("one English sentence", ["Fertility is a number with a unit."]),
    ("a short and a long document", ["Hi!", "A second document, much longer than the first, with many more words."]),
    ("Chinese", ["分词器把文本切成词元。", "再把词元映射成整数，模型读的是整数。"]),
    ("emoji, accents and a ZWJ family", ["café 🙂", "naïve 👨\u200d👩\u200d👧 text"]),
    ("code with indentation", ["def f(x):\n    return x\n", "class A:\n    pass\n"]),
    ("documents that merge when joined", ["token", "izer", "s and more tokens"]),
    ("an empty document among others", ["", "some words here", "and more"]),
]

_UNIT_CASES: list[tuple[str, str | None, tuple[str, ...]]] = [
    ("bytes", None, ()),
    ("chars", None, ()),
    ("words", "whitespace", ("Chinese",)),  # whitespace "words" of unspaced Chinese mean little
]

_FERTILITY_REFUSED: list[tuple[list[str], str, str | None, str]] = [
    (["some words here"], "words", None, "tokens per word needs a named segmenter, and none was given"),
    (["some words here"], "words", "spaces", "'spaces' is not a known segmenter"),
    (["some text"], "bytes", "whitespace", "a segmenter only applies to words"),
    (["some text"], "tokens", None, "'tokens' is not a denominator"),
    (["some text"], "byte", None, "units are spelled 'bytes', 'chars' and 'words'"),
    ([""], "bytes", None, "an empty text has no bytes to divide by"),
    ([], "chars", None, "an empty corpus has no chars to divide by"),
    (["!!! ..."], "words", "whitespace", "a text with no words has no tokens per word"),
]


LARGE_FERTILITY = "large: 150 lines of the mixed corpus: tokens per char (timed)"


def _large_fertility() -> list[str]:
    from ...data import corpus

    return [line for line in corpus.load("mixed", 60_000).splitlines() if line.strip()][:150]


def _fertility_hint(got: float, tok, docs: list[str], unit: str, segmenter: str | None) -> str:
    want_tokens = [len(metrics.encode_ids(tok, d)) for d in docs]
    units = [metrics.count_units(d, unit, segmenter) for d in docs]
    tokens, n_units = sum(want_tokens), sum(units)
    per_doc = [t / u for t, u in zip(want_tokens, units) if u]
    if len(per_doc) > 1 and _close(got, sum(per_doc) / len(per_doc)):
        return ("that is the mean of the per-document ratios, which weights a short document like a long one; "
                "add up the tokens and the units over the corpus first, then divide once.")
    for sep in ("", " ", "\n"):
        joined = sep.join(docs)
        j_tokens = len(metrics.encode_ids(tok, joined))
        j_units = metrics.count_units(joined, unit, segmenter) if (unit != "words" or segmenter) else 0
        if (j_tokens, j_units) != (tokens, n_units) and j_units and _close(got, j_tokens / j_units):
            return ("that encodes the documents joined into one string: tokens can merge across a document "
                    "boundary (and the separator adds units). Encode each document on its own.")
    if n_units and _close(got, n_units / tokens if tokens else math.nan):
        return "that is units per token, the inverse: fertility is tokens / units."
    other = {"bytes": "chars", "chars": "bytes"}.get(unit)
    if other and _close(got, tokens / sum(metrics.count_units(d, other) for d in docs)):
        return f"that is tokens per {other[:-1]}: check which count you divide by."
    if unit == "bytes" and _close(got, tokens / sum(len(d.encode("utf-16-le")) for d in docs)):
        return "that counts UTF-16 bytes; use text.encode('utf-8')."
    if unit == "words" and _close(got, tokens / sum(len(d.split()) for d in docs)):
        return ("that counts str.split() pieces; a word of toklab.measure.metrics.words must contain a letter or digit "
                "(a lone '—' or '#' is not a word).")
    return (f"tokens per {unit[:-1]} = all tokens / all {unit} = {tokens} / {n_units}, each document encoded "
            "on its own.")


def _fertility_input(docs: list[str], unit: str, segmenter: str | None) -> Shown:
    tail = "" if segmenter is None else f", segmenter={segmenter!r}"
    return Shown(f"corpus_fertility(toklab.teaching.exercises.ch01.exercise_tokenizer(), {docs!r}, {unit!r}{tail})")


@exercise("ch01-ex2", title="Fertility of a corpus, with a declared unit", function="corpus_fertility",
          reference=reference_corpus_fertility, against="reference_corpus_fertility")
def check_corpus_fertility(run: Run, fn: Callable[..., float]) -> None:
    """Check ``fn(tokenizer, documents, unit, segmenter=None) -> tokens per unit`` over a corpus.

    Bytes are UTF-8 bytes, chars are code points, words are those of the named
    segmenter (`toklab.measure.metrics.words`). Every other unit, words without a known
    segmenter, a segmenter for another unit and a corpus with no units must
    raise ValueError.
    """
    tok = exercise_tokenizer()
    for name, docs in _CORPORA:
        for unit, segmenter, skip in _UNIT_CASES:
            if name in skip:
                continue
            want = reference_corpus_fertility(tok, docs, unit, segmenter)
            per = unit[:-1] if segmenter is None else f"{unit[:-1]} of {segmenter}"
            case = run.case(f"{name}: tokens per {per}", expected=want, input=_fertility_input(docs, unit, segmenter))
            options = {} if segmenter is None else {"segmenter": segmenter}
            got = case.call(fn, tok, list(docs), unit, **options)
            if not _is_number(got):
                case.fail(got, "return the tokens per unit as a float.")
            if not _close(got, want):
                case.fail(got, _fertility_hint(got, tok, docs, unit, segmenter))
    docs = _large_fertility()
    want, seconds = run.timed(reference_corpus_fertility, tok, docs, "chars")
    case = run.case(LARGE_FERTILITY, expected=want, input=_fertility_input(docs, "chars", None), seconds=seconds,
                    slow_hint="encode each document once and add up as you go; re-encoding or re-counting the "
                              "documents seen so far for each new one grows with the square of the corpus")
    got = case.call(fn, tok, list(docs), "chars")
    if not _is_number(got) or not _close(got, want):
        case.fail(got, _fertility_hint(got, tok, docs, "chars", None) if _is_number(got) else
                  "return the tokens per unit as a float.")
    for docs, unit, segmenter, why in _FERTILITY_REFUSED:
        options = {} if segmenter is None else {"segmenter": segmenter}
        run.case(f"refuse a unit or corpus with no denominator: {why}", expected=None,
                 input=_fertility_input(docs, unit, segmenter)).expect_error(fn, tok, list(docs), unit, why=why,
                                                                             **options)


# ---------------------------------------------------------------------------- ch01-ex6


def reference_unigram_bits_per_byte(
    train_ids: Sequence[int], test_ids: Sequence[int], n_test_bytes: int, vocab_size: int
) -> float:
    """Bits per byte of an add-one smoothed unigram model of token IDs.

    The model is trained on ``train_ids`` only: p(t) = (count(t) + 1) /
    (len(train_ids) + vocab_size) for every ID t in range(vocab_size), so
    that the probabilities sum to one and an ID never seen in training still
    has some. ``test_ids`` are scored; their total NLL is spread over the
    ``n_test_bytes`` UTF-8 bytes they encode. Raises ValueError for an ID
    outside range(vocab_size), a vocabulary or byte count that is not
    positive, or an empty test sequence.
    """
    for name, value in (("vocab_size", vocab_size), ("n_test_bytes", n_test_bytes)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if not test_ids:
        raise ValueError("there are no test tokens to score")
    for name, ids in (("train_ids", train_ids), ("test_ids", test_ids)):
        bad = next((i for i in ids if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < vocab_size),
                   None)
        if bad is not None:
            raise ValueError(f"{name} holds {bad!r}, which is not an ID in range({vocab_size})")
    counts = Counter(train_ids)
    denominator = len(train_ids) + vocab_size
    total_nll = -sum(math.log((counts[i] + 1) / denominator) for i in test_ids)
    return metrics.bits_per_byte(total_nll, n_test_bytes)


def _unigram_cases() -> list[tuple[str, list[int], list[int], int, int]]:
    rng = random.Random(6)
    cases = [
        ("every test ID seen in training", [0, 0, 1, 2], [0, 1, 2, 0], 6, 3),
        ("a test ID never seen in training", [0, 0, 1], [0, 1, 2], 3, 4),
        ("only unseen test IDs", [0, 0, 0], [3, 4], 2, 5),
        ("no training data at all: the uniform model", [], [0, 1, 2, 3], 4, 4),
        ("a vocabulary larger than what was seen", [1, 1, 2, 2, 3], [1, 2, 3, 7], 5, 10),
        ("a token covering many bytes", [5, 5, 6], [5, 6], 11, 8),
        ("one test token", [0, 1], [1], 1, 2),
    ]
    for k in range(20):
        vocab = rng.randint(2, 300)
        train_ids = [rng.randrange(vocab) for _ in range(rng.randint(0, 400))]
        test_ids = [rng.randrange(vocab) for _ in range(rng.randint(1, 200))]
        cases.append((f"random case {k}", train_ids, test_ids, rng.randint(1, 800), vocab))
    train_ids = [min(int(rng.expovariate(1 / 300)), 4_999) for _ in range(60_000)]
    test_ids = [min(int(rng.expovariate(1 / 300)), 4_999) for _ in range(20_000)]
    cases.append((LARGE_UNIGRAM, train_ids, test_ids, 61_000, 5_000))
    return cases


LARGE_UNIGRAM = "large: 60,000 training IDs, 20,000 test IDs, 5,000 types (timed)"


def _unigram_hint(got: float, train_ids: list[int], test_ids: list[int], n_bytes: int, vocab: int) -> str:
    counts = Counter(train_ids)
    n = len(train_ids)
    want = reference_unigram_bits_per_byte(train_ids, test_ids, n_bytes, vocab)
    nll = want * n_bytes * _LN2
    seen = len(counts)
    if n + seen and all(counts[i] + 1 for i in test_ids):
        alt = -sum(math.log((counts[i] + 1) / (n + seen)) for i in test_ids) / (n_bytes * _LN2)
        if _close(got, alt):
            return ("the smoothing denominator must be len(train_ids) + vocab_size: add one to the count of every "
                    "ID in the vocabulary, not only of those seen, or the probabilities do not sum to one.")
    if n and all(counts[i] for i in test_ids):
        alt = -sum(math.log(counts[i] / n) for i in test_ids) / (n_bytes * _LN2)
        if _close(got, alt):
            return "add one to every count (add-one smoothing), seen IDs included, and vocab_size to the total."
    both = Counter(train_ids) + Counter(test_ids)
    alt = -sum(math.log((both[i] + 1) / (n + len(test_ids) + vocab)) for i in test_ids) / (n_bytes * _LN2)
    if _close(got, alt):
        return "that counts the test IDs too: the model is trained on train_ids only, then scores test_ids."
    if _close(got, nll / n_bytes):
        return "that is nats per byte: divide by ln 2 to turn nats into bits."
    if _close(got, nll / (len(test_ids) * _LN2)):
        return "that is bits per token: spread the total NLL over the n_test_bytes bytes, not the test tokens."
    if _close(got, nll / len(test_ids)):
        return "that is the loss per token in nats; bits per byte divides the total NLL by n_test_bytes * ln 2."
    return ("p(t) = (count of t in train_ids + 1) / (len(train_ids) + vocab_size); bits per byte = "
            "-sum(ln p(t) for t in test_ids) / (n_test_bytes * ln 2).")


def _unigram_error_hint(exc: Exception) -> str:
    if isinstance(exc, (ValueError, ZeroDivisionError, OverflowError)):
        return ("a test ID never seen in training must not get probability zero (log(0) fails): add one to every "
                "count, and vocab_size to the total.")
    return "unigram_bits_per_byte raised an exception on valid input: call it with the input above to see where."


_UNIGRAM_REFUSED: list[tuple[list, list, object, object, str]] = [
    ([0, 1], [0, 5], 4, 3, "a test ID of 5 is not in range(3)"),
    ([0, -1], [0], 4, 3, "a negative ID is not an ID"),
    ([0, 1], [], 4, 3, "an empty test sequence has nothing to score"),
    ([0, 1], [0, 1], 0, 3, "a text of zero bytes has no bits per byte"),
    ([0, 1], [0, 1], 4, 0, "a vocabulary of size 0 holds no IDs"),
]


@exercise("ch01-ex6", title="A unigram model's bits per byte", function="unigram_bits_per_byte",
          reference=reference_unigram_bits_per_byte, against="reference_unigram_bits_per_byte")
def check_unigram_bits_per_byte(run: Run, fn: Callable[..., float]) -> None:
    """Check ``fn(train_ids, test_ids, n_test_bytes, vocab_size) -> bits per byte``.

    The model is add-one smoothed over the whole vocabulary and trained on
    ``train_ids`` only; invalid IDs, counts and an empty test sequence must
    raise ValueError.
    """
    for what, train_ids, test_ids, n_bytes, vocab in _unigram_cases():
        want, seconds = run.timed(reference_unigram_bits_per_byte, train_ids, test_ids, n_bytes, vocab)
        case = run.case(what, expected=want, seconds=seconds if what == LARGE_UNIGRAM else None, slow_hint=(
            "count the training IDs once (a Counter, or one list of counts), then look each test ID up; "
            "train_ids.count(t) for every test ID walks the whole training data each time"))
        got = case.call(fn, list(train_ids), list(test_ids), n_bytes, vocab, error_hint=_unigram_error_hint)
        if not _is_number(got):
            case.fail(got, "return the bits per byte as a float.")
        if not _close(got, want):
            case.fail(got, _unigram_hint(got, train_ids, test_ids, n_bytes, vocab))
    for train_ids, test_ids, n_bytes, vocab, why in _UNIGRAM_REFUSED:
        run.case(f"refuse input that has no BPB: {why}", expected=None).expect_error(
            fn, list(train_ids), list(test_ids), n_bytes, vocab, why=why)
