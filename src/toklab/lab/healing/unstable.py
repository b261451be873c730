"""tiktoken's ``encode_with_unstable``: which tokens of a text are final, and what may follow."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import regex

from ...base import special
from ...base.special import SpecialSet
from ...pre_tokenizers import patterns
from .trie import TokenTrie

__all__ = ["encode_with_unstable", "stable_tokens", "merge_bytes", "utf8_text"]

_WHITE_SPACE = regex.compile(r"\p{White_Space}")
_SPACE_BYTES = frozenset(b" \n\t")


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


def utf8_text(text: Any) -> str:
    """``text`` if it is a str with a UTF-8 form; TypeError or ValueError (naming the position) otherwise."""
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
        for chunk in patterns.split(piece, tokenizer.pattern):
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
        ids = [trie.token_id(p) for p in merge_bytes(data, tokenizer.merge_ranks)]
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
    text = utf8_text(text)
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
    stable, unstable = _split_unstable(
        tokenizer, text, allowed_special, disallowed_special
    )
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
        priority = tokenizer.merge_ranks
        parts = merge_bytes(data[:-size], priority)
        parts += merge_bytes(data[-size:], priority)
        found.add(tuple(trie.token_id(p) for p in parts))
    return stable, [list(seq) for seq in sorted(found)]
