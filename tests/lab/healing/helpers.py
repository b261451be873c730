"""Shared inputs for the healing tests: adversarial text and a cached cl100k_base."""

from __future__ import annotations

import random

import toklab

# Characters that stress every branch: whitespace of all kinds (White_Space and
# not), CR/LF, digits, apostrophes, combining marks, CJK, emoji pieces, a special.
ADVERSARIAL_ALPHABET = list("ab xyzAB'\n\r\t 0123456789.,!?-_/#(){}\"") + [
    "\u00a0", "\u3000", "\u0085", "\u2028", "\u00e9", "e\u0301", "\u6ce8", "\u610f", "\U0001f642",
    "\u200d", "\ufe0f", "\u0430", "\x1c", "\x0b", "\x0c", "<|endoftext|>", "  ", "    ", "\n\n",
    "\r\n", "\u0301", "\U0001f468", "ing", " the", "'s", "'LL", "\ufffd",
]

ADVERSARIAL_CASES = [
    "", "hello fanta", "hello ", "a\n ", "12345", "<|endoftext|>", "x<|endoftext|>y", "  \n",
    " \u6ce8", "a\r\n", " \u00a0", "x \u3000", "don'", "I'", "\n\n\n", "\t\t", "x  ", "1 2 3 ",
    "http://", "#", "   ", "we'l", " we'l", "\U0001f468\u200d", "caf\u00e9", "cafe\u0301", "\u0301",
]




def random_prefixes(texts: dict[str, str], n_each: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for name in sorted(texts):
        text = texts[name]
        for _ in range(n_each):
            end = rng.randrange(1, len(text))
            out.append(text[max(0, end - rng.randint(1, 48)) : end])
    return out


_CL100K: list = []


def cl100k():
    if not _CL100K:
        _CL100K.append(toklab.ByteBPE.from_tiktoken("cl100k_base"))
    return _CL100K[0]
