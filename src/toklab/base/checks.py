"""Argument checks shared by the public entry points: say what was expected and what came.

A new user's first mistakes are type mistakes: ``bpe.train(text, 300.5)``,
``tok.encode(b"abc")``, a vocabulary size given as a string. Caught deep inside a
regex or a numpy call they surface as messages about something else ("cannot use
a string pattern on a bytes-like object"), so each public function checks its
arguments first with these helpers and raises `TypeError` (wrong type) or
`ValueError` (right type, impossible value), naming the argument, what it
expected, and what it got.

One rule for every trainer (`toklab.bpe.train`, `toklab.wordpiece.train`,
`toklab.unigram.train`, `toklab.sentencepiece.train`): when the corpus cannot fill
``vocab_size`` (a one-line corpus has few pairs to merge, few substrings to keep),
the trainer returns the smaller vocabulary it could learn and warns with
`SmallVocabularyWarning`, saying how many entries it has; ``allow_smaller=True``
declares that this is expected and silences the warning. Turn the warning into
an error with ``warnings.simplefilter("error", SmallVocabularyWarning)``.

A second rule for the trainers that learn from sentences as sentencepiece does
(`toklab.unigram.train`, `toklab.sentencepiece.train`): a sentence longer than
``max_sentence_length`` UTF-8 bytes (sentencepiece's flag, 4,192 by default) is
left out, because the seed and the lattice over one huge "sentence" cost time and
memory that grow much faster than its length (a 200,000-character line without a
space took minutes and gigabytes). `LongSentenceWarning` says how many were
skipped; ``max_sentence_length=None`` keeps them all.
"""

from __future__ import annotations

import os
import re
import warnings
from typing import Any

__all__ = [
    "MAX_SENTENCE_LENGTH",
    "SmallVocabularyWarning",
    "LongSentenceWarning",
    "SkippedCount",
    "short_sentences",
    "type_name",
    "check_int",
    "check_str",
    "check_bool",
    "check_id",
    "check_ids",
    "check_path",
    "check_not_a_file_name",
    "warn_smaller",
    "not_utf8",
]


#: sentencepiece's default ``max_sentence_length``, in UTF-8 bytes.
MAX_SENTENCE_LENGTH = 4192


class SmallVocabularyWarning(UserWarning):
    """A trainer learned fewer entries than ``vocab_size`` because the corpus ran out of material."""


class LongSentenceWarning(UserWarning):
    """A trainer left out sentences longer than its ``max_sentence_length``, as sentencepiece does."""


class SkippedCount:
    """How many sentences `short_sentences` left out, and the longest of them (in bytes)."""

    def __init__(self) -> None:
        self.count = 0
        self.longest = 0

    def warn(self, trainer: str, limit: int, stacklevel: int = 3) -> None:
        """`LongSentenceWarning` naming the count, if anything was skipped."""
        if self.count:
            warnings.warn(
                f"{trainer} skipped {self.count:,} sentence{'s' * (self.count != 1)} longer than "
                f"max_sentence_length={limit:,} UTF-8 bytes (the longest had {self.longest:,}), as sentencepiece "
                "does; pass a larger max_sentence_length (or None) to keep them, or split the text into lines",
                LongSentenceWarning,
                stacklevel=stacklevel,
            )


def short_sentences(sentences: Any, limit: int | None, skipped: SkippedCount) -> Any:
    """The sentences of at most ``limit`` UTF-8 bytes (all of them when ``limit`` is None), counting the rest.

    A non-str item passes through unchanged, for the caller's own type check.
    """
    if limit is None:
        yield from sentences
        return
    check_int(limit, "max_sentence_length", minimum=1)
    for sentence in sentences:
        if isinstance(sentence, str) and len(sentence) * 4 > limit:  # only then can it be too long
            size = len(sentence.encode("utf-8", "surrogatepass"))
            if size > limit:
                skipped.count += 1
                skipped.longest = max(skipped.longest, size)
                continue
        yield sentence


