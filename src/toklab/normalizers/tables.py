"""Compiling a normalization rule into sentencepiece's table (``precompiled_charsmap``).

sentencepiece never normalizes by rule at run time: a model carries a compiled
table (`toklab.normalizers.precompiled.Charsmap` reads one) and its normalizer
replaces, at each position, the longest key of that table. A model with an empty
table is not normalized at all, whatever its rule's name says (measured). So a
model that toklab trains and writes as a ``.model`` file must carry its own
table, and must encode with that table, not with the rule, for sentencepiece to
give the same IDs.

`rule_mapping` writes a rule out as such a table, the way sentencepiece's own
builder does: every code point the rule changes maps to its normalized form, and
every character's full compatibility decomposition maps back to the composed form
(so ``"e\\u0301"`` becomes ``"é"``). A table cannot reorder combining marks, so it
agrees with the rule on each character and on composed sequences, not on every
string; that is true of sentencepiece's tables too (see `toklab.normalizers.nmt`).
`compile_charsmap` lays any mapping out in the binary format: a little-endian
``uint32`` size, a double-array trie of 32-bit units (darts-clone's layout), then
the NUL-terminated replacement strings. `compile_rule` does both, cached.
"""

from __future__ import annotations

import struct
import sys
import unicodedata
from collections.abc import Mapping
from functools import lru_cache

from .nmt import NMT_DELETE, NMT_TO_SPACE, NORMALIZATIONS, normalize_rule

__all__ = ["rule_mapping", "compile_charsmap", "compile_rule"]

#: darts-clone stores an offset below 2**21 in a unit as it is (larger ones need
#: the extension bit and a multiple of 256); tables here stay below that size.
_MAX_UNITS = 1 << 21


def rule_mapping(name: str) -> dict[str, str]:
    """The table for a named rule: key -> replacement, for every key where the rule changes something.

    Keys are single code points (the rule applied to each) and the full NFKD
    decomposition of every code point that has one, mapped to the rule's output
    for it (NFKC composes it again). ``"identity"`` has no entries.
    """
    if name not in NORMALIZATIONS:
        raise ValueError(f"unknown normalization {name!r}; known: {', '.join(NORMALIZATIONS)}")
    table: dict[str, str] = {}
    if name == "identity":
        return table
    extra = NMT_DELETE | NMT_TO_SPACE if name == "nmt_nfkc" else frozenset()
    for cp in range(1, sys.maxunicode + 1):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        # A character its own NFKD is left alone by NFKC too; only the rule's extras touch it.
        if unicodedata.is_normalized("NFKD", ch) and ch not in extra:
            continue
        out = normalize_rule(ch, name)
        if out != ch:
            table[ch] = out
        decomposed = unicodedata.normalize("NFKD", ch)
        if len(decomposed) > 1:
            composed = normalize_rule(decomposed, name)
            if composed != decomposed:
                table.setdefault(decomposed, composed)
    return table


def compile_charsmap(mapping: Mapping[str, str]) -> bytes:
    """``mapping`` as a ``precompiled_charsmap`` blob that sentencepiece and `Charsmap` both read.

    Keys must be non-empty and free of NUL. Each trie node's children sit in
    one 256-unit block at ``base ^ byte`` (the value of a key that ends at a
    node at ``base ^ 0``), every node has a base of its own, and each unused
    unit gets a label no walk can match, as darts-clone lays them out.
    """
    if not mapping:
        raise ValueError("an empty mapping has no table: a model without normalization stores no charsmap")
    pool = bytearray()
    offsets: dict[str, int] = {}
    root: dict = {}
    for key in sorted(mapping):
        value = mapping[key]
        if not isinstance(key, str) or not key or "\0" in key:
            raise ValueError(f"charsmap keys must be non-empty strings without NUL, got {key!r}")
        if not isinstance(value, str) or "\0" in value:
            raise ValueError(f"charsmap replacements must be strings without NUL, got {value!r} for {key!r}")
        if value not in offsets:
            offsets[value] = len(pool)
            pool += value.encode("utf-8") + b"\0"
        node = root
        for b in key.encode("utf-8"):
            node = node.setdefault(b, {})
        node[None] = offsets[value]  # None marks "a key ends here"
    units = _double_array(root)
    trie = struct.pack(f"<{len(units)}I", *units)
    return struct.pack("<I", len(trie)) + trie + bytes(pool)


def _double_array(root: dict) -> list[int]:
    units: list[int] = []
    used = bytearray()  # positions holding a unit
    skip: list[int] = []  # union-find "next position to try >= i" (used or given up on)
    tries = bytearray()
    bases: set[int] = set()

    def grow(size: int) -> None:
        if size > _MAX_UNITS:
            raise ValueError("the mapping is too large for one compiled table")
        while len(units) < size:
            n = len(units)
            units.extend([0] * 256)
            used.extend(b"\0" * 256)
            tries.extend(b"\0" * 256)
            skip.extend(range(n, n + 256))

    def candidate(i: int) -> int:
        """The first position >= i still worth trying as a node's first child."""
        root_i = i
        while True:
            grow(root_i + 1)
            if skip[root_i] == root_i:
                break
            root_i = skip[root_i]
        while skip[i] != root_i:  # path compression
            skip[i], i = root_i, skip[i]
        return root_i

    def retire(i: int) -> None:
        skip[i] = i + 1

    grow(256)
    used[0] = 1
    retire(0)
    queue = [(0, root)]
    while queue:
        pos, node = queue.pop()
        labels = sorted(0 if k is None else k for k in node)
        x = candidate(1)
        while True:
            base = x ^ labels[0]
            grow((base | 0xFF) + 1)
            if base not in bases and base > 0 and all(not used[base ^ label] for label in labels):
                break
            tries[x] = min(tries[x] + 1, 255)
            if tries[x] >= 16:  # crowded: stop starting searches here (darts-clone does the same)
                retire(x)
            x = candidate(x + 1)
        bases.add(base)
        units[pos] |= (pos ^ base) << 10
        for key, child in node.items():
            child_pos = base ^ (0 if key is None else key)
            used[child_pos] = 1
            retire(child_pos)
            if key is None:
                units[pos] |= 0x100
                units[child_pos] = child | (1 << 31)
            else:
                units[child_pos] = key
                queue.append((child_pos, child))
    # An unused unit gets a label that the walk from any base in its block cannot match.
    for start in range(0, len(units), 256):
        free_base = next((start + i for i in range(256) if start + i not in bases), None)
        if free_base is None:
            continue
        for x in range(start, start + 256):
            if not used[x]:
                units[x] = (x ^ free_base) & 0xFF
    return units


@lru_cache(maxsize=None)
def compile_rule(name: str) -> bytes | None:
    """The compiled table of a named rule (None for ``"identity"``, which needs none); cached."""
    mapping = rule_mapping(name)
    return compile_charsmap(mapping) if mapping else None
