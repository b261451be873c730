"""Patches: MegaByte's fixed-size patches, BLT's entropy patches, SpaceByte's space patches, and where their boundaries fall.

Every patching function returns patches whose concatenation is exactly the input.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from .byte_model import as_bytes

__all__ = [
    "RULES",
    "BOUNDARY_KINDS",
    "split_at",
    "fixed_patches",
    "patch_starts",
    "entropy_patches",
    "threshold_for_mean_size",
    "byte_kind",
    "boundary_kinds",
    "is_spacelike",
    "space_patch_starts",
]

#: The two boundary rules of BLT's entropy patching.
RULES: tuple[str, ...] = ("global", "monotonic")

#: Categories `byte_kind` assigns, in display order.
BOUNDARY_KINDS: tuple[str, ...] = (
    "word start",
    "mid-word",
    "digit",
    "space",
    "punctuation",
    "non-ASCII start",
    "inside a character",
    "control",
)


def split_at(data: bytes, starts: Sequence[int] | np.ndarray) -> list[bytes]:
    """Cut ``data`` into the patches that begin at ``starts`` (sorted, first one 0).

    >>> split_at(b"hello world", [0, 5, 6])
    [b'hello', b' ', b'world']
    """
    data = as_bytes(data)
    starts = [int(s) for s in starts]
    if not data:
        if starts:
            raise ValueError(f"empty data has no patch starts, got {starts}")
        return []
    if not starts or starts[0] != 0:
        raise ValueError("the first patch must start at 0")
    if any(b <= a for a, b in zip(starts, starts[1:])) or starts[-1] >= len(data):
        raise ValueError(f"patch starts must be strictly increasing and < {len(data)}, got {starts}")
    ends = starts[1:] + [len(data)]
    return [data[a:b] for a, b in zip(starts, ends)]


def fixed_patches(data: bytes, size: int) -> list[bytes]:
    """MegaByte-style patches: runs of ``size`` bytes; the last may be shorter.

    >>> fixed_patches(b"abcdefghij", 4)
    [b'abcd', b'efgh', b'ij']
    """
    data = as_bytes(data)
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size <= 0:
        raise ValueError(f"patch size must be a positive int, got {size!r}")
    return [data[i : i + size] for i in range(0, len(data), size)]


def _check_entropies(entropies: object, n: int | None) -> np.ndarray:
    e = np.asarray(entropies, dtype=np.float64)
    if e.ndim != 1:
        raise ValueError(f"entropies must be one-dimensional, got shape {e.shape}")
    if n is not None and len(e) != n:
        raise ValueError(f"entropies has {len(e)} values but data has {n} bytes: one value per byte is needed")
    if not np.isfinite(e).all():
        bad = int(np.flatnonzero(~np.isfinite(e))[0])
        raise ValueError(f"entropies must be finite; entropies[{bad}] = {e[bad]}")
    return e


def _boundary_score(e: np.ndarray, rule: str) -> np.ndarray:
    """The value compared with the threshold at positions 1..n-1."""
    if rule == "global":
        return e[1:]
    if rule == "monotonic":
        return e[1:] - e[:-1]
    raise ValueError(f"unknown rule {rule!r}; choose one of {', '.join(RULES)}")


def patch_starts(entropies: Sequence[float] | np.ndarray, threshold: float,
                 rule: str = "global") -> np.ndarray:
    """Where entropy patches start: position 0, and every ``i >= 1`` where

    * ``rule="global"``: ``entropies[i] > threshold`` (the next byte is hard to
      predict);
    * ``rule="monotonic"``: ``entropies[i] - entropies[i - 1] > threshold`` (the
      uncertainty jumps up, whatever its level).

    ``entropies[i]`` is the entropy of the prediction *for* byte ``i`` (see
    `ByteNgramModel.entropies`), so a boundary is decided before byte ``i`` is seen.

    >>> patch_starts([3.0, 0.5, 0.2, 2.9, 0.1], threshold=1.0).tolist()
    [0, 3]
    >>> patch_starts([3.0, 0.5, 0.2, 2.9, 0.1], 1.0, rule="monotonic").tolist()
    [0, 3]
    """
    e = _check_entropies(entropies, None)
    threshold = float(threshold)
    if np.isnan(threshold):
        raise ValueError("threshold must not be NaN")
    score = _boundary_score(e, rule)
    if len(e) == 0:
        return np.zeros(0, dtype=np.intp)
    return np.concatenate(([0], np.flatnonzero(score > threshold) + 1)).astype(np.intp)


def entropy_patches(data: bytes, entropies: Sequence[float] | np.ndarray, threshold: float, rule: str = "global") -> list[bytes]:
    """BLT-style patches of ``data``: cut before every byte `patch_starts` selects.

    >>> entropy_patches(b"the cat", [5.0, 1.0, 0.4, 2.5, 3.1, 0.9, 0.2], threshold=2.0)
    [b'the', b' ', b'cat']
    """
    data = as_bytes(data)
    e = _check_entropies(entropies, len(data))
    return split_at(data, patch_starts(e, threshold, rule))


def threshold_for_mean_size(entropies: Sequence[float] | np.ndarray, mean_size: float, rule: str = "global") -> float:
    """A threshold whose patches have the mean size closest to ``mean_size`` bytes.

    With n bytes and p patches the mean size is n / p, and p - 1 is the number of
    positions whose score (entropy, or its rise) is above the threshold, so the answer
    lies between two consecutive distinct scores. Ties can make some patch counts
    unreachable; the nearest reachable mean wins (the larger threshold on an exact tie).
    The threshold returned is the midpoint between the two scores, as far as possible
    from both, so a tiny change in how the entropies are computed does not move a
    boundary (above the largest score: that score; below the smallest: it minus 1).
    """
    e = _check_entropies(entropies, None)
    score = _boundary_score(e, rule)  # validates rule
    n = len(e)
    if n == 0:
        raise ValueError("entropies is empty: no threshold to tune")
    mean_size = float(mean_size)
    if not mean_size >= 1.0:
        raise ValueError(f"mean_size must be >= 1 byte, got {mean_size!r}")
    if len(score) == 0:  # one byte: one patch whatever the threshold
        return 0.0
    values = np.unique(score)  # ascending distinct scores
    # any threshold in [values[j], values[j + 1]) leaves above[j] scores above it
    above = len(score) - np.searchsorted(np.sort(score), values, side="right")
    cand_t = np.concatenate(((values[:-1] + values[1:]) / 2, [values[-1]], [values[0] - 1.0]))
    cand_boundaries = np.concatenate((above[:-1], [0], [len(score)]))
    err = np.abs(n / (cand_boundaries + 1) - mean_size)
    best = np.flatnonzero(err == err.min())
    return float(cand_t[best[np.argmax(cand_t[best])]])


def byte_kind(data: bytes, i: int) -> str:
    """What byte ``i`` of ``data`` is, as one of `BOUNDARY_KINDS`.

    A letter is a "word start" when the byte before it is not a letter, digit or
    UTF-8 byte (or it is the first byte), otherwise "mid-word"; bytes 0x80-0xBF are
    "inside a character" (UTF-8 continuation bytes); 0xC0-0xFF "non-ASCII start".
    """
    b = data[i]
    if b >= 0xC0:
        return "non-ASCII start"
    if b >= 0x80:
        return "inside a character"
    ch = chr(b)
    if ch.isalpha():
        prev = data[i - 1] if i > 0 else None
        if prev is not None and (prev >= 0x80 or chr(prev).isalnum()):
            return "mid-word"
        return "word start"
    if ch.isdigit():
        return "digit"
    if ch in " \t\n\r\x0b\x0c":
        return "space"
    if 0x21 <= b <= 0x7E:
        return "punctuation"
    return "control"


def boundary_kinds(data: bytes, starts: Sequence[int] | np.ndarray) -> Counter:
    """How many of the patch ``starts`` fall on each kind of byte (see `byte_kind`)."""
    data = as_bytes(data)
    counts: Counter = Counter({kind: 0 for kind in BOUNDARY_KINDS})
    for i in starts:
        i = int(i)
        if not 0 <= i < len(data):
            raise ValueError(f"start {i} is outside data of {len(data)} bytes")
        counts[byte_kind(data, i)] += 1
    return counts


def is_spacelike(data: bytes) -> np.ndarray:
    """SpaceByte's *spacelike* bytes, one bool per byte: every byte that is not an ASCII
    letter or digit and not a UTF-8 continuation byte (0x80-0xBF). Spaces and punctuation
    are spacelike, and so is the first byte of every non-ASCII character."""
    arr = np.frombuffer(as_bytes(data), dtype=np.uint8)
    alnum = ((arr >= 0x30) & (arr <= 0x39)) | ((arr >= 0x41) & (arr <= 0x5A)) | ((arr >= 0x61) & (arr <= 0x7A))
    continuation = (arr >= 0x80) & (arr <= 0xBF)
    return ~(alnum | continuation)


def space_patch_starts(data: bytes) -> np.ndarray:
    """SpaceByte-style patch starts: position 0, and every spacelike byte (`is_spacelike`)
    whose previous byte is not spacelike. A patch runs from such a byte up to the next:
    in English, a space and the word after it.

    >>> space_patch_starts(b"the cat, sat").tolist()
    [0, 3, 7]
    """
    space = is_spacelike(data)
    if len(space) == 0:
        return np.zeros(0, dtype=np.intp)
    first = space.copy()
    first[1:] &= ~space[:-1]
    first[0] = True
    return np.flatnonzero(first).astype(np.intp)
