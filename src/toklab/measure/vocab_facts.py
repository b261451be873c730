"""Facts about real vocabularies, from their files: sizes, holes, overlaps, Chinese.

"How big is this vocabulary?" has five answers, and real files disagree on all of them:

* ``ordinary``: tokens that text is cut into (a BPE file's mergeable ranks; a
  SentencePiece model's normal, byte and user-defined pieces; a WordPiece list
  without its bracketed specials);
* ``special``: registered control tokens (``<|endoftext|>``, ``<s>``, ``[CLS]``);
* ``entries``: ``len(tokenizer)``, the distinct IDs that mean something (fewer than
  ordinary + special when two special names share an ID);
* ``id_space``: largest ID + 1 (tiktoken's ``n_vocab``), larger than ``entries``
  when the ID space has holes;
* ``embedding_rows``: a property of the *model*, not of the tokenizer file, often
  padded beyond ``id_space``; None here unless given.

`id_holes` lists the unassigned IDs, `compare_ranks` measures how much of one rank
table is another's (byte for byte, and at the same ID), `digit_tokens` counts the
all-digit tokens by length, and `chinese_class` sorts a token into one of
`CHINESE_CLASSES`.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import regex

from ..bpe import ByteBPE

__all__ = [
    "FiveNumbers",
    "of_bpe",
    "of_ranks",
    "of_sentencepiece",
    "of_wordpiece",
    "id_holes",
    "RankOverlap",
    "compare_ranks",
    "digit_tokens",
    "CHINESE_CLASSES",
    "chinese_class",
]


@dataclass(frozen=True)
class FiveNumbers:
    """The five sizes of one vocabulary (see the module docstring)."""

    name: str
    ordinary: int
    special: int
    entries: int
    id_space: int
    embedding_rows: int | None = None

    @property
    def holes(self) -> int:
        """IDs below ``id_space`` that no token has."""
        return self.id_space - self.entries

    def row(self) -> list[object]:
        """Cells for a table: name, the five numbers (``"—"`` where unknown)."""
        rows = "—" if self.embedding_rows is None else f"{self.embedding_rows:,}"
        sizes = (self.ordinary, self.special, self.entries, self.id_space)
        return [self.name, *(f"{n:,}" for n in sizes), rows]


def of_bpe(
    tokenizer: ByteBPE, name: str, embedding_rows: int | None = None
) -> FiveNumbers:
    """The five numbers of a byte-level BPE tokenizer (a tiktoken-style rank file)."""
    return FiveNumbers(
        name=name,
        ordinary=len(tokenizer.vocab),
        special=len(tokenizer.special_tokens),
        entries=len(tokenizer),
        id_space=tokenizer.n_vocab,
        embedding_rows=embedding_rows,
    )


def of_ranks(
    ranks: Mapping[bytes, int],
    special_tokens: Mapping[str, int],
    name: str,
    embedding_rows: int | None = None,
) -> FiveNumbers:
    """The five numbers of a rank table and its specials, which may share IDs.

    For encodings a `ByteBPE` cannot hold (tiktoken's ``o200k_harmony`` gives two
    special names one ID): ``special`` counts names, ``entries`` distinct IDs.
    """
    ids = set(ranks.values()) | set(special_tokens.values())
    return FiveNumbers(
        name, len(ranks), len(special_tokens), len(ids), max(ids) + 1, embedding_rows
    )


def of_sentencepiece(
    model_file: str | os.PathLike, name: str, embedding_rows: int | None = None
) -> FiveNumbers:
    """The five numbers of a SentencePiece ``.model``, read with ``sentencepiece``.

    Control pieces and the unknown piece count as special; normal, byte, user-defined
    and unused pieces as ordinary. Piece IDs are dense, so entries = ID space.
    """
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(model_file))
    n = sp.get_piece_size()
    special = sum(1 for i in range(n) if sp.is_control(i) or sp.is_unknown(i))
    return FiveNumbers(name, n - special, special, n, n, embedding_rows)


#: The five special tokens of BERT's WordPiece vocabularies (any letter case).
BERT_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def of_wordpiece(
    vocab: Sequence[str], name: str, embedding_rows: int | None = None
) -> FiveNumbers:
    """The five numbers of a WordPiece list (ID = position), BERT's specials apart.

    The ``[unusedN]`` rows stay ordinary entries (they are rows reserved
    for fine-tuning, not registered control tokens).
    """
    if len(set(vocab)) != len(vocab):
        raise ValueError(
            f"{name}: the vocabulary lists a token twice, so IDs are ambiguous"
        )
    special = sum(1 for t in vocab if t.upper() in BERT_SPECIALS)
    n = len(vocab)
    return FiveNumbers(name, n - special, special, n, n, embedding_rows)


def id_holes(tokenizer: ByteBPE) -> list[int]:
    """IDs below ``n_vocab`` that no token (ordinary or special) has."""
    used = set(tokenizer.vocab) | set(tokenizer.special_tokens.values())
    return [i for i in range(tokenizer.n_vocab) if i not in used]


@dataclass(frozen=True)
class RankOverlap:
    """How rank table ``b`` relates to rank table ``a``."""

    shared: int  # token byte strings in both
    same_id: int  # ... that also have the same ID in both
    # length of the longest run of IDs 0, 1, 2, ... that mean the same bytes in both
    prefix: int
    only_a: int
    only_b: int


def compare_ranks(a: Mapping[bytes, int], b: Mapping[bytes, int]) -> RankOverlap:
    """Compare two rank tables (token bytes -> ID) byte for byte and ID for ID."""
    shared = a.keys() & b.keys()
    same = sum(1 for t in shared if a[t] == b[t])
    a_by_id = {i: t for t, i in a.items()}
    b_by_id = {i: t for t, i in b.items()}
    prefix = 0
    while prefix in a_by_id and a_by_id[prefix] == b_by_id.get(prefix):
        prefix += 1
    n = len(shared)
    return RankOverlap(n, same, prefix, len(a) - n, len(b) - n)


def digit_tokens(tokens: Mapping[bytes, int] | Sequence[bytes]) -> Counter:
    """How many tokens consist of ASCII digits only, by their number of digits."""
    return Counter(len(t) for t in tokens if t.isdigit() and t.isascii())


#: Classes of `chinese_class`, in the order the book reports them.
CHINESE_CLASSES = (
    "single Han character",
    "multi-character Han word",
    "partial UTF-8 / byte fallback",
    "Chinese punctuation or mixed",
    "no Chinese",
)
_HAN = regex.compile(r"\p{Han}")
# CJK Symbols and Punctuation, CJK compatibility forms, full-width forms
_CJK_PUNCT = regex.compile(r"[\u3000-\u303f\ufe30-\ufe4f\uff00-\uffef]")


def chinese_class(token: bytes | str, *, is_byte_piece: bool = False) -> str:
    """Which of `CHINESE_CLASSES` a token belongs to.

    ``token`` is a byte-level token (bytes) or a SentencePiece piece (str; pass
    ``is_byte_piece=True`` for a byte-fallback piece such as ``<0xE4>``). A leading or
    trailing space (or ``▁``) is ignored. Bytes that are not valid UTF-8 on their own
    are a fragment of a character.
    """
    if is_byte_piece:
        return CHINESE_CLASSES[2]
    if isinstance(token, bytes):
        try:
            token = token.decode("utf-8")
        except UnicodeDecodeError:
            return CHINESE_CLASSES[2]
    core = token.replace("\u2581", " ").strip()
    n_han = len(_HAN.findall(core))
    if n_han and n_han == len(core):
        return CHINESE_CLASSES[0] if n_han == 1 else CHINESE_CLASSES[1]
    if n_han or _CJK_PUNCT.search(core):
        return CHINESE_CLASSES[3]
    return CHINESE_CLASSES[4]
