"""Checkers for the coding exercises of §1 (how to measure a tokenizer).

* `check_bits_per_byte` (exercise ``ch01-ex1``): your ``bits_per_byte(total_nll_nats,
  n_bytes)`` against `toklab.metrics.bits_per_byte`, on the chapter's worked example,
  edge cases and random cases, including the inputs it must refuse.
* `check_tokens_per_unit` (exercise ``ch01-ex2``): your ``tokens_per_unit(n_tokens, text,
  unit)`` against `toklab.metrics.Fertility` for ``unit`` = ``"bytes"`` or ``"chars"`` on
  text with multi-byte characters, including the units it must refuse.

Each returns a one-line success message, or raises AssertionError describing the first
case that went wrong and, where a typical slip explains it, what the slip probably was.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from .. import metrics

__all__ = ["check_bits_per_byte", "check_tokens_per_unit"]

_LN2 = math.log(2)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _bpb_hint(got: float, nll: float, n_bytes: int) -> str:
    """Name the usual mistake when ``got`` matches it."""
    if n_bytes and _close(got, nll / n_bytes):
        return " That is nats per byte: divide by ln 2 to turn nats into bits."
    if n_bytes and _close(got, nll / (n_bytes * math.log(10))):
        return " That divides by ln 10; bits need ln 2."
    if n_bytes and _close(got, nll * _LN2 / n_bytes):
        return " You multiplied by ln 2; nats -> bits is a division by ln 2."
    if n_bytes > 1 and _close(got, nll / math.log2(n_bytes)):
        return " The bytes go in the denominator as a count, not through a logarithm."
    if nll and _close(got, n_bytes / (nll * _LN2)):
        return " The fraction is upside down: NLL goes on top, bytes below."
    return ""


def check_bits_per_byte(fn: Callable[[float, int], float]) -> str:
    """Check ``fn(total_nll_nats, n_bytes) -> bits per byte``.

    It must return NLL / (n_bytes · ln 2) for valid input, and raise ValueError
    (or TypeError, for a non-integer byte count) on input that has no BPB.
    """
    rng = random.Random(1)
    cases: list[tuple[float, int]] = [
        (4.0, 8),  # the chapter's worked example: 0.7213
        (0.0, 5),  # a perfect model: 0 bits per byte
        (8 * _LN2, 8),  # exactly one bit per byte
        (1.0, 1),
        (1e6, 3),
        (2.5e-9, 10**9),
    ]
    cases += [(rng.uniform(0, 1e4), rng.randint(1, 10**6)) for _ in range(40)]
    for nll, n_bytes in cases:
        want = metrics.bits_per_byte(nll, n_bytes)
        try:
            got = fn(nll, n_bytes)
        except Exception as exc:  # noqa: BLE001 - report whatever the reader's code raised
            raise AssertionError(
                f"bits_per_byte({nll!r}, {n_bytes!r}) raised {type(exc).__name__}: {exc}; "
                f"expected {want:.6f}"
            ) from exc
        if not isinstance(got, (int, float)) or isinstance(got, bool):
            raise AssertionError(f"bits_per_byte({nll!r}, {n_bytes!r}) returned {got!r}, not a number")
        if not _close(got, want):
            raise AssertionError(
                f"bits_per_byte({nll!r}, {n_bytes!r}) returned {got!r}; expected {want:.6f} "
                f"= {nll!r} / ({n_bytes} * ln 2).{_bpb_hint(got, nll, n_bytes)}"
            )

    bad: list[tuple[object, object, tuple[type[BaseException], ...], str]] = [
        (4.0, 0, (ValueError,), "a text of zero bytes has no bits per byte"),
        (4.0, -8, (ValueError,), "a byte count cannot be negative"),
        (-1.0, 8, (ValueError,), "a total NLL is a sum of -log p with p <= 1, so it cannot be negative"),
        (float("nan"), 8, (ValueError,), "NaN is not a loss"),
        (float("inf"), 8, (ValueError,), "an infinite NLL (a zero-probability byte) has no finite BPB"),
        (4.0, 2.5, (ValueError, TypeError), "a byte count is a whole number"),
    ]
    for nll, n_bytes, errors, why in bad:
        try:
            got = fn(nll, n_bytes)  # type: ignore[arg-type]
        except errors:
            continue
        except Exception as exc:  # noqa: BLE001
            names = " or ".join(e.__name__ for e in errors)
            raise AssertionError(
                f"bits_per_byte({nll!r}, {n_bytes!r}) raised {type(exc).__name__}; expected {names} ({why})"
            ) from exc
        names = " or ".join(e.__name__ for e in errors)
        raise AssertionError(
            f"bits_per_byte({nll!r}, {n_bytes!r}) returned {got!r}; it should raise {names}: {why}"
        )
    return f"check_bits_per_byte: all {len(cases) + len(bad)} cases passed"


def check_tokens_per_unit(fn: Callable[[int, str, str], float]) -> str:
    """Check ``fn(n_tokens, text, unit) -> tokens per unit`` for ``unit`` in bytes / chars.

    Bytes are UTF-8 bytes and chars are code points. Any other unit, including
    ``"words"`` (no segmenter was named), and a text with no units must raise
    ValueError.
    """
    texts = [
        "hello world",
        "naïve café",  # 2-byte letters
        "北京大学",  # BMP Han: 3 bytes each
        "𠀀𠀁 and 🙂",  # supplementary plane: 4 bytes each
        "👨\u200d👩\u200d👧",  # a ZWJ family: 5 code points, 18 bytes, one glyph
        "e\u0301",  # decomposed é: 2 code points
        "tab\there\nnewline",
    ]
    n_cases = 0
    for text in texts:
        for unit in ("bytes", "chars"):
            for n_tokens in (1, 3, 7):
                want = metrics.Fertility(n_tokens, metrics.count_units(text, unit), unit).tokens_per_unit
                try:
                    got = fn(n_tokens, text, unit)
                except Exception as exc:  # noqa: BLE001
                    raise AssertionError(
                        f"tokens_per_unit({n_tokens}, {text!r}, {unit!r}) raised "
                        f"{type(exc).__name__}: {exc}; expected {want:.6f}"
                    ) from exc
                n_cases += 1
                if isinstance(got, bool) or not isinstance(got, (int, float)) or not _close(got, want):
                    hint = ""
                    other = "chars" if unit == "bytes" else "bytes"
                    if isinstance(got, (int, float)) and _close(got, n_tokens / metrics.count_units(text, other)):
                        hint = f" That is tokens per {other[:-1]}: check which count you divide by."
                    elif isinstance(got, (int, float)) and _close(got, metrics.count_units(text, unit) / n_tokens):
                        hint = " That is units per token, the inverse: fertility is tokens / units."
                    elif unit == "bytes" and isinstance(got, (int, float)) and _close(got, n_tokens / len(text.encode("utf-16-le"))):
                        hint = " That counts UTF-16 bytes; use text.encode('utf-8')."
                    raise AssertionError(
                        f"tokens_per_unit({n_tokens}, {text!r}, {unit!r}) returned {got!r}; expected "
                        f"{want:.6f} ({n_tokens} tokens / {metrics.count_units(text, unit)} {unit}).{hint}"
                    )
    refused = [
        (3, "some words here", "words", "tokens per word needs a named segmenter, and none was given"),
        (3, "some text", "tokens", "'tokens' is not a denominator"),
        (3, "some text", "byte", "units are spelled 'bytes' and 'chars'"),
        (1, "", "bytes", "an empty text has no bytes to divide by"),
        (1, "", "chars", "an empty text has no chars to divide by"),
    ]
    for n_tokens, text, unit, why in refused:
        try:
            got = fn(n_tokens, text, unit)
        except ValueError:
            n_cases += 1
            continue
        except Exception as exc:  # noqa: BLE001
            raise AssertionError(
                f"tokens_per_unit({n_tokens}, {text!r}, {unit!r}) raised {type(exc).__name__}; "
                f"expected ValueError ({why})"
            ) from exc
        raise AssertionError(
            f"tokens_per_unit({n_tokens}, {text!r}, {unit!r}) returned {got!r}; it should raise ValueError: {why}"
        )
    return f"check_tokens_per_unit: all {n_cases} cases passed"
