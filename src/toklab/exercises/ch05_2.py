"""Checkers for the coding exercises of §5.2 (glitch tokens).

* `check_partial_utf8` -- the reader lists the tokens whose bytes are not valid
  UTF-8 on their own. Compared with `toklab.glitch.partial_utf8_tokens` on the
  real r50k_base vocabulary and on hand-made vocabularies that hold valid
  multi-byte characters, truncated ones, overlong forms and surrogates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

__all__ = ["TRICKY_TOKENS", "check_partial_utf8"]

#: Byte strings where a shortcut ("any byte >= 0x80", "the last byte") goes wrong.
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


class _Vocab:
    def __init__(self, vocab: Mapping[int, bytes]) -> None:
        self.vocab = dict(vocab)


def check_partial_utf8(fn: Callable[[Mapping[int, bytes]], Sequence[int]]) -> str:
    """Check a reader's ``partial_utf8(tokens) -> sorted IDs`` (tokens invalid as UTF-8 alone)."""
    from ..glitch import partial_utf8_tokens
    from ..vocabs import load

    cases = {"tricky tokens": TRICKY_TOKENS}
    ranks = load("r50k_base").ranks
    cases["r50k_base"] = {i: t for t, i in ranks.items()}
    for name, tokens in cases.items():
        expected = partial_utf8_tokens(_Vocab(tokens))
        got = list(fn(dict(tokens)))
        if got != expected:
            wrong = sorted(set(got) ^ set(expected))[:5]
            shown = ", ".join(f"{i}: {tokens[i]!r}" for i in wrong if i in tokens)
            raise AssertionError(
                f"partial_utf8 on {name}: expected {len(expected)} IDs, got {len(got)}; "
                f"first disagreements: {shown or wrong} (decide by decoding the bytes as UTF-8)"
            )
    return f"partial_utf8: agrees with toklab on {len(TRICKY_TOKENS)} tricky tokens and on r50k_base"
