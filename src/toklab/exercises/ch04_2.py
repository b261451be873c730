"""Checkers for the coding exercises of §4.2 (real vocabularies and the cost per language).

* `check_token_premium` -- the reader computes each locale's token premium: its token
  count on parallel text divided by the reference locale's. Compared with the same
  ratio computed here, on the bundled parallel slice and a toy encoder, and with a
  reference text that has no tokens (which must raise ValueError).

The checker raises AssertionError naming the locale, the expected value and what the
reader's function returned, and returns a one-line success message otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .. import corpus
from ..bpe import ByteBPE

__all__ = ["check_token_premium"]

Premium = Callable[[Callable[[str], Sequence[int]], Mapping[str, str], str], Mapping[str, float]]


def check_token_premium(fn: Premium) -> str:
    """Check a reader's ``token_premium(encode, texts, reference) -> {locale: ratio}``."""
    locales = corpus.parallel_locales()
    texts = {loc: "\n".join(corpus.parallel(loc)[:30]) for loc in locales}
    bytes_only = ByteBPE([])  # 256 byte tokens: tokens = UTF-8 bytes, a premium that is easy to verify
    encoders = {"bytes": bytes_only.encode_ordinary, "chars": lambda t: list(map(ord, t))}
    for name, encode in encoders.items():
        for reference in ("en-US", "zh-CN"):
            got = fn(encode, texts, reference)
            ref = len(encode(texts[reference]))
            for loc, text in texts.items():
                expected = len(encode(text)) / ref
                assert loc in got, f"token_premium({name}, reference={reference!r}) has no entry for {loc!r}"
                assert abs(got[loc] - expected) < 1e-12, (
                    f"token_premium({name}, reference={reference!r})[{loc!r}] = {got[loc]!r}, expected {expected!r}"
                )
    try:
        fn(encoders["chars"], {"en-US": "", "de-DE": "Hallo"}, "en-US")
    except (ValueError, ZeroDivisionError) as exc:
        if isinstance(exc, ZeroDivisionError):
            raise AssertionError("an empty reference text should raise ValueError, not ZeroDivisionError") from None
    else:
        raise AssertionError("an empty reference text should raise ValueError")
    return f"token_premium: OK ({len(locales)} locales, two encoders, two references)"