def type_name(value: Any) -> str:
    """``"float 300.5"``, ``"bytes b'abc'"``: the type and a short repr, for messages."""
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{type(value).__name__} {text}"


def check_int(value: Any, name: str, *, minimum: int | None = None) -> int:
    """``value`` if it is an int (not a bool) ``>= minimum``; TypeError or ValueError naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        hint = " (a whole number such as 300)" if isinstance(value, float) else ""
        raise TypeError(f"{name} must be an int{hint}, got {type_name(value)}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def check_bool(value: Any, name: str) -> bool:
    """``value`` if it is a bool; TypeError naming ``name`` otherwise (``"no"`` is truthy)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {type_name(value)}")
    return value


def check_str(value: Any, name: str = "text") -> str:
    """``value`` if it is a str; TypeError naming ``name``, with a hint for bytes."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(f"{name} must be str, got {type(value).__name__}: decode it first (e.g. data.decode('utf-8'))")
    raise TypeError(f"{name} must be str, got {type_name(value)}")


def check_id(value: Any) -> int:
    """``value`` if it is an int token ID (not a bool); TypeError saying what it is otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"a token ID must be an int, got {type_name(value)}")
    return value


def check_ids(ids: Any, name: str = "ids") -> list[int]:
    """``ids`` as a list of ints; TypeError for a str, bytes, a lone int or a non-int item (with its position)."""
    if isinstance(ids, (str, bytes, bytearray)) or not hasattr(ids, "__iter__"):
        raise TypeError(f"{name} must be an iterable of int token IDs, got {type_name(ids)}")
    out = list(ids)
    for pos, i in enumerate(out):
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError(f"{name} must hold int token IDs; item {pos} is {type_name(i)}")
    return out


def check_path(value: Any, name: str = "path") -> str:
    """``value`` as a file system path string; TypeError unless it is a str or an ``os.PathLike``."""
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise TypeError(f"{name} must be a path (str or os.PathLike), got {type_name(value)}")


_FILE_NAME = re.compile(r"[^\s]{0,255}\.(?:txt|text|md|json|jsonl|csv|tsv|raw|corpus|gz)", re.IGNORECASE)


def check_not_a_file_name(text: str, name: str = "source") -> str:
    """``text``, unless it is the name of a file rather than text to train on (ValueError then).

    Every trainer takes a str as the text itself and an ``os.PathLike`` as a file to
    read, so ``train_bpe("corpus.txt")`` would quietly train on the ten characters of
    the name. A str that names an existing file, or that looks like a file name (no
    whitespace, a text file's extension), is refused with the fix.
    """
    if "\n" not in text and len(text) < 4096 and (_FILE_NAME.fullmatch(text) or os.path.isfile(text)):
        raise ValueError(f"{name} {text!r} looks like a file name, but a str is trained on as text: pass "
                         f"pathlib.Path({text!r}) to read the file, or the text itself")
    return text


def warn_smaller(trainer: str, got: int, asked: int, why: str, allow_smaller: bool, stacklevel: int = 3) -> None:
    """The trainers' one rule: warn (`SmallVocabularyWarning`) when ``got < asked``, unless ``allow_smaller``.

    ``stacklevel`` 3 points the warning at the caller of the function that calls this.
    """
    if got < asked and not allow_smaller:
        warnings.warn(
            f"{trainer} learned {got} entries, fewer than vocab_size={asked}: {why}. Pass allow_smaller=True "
            "if a smaller vocabulary is fine, or train on more text.",
            SmallVocabularyWarning,
            stacklevel=stacklevel,
        )


def not_utf8(path: Any, error: UnicodeDecodeError) -> ValueError:
    """The error for a training or vocabulary file that is not UTF-8 text, naming the file."""
    return ValueError(f"{os.fspath(path)} is not UTF-8 text ({error.reason}: byte {error.object[error.start]:#04x}); "
                      "convert it (e.g. iconv -t UTF-8) or pass the decoded text")
