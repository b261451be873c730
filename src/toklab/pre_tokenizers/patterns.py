"""Pre-tokenization: the regex that cuts text into chunks before BPE runs.

Byte-level BPE never merges across the chunks this stage produces, so the
pattern decides what a token *can* be: whether a space sticks to the word
after it, how many digits may share a token, whether ``\\n\\n`` is one
piece. The catalogue holds the patterns of OpenAI's released encodings,
exactly as tiktoken ships them, plus the historical GPT-2 spelling:

- ``"gpt2"``: tiktoken's ``r50k_base`` pattern (also p50k). Possessive
  quantifiers and ``\\s++$`` make it faster than the 2019 original but it
  splits every string the same way (the book checks this on the corpus).
- ``"gpt2-2019"``: the pattern as published in GPT-2's ``encoder.py``.
- ``"cl100k"``: GPT-3.5/GPT-4. Case-insensitive contractions, digits in
  runs of at most three, one leading non-letter glued to a word, newlines
  kept with trailing punctuation.
- ``"o200k"``: GPT-4o. Splits CamelCase words at case changes, treats
  combining marks as letters, attaches contractions to the word.

Every chunk is matched by some alternative (each pattern ends in a
catch-all), so ``"".join(split(text, p)) == text`` always holds.

A custom pattern need not match every character. What it leaves between two
matches is kept as a chunk of its own, as Hugging Face's ``Split`` with the
``isolated`` behaviour keeps it (`toklab.pre_tokenizers.behaviors`): ``[a-z]+`` cuts
``"Hello world!"`` into ``H|ello|␣|world|!``, so no text is ever dropped and IDs
equal HF's. A custom pattern is not toklab's own, so it runs under a time limit
(`toklab.base.limits.run_limited`): one that backtracks for ever raises
`PatternTimeout` instead of hanging.

`RegexSplit` is the stage object a `toklab.pipeline.Pipeline` uses (HF's
``pre_tokenizers.Split`` followed by ``ByteLevel``); `onig_pattern` rewrites a
pattern for the Oniguruma engine inside HF ``tokenizers``. `safe_cut_points`
and `last_safe_cut` say where text may be cut into pieces that split the same
way as the whole, which lets training read a file in blocks and
`ByteBPE.encode_iterable` stream.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache, partial
from itertools import accumulate

import regex

from ..base.checks import check_str
from ..base.limits import PatternTimeout
from ..base.special import straddles
from . import bmp
from .behaviors import BEHAVIORS, gap_keeping, split_behaved, split_custom

__all__ = [
    "PATTERNS",
    "PatternTimeout",
    "resolve",
    "compiled",
    "splitter",
    "Splitter",
    "split",
    "split_custom",
    "gap_keeping",
    "split_with_offsets",
    "pattern_name",
    "safe_cut_points",
    "last_safe_cut",
    "onig_pattern",
    "RegexSplit",
    "BEHAVIORS",
    "split_behaved",
]

PATTERNS: dict[str, str] = {
    "gpt2": (
        r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++"""
        r"""|\s++$|\s+(?!\S)|\s"""
    ),
    "gpt2-2019": (
        r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+"""
        r"""|\s+(?!\S)|\s+"""
    ),
    "cl100k": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+"""
        r"""| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    "o200k": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*"""
            r"""[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+"""
            r"""[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
}

# A position p is a safe place to cut text for these patterns when the
# character before it is a letter and the character at it is none of: a
# letter, a combining mark (o200k glues marks to letters), a digit, or an
# apostrophe (o200k glues contractions to the word). Then the chunk holding
# text[p-1] ends exactly at p, and the part before p ends in a letter, so the
# end-sensitive alternatives (\s++$ and \s+(?!\S)) see the same thing they
# would in the whole text. Splitting the two halves separately therefore
# gives the same chunks as splitting the whole. Custom patterns get no cut
# points: callers then fall back to special-token boundaries only.
_SAFE_CUT = regex.compile(r"(?<=\p{L})(?=[^\p{L}\p{M}\p{N}'])")
_SAFE_CUT_LAST = regex.compile(r"(?r)(?<=\p{L})(?=[^\p{L}\p{M}\p{N}'])")
_NAMED_WITH_SAFE_CUTS = frozenset(PATTERNS)


def resolve(pattern: str) -> str:
    """Return the regex source for a catalogue name, or the string itself.

    A string that is not a catalogue name is treated as a regex and must
    compile; a typo such as ``"gtp2"`` therefore raises instead of being
    used as a (literal) pattern that splits nothing.
    """
    if pattern in PATTERNS:
        return PATTERNS[pattern]
    if regex.fullmatch(r"[\w.-]+", pattern):
        raise ValueError(
            f"unknown pre-tokenizer pattern name {pattern!r}; known names: {sorted(PATTERNS)} "
            "(or pass a regular expression)"
        )
    try:
        regex.compile(pattern)
    except regex.error as exc:
        raise ValueError(f"pre-tokenizer pattern does not compile: {exc}") from None
    return pattern


def pattern_name(pattern: str) -> str | None:
    """The catalogue name of a pattern (by name or source), or None for a custom one."""
    if pattern in PATTERNS:
        return pattern
    for name, source in PATTERNS.items():
        if source == pattern:
            return name
    return None


@lru_cache(maxsize=32)
def compiled(pattern: str) -> regex.Pattern:
    """The compiled regex for a name or a pattern string (cached)."""
    return regex.compile(resolve(pattern))


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


class Splitter:
    """``findall`` for one pattern: `re` on the BMP parts of a text, `regex` around astral characters.

    A custom pattern always goes to `regex`, through `split_custom` (gaps kept,
    a time limit). A catalogue pattern runs as its
    `toklab.pre_tokenizers.bmp.translate` rewrite, which matches what the
    original matches on BMP text; each astral character is handed to `regex`
    with the text around it, from the last safe cut before it to the first
    safe cut after it, so the pieces split as the whole would.
    """

    __slots__ = ("pattern", "_slow", "_fast")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        name = pattern_name(pattern)
        if name is None:
            self._slow = partial(split_custom, compiled(pattern))
            self._fast = None
        else:
            self._slow = compiled(pattern).findall
            self._fast = re.compile(bmp.translate(PATTERNS[name])).findall

    def __reduce__(self):
        return splitter, (self.pattern,)

    def __call__(self, text: str) -> list[str]:
        fast = self._fast
        if fast is None:
            return self._slow(text)
        if text.isascii():
            return fast(text)
        m = _ASTRAL.search(text)
        if m is None:
            return fast(text)
        out: list[str] = []
        start = 0
        while m is not None:
            k = m.start()
            cut = _SAFE_CUT_LAST.search(text, start, k + 1)
            a = start if cut is None else cut.start()
            cut = _SAFE_CUT.search(text, k + 1)
            b = len(text) if cut is None else cut.start()
            if a > start:
                out += fast(text[start:a])
            out += self._slow(text[a:b])
            start = b
            m = _ASTRAL.search(text, start)
        if start < len(text):
            out += fast(text[start:])
        return out


@lru_cache(maxsize=32)
def splitter(pattern: str) -> Splitter:
    """The `Splitter` for a name or a pattern string (cached): the fast ``findall``."""
    return Splitter(pattern)


def split(text: str, pattern: str = "gpt2") -> list[str]:
    """Cut ``text`` into pre-tokens with a catalogue pattern or a regex."""
    return splitter(pattern)(check_str(text))


def split_with_offsets(text: str, pattern: str = "gpt2") -> list[tuple[str, int, int]]:
    """Pre-tokens with their (start, end) character offsets in ``text``.

    The pre-tokens tile the text (a catalogue pattern matches every character;
    for a custom one the gaps are chunks too), so their offsets are running sums
    of their lengths.
    """
    pieces = splitter(pattern)(check_str(text))
    ends = list(accumulate(map(len, pieces)))
    return list(zip(pieces, [0, *ends[:-1]], ends))


def safe_cut_points(text: str, pattern: str, start: int = 0) -> list[int]:
    """Positions where ``text`` can be cut without changing how ``pattern`` splits it.

    Only known for the catalogue patterns; a custom pattern has none.
    """
    if pattern_name(pattern) is None:
        return []
    return [m.start() for m in _SAFE_CUT.finditer(text, start)]


def last_safe_cut(text: str, pattern: str, avoid: Collection[str] = ()) -> int | None:
    """The last safe cut position in ``text`` (see `safe_cut_points`), if any.

    ``avoid`` lists strings (special tokens) that a cut must not fall inside, nor
    inside a prefix of one at the very end of ``text`` (the rest may still come).
    """
    if pattern_name(pattern) is None:
        return None
    while True:
        m = _SAFE_CUT_LAST.search(text)
        cut = None if m is None else m.start()
        if cut is None or not avoid or not straddles(text, cut, avoid):
            return cut
        text = text[:cut]


def onig_pattern(pattern: str) -> str:
    """Rewrite a regex so Oniguruma (inside HF `tokenizers`) reads it as `regex` does.

    The catalogue patterns are written for Python's `regex` module. One
    construct means something else in Oniguruma's default (Ruby) syntax: a
    possessive bounded quantifier. cl100k's ``\\p{N}{1,3}+`` is "1 to 3
    digits, possessively" to `regex` but "(1 to 3 digits) repeated one or
    more times" to Oniguruma, which would keep ``12345`` in one chunk. An
    atomic group, ``(?>\\p{N}{1,3})``, means the same in both engines.
    Other possessive forms (``?+``, ``*+``, ``++``) agree already.
    """
    atom = r"(\\p\{\w+\}|\\.|\[(?:\\.|[^\]\\])*\]|[^\\()\[\]{}|])"
    out = regex.sub(atom + r"\{(\d+(?:,\d*)?)\}\+", r"(?>\1{\2})", pattern)
    left = regex.search(r"(?<!\\)\{\d+(?:,\d*)?\}\+", out)
    if left:
        raise ValueError(
            f"cannot rewrite the possessive quantifier {left.group()!r} at "
            f"{left.start()} for Oniguruma (only a single character, escape, class "
            "or \\p{...} before it is supported)"
        )
    return out


@dataclass(frozen=True)
class RegexSplit:
    """The regex pre-tokenizer as a pipeline stage: ``pattern`` is a catalogue name or a regex.

    ``behavior`` and ``invert`` are those of HF's ``Split`` (`toklab.pre_tokenizers.behaviors`):
    the default, ``"isolated"``, makes every match and every gap a chunk.
    """

    pattern: str = "gpt2"
    behavior: str = "isolated"
    invert: bool = False

    def __post_init__(self) -> None:
        resolve(self.pattern)  # fail early on a typo or a bad regex
        if self.behavior not in BEHAVIORS:
            raise ValueError(f"behavior must be one of {', '.join(BEHAVIORS)}, got {self.behavior!r}")

    @property
    def plain(self) -> bool:
        """True for the default split (isolated, not inverted), which the pattern's own `split` gives."""
        return self.behavior == "isolated" and not self.invert

    def pre_tokenize(self, text: str) -> list[str]:
        if self.plain:
            return split(text, self.pattern)
        return split_behaved(compiled(self.pattern), check_str(text), self.behavior, self.invert)

    def pre_tokenize_with_offsets(self, text: str) -> list[tuple[str, int, int]]:
        if self.plain:
            return split_with_offsets(text, self.pattern)
        pieces = self.pre_tokenize(text)
        if sum(map(len, pieces)) != len(text):
            raise ValueError(f"offsets of the {self.behavior!r} split are not implemented (it removes text)")
        ends = list(accumulate(map(len, pieces)))
        return list(zip(pieces, [0, *ends[:-1]], ends))

    def to_hf(self):
        """HF's ``Split`` with this regex (rewritten by `onig_pattern`), then ``ByteLevel``."""
        from tokenizers import Regex, pre_tokenizers

        return pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(onig_pattern(resolve(self.pattern))), behavior=self.behavior,
                                     invert=self.invert),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
