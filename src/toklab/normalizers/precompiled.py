"""sentencepiece's compiled normalization table (``precompiled_charsmap``), read from a model.

HF ``tokenizers`` calls the same component ``normalizers.Precompiled``.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Callable, Iterator

from ..base.unicode import graphemes, utf8_sequence_length

__all__ = ["Charsmap"]


class Charsmap:
    """sentencepiece's compiled normalization table (``precompiled_charsmap`` in a model).

    The blob is a little-endian ``uint32`` size, a double-array trie of that
    many bytes (darts-clone layout: 32-bit units) whose keys are UTF-8 byte
    strings, then a pool of NUL-terminated replacement strings that the
    trie's values point into. Normalizing means: at each position take the
    *longest* key that matches, emit its replacement, skip the key; where no
    key matches, copy one character. That greedy rewrite is why the table can
    only approximate NFKC (no reordering of combining marks).
    """

    def __init__(self, blob: bytes) -> None:
        if len(blob) < 4:
            raise ValueError(f"compiled charsmap too short ({len(blob)} bytes)")
        (trie_size,) = struct.unpack_from("<I", blob, 0)
        if trie_size % 4 or 4 + trie_size > len(blob) or trie_size == 0:
            raise ValueError(f"corrupt compiled charsmap: trie size {trie_size} in a {len(blob)}-byte blob")
        units = array("I")
        units.frombytes(blob[4 : 4 + trie_size])
        if struct.pack("=I", 1) != struct.pack("<I", 1):
            units.byteswap()
        self._units = units.tolist()
        self._pool = blob[4 + trie_size :]
        self._cache: dict[int, str] = {}
        # Fast path for ASCII: for each ASCII byte, its own replacement (if it
        # is a key) and whether any longer key continues it with an ASCII
        # byte. An ASCII byte followed by an ASCII byte it has no path to
        # needs no trie walk.
        self._ascii_single: list[str | None] = []
        self._ascii_cont: list[bool] = []
        for b in range(128):
            length, out = self.longest_match(bytes([b]), 0)
            self._ascii_single.append(out if length else None)
            self._ascii_cont.append(any(self._has_path(bytes([b, c])) for c in range(128)))

    def _has_path(self, key: bytes) -> bool:
        """Whether ``key`` is a prefix of some key in the trie."""
        units = self._units
        node = 0
        for c in key:
            unit = units[node]
            child = node ^ ((unit >> 10) << ((unit & 0x200) >> 6)) ^ c
            if child >= len(units) or units[child] & 0x800000FF != c:
                return False
            node = child
        return True

    def longest_match(self, data: bytes, pos: int) -> tuple[int, str]:
        """``(length in bytes, replacement)`` of the longest key at ``data[pos:]``.

        ``(0, "")`` if no key matches there.

        A double-array trie walk: from node ``n``, byte ``c`` leads to
        ``n ^ offset ^ c`` if that unit's label is ``c``; a unit flagged
        "has leaf" has the value of the key that ends there one step below.
        """
        units = self._units
        size = len(units)
        unit = units[0]
        node = (unit >> 10) << ((unit & 0x200) >> 6)
        best_len = 0
        best_value = -1
        end = len(data)
        i = pos
        while i < end:
            c = data[i]
            node ^= c
            if node >= size:
                break
            unit = units[node]
            if unit & 0x800000FF != c:  # label mismatch (leaf units have bit 31 set)
                break
            node ^= (unit >> 10) << ((unit & 0x200) >> 6)
            i += 1
            if unit & 0x100 and node < size:
                best_len = i - pos
                best_value = units[node] & 0x7FFFFFFF
        if best_len == 0:
            return 0, ""
        return best_len, self._replacement(best_value)

    def replacements(self) -> list[str]:
        """Every replacement string the table holds (its string pool, in order)."""
        return [part.decode("utf-8") for part in self._pool.split(b"\0")[:-1]]

    def shortest_match(self, data: bytes) -> tuple[int, str]:
        """``(length, replacement)`` of the *shortest* key that is a prefix of ``data``; ``(0, "")`` if none."""
        units = self._units
        size = len(units)
        unit = units[0]
        node = (unit >> 10) << ((unit & 0x200) >> 6)
        for i, c in enumerate(data):
            node ^= c
            if node >= size or units[node] & 0x800000FF != c:
                break
            unit = units[node]
            node ^= (unit >> 10) << ((unit & 0x200) >> 6)
            if unit & 0x100 and node < size:
                return i + 1, self._replacement(units[node] & 0x7FFFFFFF)
        return 0, ""

    def grapheme_chunks(self, text: str) -> Iterator[str]:
        """The table applied as Hugging Face ``tokenizers``' ``Precompiled`` normalizer applies it.

        Per extended grapheme cluster: one shorter than 6 bytes that *starts*
        with a key is replaced whole by that key's replacement (the shortest
        such key); any other cluster is rewritten character by character. So
        ``"ᶺ\u036f"`` loses its mark (sentencepiece's longest match keeps it) and
        ``"\r\n"`` becomes one space where sentencepiece makes two. Measured
        against HF on every code point and on random strings (tests).
        """
        for cluster in graphemes(text):
            data = cluster.encode("utf-8")
            if len(data) < 6:
                length, out = self.shortest_match(data)
                if length:
                    yield out
                    continue
            for ch in cluster:
                length, out = self.shortest_match(ch.encode("utf-8"))
                yield out if length else ch

    def _replacement(self, value: int) -> str:
        out = self._cache.get(value)
        if out is None:
            end = self._pool.find(b"\0", value)
            out = self._pool[value : end if end >= 0 else len(self._pool)].decode("utf-8")
            self._cache[value] = out
        return out

    def normalize(self, text: str) -> str:
        """Rewrite ``text`` with the table (no user-defined symbols, no whitespace handling)."""
        return "".join(self.chunks(text.encode("utf-8")))

    def chunks(self, data: bytes, user_match: Callable[[bytes, int], int] | None = None) -> Iterator[str]:
        """sentencepiece's normalization loop over UTF-8 ``data``, one output chunk per step.

        At each position: a user-defined symbol (``user_match(data, pos)``
        returns its length, or 0) is copied as it is; else the longest table
        key is replaced; else one character is copied.
        """
        single, cont = self._ascii_single, self._ascii_cont
        end = len(data)
        pos = 0
        while pos < end:
            if user_match is not None:
                length = user_match(data, pos)
                if length:
                    yield data[pos : pos + length].decode("utf-8")
                    pos += length
                    continue
            b = data[pos]
            if b < 0x80 and not cont[b] and (pos + 1 == end or data[pos + 1] < 0x80):
                out = single[b]
                yield chr(b) if out is None else out
                pos += 1
                continue
            length, out = self.longest_match(data, pos)
            if length == 0:
                length = utf8_sequence_length(b)
                out = data[pos : pos + length].decode("utf-8")
            yield out
            pos += length
