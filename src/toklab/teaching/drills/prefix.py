"""Prefix instability by hand: encode a cut prompt, and count the tokens healing must back off.

With frozen merges, ``encode(s[:k])`` need not be a prefix of ``encode(s)``: the
last tokens of the cut text may merge differently once the rest arrives. A problem
gives the merges, a text and its tokens, and a cut; it asks for the tokens of the cut
text and for *m*, the smallest number of its final tokens to drop so that what is left
is a prefix of the full text's tokens (what token healing backs off). Answers come from
`toklab.bpe.reference_encode`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ... import bpe
from .bpe import ATTEMPTS, LETTERS, encoding_slips, trained_merges
from .problem import Mistake, Part, Problem, read_ints, read_tokens, show_tokens, split_parts

__all__ = ["problem", "backoff"]


def backoff(prefix_tokens: Sequence[str], full_tokens: Sequence[str]) -> int:
    """The fewest final tokens of ``prefix_tokens`` to drop so that the rest starts ``full_tokens``."""
    for m in range(len(prefix_tokens) + 1):
        kept = list(prefix_tokens[: len(prefix_tokens) - m])
        if list(full_tokens[: len(kept)]) == kept:
            return m
    raise AssertionError("unreachable: dropping every token always leaves a prefix")


def _truncated(full: Sequence[str], k: int) -> list[str]:
    """WRONG on purpose: the full text's tokens, with the token the cut falls in shortened to fit."""
    out, length = [], 0
    for tok in full:
        if length + len(tok) <= k:
            out.append(tok)
            length += len(tok)
        else:
            if length < k:
                out.append(tok[: k - length])
            break
    return out


#: How many tokens a problem's cut needs backed off, and how often: 0 (a stable cut), 1, or 2 and more.
BACKOFF = (0, 1, 1, 2, 2)


def problem(rng: random.Random, topic: str, seed: int) -> Problem:
    """``prefix-instability``: encode a cut prompt, and say how many of its tokens are not final.

    Most cuts are unstable (one token or several to back off), some stable (none): a
    candidate who always backs off, or never does, is caught. The cut prompt always has a
    merge to apply, so its encoding is never just its letters.
    """
    want = rng.choice(BACKOFF)
    for _ in range(ATTEMPTS):
        alphabet = "".join(sorted(rng.sample(LETTERS, rng.choice((2, 3)))))
        merges = trained_merges(rng, alphabet, (4, 6))
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(5, 8)))
        full = bpe.reference_encode(list(text), merges)
        if len(full) < 2:
            continue
        cuts = [(k, bpe.reference_encode(list(text[:k]), merges)) for k in range(2, len(text) - 1)]
        found = [(k, p, backoff(p, full)) for k, p in cuts if len(p) < k]  # len(p) < k: a merge applied
        choice = [c for c in found if min(c[2], 2) == want]
        if choice:
            k, tokens, m = rng.choice(choice)
            break
    else:  # pragma: no cover
        raise RuntimeError("no prefix-instability problem found; this is a bug in toklab.teaching.drills")
    cut = text[:k]
    token_part = Part("tokens", tokens, (
        Mistake("Cut the full text's tokens", _truncated(full, k),
                "the prompt is encoded on its own: nothing after the cut exists yet, so its last tokens come "
                "from the merges that apply inside the prompt."),
        *encoding_slips(cut, merges),
    ), hint=lambda got: f"encode {cut!r} from single letters with the merges, lowest rank first")
    if m:
        m_mistakes = (
            Mistake("Assumed the prompt's tokens are final", 0,
                    f"encode({cut!r}) is not a prefix of encode({text!r}): appending text let later merges "
                    "join across the prompt's last token boundary."),
            Mistake("One-token back-off", 1,
                    f"dropping one token is not enough here: after it the rest is still not a prefix of the full "
                    f"tokens ({m} must go). One-token healing misses this case."),
            Mistake("Backed off everything", len(tokens),
                    "the first tokens of the prompt are already final; back off only as far as needed."),
        )
    else:
        m_mistakes = (
            Mistake("Backed off a stable cut", 1,
                    f"encode({cut!r}) is already the start of encode({text!r}): the cut falls on a boundary of the "
                    "full encoding and no merge joins across it, so nothing needs backing off. Healing that always "
                    "drops the last token does it for nothing here."),
            Mistake("Backed off everything", len(tokens),
                    "the prompt's tokens are all final here; nothing needs backing off."),
        )
    m_part = Part("back-off", m, m_mistakes,
                  hint=lambda got: "drop final tokens of the prompt's encoding until what is left starts the full "
                  "encoding (possibly none)")
    dropped = (f"Dropping the last {m} token{'s' if m != 1 else ''} leaves "
               f"{show_tokens(tokens[: len(tokens) - m]) or '(nothing)'}, the first tokens of the full encoding."
               if m else "The prompt's tokens are already the first tokens of the full encoding: m = 0.")
    solution = f"encode({cut!r}) = {show_tokens(tokens)}; encode({text!r}) = {show_tokens(full)}.\n{dropped}"
    prompt = (
        "Prefix instability.\n"
        "Merges, in rank order: " + ", ".join(f"{a}+{b}" for a, b in merges) + "\n"
        f"The full text {text!r} encodes as: {show_tokens(full)}\n"
        f"A prompt is cut after {k} letters: {cut!r}. Encode it (from single letters, lowest rank first), and "
        "give the smallest number m (possibly 0) of its final tokens to drop so that the rest is a prefix of the "
        "full text's tokens."
    )

    def read(s: str) -> tuple:
        toks, num = split_parts(s, 2)
        return read_tokens(toks), read_ints(num, 1)[0]

    return Problem(topic, seed, prompt, (token_part.live(), m_part.live()), solution,
                   'the tokens, then ";" and m, e.g. "ab c ; 1"', {"merges": merges, "text": text, "cut": k},
                   read, lambda a: f"{show_tokens(a[0])} ; {a[1]}")
