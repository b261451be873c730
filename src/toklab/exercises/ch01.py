"""Checkers for the coding exercises of §1 (how to measure a tokenizer).

* ``ch01-ex1``, `check_bits_per_byte`: your ``my_bits_per_byte(total_nll_nats,
  n_bytes)`` against `toklab.metrics.bits_per_byte`, on the chapter's worked example,
  edge cases and random cases, including the inputs it must refuse.
* ``ch01-ex2``, `check_tokens_per_unit`: your ``tokens_per_unit(n_tokens, text, unit)``
  against `toklab.metrics.Fertility` for ``unit`` = ``"bytes"`` or ``"chars"`` on text
  with multi-byte characters, including the units it must refuse.

They report in the format of `toklab.exercises.harness`; the hints name the usual slips
(nats for bits, ln 10 for ln 2, the fraction upside down, chars for bytes, UTF-16 bytes).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from .. import metrics
from .harness import Run, exercise

__all__ = ["check_bits_per_byte", "check_tokens_per_unit"]

_LN2 = math.log(2)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _is_number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _bpb_hint(got: float, nll: float, n_bytes: int) -> str:
    """Name the usual mistake when ``got`` matches it."""
    if n_bytes and _close(got, nll / n_bytes):
        return "that is nats per byte: divide by ln 2 to turn nats into bits."
    if n_bytes and _close(got, nll / (n_bytes * math.log(10))):
        return "that divides by ln 10; bits need ln 2."
    if n_bytes and _close(got, nll * _LN2 / n_bytes):
        return "you multiplied by ln 2; nats -> bits is a division by ln 2."
    if n_bytes > 1 and _close(got, nll / math.log2(n_bytes)):
        return "the bytes go in the denominator as a count, not through a logarithm."
    if nll and _close(got, n_bytes / (nll * _LN2)):
        return "the fraction is upside down: NLL goes on top, bytes below."
    return f"bits per byte = total NLL / (n_bytes * ln 2) = {nll!r} / ({n_bytes} * ln 2)."


_BPB_REFUSED: list[tuple[object, object, tuple[type[BaseException], ...], str]] = [
    (4.0, 0, (ValueError,), "a text of zero bytes has no bits per byte"),
    (4.0, -8, (ValueError,), "a byte count cannot be negative"),
    (-1.0, 8, (ValueError,), "a total NLL is a sum of -log p with p <= 1, so it cannot be negative"),
    (float("nan"), 8, (ValueError,), "NaN is not a loss"),
    (float("inf"), 8, (ValueError,), "an infinite NLL (a zero-probability byte) has no finite BPB"),
    (4.0, 2.5, (ValueError, TypeError), "a byte count is a whole number"),
]


@exercise("ch01-ex1", title="Implement bits per byte", function="my_bits_per_byte",
          reference=metrics.bits_per_byte, against="toklab.metrics.bits_per_byte")
def check_bits_per_byte(run: Run, fn: Callable[[float, int], float]) -> None:
    """Check ``fn(total_nll_nats, n_bytes) -> bits per byte``.

    It must return NLL / (n_bytes · ln 2) for valid input, and raise ValueError
    (or TypeError, for a non-integer byte count) on input that has no BPB.
    """
    rng = random.Random(1)
    cases: list[tuple[float, int, str]] = [
        (4.0, 8, "the chapter's worked example: 0.7213 bits per byte"),
        (0.0, 5, "a perfect model: 0 bits per byte"),
        (8 * _LN2, 8, "exactly one bit per byte"),
        (1.0, 1, "one nat over one byte"),
        (1e6, 3, "a large NLL"),
        (2.5e-9, 10**9, "a tiny NLL over a billion bytes"),
    ]
    cases += [(rng.uniform(0, 1e4), rng.randint(1, 10**6), f"random case {k}") for k in range(40)]
    for nll, n_bytes, what in cases:
        want = metrics.bits_per_byte(nll, n_bytes)
        case = run.case(what, expected=want)
        got = case.call(fn, nll, n_bytes)
        if not _is_number(got):
            case.fail(got, "return the bits per byte as a float.")
        if not _close(got, want):
            case.fail(got, _bpb_hint(got, nll, n_bytes))
    for nll, n_bytes, errors, why in _BPB_REFUSED:
        run.case(f"refuse input that has no BPB: {why}", expected=None).expect_error(fn, nll, n_bytes, errors=errors,
                                                                                     why=why)


def _tokens_per_unit_hint(got: float, n_tokens: int, text: str, unit: str) -> str:
    other = "chars" if unit == "bytes" else "bytes"
    if _close(got, n_tokens / metrics.count_units(text, other)):
        return f"that is tokens per {other[:-1]}: check which count you divide by."
    if _close(got, metrics.count_units(text, unit) / n_tokens):
        return "that is units per token, the inverse: fertility is tokens / units."
    if unit == "bytes" and _close(got, n_tokens / len(text.encode("utf-16-le"))):
        return "that counts UTF-16 bytes; use text.encode('utf-8')."
    return (f"tokens per unit = n_tokens / units = {n_tokens} / {metrics.count_units(text, unit)} {unit} "
            "(bytes are UTF-8 bytes, chars are code points)")


_TEXTS = [
    "hello world",
    "naïve café",  # 2-byte letters
    "北京大学",  # BMP Han: 3 bytes each
    "𠀀𠀁 and 🙂",  # supplementary plane: 4 bytes each
    "👨\u200d👩\u200d👧",  # a ZWJ family: 5 code points, 18 bytes, one glyph
    "e\u0301",  # decomposed é: 2 code points
    "tab\there\nnewline",
]

_UNITS_REFUSED = [
    (3, "some words here", "words", "tokens per word needs a named segmenter, and none was given"),
    (3, "some text", "tokens", "'tokens' is not a denominator"),
    (3, "some text", "byte", "units are spelled 'bytes' and 'chars'"),
    (1, "", "bytes", "an empty text has no bytes to divide by"),
    (1, "", "chars", "an empty text has no chars to divide by"),
]


def _reference_tokens_per_unit(n_tokens: int, text: str, unit: str) -> float:
    return metrics.Fertility(n_tokens, metrics.count_units(text, unit), unit).tokens_per_unit


@exercise("ch01-ex2", title="Fertility with a declared unit", function="tokens_per_unit",
          reference=_reference_tokens_per_unit, against="toklab.metrics.Fertility")
def check_tokens_per_unit(run: Run, fn: Callable[[int, str, str], float]) -> None:
    """Check ``fn(n_tokens, text, unit) -> tokens per unit`` for ``unit`` in bytes / chars.

    Bytes are UTF-8 bytes and chars are code points. Any other unit, including
    ``"words"`` (no segmenter was named), and a text with no units must raise
    ValueError.
    """
    for text in _TEXTS:
        for unit in ("bytes", "chars"):
            for n_tokens in (1, 3, 7):
                want = _reference_tokens_per_unit(n_tokens, text, unit)
                tokens = "1 token" if n_tokens == 1 else f"{n_tokens} tokens"
                case = run.case(f"{tokens} over {metrics.count_units(text, unit)} {unit}", expected=want)
                got = case.call(fn, n_tokens, text, unit)
                if not _is_number(got):
                    case.fail(got, "return the tokens per unit as a float.")
                if not _close(got, want):
                    case.fail(got, _tokens_per_unit_hint(got, n_tokens, text, unit))
    for n_tokens, text, unit, why in _UNITS_REFUSED:
        run.case(f"refuse a unit or text with no denominator: {why}", expected=None).expect_error(
            fn, n_tokens, text, unit, why=why)
