"""Checkers for the coding exercises of §4.2 (real vocabularies and the cost per language).

* ``ch04_2-ex1``, `check_token_premium(fn)`: the reader computes each locale's token
  premium, called as ``fn(encode, texts, reference)``: its token count on parallel text
  divided by the reference locale's. Compared with the same ratio computed here, on the
  bundled parallel slice with two encoders whose counts are easy to verify (UTF-8 bytes
  and code points) and five reference locales, and with a reference text that has no tokens (which must raise
  ValueError).

Reports in the format of `toklab.teaching.exercises.harness`, with a hint at the usual mistake.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ...bpe import ByteBPE
from ...data import corpus
from .harness import Run, exercise

__all__ = ["check_token_premium"]

Premium = Callable[[Callable[[str], Sequence[int]], Mapping[str, str], str], Mapping[str, float]]


def _reference_premium(encode: Callable[[str], Sequence[int]], texts: Mapping[str, str], reference: str) -> dict[str, float]:
    ref = len(encode(texts[reference]))
    if ref == 0:
        raise ValueError(f"the reference text {reference!r} has no tokens")
    return {loc: len(encode(text)) / ref for loc, text in texts.items()}


def _premium_hint(encode, texts, reference, loc, value) -> str:
    n, ref = len(encode(texts[loc])), len(encode(texts[reference]))
    per_byte = (n / max(len(texts[loc].encode("utf-8")), 1)) / (ref / max(len(texts[reference].encode("utf-8")), 1))
    if abs(value - per_byte) < 1e-9:
        return ("that divides tokens per byte, which compares compression; the premium compares the cost of "
                "saying the same thing: token counts of the two translations, not rates.")
    if ref and abs(value - ref / n) < 1e-9 if n else False:
        return "the ratio is upside down: the locale's token count over the reference's."
    return "the premium of a locale is len(encode(its text)) / len(encode(the reference's text))."


@exercise("ch04_2-ex1", title="Token premium per language on parallel text", function="token_premium",
          reference=_reference_premium, against="token counts of the bundled parallel slice")
def check_token_premium(run: Run, fn: Premium) -> None:
    """Check a reader's ``token_premium(encode, texts, reference) -> {locale: ratio}``."""
    locales = corpus.parallel_locales()
    texts = {loc: "\n".join(corpus.parallel(loc)[:30]) for loc in locales}
    bytes_only = ByteBPE([])  # 256 byte tokens: tokens = UTF-8 bytes, a premium that is easy to verify
    encoders = {"UTF-8 bytes": bytes_only.encode_ordinary, "code points": _code_points}
    for name, encode in encoders.items():
        for reference in ("en-US", "zh-CN", "ru-RU", "ja-JP", "de-DE"):
            expected = _reference_premium(encode, texts, reference)
            case = run.case(f"{len(texts)} locales, tokens = {name}, reference {reference}", expected=expected,
                            input=f"token_premium(<{name}>, <{len(texts)} parallel texts>, {reference!r})")
            got = case.call(fn, encode, dict(texts), reference)
            if not isinstance(got, Mapping):
                case.fail(got, "return a dict {locale: premium}.")
            missing = [loc for loc in texts if loc not in got]
            if missing:
                case.fail(got, f"every locale needs an entry, the reference too (missing: {missing[:3]}).")
            for loc in texts:
                try:
                    value = float(got[loc])
                except (TypeError, ValueError):
                    case.fail(got, f"the premium of {loc!r} must be a number.")
                if abs(value - expected[loc]) > 1e-12:
                    case.fail(got, f"{loc!r}: " + _premium_hint(encode, texts, reference, loc, value),
                              expected=expected)
    case = run.case("the reference text is empty", expected=None)
    case.expect_error(fn, encoders["code points"], {"en-US": "", "de-DE": "Hallo"}, "en-US",
                      why="a premium relative to a text with no tokens is undefined (a division by zero)")
    whole = {loc: "\n".join(corpus.parallel(loc)) for loc in locales}
    encode = _code_points
    expected, seconds = run.timed(_reference_premium, encode, whole, "en-US")
    case = run.case(LARGE, expected=expected, seconds=seconds,
                    input=f"token_premium(<code points>, <{len(whole)} whole parallel texts>, 'en-US')",
                    slow_hint="encode each text once (the reference's once, not once per locale); "
                              "encoding is the expensive part")
    got = case.call(fn, encode, dict(whole), "en-US")
    if not isinstance(got, Mapping) or any(abs(float(got.get(loc, -1)) - expected[loc]) > 1e-12 for loc in whole):
        case.fail(got, "the premium of a locale is len(encode(its text)) / len(encode(the reference's text)).")


LARGE = "large: the whole parallel slice of every locale, tokens = code points (timed)"


def _code_points(text: str) -> list[int]:
    return list(map(ord, text))
