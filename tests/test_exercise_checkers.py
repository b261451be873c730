"""The exercise checkers accept a correct answer and reject a plausible wrong one.

A checker that passes everything would tell a student their broken code works,
so each one is run on toklab's own implementation (which must pass) and on a
typical mistake (which must raise AssertionError).
"""

from __future__ import annotations

import math
import unicodedata

import pytest

from toklab import bpe, metrics, unicode, unigram, wordpiece
from toklab.exercises import ch00, ch01, ch02, ch02_2, ch02_3, ch03, ch03_3


def _rejects(check, fn) -> None:
    with pytest.raises(AssertionError):
        check(fn)


def test_ch00_decode():
    ch00.check_decode(lambda pipe, ids: pipe.decode(ids))
    _rejects(ch00.check_decode, lambda pipe, ids: "".join(pipe.model.decode([i]) for i in ids))


def test_ch01_bits_per_byte():
    ch01.check_bits_per_byte(metrics.bits_per_byte)
    _rejects(ch01.check_bits_per_byte, lambda nll, n: nll / n)
    # Right formula but no input validation: the checker insists on clear errors.
    _rejects(ch01.check_bits_per_byte, lambda nll, n: nll / (n * math.log(2)))


def test_ch02_train_and_encode():
    ch02.check_train(lambda words, n: bpe.reference_train(words, n))
    _rejects(ch02.check_train, lambda words, n: bpe.reference_train(words, n, tie_break="largest"))
    ch02.check_encode(bpe.reference_encode)
    _rejects(ch02.check_encode, lambda symbols, merges: bpe.reference_encode(symbols, merges[::-1]))


def test_ch02_2_encode_word():
    ch02_2.check_encode_word(lambda word, vocab: wordpiece.encode_word(word, vocab))

    def shortest_first(word, vocab):
        pieces, start = [], 0
        while start < len(word):
            for end in range(start + 1, len(word) + 1):
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in vocab:
                    pieces.append(piece)
                    start = end
                    break
            else:
                return ["[UNK]"]
        return pieces

    _rejects(ch02_2.check_encode_word, shortest_first)


def test_ch02_3_forward():
    ch02_3.check_forward(unigram.reference_forward)

    def max_instead_of_sum(text, probs):
        table = [1.0] + [0.0] * len(text)
        for end in range(1, len(text) + 1):
            for start in range(end):
                p = probs.get(text[start:end])
                if p:
                    table[end] = max(table[end], table[start] * p)
        return table

    _rejects(ch02_3.check_forward, max_instead_of_sum)


def test_ch03_bytes_to_unicode():
    ch03.check_bytes_to_unicode(unicode.bytes_to_unicode)
    _rejects(ch03.check_bytes_to_unicode, lambda: {b: chr(b) for b in range(256)})


def test_ch03_3_utf16_length():
    ch03_3.check_utf16_length(unicode.utf16_length)
    _rejects(ch03_3.check_utf16_length, len)


def test_normalization_checker_inputs_are_not_trivial():
    # The checkers above are only meaningful if toklab's own answers are right;
    # spot-check one against the standard library.
    assert unicode.utf16_length("a😀") == len("a😀".encode("utf-16-le")) // 2
    assert unicodedata.normalize("NFC", "e\u0301") == "é"


def test_ch05_1_group_digits():
    import regex

    from toklab import numbers
    from toklab.exercises import ch05_1

    ch05_1.check_group_digits(lambda run: regex.findall(numbers.RIGHT_TO_LEFT_3, run))
    _rejects(ch05_1.check_group_digits, lambda run: [run[k : k + 3] for k in range(0, len(run), 3)])


def test_ch05_2_partial_utf8():
    from toklab.exercises import ch05_2

    def by_decoding(tokens):
        out = []
        for i, data in tokens.items():
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                out.append(i)
        return sorted(out)

    ch05_2.check_partial_utf8(by_decoding)
    _rejects(ch05_2.check_partial_utf8, lambda tokens: sorted(i for i, t in tokens.items() if t[0] >= 0x80))


def test_ch05_3_healing():
    from toklab import healing
    from toklab.exercises import ch05_3

    def full(tok, prompt):
        h = healing.heal(tok, prompt, disallowed_special=())
        return list(h.kept), h.prefix

    def one_token(tok, prompt):
        ids = tok.encode(prompt, disallowed_special=())
        return ids[:-1], tok.decode_bytes(ids[-1:])

    ch05_3.check_healing(full)
    _rejects(ch05_3.check_healing, one_token)
    _rejects(ch05_3.check_healing, lambda tok, prompt: (tok.encode(prompt, disallowed_special=()), b""))


def test_ch05_4_masks():
    import numpy as np

    from toklab import batching
    from toklab.exercises import ch05_4

    ch05_4.check_target_mask(lambda ids, lengths: batching.loss_mask(lengths, ids.shape[1]))
    _rejects(ch05_4.check_target_mask, lambda ids, lengths: ids[:, 1:] != 2)
    ch05_4.check_packed_attention(batching.block_diagonal_mask)

    def causal_only(doc):
        n, t = doc.shape
        return np.broadcast_to(np.tril(np.ones((t, t), bool)), (n, t, t))

    _rejects(ch05_4.check_packed_attention, causal_only)
