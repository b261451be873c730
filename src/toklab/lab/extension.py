"""Vocabulary extension: add tokens to a trained byte-level BPE, old ones untouched.

Three steps, one function each:

* `extend` returns a new tokenizer. Every old ID keeps its bytes, every old merge keeps
  its rank, and the pre-tokenizer pattern (the only text handling a `ByteBPE` owns) is
  the same. A *special* addition (a control symbol such as ``<|tool_call|>``) gets the
  next free ID in the special channel: it is matched whole, only when the caller allows
  it, and never comes out of ordinary text. A *lexical* addition (a domain term, a word
  of a new language) must come out of ordinary text, so it gets the merges that build
  it from its old segmentation, left to right, appended after every existing rank.
* `regression` re-encodes a test set with both tokenizers and reports what changed.
* `resize_embeddings` grows the embedding (and an untied output head, and Adam's
  moment estimates) to the new vocabulary. Each new row starts as the mean of the old
  rows of the token's old segmentation (lexical) or of a description's old
  segmentation (special), or, with ``init="mean"``, as the mean of all old rows.

Because the new ranks are higher than every old rank, BPE on a chunk first applies every
old merge exactly as before and only then the new ones, which join runs of old tokens.
So a lexical addition changes an encoding only where the old segmentation has the new
token's parts in a row; `regression` checks that instead of assuming it (a new merge can
make an old token reachable that BPE never produced before, and that is reported).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..bpe import ByteBPE
from ..pre_tokenizers import patterns

__all__ = [
    "extend", "added_tokens", "old_segmentation", "Regression", "regression", "Resized",
    "resize_embeddings", "INITS",
]



def extend(tokenizer: ByteBPE, tokens: Sequence[str], *, special: bool) -> ByteBPE:
    """A new tokenizer with ``tokens`` added; ``tokenizer`` itself is not modified.

    ``special=True``: control symbols, each given the next ID after the largest one in
    use. ``special=False``: lexical tokens, each built from its old segmentation by new
    merges appended after the existing ones (an intermediate piece that is not yet a
    token becomes one too). A lexical token must be a single pre-token under the
    tokenizer's pattern, since BPE never merges across pre-tokens.

    Raises ValueError for an empty list, an empty or duplicated string, a token that
    already exists (as an ordinary or special token), a special whose text is an
    ordinary token, and a lexical token the pattern splits.
    """
    tokens = list(tokens)
    if not tokens:
        raise ValueError("no tokens to add")
    for k, tok in enumerate(tokens):
        _check_new(tokenizer, tokens, k, tok, special)
    vocab = dict(tokenizer.vocab)
    merges = tokenizer.merges
    specials = dict(tokenizer.special_tokens)
    next_id = tokenizer.n_vocab
    if special:
        for tok in tokens:
            specials[tok] = next_id
            next_id += 1
    else:
        encoder = {t: i for i, t in vocab.items()}
        for tok in tokens:
            chunks = patterns.split(tok, tokenizer.pattern)
            if chunks != [tok]:
                raise ValueError(
                    f"the pre-tokenizer splits {tok!r} into {chunks}, so BPE can "
                    "never produce it as one token; add it with special=True, or add "
                    "a string that is one pre-token"
                )
            parts = [tokenizer.id_to_token(i) for i in tokenizer.segment(tok)]
            acc = parts[0]
            for part in parts[1:]:
                joined = acc + part
                if joined not in encoder:
                    encoder[joined] = vocab[next_id] = joined
                    merges.append((acc, part))
                    next_id += 1
                acc = joined
    return ByteBPE(
        merges, vocab=vocab, pattern=tokenizer.pattern, special_tokens=specials
    )


def _check_new(
    tokenizer: ByteBPE, tokens: list, k: int, tok: object, special: bool
) -> None:
    """Refuse token ``k`` of ``tokens`` if it cannot be added (see `extend`)."""
    if not isinstance(tok, str):
        raise TypeError(f"tokens must be str, got {type(tok).__name__} at position {k}")
    if not tok:
        raise ValueError(f"token {k} is the empty string")
    if tok in tokens[:k]:
        raise ValueError(f"token {tok!r} is listed twice")
    if tok in tokenizer.special_tokens:
        sid = tokenizer.special_tokens[tok]
        raise ValueError(f"{tok!r} is already a special token (ID {sid})")
    existing = _ordinary_id(tokenizer, tok.encode("utf-8"))
    if existing is not None and special:
        raise ValueError(
            f"{tok!r} is already an ordinary token (ID {existing}); a special token "
            "with the same text would be ambiguous, so pick a distinct string such as "
            "'<|...|>'"
        )
    if existing is not None:
        raise ValueError(
            f"{tok!r} is already a token of this vocabulary (ID {existing})"
        )


def _ordinary_id(tokenizer: ByteBPE, data: bytes) -> int | None:
    try:
        tid = tokenizer.token_to_id(data)
    except KeyError:
        return None
    return tid if tid in tokenizer.vocab else None


def added_tokens(old: ByteBPE, new: ByteBPE) -> tuple[dict[int, bytes], dict[str, int]]:
    """The ordinary tokens (ID -> bytes) and specials (text -> ID) that ``new`` adds.

    Raises ValueError if ``new`` is not an extension of ``old``: an ID whose token
    differs (an ID collision), an old token or special that is missing or renumbered,
    or a different pattern.
    """
    if new.pattern != old.pattern:
        raise ValueError(
            "the new tokenizer has a different pre-tokenizer pattern, so it is not an "
            "extension"
        )
    for i, tok in old.vocab.items():
        if new.vocab.get(i) != tok:
            raise ValueError(
                f"ID collision: ID {i} is {tok!r} in the old tokenizer and "
                f"{new.vocab.get(i, 'unassigned')!r} in the new one"
            )
    for s, i in old.special_tokens.items():
        if new.special_tokens.get(s) != i:
            raise ValueError(
                f"special token {s!r} has ID {i} in the old tokenizer and "
                f"{new.special_tokens.get(s)} in the new one"
            )
    old_ids = set(old.vocab) | set(old.special_tokens.values())
    ordinary = {i: t for i, t in sorted(new.vocab.items()) if i not in old.vocab}
    specials = {
        s: i for s, i in new.special_tokens.items() if s not in old.special_tokens
    }
    for i in list(ordinary) + list(specials.values()):
        if i in old_ids:
            raise ValueError(
                f"ID collision: new token ID {i} is already used by the old tokenizer"
            )
    return ordinary, specials


def old_segmentation(old: ByteBPE, new: ByteBPE) -> dict[int, list[int]]:
    """For each ordinary token ``new`` adds: the old IDs it joins (by new merges)."""
    ordinary, _ = added_tokens(old, new)
    added = set(ordinary.values())
    made_of = {a + b: (a, b) for a, b in new.merges if a + b in added}
    memo: dict[bytes, list[int]] = {}

    def expand(tok: bytes) -> list[int]:
        if tok not in made_of:
            return [old.token_to_id(tok)]
        if tok not in memo:
            a, b = made_of[tok]
            memo[tok] = expand(a) + expand(b)
        return memo[tok]

    return {i: expand(t) for i, t in ordinary.items()}


@dataclass
class Regression:
    """What `regression` found; ``ok`` is the verdict (see its docstring)."""

    n_texts: int
    # texts whose IDs differ
    changed: list[int] = field(default_factory=list)
    # texts whose new IDs use an added token
    with_added: list[int] = field(default_factory=list)
    # changed, but not only by joining old tokens into added ones
    unexplained: list[int] = field(default_factory=list)
    # an added special came out of ordinary text
    special_leaks: list[int] = field(default_factory=list)
    # decode(encode(t)) != t with the new tokenizer
    round_trip_failures: list[int] = field(default_factory=list)
    # special-token behaviour that differs
    special_problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Changes only join old tokens into added ones; specials, round trips kept."""
        return not (
            self.unexplained or self.special_leaks or self.round_trip_failures
            or self.special_problems
        )

    def summary(self) -> str:
        return (
            f"{self.n_texts} texts: {len(self.changed)} changed, "
            f"{len(self.with_added)} use an added token, "
            f"{len(self.unexplained)} unexplained, "
            f"{len(self.special_leaks)} special leaks, "
            f"{len(self.round_trip_failures)} round-trip failures, "
            f"{len(self.special_problems)} special-token problems "
            f"-> {'OK' if self.ok else 'FAIL'}"
        )


