"""Measuring a tokenizer: fertility with a declared denominator, UNK rate, bits per byte.

"Fertility" is a ratio, and a ratio means nothing until its denominator is
named. The same token count gives very different numbers per UTF-8 byte, per
code point and per word, and "per word" is not even defined until someone
names the program that cut the text into words (Chinese has no spaces, so a
whitespace split calls a whole paragraph one "word"). So every result here
carries its unit:

* `Fertility` holds ``tokens``, ``denominator_count`` and ``unit``
  (``"bytes"``, ``"chars"`` or ``"words"``), plus the word ``segmenter``
  when the unit is words. ``"words"`` without a segmenter is an error.
* `measure` encodes a text once and returns a `TokenStats` from which all
  three fertilities follow; `fertility`, `tokens_per_byte` and
  `bytes_per_token` are one-line shortcuts.
* `unk_rate` is the share of tokens that are the unknown token, for the
  tokenizers that have one (WordPiece, SentencePiece without byte fallback).
* `bits_per_byte` spreads a model's total negative log-likelihood over the
  UTF-8 bytes of the text it scored, so models with different tokenizers can
  be compared; `loss_per_token` is the number that *cannot* be compared.
* `length_inflation` gives each slice's tokens per byte relative to a
  reference slice (English by default).

Every function takes "a tokenizer" in any of the forms the book uses:
toklab's `ByteBPE`, a tiktoken ``Encoding``, a Hugging Face
``tokenizers.Tokenizer``, a ``sentencepiece.SentencePieceProcessor``, any
object with ``encode(text) -> list[int]``, or a plain function of that type.
See `encode_ids` for how each is called.
"""

from __future__ import annotations

import logging
import math
import numbers
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, Protocol

__all__ = [
    "UNITS",
    "SEGMENTERS",
    "Encoder",
    "HFTokenizerAdapter",
    "encode_ids",
    "words",
    "count_units",
    "Fertility",
    "TokenStats",
    "measure",
    "fertility",
    "tokens_per_byte",
    "bytes_per_token",
    "UnkRate",
    "count_unk",
    "unk_rate",
    "loss_per_token",
    "bits_per_byte",
    "length_inflation",
]

Unit = Literal["bytes", "chars", "words"]
#: The denominators a fertility can have: UTF-8 bytes, code points, segmenter words.
UNITS: tuple[str, ...] = ("bytes", "chars", "words")
#: Word segmenters `words` knows: ``whitespace`` (space-delimited scripts), ``jieba`` (Chinese).
SEGMENTERS: tuple[str, ...] = ("whitespace", "jieba")

_SINGULAR = {"bytes": "byte", "chars": "char", "words": "word"}


# --------------------------------------------------------------------------
# Calling any tokenizer
# --------------------------------------------------------------------------


class Encoder(Protocol):
    """Anything with ``encode(text) -> list[int]``."""

    def encode(self, text: str) -> list[int]: ...


class HFTokenizerAdapter:
    """Give a Hugging Face ``tokenizers.Tokenizer`` an ``encode(text) -> list[int]``.

    The library's own ``encode`` returns an ``Encoding`` object and, by
    default, adds the post-processor's special tokens (``[CLS]``, ``[SEP]``);
    a measurement of the text should not count those, so they are off here
    unless asked for.
    """

    def __init__(self, tokenizer: Any, *, add_special_tokens: bool = False) -> None:
        self.tokenizer = tokenizer
        self.add_special_tokens = add_special_tokens

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=self.add_special_tokens).ids)

    def __repr__(self) -> str:
        return f"HFTokenizerAdapter(add_special_tokens={self.add_special_tokens})"


