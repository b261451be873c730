"""Checkers for the coding exercises of §3.2 (SentencePiece is a framework).

* ``ch03_2-ex1``, `check_escape`: the reader writes SentencePiece's whitespace
  front end for identity normalization: optional collapsing of extra spaces,
  the optional dummy prefix, and the escaping of every space as ``▁``
  (U+2581). Compared with `toklab.sentencepiece.SentencePieceTokenizer.normalize`
  (which is tested against the real ``sentencepiece`` library) under all four
  flag combinations, on tricky strings and on random ones.
* ``ch03_2-ex2``, `check_decode_byte_pieces`: the reader turns a list of piece
  strings, some of them byte pieces ``<0xXX>``, back into text: runs of byte
  pieces are reassembled as UTF-8, every byte that is not part of a valid
  character becomes one U+FFFD, and ``▁`` becomes a space. Compared with
  toklab's decoder (sentencepiece's rule) on tricky sequences and random ones.

Both report in the format of `toklab.exercises.harness`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from ..decoders import decode_utf8_per_byte
from ..pre_tokenizers import SPACE, unescape, whitespace_rules
from ..sentencepiece import SentencePieceTokenizer
from ..sentencepiece_model import SPConfig, SPPiece, byte_of_piece, byte_piece
from .harness import Run, exercise

__all__ = ["ESCAPE_CASES", "check_escape", "check_decode_byte_pieces"]

#: Inputs where the whitespace rules interact: empty and blank strings,
#: leading/trailing/repeated spaces, a tab and a newline (which identity
#: normalization does *not* treat as spaces), and literal ``▁`` characters.
ESCAPE_CASES: tuple[str, ...] = (
    "",
    " ",
    "   ",
    "hello",
    "hello world",
    " hello",
    "hello ",
    "  hello   world  ",
    "a b  c   d",
    "tab\there",
    "new\nline",
    " \t ",
    "注意 力",
    "x" + SPACE + "y",
    SPACE,
    "a " + SPACE + " b",
    "a" + SPACE,
    " " + SPACE + "a",
    SPACE + " ",
)

_FLAGS = [(dummy, collapse) for dummy in (True, False) for collapse in (True, False)]


def _reference_normalizer(add_dummy_prefix: bool, remove_extra_whitespaces: bool) -> SentencePieceTokenizer:
    pieces = [SPPiece("<unk>", 0.0, "unknown"), SPPiece(SPACE, -1.0)]
    config = SPConfig(
        normalization="identity",
        add_dummy_prefix=add_dummy_prefix,
        remove_extra_whitespaces=remove_extra_whitespaces,
    )
    return SentencePieceTokenizer(pieces, config)


def _random_texts(n: int, alphabet: str, seed: int, max_len: int = 12) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, max_len))) for _ in range(n)]


def _describe(text: str) -> str:
    """What makes ``text`` a test of the whitespace rules."""
    if not text:
        return "empty text"
    if not text.strip(" "):
        return "only spaces"
    features = []
    if text.startswith(" "):
        features.append("leading space")
    if text.endswith(" "):
        features.append("trailing space")
    if "  " in text:
        features.append("a run of spaces")
    if "\t" in text or "\n" in text:
        features.append("a tab or newline")
    if SPACE in text:
        features.append("a literal ▁")
    return ", ".join(features) or "spaces only between words"


def _split_on_whitespace(text: str, add_dummy_prefix: bool, remove_extra_whitespaces: bool) -> str:
    """The usual slip: str.split() treats tabs and newlines as spaces."""
    if remove_extra_whitespaces:
        text = " ".join(text.split())
    if add_dummy_prefix and text:
        text = " " + text
    return text.replace(" ", SPACE)


def _escape_hint(text: str, dummy: bool, collapse: bool, expected: str, got: object) -> str:
    if not isinstance(got, str):
        return "return the escaped text as a str."
    if not text:
        return "empty input stays empty: the dummy prefix goes only in front of non-empty text."
    if collapse and not text.strip(" "):
        return "input made only of spaces becomes empty when extra whitespace is removed."
    if ("\t" in text or "\n" in text) and got == _split_on_whitespace(text, dummy, collapse):
        return ("under identity normalization a tab or newline is an ordinary character, not a space: only "
                "U+0020 is collapsed and stripped (str.split() splits on every kind of whitespace).")
    if dummy and got == expected[1:]:
        return ("add_dummy_prefix puts one ▁ in front of non-empty text, after the extra whitespace is "
                "removed (so that stripping cannot take it away).")
    if not dummy and got == SPACE + expected:
        return "add_dummy_prefix=False: no ▁ in front."
    if collapse and text.startswith(" ") and got.startswith(SPACE * 2) and not expected.startswith(SPACE * 2):
        return ("remove_extra_whitespaces drops the leading spaces; then the dummy prefix adds one, so the "
                "result starts with a single ▁.")
    if SPACE in text:
        return ("a literal ▁ is not a space: it is neither collapsed nor stripped at the start, but trailing "
                "▁ are dropped with the trailing spaces.")
    if " " in got:
        return "every space is written as ▁ (U+2581) at the end."
    return ("with remove_extra_whitespaces, strip leading and trailing spaces and collapse runs to one; with "
            "add_dummy_prefix, put one space in front of non-empty text; then write every space as ▁.")


def _reference_escape(text: str, add_dummy_prefix: bool = True, remove_extra_whitespaces: bool = True) -> str:
    if not text:
        return ""
    return whitespace_rules(text, add_dummy_prefix=add_dummy_prefix, remove_extra_whitespaces=remove_extra_whitespaces)


@exercise("ch03_2-ex1", title="SentencePiece's whitespace front end", function="escape",
          reference=_reference_escape, against="toklab's sentencepiece normalizer, under all 4 flag settings")
def check_escape(run: Run, fn: Callable[..., str]) -> None:
    """Check a reader's ``escape(text, add_dummy_prefix=True, remove_extra_whitespaces=True) -> str``.

    The function gets text that identity normalization has already seen
    (so only U+0020 counts as a space) and returns it as the model sees it:
    with ``remove_extra_whitespaces``, leading and trailing spaces removed
    and runs of spaces collapsed to one; with ``add_dummy_prefix``, one space
    put in front of a non-empty result; then every space written as ``▁``,
    and, when whitespace is removed, trailing ``▁`` dropped as well.
    """
    cases = list(ESCAPE_CASES) + _random_texts(300, "ab  " + SPACE + "\t", seed=0)
    for dummy, collapse in _FLAGS:
        ref = _reference_normalizer(dummy, collapse)
        flags = f"dummy prefix {'on' if dummy else 'off'}, extra whitespace {'removed' if collapse else 'kept'}"
        for text in cases:
            expected = ref.normalize(text)
            case = run.case(f"{_describe(text)} ({flags})", expected=expected)
            got = case.call(fn, text, add_dummy_prefix=dummy, remove_extra_whitespaces=collapse)
            if got != expected:
                case.fail(got, _escape_hint(text, dummy, collapse, expected, got))


def _byte_vocab(extra: Sequence[str]) -> SentencePieceTokenizer:
    pieces = [SPPiece("<unk>", 0.0, "unknown"), SPPiece("<s>", 0.0, "control"), SPPiece("</s>", 0.0, "control")]
    pieces += [SPPiece(byte_piece(b), 0.0, "byte") for b in range(256)]
    pieces += [SPPiece(p, -float(i + 1)) for i, p in enumerate(extra)]
    # No dummy prefix and no whitespace removal: decode strips no leading space,
    # so the checker tests only byte reassembly and the ▁ -> space rule.
    config = SPConfig(
        normalization="identity", add_dummy_prefix=False, remove_extra_whitespaces=False, byte_fallback=True
    )
    return SentencePieceTokenizer(pieces, config)


def _bytes_as_pieces(data: bytes) -> list[str]:
    return [byte_piece(b) for b in data]


_BYTE_PIECE = re.compile(r"<0x[0-9A-F]{2}>")


def _python_replace(pieces: Sequence[str]) -> str:
    """The usual slip: decode byte runs with Python's errors="replace" (one U+FFFD per invalid *sequence*)."""
    out, run = [], bytearray()
    for piece in [*pieces, None]:
        if piece is not None and _BYTE_PIECE.fullmatch(piece):
            run.append(byte_of_piece(piece))
            continue
        out.append(bytes(run).decode("utf-8", errors="replace"))
        run.clear()
        if piece is not None:
            out.append(unescape(piece))
    return "".join(out)


