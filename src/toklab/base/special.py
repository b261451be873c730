"""Special tokens: which strings are control symbols, and when text may contain them.

A special token (``<|endoftext|>``) is recognised *before* pre-tokenization and
never goes through BPE. Because its surface form is ordinary text, a tokenizer
must decide what to do when user text happens to contain it. We follow
tiktoken's contract, which fails loudly instead of guessing:

- ``allowed_special``: the specials that text may turn into their IDs
  (``"all"`` for every one).
- ``disallowed_special``: the specials whose appearance in text is an error
  (``"all"`` means every special not allowed). Pass ``()`` to let them be
  encoded as plain text instead.

When two specials overlap at the same position the longest one wins, so a
registry holding both ``<|im_start|>`` and ``<|im_start|>user`` is unambiguous.

Chat templates live here too, because they are where specials enter a
sequence on purpose: `chatml` renders messages into `Segment`s, template text
(trusted, may hold specials) apart from message content (untrusted, encoded
with special-token recognition off). `toklab.pipeline.Pipeline.encode_chat`
encodes the two channels.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Literal, Union

import regex

__all__ = [
    "SpecialSet",
    "resolve_special_sets",
    "special_regex",
    "split_on_specials",
    "check_disallowed",
    "straddles",
    "Segment",
    "ChatTemplate",
    "chatml",
]

SpecialSet = Union[Literal["all"], Collection[str]]

#: One piece of rendered chat: ``(text, trusted)``. Trusted text was written by
#: the template (role headers, control tokens) and may contain special tokens;
#: untrusted text (message content) is encoded with special-token recognition
#: switched off.
Segment = tuple[str, bool]
ChatTemplate = Callable[..., list[Segment]]
Messages = Sequence[Mapping[str, str]]


def resolve_special_sets(
    registered: Collection[str], allowed: SpecialSet, disallowed: SpecialSet
) -> tuple[frozenset[str], frozenset[str]]:
    """Turn the user's allowed/disallowed arguments into two concrete sets."""
    registered = frozenset(registered)
    allowed_set = registered if allowed == "all" else frozenset(allowed)
    unknown = allowed_set - registered
    if unknown:
        raise ValueError(
            f"allowed_special names tokens that are not registered special tokens: {sorted(unknown)}; "
            f"registered: {sorted(registered)}"
        )
    disallowed_set = registered - allowed_set if disallowed == "all" else frozenset(disallowed)
    return allowed_set, disallowed_set


@lru_cache(maxsize=64)
def special_regex(tokens: frozenset[str]) -> regex.Pattern:
    """A regex matching any of ``tokens``, preferring the longest at each position."""
    ordered = sorted(tokens, key=lambda t: (-len(t), t))
    return regex.compile("|".join(regex.escape(t) for t in ordered))


def check_disallowed(text: str, disallowed: frozenset[str]) -> None:
    """Raise ValueError if ``text`` contains a disallowed special token."""
    if not disallowed:
        return
    match = special_regex(disallowed).search(text)
    if match:
        token = match.group()
        raise ValueError(
            f"text contains the special token {token!r} at character {match.start()}, "
            "which is disallowed. Pass it in allowed_special to encode it as the special "
            "token, or pass disallowed_special=() to encode it as ordinary text."
        )


def split_on_specials(text: str, allowed: frozenset[str]) -> Iterator[tuple[str, bool]]:
    """Yield ``(piece, is_special)`` in order; ordinary pieces may be empty-free."""
    if not allowed:
        if text:
            yield text, False
        return
    pos = 0
    for match in special_regex(allowed).finditer(text):
        if match.start() > pos:
            yield text[pos : match.start()], False
        yield match.group(), True
        pos = match.end()
    if pos < len(text):
        yield text[pos:], False


def straddles(text: str, cut: int, tokens: Collection[str]) -> bool:
    """True if some token occurs (or could still be completing) across position ``cut``.

    Used when text arrives in pieces: cutting inside ``<|endoftext|>`` would
    encode it as ordinary text. A token that starts before ``cut`` and runs to
    the end of ``text`` as a prefix of itself counts too, since the rest of it
    may arrive with the next piece.
    """
    for tok in tokens:
        n = len(tok)
        for start in range(max(0, cut - n + 1), cut):
            tail = text[start : start + n]
            if tail == tok or (start + len(tail) == len(text) and tok.startswith(tail)):
                return True
    return False


def chatml(messages: Messages, add_generation_prompt: bool = False) -> list[Segment]:
    """A ChatML-style template: ``<|im_start|>role\\ncontent<|im_end|>\\n`` per message.

    Returns segments, not one string, so that message content stays a
    separate, untrusted channel (see `Segment`). Roles are checked because
    they are template text: a role must not smuggle text into the trusted
    channel. With ``add_generation_prompt`` the rendering ends with the
    header of an assistant turn, ready for the model to continue.
    """
    if isinstance(messages, (str, bytes, Mapping)):
        raise TypeError(f"messages must be a list of {{'role': ..., 'content': ...}} dicts, got a {type(messages).__name__}")
    out: list[Segment] = []
    for k, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise TypeError(f"message {k} must be a dict with 'role' and 'content', got {type(message).__name__}")
        role, content = message.get("role"), message.get("content")
        if role not in ("system", "user", "assistant"):
            raise ValueError(
                f"message {k} has role {role!r}; expected 'system', 'user' or 'assistant'"
            )
        if not isinstance(content, str):
            raise ValueError(
                f"message {k} content must be a str, got {type(content).__name__}"
            )
        out += [
            (f"<|im_start|>{role}\n", True),
            (content, False),
            ("<|im_end|>\n", True),
        ]
    if add_generation_prompt:
        out.append(("<|im_start|>assistant\n", True))
    return out
