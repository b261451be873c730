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
* ``ch03_2-ex5``, `check_fingerprint`: the reader hashes what decides how a
  model file tokenizes, and nothing else. Compared on 14 copies of a small
  trained model, each with one field of its file edited: paths and training
  records must not change the fingerprint, pieces, scores, types and the
  normalizer spec must.

All three report in the format of `toklab.teaching.exercises.harness`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import re
import struct
from collections.abc import Callable, Sequence
from typing import Any

from ...base.pieces import SPACE, byte_of_piece, byte_piece, unescape
from ...decoders import decode_utf8_per_byte
from ...normalizers.spm import whitespace_rules
from ...sentencepiece.model_file import SPConfig, SPPiece, iter_fields, parse_model_proto
from ...sentencepiece.tokenizer import SentencePieceTokenizer
from .harness import Run, Shown, exercise

__all__ = ["ESCAPE_CASES", "check_escape", "check_decode_byte_pieces", "check_fingerprint"]

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
        for text in cases + ([_large_text()] if (dummy, collapse) == (True, True) else []):
            expected, seconds = run.timed(ref.normalize, text)
            large = len(text) > 1_000
            case = run.case(f"{LARGE_ESCAPE if large else _describe(text)} ({flags})", expected=expected,
                            input=Shown(f"escape(<{len(text):,} characters>)") if large else None,
                            seconds=seconds if large else None, slow_hint=(
                                "build the result in one pass (a list of pieces joined once, or str.replace and "
                                "split on ' '); collapsing runs one pair of spaces at a time rescans the text "
                                "for every space removed"))
            got = case.call(fn, text, add_dummy_prefix=dummy, remove_extra_whitespaces=collapse)
            if got != expected:
                case.fail(got, _escape_hint(text, dummy, collapse, expected, got))


LARGE_ESCAPE = "large: 60,000 characters with runs of spaces, tabs, ▁ and emoji (timed)"


def _large_text() -> str:
    rng = random.Random(5)
    parts = ["word", " ", "  ", " " * 40, "\t", SPACE, "🙂", "注意", "a b"]
    return "".join(rng.choice(parts) for _ in range(10_000))[:60_000]


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
    cases.append(([rng.choice(pool) for _ in range(6_000)], LARGE_DECODE))
    for pieces, what in cases:
        expected, seconds = run.timed(tok.decode_pieces, pieces)
        large = what == LARGE_DECODE
        case = run.case(what, expected=expected, seconds=seconds if large else None,
                        input=Shown(f"decode_byte_pieces(<{len(pieces):,} pieces>)") if large else None, slow_hint=(
                            "collect the output in a list and join it once, and keep the current run of bytes in a "
                            "bytearray; rebuilding a growing string or bytes object for each piece is quadratic"))
        got = case.call(fn, list(pieces))
        if got != expected:
            case.fail(got, _decode_hint(pieces, expected, got))


LARGE_DECODE = "large: 6,000 pieces, ordinary and byte pieces mixed (timed)"


# ---------------------------------------------------------------------------- ch03_2-ex5: fingerprint a model file

#: What decides how a model tokenizes, as toklab's SentencePieceTokenizer reads it: pieces in ID order
#: (string, score, type) and these SPConfig fields (the normalizer spec, model_type, byte_fallback, unk_surface).
#: split_digits and split_by_whitespace are left out: they are rules for the trainer, and the encoder ignores them.
_BEHAVIOUR_FIELDS = ("model_type", "normalization", "charsmap", "add_dummy_prefix", "remove_extra_whitespaces",
                     "escape_whitespaces", "byte_fallback", "unk_surface")


def _reference_fingerprint(model_proto: bytes) -> str:
    pieces, config = parse_model_proto(model_proto)
    content = {
        "pieces": [[p.piece, p.score, p.kind] for p in pieces],
        **{name: getattr(config, name) for name in _BEHAVIOUR_FIELDS},
    }
    content["charsmap"] = content["charsmap"].hex() if content["charsmap"] else None
    canonical = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _encode(fields: Sequence[tuple[int, int, Any]]) -> bytes:
    """A protobuf message from ``(number, wire type, value)`` triples, as `iter_fields` yields them."""
    out = bytearray()
    for number, wire, value in fields:
        out += _varint(number << 3 | wire)
        out += _varint(value) if wire == 0 else (_varint(len(value)) + value if wire == 2 else value)
    return bytes(out)