def _decode_hint(pieces: list[str], expected: str, got: object) -> str:
    if not isinstance(got, str):
        return "return the decoded text as a str."
    if got == _python_replace(pieces):
        return ("every byte that is not part of a complete, valid UTF-8 character becomes its own U+FFFD; "
                "Python's errors='replace' can merge several such bytes into one.")
    if SPACE in got and SPACE not in expected:
        return "▁ in an ordinary piece is a space; only a ▁ spelled with byte pieces stays ▁."
    if any(_BYTE_PIECE.fullmatch(p) for p in pieces) and "<0x" in got:
        return "a byte piece <0xXX> stands for one byte: collect a run of them and decode it as UTF-8."
    return ("decode each run of byte pieces as one byte string (one U+FFFD per byte outside a valid "
            "character), write every other piece with ▁ as a space, and strip nothing.")


def _reference_decode_byte_pieces(pieces: list[str]) -> str:
    out, run = [], bytearray()
    for piece in pieces:
        if _BYTE_PIECE.fullmatch(piece):
            run.append(byte_of_piece(piece))
            continue
        out.append(decode_utf8_per_byte(bytes(run)))
        run.clear()
        out.append(unescape(piece))
    return "".join(out) + decode_utf8_per_byte(bytes(run))


@exercise("ch03_2-ex2", title="Decode byte pieces, one U+FFFD per bad byte", function="decode_byte_pieces",
          reference=_reference_decode_byte_pieces, against="toklab's sentencepiece decoder")