def regression(old: ByteBPE, new: ByteBPE, texts: Iterable[str]) -> Regression:
    """Re-encode ``texts`` with both tokenizers and report every difference.

    A text may change only where the new IDs, with each added token replaced by the old
    IDs it joins, give back exactly the old IDs ("explained"). For a special-only
    extension no text may change at all (an added ID has no merges, so every change is
    unexplained). Also checked: no added special comes out of ordinary text, every
    text still round-trips, and every old special encodes (when allowed) and is refused
    (when not) exactly as before, while each added special encodes to its one ID.
    """
    expansion = old_segmentation(old, new)
    _, new_specials = added_tokens(old, new)
    added_special_ids = set(new_specials.values())
    report = Regression(n_texts=0)
    for k, text in enumerate(texts):
        report.n_texts += 1
        before = old.encode_ordinary(text)
        after = new.encode_ordinary(text)
        if any(i in added_special_ids for i in after):
            report.special_leaks.append(k)
        if any(i in expansion for i in after):
            report.with_added.append(k)
        if after != before:
            report.changed.append(k)
            expanded = [j for i in after for j in expansion.get(i, [i])]
            if expanded != before:
                report.unexplained.append(k)
        if new.decode_bytes(after) != old.decode_bytes(before):
            report.round_trip_failures.append(k)
    problems = report.special_problems
    for s, i in old.special_tokens.items():
        if new.encode(s, allowed_special={s}) != [i]:
            problems.append(f"old special {s!r} no longer encodes to [{i}]")
        if _refused(new, s) != _refused(old, s):
            problems.append(
                f"old special {s!r} is refused in ordinary text by one tokenizer only"
            )
    for s, i in new_specials.items():
        if new.encode(s, allowed_special={s}) != [i]:
            problems.append(f"added special {s!r} does not encode to [{i}]")
        if i in new.encode_ordinary(s) or not _refused(new, s):
            problems.append(
                f"added special {s!r} comes out of (or is not refused in) ordinary text"
            )
    return report


