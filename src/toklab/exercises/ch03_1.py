"""Checkers for the coding exercises of §3.1 (byte-level BPE).

* `check_bytes_to_unicode` -- the reader writes GPT-2's byte-to-character
  table from its definition (keep the printable, non-space bytes, shift the
  other 68 to U+0100 and up in byte order). Compared with
  `toklab.unicode.bytes_to_unicode` and, when the Hugging Face ``tokenizers``
  package is installed, with its ``ByteLevel.alphabet()``.
* `check_group_digits` -- the reader cuts a string of digits into pieces of at
  most three, left to right, as cl100k's ``\\p{N}{1,3}`` branch does. Compared
  with `toklab.split(..., "cl100k")` on fixed and random strings.

Each checker raises AssertionError describing the first disagreement and
returns a one-line success message otherwise.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping

from ..pre_tokenizers.patterns import split
from ..unicode import bytes_to_unicode

__all__ = ["check_bytes_to_unicode", "check_group_digits"]


def _show(ch: object) -> str:
    if isinstance(ch, str) and len(ch) == 1:
        return f"{ch!r} (U+{ord(ch):04X})"
    return repr(ch)


def check_bytes_to_unicode(fn: Callable[[], Mapping[int, str]]) -> str:
    """Check a reader's ``bytes_to_unicode()`` against GPT-2's table.

    ``fn`` takes no arguments and returns a mapping from every byte value
    0..255 to a one-character string.
    """
    table = fn()
    assert isinstance(table, Mapping), (
        f"bytes_to_unicode() should return a dict (byte value -> character), got {type(table).__name__}"
    )
    keys = set(table)
    missing = sorted(set(range(256)) - keys)
    extra = sorted(keys - set(range(256)), key=repr)
    assert not missing and not extra, (
        f"the keys must be exactly the byte values 0..255 (ints); missing {missing[:8]}"
        f"{'...' if len(missing) > 8 else ''}, unexpected {extra[:8]}"
    )
    for b in range(256):
        ch = table[b]
        assert isinstance(ch, str) and len(ch) == 1, (
            f"byte 0x{b:02X} maps to {ch!r}; every byte must map to exactly one character (a str of length 1)"
        )
    values = [table[b] for b in range(256)]
    if len(set(values)) != 256:
        seen: dict[str, int] = {}
        for b, ch in enumerate(values):
            if ch in seen:
                raise AssertionError(
                    f"bytes 0x{seen[ch]:02X} and 0x{b:02X} both map to {_show(ch)}: the table must be a "
                    "bijection, or decoding cannot tell them apart"
                )
            seen[ch] = b
    expected = bytes_to_unicode()
    for b in range(256):
        if table[b] != expected[b]:
            kept = expected[b] == chr(b)
            why = (
                "this byte prints as itself in Latin-1 and is not whitespace, so GPT-2 keeps it unchanged"
                if kept
                else "this byte is a control character, whitespace, NBSP or the soft hyphen, so GPT-2 shifts "
                "it: the n-th such byte (in increasing byte order, n = 0, 1, ...) maps to chr(256 + n)"
            )
            raise AssertionError(
                f"byte 0x{b:02X} should map to {_show(expected[b])}, got {_show(table[b])}: {why}"
            )
    try:
        from tokenizers.pre_tokenizers import ByteLevel
    except ImportError:
        return "bytes_to_unicode: OK (256 bytes, bijective, equal to toklab's table; HF tokenizers not installed)"
    alphabet = set(ByteLevel.alphabet())
    assert set(values) == alphabet, (
        "your table equals toklab's but not Hugging Face's ByteLevel.alphabet(); "
        "please report this, it means the two libraries disagree"
    )
    return "bytes_to_unicode: OK (256 bytes, bijective, equal to toklab's table and to HF ByteLevel.alphabet())"


def _digit_cases(seed: int) -> list[str]:
    fixed = ["", "7", "42", "999", "1000", "12345", "123456", "1234567", "00000000", "3141592653589793"]
    rng = random.Random(seed)
    rand = ["".join(rng.choice("0123456789") for _ in range(rng.randint(1, 40))) for _ in range(300)]
    return fixed + rand


def check_group_digits(fn: Callable[[str], list[str]], seed: int = 0) -> str:
    """Check a reader's ``group_digits(s)`` against cl100k's ``\\p{N}{1,3}`` rule.

    ``fn`` takes a string of ASCII digits and returns its pieces: at most
    three digits each, taken greedily from the left (``"12345"`` ->
    ``["123", "45"]``; the empty string has no pieces).
    """
    for s in _digit_cases(seed):
        expected = split(s, "cl100k")
        got = fn(s)
        assert isinstance(got, list), f"group_digits({s!r}) should return a list of strings, got {type(got).__name__}"
        if got == expected:
            continue
        if "".join(map(str, got)) != s:
            raise AssertionError(
                f"group_digits({s!r}) returned {got}, whose pieces do not join back to the input; "
                "a pre-tokenizer must cover every character exactly once"
            )
        if any(len(p) > 3 for p in got):
            raise AssertionError(f"group_digits({s!r}) returned {got}: a piece has more than three digits")
        if expected and len(got) == len(expected) and sorted(map(len, got)) == sorted(map(len, expected)):
            raise AssertionError(
                f"group_digits({s!r}) returned {got}, expected {expected}: the short piece belongs at the "
                "end. The regex takes three digits at a time from the left; it does not align to "
                "thousands from the right"
            )
        raise AssertionError(
            f"group_digits({s!r}) returned {got}, expected {expected}: take three digits at a time, "
            "left to right, and leave the remainder (1 or 2 digits) as the last piece"
        )
    return f"group_digits: OK ({len(_digit_cases(seed))} strings, same pieces as cl100k's pre-tokenizer)"