def check_decode_byte_pieces(run: Run, fn: Callable[[list[str]], str]) -> None:
    """Check a reader's ``decode_byte_pieces(pieces: list[str]) -> str``.

    ``pieces`` mixes ordinary pieces (which may contain ``▁``) and byte
    pieces ``<0x00>``..``<0xFF>``. A run of consecutive byte pieces is one
    byte string to decode as UTF-8; each byte that does not belong to a
    complete, valid character becomes one U+FFFD (sentencepiece's rule,
    which differs from Python's ``errors="replace"``). Every ``▁`` becomes a
    space; nothing else is stripped.
    """
    words = ["▁the", "▁model", "s", "注意", "▁", "é", "ab", "▁▁x"]
    tok = _byte_vocab(words)
    cases: list[tuple[list[str], str]] = [
        ([], "no pieces"),
        (["▁the", "▁model"], "ordinary pieces only"),
        (_bytes_as_pieces("龘".encode("utf-8")), "one character as three byte pieces"),
        (["▁the", "▁", *_bytes_as_pieces("龘".encode("utf-8")), "s"], "byte pieces between ordinary pieces"),
        (_bytes_as_pieces("🙂".encode("utf-8")) + _bytes_as_pieces("é".encode("utf-8")),
         "two characters in one run of byte pieces"),
        (_bytes_as_pieces(b"\xe9\xbe"), "a character cut short"),
        (_bytes_as_pieces(b"\xf0\x9f\x98") + ["ab"], "three bytes of a four-byte emoji, then text"),
        (_bytes_as_pieces(b"\xff\x41\xc3"), "a never-valid byte, ASCII, a lone lead byte"),
        (_bytes_as_pieces(b"\xe2\x96\x81"), "the bytes of ▁ itself: a literal ▁, not a space"),
        (["ab", *_bytes_as_pieces(b"\x80"), "ab", *_bytes_as_pieces(b"\xc3\xa9")],
         "a stray continuation byte between pieces"),
        (["▁▁x", "▁"], "▁ at the start and the end: nothing is stripped"),
    ]
    rng = random.Random(1)
    pool = [*words, *(byte_piece(b) for b in (0x41, 0x80, 0x9F, 0xBE, 0xC3, 0xA9, 0xE6, 0xB3, 0xA8, 0xF0, 0xFF))]
    cases += [([rng.choice(pool) for _ in range(rng.randint(1, 10))], f"random case {k}") for k in range(300)]
    texts = ["注意🙂 é 龘", "\x00\x7f", "a▁b"]
    cases += [(_bytes_as_pieces(t.encode("utf-8")), f"the bytes of {t!r}") for t in texts]
    for pieces, what in cases:
        expected = tok.decode_pieces(pieces)
        case = run.case(what, expected=expected)
        got = case.call(fn, list(pieces))
        if got != expected:
            case.fail(got, _decode_hint(pieces, expected, got))