def _set(message: bytes, number: int, wire: int, value: Any) -> bytes:
    """``message`` with field ``number`` replaced by ``value`` (added at the end if absent)."""
    fields = [f for f in iter_fields(message) if f[0] != number]
    return _encode([*fields, (number, wire, value)])


def _edit_spec(model: bytes, spec: int, number: int, wire: int, value: Any) -> bytes:
    """Set field ``number`` of the trainer spec (``spec=2``) or the normalizer spec (``spec=3``)."""
    return _encode([(n, w, _set(v, number, wire, value) if n == spec else v) for n, w, v in iter_fields(model)])


def _edit_pieces(model: bytes, edit: Callable[[list[bytes]], list[bytes]]) -> bytes:
    fields = list(iter_fields(model))
    pieces = edit([v for n, _, v in fields if n == 1])
    return _encode([(1, 2, p) for p in pieces] + [f for f in fields if f[0] != 1])


@functools.lru_cache(maxsize=1)
def _models() -> tuple[bytes, bytes]:
    """A small nmt_nfkc Unigram model, and the compiled table of the nfkc rule (trained once per process)."""
    from ...data.corpus import load
    from ...sentencepiece import train_sentencepiece

    lines = [line for line in load("en", max_bytes=30_000).split("\n") if line.strip()]
    base = train_sentencepiece(lines, vocab_size=300).serialized_model_proto()
    nfkc = train_sentencepiece(lines, vocab_size=300, normalization_rule_name="nfkc").serialized_model_proto()
    return base, parse_model_proto(nfkc)[1].charsmap


def _fingerprint_cases() -> list[tuple[str, bytes, bool, str]]:
    """(what changed, the changed model file, same fingerprint expected?, hint if the answer is wrong)."""
    base, nfkc_table = _models()
    f32 = functools.partial(struct.pack, "<f")
    bytes_hint = ("hash what decides tokenization (pieces with scores and types, the normalizer spec, model_type, "
                  "byte_fallback, unk_surface), not the file's bytes: ")
    record = "only a record of how the model was trained, and must not change the fingerprint."
    decides = "it decides the tokens, so it must change the fingerprint."
    swapped = lambda ps: [ps[0], ps[1], ps[2], ps[4], ps[3], *ps[5:]]  # noqa: E731
    return [
        ("the same file again", base, True, "the same file must give the same fingerprint every time."),
        ("trained from another directory (input path and model prefix differ)",
         _edit_spec(_edit_spec(base, 2, 1, 2, b"/elsewhere/train.txt"), 2, 2, 2, b"/elsewhere/m"), True,
         bytes_hint + "the trainer spec records the input path and the model prefix."),
        ("trained with 8 threads", _edit_spec(base, 2, 16, 0, 8), True, "num_threads is " + record),
        ("character_coverage written out", _edit_spec(base, 2, 10, 5, f32(0.9995)), True,
         "character_coverage is " + record),
        ("split_digits and split_by_whitespace flipped", _edit_spec(_edit_spec(base, 2, 25, 0, 1), 2, 22, 0, 0), True,
         "split_digits and split_by_whitespace are rules for the trainer; the encoder ignores them (toklab's tests "
         "flip them and sentencepiece encodes exactly as before), so they are " + record),
        ("one piece's score", _edit_pieces(base, lambda ps: [*ps[:10], _set(ps[10], 2, 5, f32(-0.5)), *ps[11:]]),
         False, "scores decide the segmentation (Unigram's best path, BPE's merge order): " + decides),
        ("one piece's type (normal -> user-defined)",
         _edit_pieces(base, lambda ps: [*ps[:10], _set(ps[10], 3, 0, 4), *ps[11:]]), False,
         "a piece's type decides whether it is matched in the text, never produced, or a byte: " + decides),
        ("two pieces swapped", _edit_pieces(base, swapped), False,
         "an ID is a position in the piece list: the same pieces in another order give other IDs, so the order "
         "must be part of what you hash."),
        ("add_dummy_prefix off", _edit_spec(base, 3, 3, 0, 0), False, "the normalizer spec's flags change the text "
         "the model segments: " + decides),
        ("remove_extra_whitespaces off", _edit_spec(base, 3, 4, 0, 0), False,
         "the normalizer spec's flags change the text the model segments: " + decides),
        ("another compiled table under the same rule name", _edit_spec(base, 3, 2, 2, nfkc_table), False,
         "the compiled table (precompiled_charsmap), not the rule's name, is what normalizes: " + decides),
        ("model_type bpe", _edit_spec(base, 2, 3, 0, 2), False, "model_type chooses the encoder: " + decides),
        ("byte_fallback on", _edit_spec(base, 2, 35, 0, 1), False,
         "byte_fallback changes what an uncovered character becomes: " + decides),
        ("another unk_surface", _edit_spec(base, 2, 44, 2, " <?> ".encode()), False,
         "unk_surface is what decoding prints for <unk>: it decides the decoded text, so it must change the "
         "fingerprint."),
    ]


