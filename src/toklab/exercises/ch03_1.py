"""Checkers for the coding exercises of §3.1 (byte-level BPE).

* ``ch03_1-ex1``, `check_bytes_to_unicode`: the reader writes GPT-2's
  byte-to-character table from its definition (keep the printable, non-space
  bytes, shift the other 68 to U+0100 and up in byte order). Compared with
  `toklab.unicode.bytes_to_unicode` and, when the Hugging Face ``tokenizers``
  package is installed, with its ``ByteLevel.alphabet()``.
* ``ch03_1-ex2``, `check_group_digits`: the reader cuts a string of digits into
  pieces of at most three, left to right, as cl100k's ``\\p{N}{1,3}`` branch
  does. Compared with `toklab.pre_tokenizers.split(..., "cl100k")` on fixed and
  random strings.

Both report in the format of `toklab.exercises.harness`.
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable, Mapping

from ..pre_tokenizers import split
from ..unicode import bytes_to_unicode
from .harness import Run, Shown, exercise

__all__ = ["check_bytes_to_unicode", "check_group_digits"]


def _show(ch: object) -> Shown:
    if isinstance(ch, str) and len(ch) == 1:
        return Shown(f"{ch!r} (U+{ord(ch):04X})")
    return Shown(repr(ch))


def _byte_name(b: int) -> str:
    return unicodedata.name(chr(b), "a control character")


def _byte_hint(b: int, expected: str, got: object) -> str:
    if expected == chr(b):
        return (f"byte 0x{b:02X} ({_byte_name(b)}) prints as itself in Latin-1 and is not whitespace, so GPT-2 "
                "keeps it unchanged: table[b] = chr(b).")
    if got == chr(b) and chr(b).isprintable():
        return (f"byte 0x{b:02X} ({_byte_name(b)}) is printable but whitespace: GPT-2 shifts whitespace too, "
                "so keep a byte only if chr(b).isprintable() and not chr(b).isspace().")
    return (f"byte 0x{b:02X} ({_byte_name(b)}) is shifted: the n-th shifted byte (in increasing byte order, "
            f"n = 0, 1, ...) maps to chr(256 + n); here n = {ord(expected) - 256}.")


@exercise("ch03_1-ex1", title="GPT-2's byte-to-character table", function="bytes_to_unicode",
          reference=bytes_to_unicode, against="toklab.unicode.bytes_to_unicode")
def check_bytes_to_unicode(run: Run, fn: Callable[[], Mapping[int, str]]) -> None:
    """Check a reader's ``bytes_to_unicode()`` against GPT-2's table.

    ``fn`` takes no arguments and returns a mapping from every byte value
    0..255 to a one-character string.
    """
    expected = bytes_to_unicode()
    case = run.case("the table maps exactly the byte values 0..255", expected=Shown("a dict {0: 'Ā', ..., 255: 'ÿ'}"))
    table = case.call(fn)
    if not isinstance(table, Mapping):
        case.fail(table, "return a dict mapping each byte value (an int 0..255) to its character.")
    keys = set(table)
    missing = sorted(set(range(256)) - keys)
    extra = sorted(keys - set(range(256)), key=repr)
    if missing or extra:
        case.fail(Shown(f"a {type(table).__name__} missing the keys {missing[:8]}{'...' if len(missing) > 8 else ''}"
                        f" and with unexpected keys {extra[:8]}{'...' if len(extra) > 8 else ''}"),
                  "the keys are the byte values as ints, 0 to 255, each exactly once (not bytes, not str).")
    case = run.case("every byte maps to one character, no two bytes to the same one",
                    expected=Shown("256 distinct one-character strings"), input=Shown("bytes_to_unicode()"))
    for b in range(256):
        ch = table[b]
        if not (isinstance(ch, str) and len(ch) == 1):
            case.fail(Shown(f"byte 0x{b:02X} maps to {ch!r}"), "every value is a str of length 1: chr(...).")
    seen: dict[str, int] = {}
    for b in range(256):
        if table[b] in seen:
            case.fail(Shown(f"bytes 0x{seen[table[b]]:02X} and 0x{b:02X} both map to {_show(table[b])}"),
                      "the table must be a bijection, or decoding cannot tell the two bytes apart: each "
                      "shifted byte gets the next unused character chr(256 + n).")
        seen[table[b]] = b
    for b in range(256):
        case = run.case(f"byte 0x{b:02X} ({_byte_name(b)})", expected=_show(expected[b]),
                        input=Shown(f"bytes_to_unicode()[0x{b:02X}]"))
        if table[b] != expected[b]:
            case.fail(_show(table[b]), _byte_hint(b, expected[b], table[b]))
    try:
        from tokenizers.pre_tokenizers import ByteLevel
    except ImportError:
        run.against += "; HF tokenizers is not installed"
        return
    run.against += " and HF ByteLevel.alphabet()"
    case = run.case("the characters are Hugging Face's ByteLevel.alphabet()",
                    expected=Shown("the same 256 characters"), input=Shown("set(bytes_to_unicode().values())"))
    if set(table.values()) != set(ByteLevel.alphabet()):
        case.fail(Shown("a different set"), "your table equals toklab's but not Hugging Face's "
                  "ByteLevel.alphabet(); please report this, it means the two libraries disagree.")


def _digit_cases(seed: int) -> list[tuple[str, str]]:
    fixed = ["", "7", "42", "999", "1000", "12345", "123456", "1234567", "00000000", "3141592653589793"]
    rng = random.Random(seed)
    rand = ["".join(rng.choice("0123456789") for _ in range(rng.randint(1, 40))) for _ in range(300)]
    return ([(s, f"{len(s)} digits" if len(s) != 1 else "one digit") for s in fixed]
            + [(s, f"random case {k} ({len(s)} digits)") for k, s in enumerate(rand)])


def _group_hint(s: str, expected: list[str], got: list) -> str:
    if "".join(map(str, got)) != s:
        return "the pieces must join back to the input: a pre-tokenizer covers every character exactly once."
    if any(len(p) > 3 for p in got):
        return "a piece has more than three digits: \\p{N}{1,3} takes at most three."
    if expected and len(got) == len(expected) and sorted(map(len, got)) == sorted(map(len, expected)):
        return ("the short piece belongs at the end: the regex takes three digits at a time from the left; "
                "it does not align to thousands from the right.")
    return ("take three digits at a time, left to right, and leave the remainder (1 or 2 digits) as the "
            "last piece.")


def _reference_group_digits(s: str) -> list[str]:
    return split(s, "cl100k")


@exercise("ch03_1-ex2", title="Digits in groups of three, as cl100k cuts them", function="group_digits",
          reference=_reference_group_digits, against="cl100k's pre-tokenizer, toklab.pre_tokenizers.split")
def check_group_digits(run: Run, fn: Callable[[str], list[str]], seed: int = 0) -> None:
    """Check a reader's ``group_digits(s)`` against cl100k's ``\\p{N}{1,3}`` rule.

    ``fn`` takes a string of ASCII digits and returns its pieces: at most
    three digits each, taken greedily from the left (``"12345"`` ->
    ``["123", "45"]``; the empty string has no pieces). ``seed`` chooses the
    random strings.
    """
    for s, what in _digit_cases(seed):
        expected = split(s, "cl100k")
        case = run.case(what, expected=expected)
        got = case.call(fn, s)
        if not isinstance(got, list):
            case.fail(got, "return the pieces as a list of str.")
        if got != expected:
            case.fail(got, _group_hint(s, expected, got))
