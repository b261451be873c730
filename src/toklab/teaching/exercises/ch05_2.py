"""Checkers for the coding exercises of §5.2 (glitch tokens).

* ``ch05_2-ex1``, `check_partial_utf8`: the reader lists the tokens whose bytes
  are not valid UTF-8 on their own. Compared with
  `toklab.lab.glitch.partial_utf8_tokens` on hand-made vocabularies (valid
  multi-byte characters, truncated ones, overlong forms, surrogates) and on the
  real ``r50k_base``.

Reported in the format of `toklab.teaching.exercises.harness`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ...lab.glitch import partial_utf8_tokens
from .harness import Run, exercise

__all__ = ["TRICKY_TOKENS", "check_partial_utf8"]

#: Byte strings where a shortcut ("any byte >= 0x80", "look at the last byte") goes wrong.
TRICKY_TOKENS: dict[int, bytes] = {
    0: b"a",
    1: "\u00e9".encode(),  # é: valid, both bytes >= 0x80
    2: "\u6ce8".encode()[:2],  # first two bytes of 注
    3: "\u6ce8".encode()[1:],  # last two bytes of 注
    4: b" \xe6",  # a space, then a lead byte
    5: "\U0001f642".encode(),  # 🙂: valid, 4 bytes
    6: b"\xc0\xaf",  # overlong '/': invalid
    7: b"\xed\xa0\x80",  # a UTF-16 surrogate: invalid in UTF-8
    8: b"\xf4\x90\x80\x80",  # above U+10FFFF: invalid
    9: " caf\u00e9".encode(),
    10: b"\x80",
}


LARGE = "large: r50k_base, 50,256 tokens (timed)"


class _Vocab:
    def __init__(self, vocab: Mapping[int, bytes]) -> None:
        self.vocab = dict(vocab)


def reference_partial_utf8(tokens: Mapping[int, bytes]) -> list[int]:
    """toklab's answer for a plain ``{id: bytes}`` dict."""
    return partial_utf8_tokens(_Vocab(tokens))


def _hint(tokens: Mapping[int, bytes], expected: Sequence[int], got: object) -> str:
    try:
        wrong = sorted(set(got) ^ set(expected))  # type: ignore[arg-type]
    except TypeError:
        return "return a sorted list of token IDs."
    if not wrong:
        return "the right IDs, but return them as a sorted list."
    i = wrong[0]
    data = tokens.get(i)
    if data is not None and i not in expected:
        return (f"token {i} is {data!r}, which is valid UTF-8 ({data.decode('utf-8')!r}); a byte >= 0x80 alone says "
                "nothing: decide by decoding the bytes.")
    return f"token {i} is {data!r}, which is not valid UTF-8 on its own: decoding it raises UnicodeDecodeError."


@exercise("ch05_2-ex1", title="Tokens that are not valid UTF-8 alone", function="partial_utf8",
          reference=reference_partial_utf8, against="toklab.lab.glitch.partial_utf8_tokens")
def check_partial_utf8(run: Run, fn: Callable[[Mapping[int, bytes]], Sequence[int]]) -> None:
    """Check a reader's ``partial_utf8(tokens) -> sorted IDs``, one token at a time, then on r50k_base."""
    from ...data.vocabs import load

    for i, data in TRICKY_TOKENS.items():
        tokens = {i: data}
        expected = reference_partial_utf8(tokens)
        case = run.case(f"one token: {data!r}", expected=expected)
        got = case.call(fn, dict(tokens))
        if list(got) != expected:
            case.fail(got, _hint(tokens, expected, got))
    for name, tokens in (("the tricky tokens together", TRICKY_TOKENS), ({}, "no tokens at all")[::-1],
                         (LARGE, {i: t for t, i in load("r50k_base").ranks.items()})):
        expected, seconds = run.timed(reference_partial_utf8, tokens)
        case = run.case(name, expected=expected, input=f"partial_utf8(<{name}: {len(tokens):,} tokens>)",
                        seconds=seconds if name == LARGE else None, slow_hint=(
                            "decide each token once and sort the IDs once at the end; inserting into a sorted "
                            "list, or testing membership in a list, for every token is quadratic"))
        got = case.call(fn, dict(tokens))
        if list(got) != expected:
            case.fail(got, _hint(tokens, expected, got))
