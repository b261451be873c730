"""Checkers for the coding exercises of §3.1 (byte-level BPE).

* ``ch03_1-ex1``, `check_bytes_to_unicode`: the reader writes GPT-2's
  byte-to-character table from its definition (keep the printable, non-space
  bytes, shift the other 68 to U+0100 and up in byte order). Compared with
  `toklab.base.unicode.bytes_to_unicode` and, when the Hugging Face ``tokenizers``
  package is installed, with its ``ByteLevel.alphabet()``.
* ``ch03_1-ex2``, `check_group_digits`: the reader finds the number chunks of
  any text as cl100k's ``\\p{N}{1,3}`` branch cuts them: every run of Unicode
  number characters (category N, in any script) in pieces of at most three,
  left to right. Compared with `toklab.pre_tokenizers.split(..., "cl100k")` on
  digit strings, texts with numbers of many kinds, and random ones.

Both report in the format of `toklab.teaching.exercises.harness`.
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable, Mapping

from ...base.unicode import bytes_to_unicode
from ...pre_tokenizers import split
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
          reference=bytes_to_unicode, against="toklab.base.unicode.bytes_to_unicode")
def check_bytes_to_unicode(run: Run, fn: Callable[[], Mapping[int, str]]) -> None:
    """Check a reader's ``bytes_to_unicode()`` against GPT-2's table.

    ``fn`` takes no arguments and returns a mapping from every byte value
    0..255 to a one-character string.
    """
    expected, seconds = run.timed(bytes_to_unicode)
    # The table has no input to grow, so this timed case is the function's only call: 256 entries take
    # microseconds, and only a function that does far more work than it needs fails it.
    case = run.case("the table maps exactly the byte values 0..255 (timed)",
                    expected=Shown("a dict {0: 'Ā', ..., 255: 'ÿ'}"), seconds=seconds, slow_hint=(
                        "the table has 256 entries: one pass over the byte values is all it takes"))
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


#: Number characters of every kind (Nd, Nl, No), text around them, and characters that look numeric to
#: ``str.isnumeric`` but are letters (三, 千, 万: category Lo).
_NUMBER_TEXTS: tuple[tuple[str, str], ...] = (
    ("x 12345 y", "ASCII digits between words"),
    ("a1b22c333d4444", "digit runs of every length between letters"),
    ("3.14159, 2,718 and 1e10", "decimal points and commas end a run"),
    ("\u0661\u0662\u0663\u0664\u0665", "Arabic-Indic digits (Nd)"),
    ("\u0968\u0966\u0968\u096a \u0967\u0968", "Devanagari digits (Nd)"),
    ("\uff11\uff12\uff13\uff14", "full-width digits (Nd)"),
    ("\u0663" + "4", "an Arabic-Indic and an ASCII digit in one run"),
    ("\u00bd\u00b2\u00b3\u00bc", "vulgar fractions and superscripts (No)"),
    ("\u216b and \u2177", "Roman numerals (Nl)"),
    ("\u2460\u2461\u2462\u2463", "circled digits (No)"),
    ("H\u2082O, x\u00b2, \u2080\u2081\u2082\u2083", "subscripts and superscripts (No)"),
    ("\u4e09\u5343\u4e07 and \u5341\u4e8c", "CJK numerals: numeric, but letters (Lo)"),
    ("\u4e09\u5343 = 3000", "CJK numerals next to ASCII digits"),
    ("no numbers here", "text without numbers"),
)

#: Characters of the random texts: numbers of several kinds, CJK numerals and other text. All of them
#: are old, because a character assigned after Python's Unicode version can be a number to the
#: ``regex`` module's newer tables and not to ``unicodedata``.
_NUMBER_POOL = "0123456789\u0661\u0665\u0967\u096a\uff11\u00bd\u00b2\u2160\u216b\u2460\u2082\u4e09\u5343 a.,-\u00e9\u6ce8"


def _digit_cases(seed: int) -> list[tuple[str, str]]:
    fixed = ["", "7", "42", "999", "1000", "12345", "123456", "1234567", "00000000", "3141592653589793"]
    rng = random.Random(seed)
    rand = ["".join(rng.choice("0123456789") for _ in range(rng.randint(1, 40))) for _ in range(150)]
    mixed = ["".join(rng.choice(_NUMBER_POOL) for _ in range(rng.randint(1, 30))) for _ in range(150)]
    return ([(s, f"{len(s)} ASCII digits" if len(s) != 1 else "one ASCII digit") for s in fixed]
            + [(s, f"random digits {k} ({len(s)} digits)") for k, s in enumerate(rand)]
            + list(_NUMBER_TEXTS)
            + [(s, f"random text {k} ({len(s)} characters)") for k, s in enumerate(mixed)])


def _is_number(ch: str) -> bool:
    return unicodedata.category(ch).startswith("N")


def _runs(text: str, is_number: Callable[[str], bool]) -> list[str]:
    runs, run = [], ""
    for ch in text:
        if is_number(ch):
            run += ch
        elif run:
            runs.append(run)
            run = ""
    return runs + [run] if run else runs


def _from_left(run: str) -> list[str]:
    return [run[i : i + 3] for i in range(0, len(run), 3)]


def _from_right(run: str) -> list[str]:
    head = len(run) % 3
    return ([run[:head]] if head else []) + [run[i : i + 3] for i in range(head, len(run), 3)]


def _grouped(text: str, is_number: Callable[[str], bool], cut: Callable[[str], list[str]]) -> list[str]:
    return [piece for run in _runs(text, is_number) for piece in cut(run)]


def _group_hint(s: str, expected: list[str], got: list) -> str:
    if not all(isinstance(p, str) for p in got):
        return "return the pieces as a list of str."
    if any(len(p) > 3 for p in got):
        return "a piece has more than three digits: \\p{N}{1,3} takes at most three."
    if got == _grouped(s, _is_number, _from_right):
        return ("the short piece belongs at the end: the regex takes three digits at a time from the left; "
                "it does not align to thousands from the right.")
    missed = next((ch for ch in s if _is_number(ch) and not ch.isdigit()), None)
    if missed is not None and got == _grouped(s, str.isdigit, _from_left):
        return (f"{missed!r} ({unicodedata.name(missed)}) is a number character, category "
                f"{unicodedata.category(missed)}, but str.isdigit() is False for it: \\p{{N}} is the Unicode "
                "category N (Nd, Nl and No); test unicodedata.category(ch).startswith('N').")
    extra = next((ch for ch in s if ch.isnumeric() and not _is_number(ch)), None)
    if extra is not None and got == _grouped(s, str.isnumeric, _from_left):
        return (f"{extra!r} ({unicodedata.name(extra)}) is numeric to str.isnumeric(), but it is a letter "
                f"(category {unicodedata.category(extra)}) and cl100k's letter branch takes it: \\p{{N}} is the "
                "category N, not the numeric property.")
    if got == _grouped(s, lambda ch: "0" <= ch <= "9", _from_left):
        return ("only ASCII digits were grouped: \\p{N} matches every number character, such as Arabic-Indic "
                "or full-width digits, Roman numerals and fractions (category N).")
    if "".join(got) != "".join(expected):
        return ("the pieces, joined, must be exactly the number characters of the text, in order: nothing else "
                "belongs to a digit chunk.")
    return ("cut every maximal run of number characters on its own, three at a time from the left, and leave "
            "the remainder (1 or 2 characters) as the run's last piece; a run ends at any other character.")


LARGE = "large: 30,000 characters of numbers in several scripts between words (timed)"


def _large_text() -> str:
    rng = random.Random(7)
    pieces = ["12345", "7", "\u0661\u0662\u0663\u0664", "\uff11\uff12", "\u2167", "\u00bd", "99", "1000000", "x", "word",
              " ", "三千", "\U0001d7d9\U0001d7da"]
    out, size = [], 0
    while size < 30_000:
        piece = rng.choice(pieces)
        out.append(piece)
        size += len(piece)
    return "".join(out)


def _reference_group_digits(text: str) -> list[str]:
    return [chunk for chunk in split(text, "cl100k") if _is_number(chunk[0])]


@exercise("ch03_1-ex2", title="Numbers in groups of three, in any script", function="group_digits",
          reference=_reference_group_digits, against="cl100k's pre-tokenizer, toklab.pre_tokenizers.split")
def check_group_digits(run: Run, fn: Callable[[str], list[str]], seed: int = 0) -> None:
    """Check a reader's ``group_digits(text)`` against cl100k's ``\\p{N}{1,3}`` rule.

    ``fn`` takes any text and returns the chunks cl100k's digit branch cuts
    from it, in order: each maximal run of number characters (Unicode
    category N: Nd, Nl, No) in pieces of at most three, taken greedily from
    the left (``"x 12345"`` -> ``["123", "45"]``); text without numbers has no
    pieces. The expected answers are the digit chunks of
    ``toklab.pre_tokenizers.split(text, "cl100k")``. ``seed`` chooses the
    random strings.
    """
    for s, what in _digit_cases(seed) + [(_large_text(), LARGE)]:
        expected, seconds = run.timed(_reference_group_digits, s)
        if expected != _grouped(s, _is_number, _from_left):  # toklab's pre-tokenizer must agree
            raise RuntimeError(f"cl100k's pre-tokenizer and unicodedata disagree on the numbers in {s!r}")
        case = run.case(what, expected=expected, seconds=seconds if what == LARGE else None, input=(
            Shown(f"group_digits(<{len(s):,} characters>)") if what == LARGE else None), slow_hint=(
            "walk the text once, collecting each run of number characters; slicing the rest of the text "
            "(text[i:]) or re-scanning from the start at each character makes it quadratic"))
        got = case.call(fn, s)
        if not isinstance(got, list):
            case.fail(got, "return the pieces as a list of str.")
        if got != expected:
            case.fail(got, _group_hint(s, expected, got))
