"""How far a small change in the text travels: into bytes, and into a subword vocabulary's tokens.

Byte-level models are said to be robust to typos and noise. Part of that is visible before
any model runs: a typo changes one byte of the input, while a subword tokenizer may
re-split the whole word into rarer pieces. `perturb` makes the kinds of noise the ByT5
paper tests with (typos, upper case, random case, character noise), and `changed_units`
counts how much of an encoded sequence a perturbation changed, for bytes and for token
IDs alike. `noise_sensitivity` runs both over a list of lines.
"""

from __future__ import annotations

import difflib
import random
import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

__all__ = ["NOISE_KINDS", "perturb", "changed_units", "NoiseResult", "noise_sensitivity"]

#: The perturbations `perturb` knows, in display order.
NOISE_KINDS: tuple[str, ...] = ("typo", "uppercase", "random case", "character noise")

_LETTERS = string.ascii_lowercase


def _typo(word: str, rng: random.Random) -> str:
    """One edit inside ``word``: substitute, delete, insert, or swap two neighbours."""
    i = rng.randrange(len(word))
    op = rng.choice("sdit")
    c = rng.choice(_LETTERS)
    if op == "d":
        return word[:i] + word[i + 1 :]
    if op == "i":
        return word[:i] + c + word[i:]
    if op == "t" and i < len(word) - 1:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    return word[:i] + c + word[i + 1 :]


def perturb(text: str, kind: str, rate: float = 0.1, rng: random.Random | None = None) -> str:
    """``text`` with noise of one ``kind`` (see `NOISE_KINDS`) added.

    * ``"typo"``: each word with a letter in it gets, with probability ``rate``, one edit
      (a letter substituted, deleted or inserted, or two neighbours swapped);
    * ``"uppercase"``: the whole text in upper case (``rate`` is not used);
    * ``"random case"``: each character upper- or lower-cased by a coin flip;
    * ``"character noise"``: each character, with probability ``rate``, dropped, followed
      by a random letter, or replaced by one (a third of the time each).

    ``rng`` (default ``random.Random(0)``) makes the noise reproducible; pass one
    generator through many calls to get different noise on each line.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}")
    if kind not in NOISE_KINDS:
        raise ValueError(f"unknown noise kind {kind!r}; choose one of {', '.join(NOISE_KINDS)}")
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"rate must be between 0 and 1, got {rate!r}")
    rng = random.Random(0) if rng is None else rng
    if kind == "uppercase":
        return text.upper()
    if kind == "random case":
        return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in text)
    if kind == "typo":
        words = text.split(" ")
        return " ".join(_typo(w, rng) if any(c.isalpha() for c in w) and rng.random() < rate else w
                        for w in words)
    out = []
    for c in text:
        r = rng.random()
        if r >= rate:
            out.append(c)
        elif r < rate / 3:
            continue  # dropped
        elif r < 2 * rate / 3:
            out += [c, rng.choice(_LETTERS)]
        else:
            out.append(rng.choice(_LETTERS))
    return "".join(out)


def changed_units(before: Sequence, after: Sequence) -> int:
    """How many units of ``after`` are not matched to ``before``: new bytes, or new tokens.

    The match is difflib's: the longest common run first, then recursively on either
    side of it, so an edit in the middle leaves the units around it matched. For bytes
    this counts the bytes an edit touched; for token IDs it counts every token the
    tokenizer produced differently, which is more than one when an edit re-splits a word.
    """
    matcher = difflib.SequenceMatcher(None, list(before), list(after), autojunk=False)
    return len(after) - sum(block.size for block in matcher.get_matching_blocks())


@dataclass(frozen=True)
class NoiseResult:
    """What one kind of noise did to a text, counted in bytes and in tokens."""

    kind: str
    bytes_changed: int
    bytes_after: int
    tokens_changed: int
    tokens_after: int
    tokens_before: int

    @property
    def byte_share(self) -> float:
        """Share of the noisy text's bytes that changed."""
        return self.bytes_changed / self.bytes_after

    @property
    def token_share(self) -> float:
        """Share of the noisy text's tokens that changed."""
        return self.tokens_changed / self.tokens_after

    @property
    def token_growth(self) -> float:
        """How many times longer the token sequence got."""
        return self.tokens_after / self.tokens_before


def noise_sensitivity(lines: Iterable[str], encode: Callable[[str], Sequence[int]], kind: str,
                      rate: float = 0.1, seed: int = 0) -> NoiseResult:
    """Perturb every line with `perturb` (one generator seeded with ``seed`` for all lines)
    and add up, over the lines, `changed_units` of the UTF-8 bytes and of ``encode``'s IDs."""
    rng = random.Random(seed)
    counts = [0, 0, 0, 0, 0]
    for line in lines:
        noisy = perturb(line, kind, rate, rng)
        b0, b1 = line.encode("utf-8"), noisy.encode("utf-8")
        t0, t1 = list(encode(line)), list(encode(noisy))
        for j, v in enumerate((changed_units(b0, b1), len(b1), changed_units(t0, t1), len(t1), len(t0))):
            counts[j] += v
    if counts[1] == 0 or counts[4] == 0:
        raise ValueError("lines hold no text to perturb")
    return NoiseResult(kind, *counts)
