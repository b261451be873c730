"""A trie over a vocabulary's token bytes, and the step that consumes owed bytes."""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any
from weakref import WeakKeyDictionary

__all__ = ["TokenTrie", "advance"]


class TokenTrie:
    """A trie over the byte strings of a vocabulary's ordinary tokens.

    The trie is stored as the sorted list of token byte strings. The tokens under
    a node (those that start with the node's prefix) then form one contiguous run
    of the list, found with two binary searches, and a node's children are the
    distinct next bytes met when walking that run from one child's sub-run to the
    next. That is all a trie is used for here, and it costs two lists instead of
    a few million dict nodes for o200k's 200,000 tokens.
    """

    def __init__(self, tokens: Mapping[int, bytes]) -> None:
        ordered = sorted((bytes(t), int(i)) for i, t in tokens.items())
        for (a, i), (b, j) in zip(ordered, ordered[1:]):
            if a == b:
                raise ValueError(f"IDs {i} and {j} both have the bytes {a!r}")
        if ordered and not ordered[0][0]:
            raise ValueError(f"token ID {ordered[0][1]} is the empty byte string")
        self._keys = [t for t, _ in ordered]
        self._ids = [i for _, i in ordered]
        self._id_of = {t: i for t, i in ordered}
        self._bytes_of = {i: t for t, i in ordered}

    @classmethod
    def of(cls, tokenizer: Any) -> "TokenTrie":
        """The trie of ``tokenizer.vocab`` (ordinary tokens only), built once per tokenizer."""
        trie = _TRIES.get(tokenizer)
        if trie is None:
            trie = cls(tokenizer.vocab)
            _TRIES[tokenizer] = trie
        return trie

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, token: bytes) -> bool:
        return bytes(token) in self._id_of

    def token_id(self, token: bytes) -> int:
        """The ID of a token given as bytes; KeyError names bytes that are not a token."""
        try:
            return self._id_of[bytes(token)]
        except KeyError:
            raise KeyError(f"{bytes(token)!r} is not an ordinary token of this vocabulary") from None

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token; KeyError names an ID that is not in the trie."""
        try:
            return self._bytes_of[token_id]
        except KeyError:
            raise KeyError(f"token ID {token_id!r} is not an ordinary token of this vocabulary") from None

    def _run(self, prefix: bytes) -> tuple[int, int]:
        lo = bisect.bisect_left(self._keys, prefix)
        # The first byte string after every string that starts with prefix: drop
        # trailing 0xFF bytes, then add one to the last byte.
        stem = prefix.rstrip(b"\xff")
        if not stem:
            return lo, len(self._keys)
        upper = stem[:-1] + bytes([stem[-1] + 1])
        return lo, bisect.bisect_left(self._keys, upper, lo)

    def extending(self, prefix: bytes) -> list[int]:
        """IDs of the tokens that start with ``prefix`` (the token equal to it included)."""
        lo, hi = self._run(bytes(prefix))
        return self._ids[lo:hi]

    def count_extending(self, prefix: bytes) -> int:
        """How many tokens start with ``prefix``."""
        lo, hi = self._run(bytes(prefix))
        return hi - lo

    def prefixes_of(self, data: bytes) -> list[int]:
        """IDs of the tokens that are a prefix of ``data`` (shortest first, ``data`` itself included)."""
        data = bytes(data)
        found = (self._id_of.get(data[:k]) for k in range(1, len(data) + 1))
        return [i for i in found if i is not None]

    def children(self, prefix: bytes) -> dict[int, int]:
        """The trie node of ``prefix``: each next byte -> how many tokens continue with it."""
        prefix = bytes(prefix)
        lo, hi = self._run(prefix)
        out: dict[int, int] = {}
        n = len(prefix)
        while lo < hi:
            key = self._keys[lo]
            if len(key) == n:  # the token equal to the prefix ends here
                lo += 1
                continue
            child_lo, child_hi = self._run(key[: n + 1])
            out[key[n]] = child_hi - child_lo
            lo = child_hi
        return out

    def allowed(self, remaining: bytes) -> list[int]:
        """The next tokens that keep a generation consistent with ``remaining`` bytes, sorted.

        A token is allowed if it reproduces all of ``remaining`` and possibly more
        (it starts with ``remaining``), or if it is a proper prefix of it (the rest
        then has to come from later tokens). With nothing remaining, every token is.
        """
        remaining = bytes(remaining)
        if not remaining:
            return sorted(self._ids)
        proper = [i for i in self.prefixes_of(remaining[:-1])]
        return sorted(self.extending(remaining) + proper)


_TRIES: "WeakKeyDictionary[Any, TokenTrie]" = WeakKeyDictionary()


def advance(remaining: bytes, token: bytes) -> bytes | None:
    """What is left to reproduce after a token is emitted, or None if the token breaks it.

    >>> advance(b" qu", b" quick"), advance(b" qu", b" q"), advance(b" qu", b" a")
    (b'', b'u', None)
    """
    remaining, token = bytes(remaining), bytes(token)
    if token.startswith(remaining):
        return b""
    if remaining.startswith(token):
        return remaining[len(token) :]
    return None
