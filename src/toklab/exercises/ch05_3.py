"""Checkers for the coding exercises of §5.3 (prefix instability and token healing).

* `check_healing` -- the reader's ``heal(tokenizer, prompt) -> (kept_ids,
  prefix_bytes)`` must split the prompt's encoding into IDs that are *final*
  and the bytes that generation must reproduce. Checked on ``cl100k_base``
  with hand-picked prompts and random cuts of the corpus, each with a real
  continuation: the kept IDs must be the start of the encoding of the
  completed text. One-token healing fails here, and the message says where.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from functools import lru_cache

__all__ = ["CASES", "check_healing"]

#: (prompt, continuation) pairs: an easy start, then the cases that need care.
CASES: tuple[tuple[str, str], ...] = (
    ("The qu", "ick brown fox"),
    ("hello ", "world"),
    ("The total is 1234", "5 dollars"),
    ("Install the Debian packa", "ge now"),
    ("By way of illustration, we'l", "l consider"),
    ("x = foo(a,  ", " b)"),
    ("line one\n", "\n  indented"),
)


@lru_cache(maxsize=1)
def _tokenizer():
    from ..bpe import ByteBPE

    return ByteBPE.from_tiktoken("cl100k_base")


def _corpus_cases(n: int, seed: int = 0) -> list[tuple[str, str]]:
    from ..corpus import CORPUS, load

    rng = random.Random(seed)
    out = []
    for name in sorted(CORPUS):
        text = load(name, max_bytes=200_000)
        for _ in range(n):
            pos = rng.randrange(80, len(text) - 40)
            out.append((text[pos - rng.randint(1, 60) : pos], text[pos : pos + 30]))
    return out


def check_healing(fn: Callable[[object, str], tuple[Sequence[int], bytes]]) -> str:
    """Check a reader's ``heal(tokenizer, prompt) -> (kept_ids, prefix_bytes)``."""
    tok = _tokenizer()
    cases = list(CASES) + _corpus_cases(60)
    for prompt, rest in cases:
        result = fn(tok, prompt)
        try:
            kept, prefix = result
        except (TypeError, ValueError):
            raise AssertionError(f"heal(tok, {prompt!r}) must return (kept_ids, prefix_bytes), got {result!r}") from None
        kept = list(kept)
        if not isinstance(prefix, (bytes, bytearray)):
            raise AssertionError(f"heal(tok, {prompt!r}): the prefix must be bytes, got {type(prefix).__name__}")
        ids = tok.encode(prompt, disallowed_special=())
        if ids[: len(kept)] != kept:
            raise AssertionError(f"heal(tok, {prompt!r}): the kept IDs {kept} are not the start of the prompt's IDs {ids}")
        if tok.decode_bytes(kept) + bytes(prefix) != prompt.encode("utf-8"):
            raise AssertionError(
                f"heal(tok, {prompt!r}): the kept tokens' bytes plus the prefix {bytes(prefix)!r} do not spell the prompt"
            )
        whole = tok.encode(prompt + rest, disallowed_special=())
        if whole[: len(kept)] != kept:
            k = next(i for i, (a, b) in enumerate(zip(kept, whole)) if a != b) if len(whole) >= len(kept) else len(whole)
            raise AssertionError(
                f"heal(tok, {prompt!r}) keeps {[tok.id_to_token(i) for i in kept[k:]]} as final, but the completed text "
                f"{prompt + rest!r} is encoded with {[tok.id_to_token(i) for i in whole[k:k + 2]]} there: a continuation "
                "changed a token your function kept, so it did not back off far enough"
            )
    return f"heal: kept IDs were final in all {len(cases)} prompts, each with a real continuation"