@exercise("ch03_2-ex5", title="Fingerprint a SentencePiece model file", function="fingerprint",
          reference=_reference_fingerprint, against="a SHA-256 of what decides tokenization, on 14 edited model files")
def check_fingerprint(run: Run, fn: Callable[[bytes], str]) -> None:
    """Check a reader's ``fingerprint(model_proto: bytes) -> str``.

    Two files must get the same fingerprint exactly when they tokenize the
    same: when they agree on the pieces (string, score, type, in ID order),
    the normalizer spec (rule name, compiled table, add_dummy_prefix,
    remove_extra_whitespaces, escape_whitespaces), model_type, byte_fallback
    and unk_surface. Each case edits one field of a small trained model's
    file and compares the two fingerprints.
    """
    base = _models()[0]
    for what, changed, same, hint in _fingerprint_cases():
        want = "the same fingerprint as the original" if same else "a different fingerprint from the original"
        case = run.case(f"{what}: {want}", expected=Shown(want), input=Shown(f"fingerprint(<model file: {what}>)"))
        original, other = case.call(fn, base), case.call(fn, changed)
        if isinstance(original, bool) or not isinstance(original, str):
            case.fail(Shown(f"a value of type {type(original).__name__}"), "return the digest as a str (hashlib's hexdigest()); "
                      "Python's hash() of a str changes from one process to the next (PYTHONHASHSEED).")
        if (original == other) != same:
            case.fail(Shown("the same fingerprint" if original == other else "different fingerprints"), hint)
    large = _large_model()
    _, seconds = run.timed(_reference_fingerprint, large)
    case = run.case(LARGE_MODEL, expected=Shown("a different fingerprint from the original"), seconds=seconds,
                    input=Shown("fingerprint(<the model file with 2,000 more pieces>)"), slow_hint=(
                        "read the file once and hash one canonical text built in one pass; re-reading the pieces, "
                        "or adding to a growing string, for each piece grows with the square of their number"))
    original, other = case.call(fn, base), case.call(fn, large)
    if not isinstance(other, str) or other == original:
        case.fail(Shown("the same fingerprint" if other == original else f"a {type(other).__name__}"),
                  "2,000 more pieces change the tokens: the fingerprint must change.")


LARGE_MODEL = "large: the model file with 2,000 more pieces (timed)"


@functools.lru_cache(maxsize=1)
def _large_model() -> bytes:
    def more(pieces: list[bytes]) -> list[bytes]:
        template = pieces[-1]
        extra = [_set(_set(template, 1, 2, f"▁extra{k}".encode()), 2, 5, struct.pack("<f", -20.0 - k / 1_000))
                 for k in range(2_000)]
        return pieces + extra

    return _edit_pieces(_models()[0], more)
