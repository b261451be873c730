"""Token healing: back off the unfinished tokens of a prompt, then generate under a constraint."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...base import special
from ...base.special import SpecialSet
from ...pre_tokenizers import patterns
from .trie import TokenTrie, advance
from .unstable import utf8_text

__all__ = ["Healing", "heal", "canonical_after", "constrained_choices", "Generation", "generate"]


@dataclass(frozen=True)
class Healing:
    """The result of `heal`.

    ``kept`` are the prompt's IDs to feed the model; ``prefix`` the bytes the next
    generated token(s) must reproduce (the bytes of ``removed``, the IDs that were
    backed off). ``complete`` is True when every token a continuation could still
    change was backed off; False when ``max_backoff`` stopped short, in which case
    ``kept`` may end in a token that the canonical encoding of the finished text
    does not contain.
    """

    kept: tuple[int, ...]
    prefix: bytes
    removed: tuple[int, ...]
    complete: bool


def _check_backoff(max_backoff: Any) -> None:
    if max_backoff is None:
        return
    if isinstance(max_backoff, bool) or not isinstance(max_backoff, int):
        raise TypeError(f"max_backoff must be an int >= 0 or None, got {max_backoff!r}")
    if max_backoff < 0:
        raise ValueError(f"max_backoff must be >= 0 (0 turns healing off), got {max_backoff}")


def heal(
    tokenizer: Any,
    prompt: str,
    *,
    max_backoff: int | None = None,
    allowed_special: SpecialSet = frozenset(),
    disallowed_special: SpecialSet = "all",
) -> Healing:
    """Back off the prompt's trailing tokens that a continuation could still change.

    The back-off point is the last *safe cut* of the prompt's final stretch of
    ordinary text (`toklab.pre_tokenizers.patterns.safe_cut_points`: a letter
    followed by a character that is neither letter, mark, digit nor apostrophe).
    Whether a position is a safe cut depends only on the two characters around it, which
    the prompt already holds, so the cut stays safe whatever text follows, and
    the tokens before it are a prefix of the encoding of the prompt plus *any*
    continuation. Without a safe cut the whole stretch after the last special
    token (or the start) is backed off. Everything after the cut is removed, at
    most ``max_backoff`` tokens (None: no limit; 1 is classic one-token healing;
    0 turns healing off). A prompt that ends with a special token keeps all its
    tokens. For a custom pattern there are no known safe cuts, so the whole last
    stretch is backed off.

    Bad input: an empty prompt has nothing to heal and raises ValueError; a
    ``max_backoff`` larger than the prompt's token count just means no limit.
    """
    _check_backoff(max_backoff)
    prompt = utf8_text(prompt)
    if not prompt:
        raise ValueError(
            "the prompt is empty: there is no token to heal "
            "(generate without a constraint)"
        )
    allowed, disallowed = special.resolve_special_sets(
        tokenizer.special_tokens, allowed_special, disallowed_special
    )
    special.check_disallowed(prompt, disallowed)
    segments = list(special.split_on_specials(prompt, allowed))
    ids = tokenizer.encode(
        prompt, allowed_special=allowed, disallowed_special=disallowed
    )
    last_text, last_is_special = segments[-1]
    if last_is_special:
        return Healing(tuple(ids), b"", (), True)
    cuts = patterns.safe_cut_points(last_text, tokenizer.pattern)
    tail_ids = tokenizer.encode_ordinary(last_text[cuts[-1] :] if cuts else last_text)
    # the safe-cut guarantee; never expected to fail
    if ids[len(ids) - len(tail_ids) :] != tail_ids:
        raise RuntimeError(
            "the prompt's tokens do not end with the tokens after its last safe "
            f"cut: {prompt!r}"
        )
    n = len(tail_ids) if max_backoff is None else min(len(tail_ids), max_backoff)
    if n == 0:
        return Healing(tuple(ids), b"", (), False)
    kept, removed = ids[:-n], ids[-n:]
    prefix = b"".join(tokenizer.vocab[i] for i in removed)
    return Healing(tuple(kept), prefix, tuple(removed), n == len(tail_ids))


def canonical_after(tokenizer: Any, ids: Iterable[int]) -> bool:
    """True if ``ids`` are exactly how the tokenizer would encode their own decoded text."""
    ids = list(ids)
    data = tokenizer.decode_bytes(ids)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return tokenizer.encode_ordinary(text) == ids


def constrained_choices(tokenizer: Any, remaining: bytes) -> list[int]:
    """The tokens a healed generation may emit next while ``remaining`` bytes are owed.

    The tokens that reproduce all of ``remaining`` at once (start with it), if
    any: the model chooses among them, which is where healing helps. If none
    does, the rest spans several tokens whatever follows, and the first of them
    is taken from the canonical encoding of ``remaining`` (for bytes that are not
    valid UTF-8 alone, every proper prefix that is a token is offered instead).
    Every ID returned is in `TokenTrie.allowed`.
    """
    remaining = bytes(remaining)
    trie = TokenTrie.of(tokenizer)
    if not remaining:
        return sorted(tokenizer.vocab)
    finishing = trie.extending(remaining)
    if finishing:
        return sorted(finishing)
    try:
        return [tokenizer.encode_ordinary(remaining.decode("utf-8"))[0]]
    except UnicodeDecodeError:
        return trie.prefixes_of(remaining[:-1])


@dataclass(frozen=True)
class Generation:
    """What `generate` produced: all IDs (prompt part included) and the new text."""

    ids: tuple[int, ...]
    prompt_ids: int
    text: str


def generate(
    tokenizer: Any,
    prompt: str,
    next_log_probs: Callable[[Sequence[int]], np.ndarray],
    max_new_tokens: int,
    *,
    healing: bool = True,
    max_backoff: int | None = None,
) -> Generation:
    """Greedy generation from ``prompt``, with or without token healing.

    ``next_log_probs(ids)`` returns a score for every token ID (at least
    ``max(vocab) + 1`` of them). Without healing the prompt is encoded as is and
    the model continues after its last token. With healing, `heal` backs off the
    unfinished tokens and the next tokens are restricted to `constrained_choices`
    until the backed-off bytes are reproduced. Special tokens are never
    generated. ``text`` is everything after the prompt's text.
    """
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be an int >= 1, got {max_new_tokens!r}")
    if healing:
        h = heal(tokenizer, prompt, max_backoff=max_backoff)
        ids, remaining = list(h.kept), h.prefix
    else:
        ids, remaining = tokenizer.encode(prompt), b""
    start = len(ids)
    ordinary = np.array(sorted(tokenizer.vocab), dtype=np.int64)
    for _ in range(max_new_tokens):
        scores = np.asarray(next_log_probs(ids))
        choices = np.array(constrained_choices(tokenizer, remaining), dtype=np.int64) if remaining else ordinary
        best = int(choices[np.argmax(scores[choices])])
        ids.append(best)
        if remaining:
            remaining = advance(remaining, tokenizer.vocab[best])
    data = tokenizer.decode_bytes(ids)
    prompt_bytes = prompt.encode("utf-8")
    return Generation(tuple(ids), start, data[len(prompt_bytes) :].decode("utf-8", errors="replace"))
