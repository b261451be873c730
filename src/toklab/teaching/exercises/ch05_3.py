"""Checkers for the coding exercises of §5.3 (prefix instability and token healing).

* ``ch05_3-ex1``, `check_healing`: the reader's ``heal(tokenizer, prompt) ->
  (kept_ids, prefix_bytes)`` must split the prompt's encoding into IDs that are
  *final* and the bytes that generation must reproduce. Checked on
  ``cl100k_base`` with hand-picked prompts and random cuts of the corpus, each
  with a real continuation: the kept IDs must be the start of the encoding of
  the completed text. One-token healing fails here, and the hint says why: the
  exercise is meant to fail on the function its text asks for, so it is answered in
  words and not graded (``graded=False``; ``grade`` refuses it).

Reported in the format of `toklab.teaching.exercises.harness`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from functools import lru_cache

from ...lab.healing import heal
from .harness import Run, Shown, exercise

__all__ = ["CASES", "check_healing", "reference_heal"]

#: (prompt, continuation) pairs: easy ones first, then the cases that need care.
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
    from ...bpe import ByteBPE

    return ByteBPE.from_tiktoken("cl100k_base")


def reference_heal(tokenizer, prompt: str) -> tuple[list[int], bytes]:
    """toklab's answer: `toklab.lab.healing.heal` as ``(kept, prefix)``."""
    h = heal(tokenizer, prompt, disallowed_special=())
    return list(h.kept), h.prefix


LARGE = "large: a prompt of 20,000 characters of English (timed)"


def _large_prompt() -> tuple[str, str]:
    from ...data.corpus import load

    text = load("en", 30_000)
    return text[:20_000], text[20_000:20_030]


def _corpus_cases(n: int, seed: int = 0) -> list[tuple[str, str]]:
    from ...data.corpus import CORPUS, load

    rng = random.Random(seed)
    out = []
    for name in sorted(CORPUS):
        text = load(name, max_bytes=200_000)
        for _ in range(n):
            pos = rng.randrange(80, len(text) - 40)
            out.append((text[pos - rng.randint(1, 60) : pos], text[pos : pos + 30]))
    return out


@exercise("ch05_3-ex1", title="Token healing that keeps only final tokens", function="heal_one",
          reference=reference_heal, against="the encoding of each completed text (toklab.lab.healing.heal passes)",
          answers=("toklab.lab.healing.heal",), graded=False)
def check_healing(run: Run, fn: Callable[[object, str], tuple[Sequence[int], bytes]]) -> None:
    """Check a reader's ``heal(tokenizer, prompt) -> (kept_ids, prefix_bytes)`` on prompts with continuations."""
    tok = _tokenizer()
    for prompt, rest in list(CASES) + _corpus_cases(60) + [_large_prompt()]:
        ids = tok.encode(prompt, disallowed_special=())
        whole = tok.encode(prompt + rest, disallowed_special=())
        _, seconds = run.timed(reference_heal, tok, prompt)
        large = len(prompt) > 1_000
        case = run.case(LARGE if large else f"the prompt {prompt!r}, continued with {rest!r}",
                        expected=Shown("kept IDs that start the encoding of the completed text"),
                        input=f"heal(cl100k_base, <{len(prompt):,} characters>)" if large else
                        f"heal(cl100k_base, {prompt!r})", seconds=seconds if large else None, slow_hint=(
                            "encode the prompt once and back off from its end; re-encoding the prompt for each "
                            "token you try to drop grows with the square of its length"))
        result = case.call(fn, tok, prompt)
        try:
            kept, prefix = result
            kept = [int(i) for i in kept]
        except (TypeError, ValueError):
            case.fail(result, "return a pair (kept_ids, prefix_bytes).")
        if not isinstance(prefix, (bytes, bytearray)):
            case.fail(result, "the prefix must be bytes (the removed tokens' bytes, joined).")
        if ids[: len(kept)] != kept:
            case.fail(kept, f"the kept IDs must be the first IDs of the prompt's own encoding, {ids}.")
        if tok.decode_bytes(kept) + bytes(prefix) != prompt.encode("utf-8"):
            case.fail(result, "the kept tokens' bytes followed by the prefix must spell the prompt exactly.")
        if whole[: len(kept)] != kept:
            k = next((i for i, (a, b) in enumerate(zip(kept, whole)) if a != b), len(whole))
            case.fail(
                Shown(f"kept {[tok.id_to_token(i) for i in kept[k:]]} as final"),
                f"the completed text {prompt + rest!r} is encoded with {[tok.id_to_token(i) for i in whole[k:k + 2]]} "
                "there: a continuation changed a token you kept, so you did not back off far enough. Removing "
                "the last token is not enough when the token before it is unfinished too; back off to a position "
                "no continuation can move (toklab.lab.healing.heal uses the last safe cut).",
            )