def _is_hf_tokenizer(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "tokenizers" and type(obj).__name__ == "Tokenizer"


def encode_ids(tokenizer: Encoder | Callable[[str], Sequence[int]] | Any, text: str) -> list[int]:
    """The token IDs of ``text`` under ``tokenizer``, whatever its type.

    How each kind is called, in this order:

    * a ``tokenizers.Tokenizer``: through `HFTokenizerAdapter` (no added specials);
    * an object with ``encode_ordinary`` (toklab's `ByteBPE`, tiktoken's
      ``Encoding``): that method, so text that happens to contain a special
      token's spelling (``<|endoftext|>``) is measured as the plain text it is,
      instead of raising as ``encode`` does by default;
    * an object with ``encode`` (``SentencePieceProcessor``, adapters): ``encode(text)``;
    * a callable: ``tokenizer(text)``.

    Raises TypeError if none applies or the result is not a sequence of ints.
    """
    if _is_hf_tokenizer(tokenizer):
        ids: Any = HFTokenizerAdapter(tokenizer).encode(text)
    elif hasattr(tokenizer, "encode_ordinary"):
        ids = tokenizer.encode_ordinary(text)
    elif hasattr(tokenizer, "encode"):
        ids = tokenizer.encode(text)
    elif callable(tokenizer):
        ids = tokenizer(text)
    else:
        raise TypeError(
            f"cannot encode with a {type(tokenizer).__name__}: pass an object with "
            "encode(text) -> list[int] (ByteBPE, tiktoken.Encoding, SentencePieceProcessor, "
            "HFTokenizerAdapter) or a function text -> list[int]"
        )
    if hasattr(ids, "ids"):  # an Encoding object from some other wrapper
        ids = ids.ids
    ids = list(ids)
    if ids and not all(isinstance(i, numbers.Integral) and not isinstance(i, bool) for i in ids):
        bad = next(i for i in ids if not isinstance(i, numbers.Integral) or isinstance(i, bool))
        raise TypeError(
            f"{type(tokenizer).__name__} returned {type(bad).__name__} {bad!r} among its IDs; "
            "expected integers (for sentencepiece, call encode with the default out_type=int)"
        )
    return [int(i) for i in ids]


# --------------------------------------------------------------------------
# Denominators: bytes, characters, words
# --------------------------------------------------------------------------


def _is_word(segment: str) -> bool:
    """A segment is a word if it holds at least one letter or number (categories L*, N*)."""
    return any(unicodedata.category(ch)[0] in "LN" for ch in segment)


@lru_cache(maxsize=1)
def _jieba() -> Any:
    """jieba's default segmenter, with its start-up log lines silenced.

    jieba logs "Building prefix dict from the default dictionary ..." to stderr
    at DEBUG level the first time it segments, which would make notebook
    outputs differ between a cold and a warm dictionary cache.
    """
    import jieba

    jieba.setLogLevel(logging.WARNING)
    logging.getLogger("jieba").setLevel(logging.WARNING)
    jieba.initialize()
    return jieba


def words(text: str, segmenter: str) -> list[str]:
    """Cut ``text`` into words with a named segmenter.

    * ``"whitespace"``: ``text.split()``, for space-delimited scripts. Punctuation
      stays attached to its word (``"word,"`` is one word).
    * ``"jieba"``: jieba 0.42's default (precise) mode with its HMM for unknown
      words, for Chinese. Spaces and each punctuation mark come back as
      segments of their own.

    With either segmenter a segment counts as a word only if it contains a
    letter or a number (Unicode categories L* or N*): bare punctuation,
    symbols and whitespace are not words. This keeps the two segmenters'
    counts comparable, since jieba isolates every ``，`` and ``。`` while a
    whitespace split glues punctuation to its neighbour.
    """
    if segmenter not in SEGMENTERS:
        raise ValueError(f"unknown word segmenter {segmenter!r}; known: {', '.join(SEGMENTERS)}")
    return list(_words(text, segmenter))


@lru_cache(maxsize=16)
def _words(text: str, segmenter: str) -> tuple[str, ...]:
    # Cached: a chapter counts the words of one slice once per tokenizer it compares,
    # and jieba takes about a second per 200 KB.
    segments: Iterable[str] = text.split() if segmenter == "whitespace" else _jieba().lcut(text)
    return tuple(s for s in segments if _is_word(s))


def count_units(text: str, unit: str, segmenter: str | None = None) -> int:
    """How many ``unit``s ``text`` has: UTF-8 bytes, code points, or words of ``segmenter``."""
    _check_unit(unit, segmenter)
    if unit == "bytes":
        return len(text.encode("utf-8", errors="surrogatepass"))
    if unit == "chars":
        return len(text)
    assert segmenter is not None
    return len(words(text, segmenter))


def _check_unit(unit: str, segmenter: str | None) -> None:
    if unit not in UNITS:
        raise ValueError(f"unknown unit {unit!r}; a fertility is per one of: {', '.join(UNITS)}")
    if unit == "words":
        if segmenter is None:
            raise ValueError(
                "tokens per word needs a named word segmenter: pass segmenter='whitespace' "
                "for space-delimited text or segmenter='jieba' for Chinese"
            )
        if segmenter not in SEGMENTERS:
            raise ValueError(f"unknown word segmenter {segmenter!r}; known: {', '.join(SEGMENTERS)}")
    elif segmenter is not None:
        raise ValueError(f"a segmenter only applies to unit='words', not unit={unit!r}")


# --------------------------------------------------------------------------
# Fertility
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Fertility:
    """A token count over a declared denominator: tokens per ``unit``.

    ``denominator_count`` is how many bytes, chars or words the text has.
    ``segmenter`` names the word segmenter; it is required exactly when
    ``unit == "words"``. ``str()`` always prints the unit.
    """

    tokens: int
    denominator_count: int
    unit: str  # "bytes" (UTF-8), "chars" (code points) or "words"
    segmenter: str | None = None  # "whitespace" or "jieba", for words

    def __post_init__(self) -> None:
        _check_unit(self.unit, self.segmenter)
        for name in ("tokens", "denominator_count"):
            value = getattr(self, name)
            if _not_count(value) or value < 0:
                raise ValueError(
                    f"{name} must be a non-negative integer, got {value!r}")
        if self.denominator_count == 0:
            raise ValueError(f"the text has no {self.unit}: a fertility "
                             f"over zero {self.unit} is undefined")

    @property
    def tokens_per_unit(self) -> float:
        """Tokens per byte / char / word: lower means more compression."""
        return self.tokens / self.denominator_count

    @property
    def units_per_token(self) -> float:
        """Bytes / chars / words per token. Needs tokens > 0."""
        if self.tokens == 0:
            raise ValueError("no tokens: units per token is undefined")
        return self.denominator_count / self.tokens

    @property
    def label(self) -> str:
        """``"tokens/byte"``, ``"tokens/char"``, ``"tokens/word (jieba)"``."""
        label = f"tokens/{_SINGULAR[self.unit]}"
        return f"{label} ({self.segmenter})" if self.segmenter else label

    def __str__(self) -> str:
        return (f"{self.tokens_per_unit:.4f} {self.label} = "
                f"{self.tokens:,} tokens / {self.denominator_count:,} "
                f"{self.unit}")


def _not_count(value: object) -> bool:
    """True unless ``value`` is an integer (bool does not count)."""
    return isinstance(value, bool) or not isinstance(value, numbers.Integral)


@dataclass(frozen=True)
class TokenStats:
    """One encoding of one text, with every denominator counted.

    ``words`` is None when no segmenter was given (then ``fertility("words")``
    raises, as it should: nobody said what a word is).
    """

    tokens: int
    bytes: int
    chars: int
    words: int | None = None
    segmenter: str | None = None

    def fertility(self, unit: str = "bytes") -> Fertility:
        """The `Fertility` over ``unit``: ``"bytes"``, ``"chars"`` or ``"words"``."""
        if unit == "words":
            if self.words is None:
                _check_unit("words", None)  # raises with the "name a segmenter" message
            return Fertility(self.tokens, self.words, "words", self.segmenter)  # type: ignore[arg-type]
        _check_unit(unit, None)
        return Fertility(self.tokens, self.bytes if unit == "bytes" else self.chars, unit)

    @property
    def bytes_per_token(self) -> float:
        """UTF-8 bytes per token: the compression ratio."""
        return self.fertility("bytes").units_per_token

    @property
    def chars_per_token(self) -> float:
        """Code points per token."""
        return self.fertility("chars").units_per_token

    @property
    def tokens_per_word(self) -> float:
        """Tokens per word of the declared segmenter."""
        return self.fertility("words").tokens_per_unit


def measure(tokenizer: Any, text: str, *, segmenter: str | None = None) -> TokenStats:
    """Encode ``text`` once and count tokens, bytes, chars and (with a segmenter) words."""
    if segmenter is not None:
        _check_unit("words", segmenter)
    n_tokens = len(encode_ids(tokenizer, text))
    return TokenStats(
        tokens=n_tokens,
        bytes=count_units(text, "bytes"),
        chars=count_units(text, "chars"),
        words=None if segmenter is None else count_units(text, "words", segmenter),
        segmenter=segmenter,
    )


def fertility(tokenizer: Any, text: str, unit: str = "bytes", *, segmenter: str | None = None) -> Fertility:
    """Tokens of ``text`` per ``unit`` (``"bytes"``, ``"chars"``, or ``"words"`` with a ``segmenter``)."""
    _check_unit(unit, segmenter)
    return Fertility(len(encode_ids(tokenizer, text)), count_units(text, unit, segmenter), unit, segmenter)


def tokens_per_byte(tokenizer: Any, text: str) -> float:
    """Tokens per UTF-8 byte of ``text`` (1.0 for a pure byte tokenizer)."""
    return fertility(tokenizer, text, "bytes").tokens_per_unit


def bytes_per_token(tokenizer: Any, text: str) -> float:
    """UTF-8 bytes per token of ``text``: the compression ratio (higher = shorter sequences)."""
    return fertility(tokenizer, text, "bytes").units_per_token


# --------------------------------------------------------------------------
# Coverage: the unknown token
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class UnkRate:
    """How many of ``tokens`` tokens were the unknown token."""

    unk: int
    tokens: int

    @property
    def rate(self) -> float:
        """The fraction of tokens that are UNK (0.0 for an empty encoding)."""
        return self.unk / self.tokens if self.tokens else 0.0

    def __str__(self) -> str:
        return f"{self.rate:.2%} UNK = {self.unk:,} / {self.tokens:,} tokens"


def count_unk(ids: Iterable[int], unk_id: int) -> UnkRate:
    """Count ``unk_id`` among ``ids``."""
    if _not_count(unk_id):
        raise TypeError(f"unk_id must be an integer token ID, got {unk_id!r}")
    if isinstance(ids, (str, bytes)):
        raise TypeError(f"ids must be token IDs, got a {type(ids).__name__}")
    ids = list(ids)
    return UnkRate(sum(1 for i in ids if i == unk_id), len(ids))


def unk_rate(tokenizer: Any, text: str, unk_id: int) -> UnkRate:
    """The share of the tokens of ``text`` that are ``unk_id``.

    Only tokenizers with an unknown token have a nonzero rate; a byte-level
    BPE has no such ID, which is the point of it. Note that SentencePiece
    folds a run of unknown characters into *one* ``<unk>``, so the rate
    counts tokens, not lost characters.
    """
    return count_unk(encode_ids(tokenizer, text), unk_id)


# --------------------------------------------------------------------------
# Loss per token and bits per byte
# --------------------------------------------------------------------------


def _check_nll(total_nll_nats: float) -> float:
    if isinstance(total_nll_nats, bool) or not isinstance(total_nll_nats, numbers.Real):
        raise TypeError(f"total_nll_nats must be a real number, got {total_nll_nats!r}")
    value = float(total_nll_nats)
    if not math.isfinite(value) or value < 0:
        raise ValueError(
            f"total_nll_nats must be finite and >= 0 (a sum of -log p with p <= 1), got {total_nll_nats!r}"
        )
    return value


def _check_count(n: int, name: str) -> int:
    if _not_count(n):
        raise TypeError(f"{name} must be an integer count, got {n!r}")
    if n <= 0:
        raise ValueError(f"{name} must be > 0, got {n}")
    return int(n)


def loss_per_token(total_nll_nats: float, n_tokens: int) -> float:
    """Mean negative log-likelihood per token, in nats: what training curves show.

    Its denominator is the tokenizer's own token count, so two models with
    different tokenizers cannot be compared on it (see `bits_per_byte`).
    """
    return _check_nll(total_nll_nats) / _check_count(n_tokens, "n_tokens")


def bits_per_byte(total_nll_nats: float, n_bytes: int) -> float:
    """Total NLL (nats) over the scored text's UTF-8 bytes, in bits.

    BPB = NLL / (B ln 2). ``n_bytes`` (B) must count the bytes the model
    actually scored, after any normalization: two models compared by BPB
    must have scored the same byte stream. Raises ValueError if
    ``n_bytes <= 0`` or the NLL is negative or not finite, TypeError if
    either argument is not a number (``n_bytes`` must be an integer).
    """
    nll = _check_nll(total_nll_nats)
    n_bytes = _check_count(n_bytes, "n_bytes")
    return nll / (n_bytes * math.log(2))


# --------------------------------------------------------------------------
# Per-slice length inflation
# --------------------------------------------------------------------------


def length_inflation(tokenizer: Any, slices: Mapping[str, str], reference: str = "en") -> dict[str, float]:
    """Each slice's tokens per byte divided by the reference slice's.

    1.0 means the slice costs as many tokens per byte as the reference; 2.0
    means twice as many. Without parallel text this is per byte, not per
    unit of content: it says how well the vocabulary compresses each kind of
    text, not how many tokens the same message costs in two languages.
    """
    if reference not in slices:
        raise ValueError(f"reference slice {reference!r} is not among the slices: {', '.join(slices)}")
    rates = {name: tokens_per_byte(tokenizer, text) for name, text in slices.items()}
    if rates[reference] == 0:
        raise ValueError(f"the reference slice {reference!r} encodes to no tokens")
    return {name: rate / rates[reference] for name, rate in rates.items()}