def _refused(tokenizer: ByteBPE, text: str) -> bool:
    """Does ``encode`` with the default (all specials disallowed) refuse ``text``?"""
    try:
        tokenizer.encode(text)
    except ValueError:
        return True
    return False


#: How `resize_embeddings` starts a new row: ``"parts"``, the mean of the rows of the
#: old tokens it stands for; ``"mean"``, the mean of all old rows.
INITS = ("parts", "mean")


@dataclass
class Resized:
    """The grown arrays and where each new row came from."""

    embedding: np.ndarray
    lm_head: np.ndarray  # the same object as ``embedding`` when the weights are tied
    optimizer_state: dict[str, dict[str, np.ndarray]] | None
    sources: dict[int, Sequence[int]]  # new ID -> the old IDs whose rows were averaged


def resize_embeddings(
    old: ByteBPE,
    new: ByteBPE,
    embedding: np.ndarray,
    *,
    lm_head: np.ndarray | None = None,
    descriptions: Mapping[str, str] | None = None,
    optimizer_state: Mapping[str, Mapping[str, np.ndarray]] | None = None,
    init: str = "parts",
) -> Resized:
    """Grow the embedding (rows = IDs) for ``new`` and mean-initialise the added rows.

    ``init="parts"``: an added ordinary token's row is the mean of the rows of the old
    IDs it joins; an added special token's row is the mean of the rows of its
    description's old encoding (``descriptions[token]``, required: a control token's
    own text, say ``<|tool_call|>``, segments into punctuation that says nothing about
    its role). ``init="mean"``: every added row is the mean of the rows of all old IDs
    (no descriptions); an output row there scores no higher than the average of the
    old rows' exponentiated scores, so each new token starts with at most 1/n of the
    old probability mass (n = old IDs).

    ``lm_head``: None or ``embedding`` itself means tied weights, and the result's head
    is the result's embedding, the same array. A separate array (rows = IDs, like the
    embedding) is untied and gets its own rows, initialised the same way from its own
    old rows. ``optimizer_state`` maps ``"embedding"`` (and ``"lm_head"`` if untied) to
    Adam-style moment arrays shaped like the parameter (``{"m": ..., "v": ...}``); added
    rows start at zero, as for a fresh parameter. Rows beyond ``old.n_vocab`` (padding,
    e.g. 50,304 rows for GPT-2's 50,257 IDs) are kept, and reused by added IDs that fall
    there. Inputs are never modified.
    """
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {init!r}")
    ordinary, specials = added_tokens(old, new)
    tied = lm_head is None or lm_head is embedding
    arrays = {"embedding": embedding}
    if not tied:
        arrays["lm_head"] = lm_head
    for name, a in arrays.items():
        if not isinstance(a, np.ndarray) or a.ndim != 2:
            raise ValueError(
                f"{name} must be a 2-D numpy array (rows = token IDs), "
                f"got {type(a).__name__}"
            )
        if a.shape[0] < old.n_vocab:
            raise ValueError(
                f"{name} has {a.shape[0]} rows but the old tokenizer uses IDs up to "
                f"{old.n_vocab - 1}"
            )
    if not tied and lm_head.shape[1] != embedding.shape[1]:
        raise ValueError(
            f"lm_head rows have width {lm_head.shape[1]}, "
            f"embedding rows {embedding.shape[1]}"
        )
    if init == "mean":
        if descriptions:
            raise ValueError("descriptions are used only with init='parts'")
        every_old = range(old.n_vocab)
        sources = {i: every_old for i in [*ordinary, *specials.values()]}
    else:
        sources = _part_sources(old, new, specials, descriptions)
    rows = max(embedding.shape[0], new.n_vocab)
    grown = {name: _grow(a, rows, sources) for name, a in arrays.items()}
    state = None
    if optimizer_state is not None:
        state = _grow_moments(optimizer_state, arrays, rows, sources)
    emb = grown["embedding"]
    return Resized(emb, emb if tied else grown["lm_head"], state, sources)


