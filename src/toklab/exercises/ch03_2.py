"""Checkers for the coding exercises of §3.2 (SentencePiece is a framework).

* `check_escape` -- the reader writes SentencePiece's whitespace front end
  for identity normalization: optional collapsing of extra spaces, the
  optional dummy prefix, and the escaping of every space as ``▁`` (U+2581).
  Compared with `toklab.sentencepiece.SentencePieceTokenizer.normalize`
  (which is tested against the real ``sentencepiece`` library) under all four
  flag combinations, on tricky strings and on random ones.
* `check_decode_byte_pieces` -- the reader turns a list of piece strings,
  some of them byte pieces ``<0xXX>``, back into text: runs of byte pieces are
  reassembled as UTF-8, every byte that is not part of a valid character
  becomes one U+FFFD, and ``▁`` becomes a space. Compared with toklab's
  decoder (sentencepiece's rule) on tricky sequences and random ones.

Each checker raises AssertionError naming the input, the expected value and
what the reader's function returned, and returns a one-line success message
otherwise.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from ..pre_tokenizers.metaspace import SPACE
from ..sentencepiece import SentencePieceTokenizer
from ..sentencepiece_model import SPConfig, SPPiece, byte_piece

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


def check_escape(fn: Callable[..., str]) -> str:
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
        for text in cases:
            expected = ref.normalize(text)
            got = fn(text, add_dummy_prefix=dummy, remove_extra_whitespaces=collapse)
            if got != expected:
                hints = []
                if not text:
                    hints.append("empty input stays empty: the dummy prefix goes only in front of non-empty text")
                elif not text.strip(" ") and collapse:
                    hints.append("input made only of spaces becomes empty when extra whitespace is removed")
                if "\t" in text or "\n" in text:
                    hints.append("under identity normalization a tab or newline is an ordinary character, not a space")
                if SPACE in text:
                    hints.append(
                        "a literal ▁ is not a space: it is neither collapsed nor stripped at the start, "
                        "but trailing ▁ are dropped with the trailing spaces"
                    )
                hint = f" (hint: {'; '.join(hints)})" if hints else ""
                raise AssertionError(
                    f"escape({text!r}, add_dummy_prefix={dummy}, remove_extra_whitespaces={collapse}): "
                    f"expected {expected!r}, got {got!r}{hint}"
                )
    return f"escape: all {len(cases)} inputs agree with toklab (sentencepiece's rules) under all 4 flag settings"


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


def check_decode_byte_pieces(fn: Callable[[list[str]], str]) -> str:
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
    cases: list[list[str]] = [
        [],
        ["▁the", "▁model"],
        _bytes_as_pieces("龘".encode("utf-8")),
        ["▁the", "▁", *_bytes_as_pieces("龘".encode("utf-8")), "s"],
        _bytes_as_pieces("🙂".encode("utf-8")) + _bytes_as_pieces("é".encode("utf-8")),
        _bytes_as_pieces(b"\xe9\xbe"),  # a character cut short
        _bytes_as_pieces(b"\xf0\x9f\x98") + ["ab"],  # three bytes of a four-byte emoji, then text
        _bytes_as_pieces(b"\xff\x41\xc3"),  # never-valid byte, ASCII, a lone lead byte
        _bytes_as_pieces(b"\xe2\x96\x81"),  # the bytes of ▁ itself: a literal ▁, not a space
        ["ab", *_bytes_as_pieces(b"\x80"), "ab", *_bytes_as_pieces(b"\xc3\xa9")],
        ["▁▁x", "▁"],
    ]
    rng = random.Random(1)
    pool = [*words, *(byte_piece(b) for b in (0x41, 0x80, 0x9F, 0xBE, 0xC3, 0xA9, 0xE6, 0xB3, 0xA8, 0xF0, 0xFF))]
    cases += [[rng.choice(pool) for _ in range(rng.randint(1, 10))] for _ in range(300)]
    texts = ["注意🙂 é 龘", "\x00\x7f", "a▁b"]
    cases += [_bytes_as_pieces(t.encode("utf-8")) for t in texts]
    for pieces in cases:
        expected = tok.decode_pieces(pieces)
        got = fn(list(pieces))
        if got != expected:
            data_runs = [p for p in pieces if p.startswith("<0x")]
            hint = ""
            if data_runs and "\ufffd" in expected:
                hint = (
                    " (hint: every byte that is not part of a complete, valid UTF-8 character becomes its own "
                    "U+FFFD; Python's errors='replace' can merge several such bytes into one)"
                )
            elif "▁" in "".join(pieces) and SPACE in (got or ""):
                hint = " (hint: ▁ in an ordinary piece is a space; only a ▁ spelled with byte pieces stays ▁)"
            raise AssertionError(f"decode_byte_pieces({pieces!r}): expected {expected!r}, got {got!r}{hint}")
    return f"decode_byte_pieces: all {len(cases)} piece sequences agree with toklab (sentencepiece's decoder)"
