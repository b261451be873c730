"""§5.5–§5.7's checkers reject the other typical mistakes and handle the edge cases
(the registry test covers one slip each)."""

from __future__ import annotations

import pytest

from toklab.teaching.exercises import CheckFailure, ch05_5, ch05_6, ch05_7


def test_utf16_spans_in_bytes_or_with_a_byte_order_mark_are_rejected():
    def in_bytes(text, spans):
        return [(len(text[:a].encode("utf-16-le")), len(text[:b].encode("utf-16-le"))) for a, b in spans]

    def with_bom(text, spans):
        return [(len(text[:a].encode("utf-16")) // 2, len(text[:b].encode("utf-16")) // 2) for a, b in spans]

    with pytest.raises(CheckFailure, match="count code units"):
        ch05_5.check_utf16_spans(in_bytes)
    with pytest.raises(CheckFailure, match="byte-order mark"):
        ch05_5.check_utf16_spans(with_bom)


def test_utf16_reference_on_empty_and_astral_text():
    assert ch05_5.reference_utf16_spans("", []) == []
    assert ch05_5.reference_utf16_spans("", [(0, 0)]) == [(0, 0)]
    assert ch05_5.reference_utf16_spans("a\U0001f642b", [(1, 2), (2, 3)]) == [(1, 3), (3, 4)]


def test_reusable_prefix_slips_are_rejected():
    def rounds_up(cached, request, block_size):
        same = ch05_6.reference_reusable_prefix(cached, request, 1)
        return -(-same // block_size) * block_size

    def equal_anywhere(cached, request, block_size):
        if block_size < 1:
            raise ValueError(block_size)
        return sum(a == b for a, b in zip(cached, request)) // block_size * block_size

    def no_validation(cached, request, block_size):
        return 0 if block_size < 1 else ch05_6.reference_reusable_prefix(cached, request, block_size)

    with pytest.raises(CheckFailure, match="rounds up"):
        ch05_6.check_reusable_prefix(rounds_up)
    with pytest.raises(CheckFailure, match="first difference"):
        ch05_6.check_reusable_prefix(equal_anywhere)
    with pytest.raises(CheckFailure, match="must raise ValueError"):
        ch05_6.check_reusable_prefix(no_validation)


def test_reusable_prefix_reference_edges():
    assert ch05_6.reference_reusable_prefix([], [], 16) == 0
    assert ch05_6.reference_reusable_prefix(list(range(40)), list(range(40)), 16) == 32
    with pytest.raises(ValueError, match="positive"):
        ch05_6.reference_reusable_prefix([1], [1], 0)


def test_merges_from_ranks_slips_are_rejected():
    def without_rank_limit(ranks):
        return [(t[:1], t[1:]) for t, _ in sorted(ranks.items(), key=lambda kv: kv[1]) if len(t) > 1]

    def never_raises(ranks):
        try:
            return ch05_7.reference_merges_from_ranks(ranks)
        except ValueError:
            return []

    with pytest.raises(CheckFailure):
        ch05_7.check_merges_from_ranks(without_rank_limit)
    with pytest.raises(CheckFailure, match="must raise ValueError"):
        ch05_7.check_merges_from_ranks(never_raises)


def test_merges_from_ranks_reference_edges():
    assert ch05_7.reference_merges_from_ranks({bytes([b]): b for b in range(256)}) == []
    smile = "\U0001f642".encode()
    table = {**{bytes([b]): b for b in range(256)}, smile[:2]: 256, smile[2:]: 257, smile: 258}
    assert ch05_7.reference_merges_from_ranks(table)[-1] == (smile[:2], smile[2:])