def _part_sources(old, new, specials, descriptions) -> dict[int, Sequence[int]]:
    """New ID -> old IDs to average, for ``init="parts"``."""
    descriptions = dict(descriptions or {})
    sources: dict[int, Sequence[int]] = dict(old_segmentation(old, new))
    for s, i in specials.items():
        if s not in descriptions:
            raise ValueError(
                f"special token {s!r} needs a description: its own text segments into "
                "pieces that say nothing about its role "
                "(pass descriptions={token: text})"
            )
        text = descriptions[s]
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"the description of {s!r} is empty")
        sources[i] = old.encode_ordinary(text)
    extra = sorted(set(descriptions) - set(specials))
    if extra:
        raise ValueError(
            f"descriptions given for tokens that are not added specials: {extra}"
        )
    return sources


def _grow_moments(optimizer_state, arrays, rows, sources):
    """Adam moments grown like their parameters, zero in every added row."""
    if set(optimizer_state) != set(arrays):
        raise ValueError(
            f"optimizer_state must have the keys {sorted(arrays)}, "
            f"got {sorted(optimizer_state)}"
        )
    state: dict[str, dict[str, np.ndarray]] = {}
    for name, moments in optimizer_state.items():
        state[name] = {}
        for key, m in moments.items():
            if not isinstance(m, np.ndarray) or m.shape != arrays[name].shape:
                raise ValueError(
                    f"optimizer_state[{name!r}][{key!r}] must be an array of shape "
                    f"{arrays[name].shape}"
                )
            out = np.zeros((rows, m.shape[1]), dtype=m.dtype)
            out[: m.shape[0]] = m
            out[list(sources)] = 0
            state[name][key] = out
    return state


def _grow(a: np.ndarray, rows: int, sources: Mapping[int, Sequence[int]]) -> np.ndarray:
    out = np.zeros((rows, a.shape[1]), dtype=a.dtype)
    out[: a.shape[0]] = a
    means: dict[int, np.ndarray] = {}  # one mean per distinct source, by identity
    for i, src in sources.items():
        if id(src) not in means:
            means[id(src)] = a[src].mean(axis=0)
        out[i] = means[id(src)]
    return out
