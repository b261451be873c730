"""Offsets of a sentencepiece model: the spans sentencepiece itself reports.

A `toklab.sentencepiece.SentencePieceTokenizer` has its own front end (compiled table,
user symbols, whitespace rules, ``▁``), so `sentencepiece_offsets` follows
sentencepiece's own bookkeeping rather than the pipeline's (`toklab.pipeline.offsets`):
each normalized byte remembers where in the original the step that produced it began
(`sentencepiece_alignment`), and a piece spans from its first byte's origin to the
origin of the byte after it. So a ``▁`` made from a run of spaces covers the whole run,
the dummy prefix is empty, and of the ``<0xXX>`` pieces of an unknown character all but
the last are empty, the last covering the character. The result equals sentencepiece's
``encode(text, return_type="offset_mapping")``, in characters and in bytes.
"""

from __future__ import annotations

from typing import Any

from ..base.unicode import replace_surrogates, utf8_sequence_length
from ..pipeline.offsets import Encoding, Span, utf8_offsets

__all__ = ["sentencepiece_alignment", "sentencepiece_offsets"]


def sentencepiece_alignment(normalizer: Any, text: str) -> tuple[str, list[int]]:
    """sentencepiece's normalization of ``text`` with its ``norm_to_orig`` map.

    ``normalizer`` is a `toklab.normalizers.SentencePieceNormalizer`. Returns
    the normalized text (equal to ``normalizer.normalize(text)``) and, per
    normalized character plus one for the end, the UTF-8 byte offset in
    ``text`` where the normalization step that produced it began.
    """
    cfg = normalizer.config
    data = replace_surrogates(text).encode("utf-8")
    charsmap = normalizer.charsmap
    if charsmap is None and cfg.normalization != "identity":
        raise TypeError(f"offsets through the {cfg.normalization!r} rule need the "
                        "model's compiled charsmap (every model sentencepiece "
                        "trains has one)")
    steps: list[tuple[str, int, int]] = []  # (output, start byte, length in bytes)
    pos = 0
    while pos < len(data):
        length = normalizer.user_match(data, pos)
        if length:
            out = data[pos : pos + length].decode("utf-8")
        else:
            length, out = (charsmap.longest_match(data, pos) if charsmap is not None
                           else (0, ""))
            if length == 0:
                length = utf8_sequence_length(data[pos])
                out = data[pos : pos + length].decode("utf-8")
        steps.append((out, pos, length))
        pos += length
    rew, escape = cfg.remove_extra_whitespaces, cfg.escape_whitespaces
    space = "\u2581" if escape else " "
    k = 0
    if rew:  # leading steps that give one space are skipped
        while k < len(steps) and steps[k][0] == " ":
            k += 1
    if k == len(steps):
        return "", [len(data)]
    chars: list[str] = []
    origin: list[int] = []
    if cfg.add_dummy_prefix:
        chars.append(space)
        origin.append(steps[k][1])
    prev_space = rew
    for out, start, length in steps[k:]:
        if prev_space and rew:
            out = out.lstrip(" ")
        if out:
            for ch in out:
                chars.append(space if ch == " " and escape else ch)
                origin.append(start)
            prev_space = out.endswith(" ")
        if not rew:
            prev_space = False
    consumed = len(data)
    if rew:  # trailing spaces (and literal ▁ when escaping) are removed
        while chars and chars[-1] == space:
            consumed = origin.pop()
            chars.pop()
    return "".join(chars), origin + [consumed]


def sentencepiece_offsets(tokenizer: Any, text: str, *, add_bos: bool = False, add_eos: bool = False) -> Encoding:
    """IDs of ``text`` under a `toklab.SentencePieceTokenizer` with sentencepiece's spans.

    The IDs equal ``tokenizer.encode(text, add_bos=..., add_eos=...)``; the
    code-point and byte spans equal sentencepiece's ``offset_mapping`` (see the
    module docstring for its conventions). ``add_bos``/``add_eos`` put
    ``<s>``/``</s>`` around the IDs with the span ``(0, 0)``, as for every token a
    post-processor adds (sentencepiece's offset API refuses ``add_bos``).
    """
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    text = replace_surrogates(text)  # toklab's rule: a lone surrogate is U+FFFD (one code point: spans are kept)
    normalized, origin = sentencepiece_alignment(tokenizer.normalizer, text)
    byte_starts = utf8_offsets(text)
    char_of = {b: k for k, b in enumerate(byte_starts)}
    pieces = tokenizer.segment(normalized)
    ids: list[int] = []
    byte_spans: list[Span] = []
    pos = k = 0
    while k < len(pieces):
        if tokenizer.kind(pieces[k][1]) == "byte":  # byte fallback: the bytes of an unknown run
            run = k
            while run < len(pieces) and tokenizer.kind(pieces[run][1]) == "byte":
                run += 1
            # sentencepiece spans each unknown character on its own: its last byte piece covers it
            for ch in bytes(int(p[3:5], 16) for p, _ in pieces[k:run]).decode("utf-8"):
                begin, end = origin[pos], origin[pos + 1]
                n = len(ch.encode("utf-8"))
                ids.extend(pid for _, pid in pieces[k : k + n])
                byte_spans += [(begin, begin)] * (n - 1) + [(begin, end)]
                pos, k = pos + 1, k + n
            continue
        surface, pid = pieces[k]
        ids.append(pid)
        byte_spans.append((origin[pos], origin[pos + len(surface)]))
        pos += len(surface)
        k += 1
    if pos != len(normalized):
        raise AssertionError(f"pieces of {text!r} do not spell its normalized text {normalized!r}")
    spans = [(char_of[a], char_of[b]) for a, b in byte_spans]
    head = [tokenizer.token_to_id("<s>")] if add_bos else []
    tail = [tokenizer.token_to_id("</s>")] if add_eos else []
    empty = [(0, 0)]
    return Encoding(tuple(head + ids + tail), tuple(empty * len(head) + spans + empty * len(tail)),
                    tuple(empty * len(head) + byte_spans + empty * len(tail)))
