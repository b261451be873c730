"""Prefix instability and token healing.

The tokens of a prefix are not always a prefix of the tokens of the whole text:
``encode("The qu")`` ends in a token ``" qu"`` that ``encode("The quick")`` never
contains. A model that is handed the first sequence and asked to continue it sees
a token boundary it has rarely or never seen in training. This module holds the
two tools that deal with that:

`encode_with_unstable`
    tiktoken's answer for streaming and completion APIs: split the encoding of a
    text into *stable* tokens, which no continuation can change, and the set of
    token sequences that may come next and cover the unstable rest. Checked
    against ``tiktoken.Encoding.encode_with_unstable`` (same stable tokens, same
    set of completions) on the real r50k/cl100k/o200k vocabularies.
`heal`
    token healing for generation: back off the trailing tokens that a
    continuation could still change, and return the kept IDs and the bytes the
    next generated token(s) must reproduce. `TokenTrie` lists the tokens allowed
    at each step; `advance` updates what is left to reproduce.

Both work on a `toklab.ByteBPE` through its public interface only (``encode``,
``encode_ordinary``, ``segment``, ``pattern``, ``vocab``, ``special_tokens``,
``merges``) and `toklab.pretokenize`.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

import numpy as np
import regex

from . import pretokenize, special
from .special import SpecialSet

__all__ = [
    "TokenTrie",
    "Healing",
    "encode_with_unstable",
    "stable_tokens",
    "heal",
    "advance",
    "merge_bytes",
    "canonical_after",
    "constrained_choices",
    "Generation",
    "generate",
]

_WHITE_SPACE = regex.compile(r"\p{White_Space}")
_SPACE_BYTES = frozenset(b" \n\t")


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
_PRIORITIES: "WeakKeyDictionary[Any, dict[bytes, int]]" = WeakKeyDictionary()


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


# ------------------------------------------------------------------ encode_with_unstable


def merge_bytes(data: bytes, priority: Mapping[bytes, int]) -> list[bytes]:
    """Byte-level BPE on raw bytes (which need not be valid UTF-8), no pre-tokenization.

    ``priority`` maps each mergeable token to its merge rank. Repeatedly joins the
    adjacent pair whose concatenation has the lowest rank, the leftmost on a tie,
    until no adjacent pair is a token. For a chunk of valid UTF-8 this is what
    `ByteBPE.segment` computes; here it is needed for byte strings that cut a
    character in half, which ``segment`` (a str method) cannot take.
    """
    parts = [data[k : k + 1] for k in range(len(data))]
    while len(parts) > 1:
        best, where = None, -1
        for k in range(len(parts) - 1):
            rank = priority.get(parts[k] + parts[k + 1])
            if rank is not None and (best is None or rank < best):
                best, where = rank, k
        if best is None:
            break
        parts[where : where + 2] = [parts[where] + parts[where + 1]]
    return parts


def _priority(tokenizer: Any) -> dict[bytes, int]:
    """Merge rank of every multi-byte token (its position in ``tokenizer.merges``)."""
    table = _PRIORITIES.get(tokenizer)
    if table is None:
        table = {a + b: k for k, (a, b) in enumerate(tokenizer.merges)}
        _PRIORITIES[tokenizer] = table
    return table


def _check_text(text: Any) -> str:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"text has a lone surrogate {text[exc.start]!r} at character {exc.start}, which has no "
            "UTF-8 form, so no byte prefix of it can be named (tiktoken raises here too); "
            "replace it first, e.g. with U+FFFD"
        ) from None
    return text


def _encode_last_chunk(
    tokenizer: Any, text: str, allowed: frozenset[str]
) -> tuple[list[int], int]:
    """IDs of ``text`` and how many of them the last pre-token chunk produced.

    The count is 0 when the text ends with a special token or is empty: nothing
    after a special token can merge with it.
    """
    ids: list[int] = []
    last = 0
    for piece, is_special in special.split_on_specials(text, allowed):
        if is_special:
            ids.append(tokenizer.special_tokens[piece])
            last = 0
            continue
        for chunk in pretokenize.split(piece, tokenizer.pattern):
            chunk_ids = tokenizer.segment(chunk)
            ids.extend(chunk_ids)
            last = len(chunk_ids)
    return ids, last


def _all_space(token: bytes | None) -> bool:
    return token is not None and all(b in _SPACE_BYTES for b in token)


def _last_char_is_space(data: bytes) -> int:
    """Byte length of the last character of ``data`` if it is whitespace, else 0."""
    for size in range(1, min(4, len(data)) + 1):
        lead = data[-size]
        if lead & 0xC0 == 0x80:  # a continuation byte: the character starts further back
            continue
        try:
            char = data[-size:].decode("utf-8")
        except UnicodeDecodeError:
            return 0
        return size if len(char) == 1 and _WHITE_SPACE.match(char) else 0
    return 0


def _covering(tokenizer: Any, data: bytes, length: int) -> tuple[int, ...]:
    """Encode ``data`` as a continuation would, keeping tokens until ``length`` bytes are covered."""
    try:
        ids = tokenizer.encode_ordinary(data.decode("utf-8"))
    except UnicodeDecodeError:
        # Half a character: no pre-tokenizer can run on it, so BPE the bytes whole.
        trie = TokenTrie.of(tokenizer)
        ids = [trie.token_id(p) for p in merge_bytes(data, _priority(tokenizer))]
    out: list[int] = []
    covered = 0
    for i in ids:
        out.append(i)
        covered += len(tokenizer.vocab[i])
        if covered >= length:
            break
    return tuple(out)


def _split_unstable(
    tokenizer: Any, text: str, allowed_special: SpecialSet, disallowed_special: SpecialSet
) -> tuple[list[int], list[int]]:
    text = _check_text(text)
    allowed, disallowed = special.resolve_special_sets(tokenizer.special_tokens, allowed_special, disallowed_special)
    special.check_disallowed(text, disallowed)
    ids, last = _encode_last_chunk(tokenizer, text, allowed)
    vocab = tokenizer.vocab
    if last and _all_space(vocab.get(ids[-last])):
        while last < len(ids) and _all_space(vocab.get(ids[-last - 1])):
            last += 1
    return ids[: len(ids) - last], ids[len(ids) - last :]


def stable_tokens(
    tokenizer: Any,
    text: str,
    *,
    allowed_special: SpecialSet = frozenset(),
    disallowed_special: SpecialSet = "all",
) -> list[int]:
    """The stable tokens of `encode_with_unstable`, without enumerating the completions."""
    return _split_unstable(tokenizer, text, allowed_special, disallowed_special)[0]


def encode_with_unstable(
    tokenizer: Any,
    text: str,
    *,
    allowed_special: SpecialSet = frozenset(),
    disallowed_special: SpecialSet = "all",
) -> tuple[list[int], list[list[int]]]:
    """Stable tokens of ``text`` and the token sequences that may complete it.

    The contract is tiktoken's: the stable tokens decode to a byte prefix of
    ``text``, and each completion, appended to them, decodes to bytes that start
    with all of ``text``. The result is tiktoken's too (the same stable tokens
    and the same set of completions, checked on r50k/cl100k/o200k); completions
    are returned sorted, where tiktoken's order is arbitrary.

    How it is found:

    1. Encode; the tokens of the last pre-token chunk are unstable (text after a
       special token, or none, leaves nothing unstable). If that chunk's first
       token is all spaces, tabs and newlines, the whitespace tokens just before
       it join the unstable part, because a continuation can redraw the
       whitespace split (cl100k's ``\\s*[\\r\\n]``).
    2. Completions are (a) every single token that starts with the unstable bytes
       U; (b) for each cut ``U = head + tail`` and each token ``t`` starting with
       ``tail``: ``head + t`` encoded as text (raw BPE when it is not valid
       UTF-8), truncated once it covers ``len(U)`` bytes; (c) when U ends in a
       whitespace character after other bytes, U's BPE with that character
       encoded on its own.

    A disallowed special in ``text`` raises ValueError (as `ByteBPE.encode`); so
    does a lone surrogate, which has no UTF-8 prefix to speak of.
    """
    stable, unstable = _split_unstable(tokenizer, text, allowed_special, disallowed_special)
    if not unstable:
        return stable, []
    vocab = tokenizer.vocab
    data = b"".join(vocab[i] for i in unstable)

    trie = TokenTrie.of(tokenizer)
    found: set[tuple[int, ...]] = {(i,) for i in trie.extending(data)}
    for cut in range(1, len(data)):
        head, tail = data[:cut], data[cut:]
        for i in trie.extending(tail):
            found.add(_covering(tokenizer, head + vocab[i], len(data)))
    size = _last_char_is_space(data)
    if len(data) > 1 and 0 < size < len(data):
        priority = _priority(tokenizer)
        parts = merge_bytes(data[:-size], priority) + merge_bytes(data[-size:], priority)
        found.add(tuple(trie.token_id(p) for p in parts))
    return stable, [list(seq) for seq in sorted(found)]


# ------------------------------------------------------------------ token healing


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
    ordinary text (`toklab.pretokenize.safe_cut_points`: a letter followed by a
    character that is neither letter, mark, digit nor apostrophe). Whether a
    position is a safe cut depends only on the two characters around it, which
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
    prompt = _check_text(prompt)
    if not prompt:
        raise ValueError("the prompt is empty: there is no token to heal (generate without a constraint)")
    allowed, disallowed = special.resolve_special_sets(tokenizer.special_tokens, allowed_special, disallowed_special)
    special.check_disallowed(prompt, disallowed)
    segments = list(special.split_on_specials(prompt, allowed))
    ids = tokenizer.encode(prompt, allowed_special=allowed, disallowed_special=disallowed)
    last_text, last_is_special = segments[-1]
    if last_is_special:
        return Healing(tuple(ids), b"", (), True)
    cuts = pretokenize.safe_cut_points(last_text, tokenizer.pattern)
    tail_ids = tokenizer.encode_ordinary(last_text[cuts[-1] :] if cuts else last_text)
    if ids[len(ids) - len(tail_ids) :] != tail_ids:  # the safe-cut guarantee; never expected to fail
        raise RuntimeError(f"the prompt's tokens do not end with the tokens after its last safe cut: {prompt!r}")
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


# ------------------------------------------------------------------ generation


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
    trie = TokenTrie.of(tokenizer)
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
