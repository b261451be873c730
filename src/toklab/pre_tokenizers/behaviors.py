"""Hugging Face's ``Split``: a regex's matches and the text between them, under five behaviours.

A pattern need not match every character. HF's ``Split`` pre-tokenizer first lists the
whole text as alternating stretches, each a match or not
(`toklab.base.limits.find_matches`), then turns
them into chunks by its ``behavior``:

- ``isolated``: every stretch is a chunk (`split_custom`; what a toklab
  `toklab.ByteBPE` with a custom pattern does);
- ``removed``: the matches vanish, the rest are chunks;
- ``merged_with_previous`` / ``merged_with_next``: a match joins the chunk before / after it;
- ``contiguous``: neighbouring stretches of the same kind join.

``invert`` swaps matches and the rest first. Empty stretches are dropped at the end.
Matches are found as HF's regex engine (Oniguruma) finds them, which differs from
Python's ``findall`` only at empty matches: after one, the next search starts one
character later, and an empty match right where the previous match ended does not
count. A pattern from a file or a user is not toklab's to vouch for, so every search
here runs under `toklab.base.limits.run_limited`: `PatternTimeout` instead of a hang.
"""

from __future__ import annotations

import regex

from ..base.limits import Stretch, find_matches, limit_for, run_limited

__all__ = ["BEHAVIORS", "find_matches", "split_custom", "split_behaved", "gap_keeping"]

#: HF's ``SplitDelimiterBehavior`` values, as its JSON and Python API spell them.
BEHAVIORS = ("isolated", "removed", "merged_with_previous", "merged_with_next", "contiguous")

def _limited(rx: regex.Pattern, text: str, run):
    return run_limited(lambda timeout: run(find_matches(rx, text, timeout)), limit_for(len(text)),
                       lambda: _timeout_message(rx.pattern, len(text)))


def split_custom(rx: regex.Pattern, text: str) -> list[str]:
    """The ``isolated`` chunks of ``text``: every match and every stretch between matches, empty ones dropped."""

    def run(timeout: float | None) -> list[str]:
        if not rx.groups:
            found = rx.findall(text, timeout=timeout)
            if "" not in found and len("".join(found)) == len(text):  # the usual case: the matches are the chunks
                return found
        return [text[a:b] for a, b, _ in find_matches(rx, text, timeout) if b > a]

    return run_limited(run, limit_for(len(text)), lambda: _timeout_message(rx.pattern, len(text)))


def split_behaved(rx: regex.Pattern, text: str, behavior: str, invert: bool = False) -> list[str]:
    """The chunks of ``text`` under one of HF's `BEHAVIORS` (and ``invert``), empty ones dropped."""
    if behavior not in BEHAVIORS:
        raise ValueError(f"behavior must be one of {', '.join(BEHAVIORS)}, got {behavior!r}")

    def chunks(stretches: list[Stretch]) -> list[str]:
        if invert:
            stretches = [(a, b, not m) for a, b, m in stretches]
        spans = _merge(stretches, behavior)
        return [text[a:b] for a, b in spans if b > a]

    return _limited(rx, text, chunks)


def _merge(stretches: list[Stretch], behavior: str) -> list[tuple[int, int]]:
    """HF's ``NormalizedString::split``: the spans each behaviour keeps."""
    if behavior == "isolated":
        return [(a, b) for a, b, _ in stretches]
    if behavior == "removed":
        return [(a, b) for a, b, m in stretches if not m]
    out: list[list[int]] = []
    previous = False
    if behavior == "merged_with_next":
        for a, b, m in reversed(stretches):
            if m and not previous and out:
                out[-1][0] = a
            else:
                out.append([a, b])
            previous = m
        return [(a, b) for a, b in reversed(out)]
    for a, b, m in stretches:
        join = (m == previous) if behavior == "contiguous" else (m and not previous)
        if join and out:
            out[-1][1] = b
        else:
            out.append([a, b])
        previous = m
    return [(a, b) for a, b in out]


def gap_keeping(source: str) -> str:
    """A regex that matches what ``source`` matches and, as one match, each stretch it leaves between matches.

    For an engine that drops unmatched text (tiktoken): ``findall`` of the result
    gives `split_custom`'s chunks. ValueError for a pattern that can match the
    empty string, which such an engine cannot take (probed on a few strings).
    """
    wrapped = f"(?:{source})|(?:(?!(?:{source}))[\\s\\S])+"
    try:
        rx, inner = regex.compile(wrapped), regex.compile(source)
    except regex.error as exc:
        raise ValueError(f"the pattern {source!r} cannot be given a branch for its gaps: {exc}") from None
    for probe in ("", "a", "A1 b", " \n", "-", "é世"):
        if any(m.start() == m.end() for m in inner.finditer(probe)):
            raise ValueError(f"the pattern {source!r} matches the empty string (in {probe!r}); an engine that drops "
                             "unmatched text cannot represent it")
    return rx.pattern


def _timeout_message(pattern: str, n: int) -> str:
    shown = pattern if len(pattern) <= 60 else pattern[:57] + "..."
    return (f"the pre-tokenizer pattern {shown!r} ran longer than {limit_for(n):.1f} s on {n:,} characters and was "
            "stopped: it backtracks without end on this text (nested repetition such as (a|aa)+ does)")
