"""Byte-level BPE by hand, on real text: UTF-8 bytes, GPT-2's byte map, and the bounds on a token count.

``byte-level`` takes a short real text from the bundled corpus: an emoji's name from the
Unicode CLDR annotations (the emoji, a tab, the name in one of many languages), a few
words of a translated paragraph (sometimes across a paragraph break), or a line break of
the Korean block that is written with CRLF. It asks for

- the most tokens any byte-level BPE can cut it into: its UTF-8 bytes, since every byte is
  a token of the base vocabulary (counting characters is the slip);
- the fewest: the number of GPT-2 pre-tokens, since no token crosses a pre-token
  boundary (`toklab.pre_tokenizers.split` with the ``gpt2`` pattern computes them);
- how many ``Ġ`` and ``Ċ`` GPT-2's byte map writes (`toklab.base.unicode.bytes_to_unicode`):
  the bytes 0x20 and 0x0A only, so a no-break space, a tab or the ``\\r`` of CRLF is not one.
"""

from __future__ import annotations

import functools
import random
import unicodedata

from ... import pre_tokenizers
from ...base import unicode
from ...data import corpus
from .problem import Mistake, Part, Problem, read_ints, split_parts

__all__ = ["problem", "texts", "utf8_rule", "pretoken_rule", "byte_form"]

#: Marks that may appear (an emoji's variation selector and keycap): any other combining mark
#: would make the pre-token rule depend on Unicode categories no one knows by heart.
_MARKS_ALLOWED = {"\ufe0f", "\u20e3"}
_CJK = ("zh-CN", "zh-TW", "ja-JP")
_CRLF_BLOCK = "==> installation-guide-amd64 ko/ch01 <=="
#: The longest text a problem uses, in characters, and the most distinct non-ASCII characters.
MAX_CHARS, MAX_LISTED = 26, 9


def _usable(text: str) -> bool:
    if not text or len(text) > MAX_CHARS or text.isascii() or text != text.strip():
        return False
    for ch in text:
        cat = unicodedata.category(ch)
        if (cat.startswith("M") and ch not in _MARKS_ALLOWED) or (cat == "Cc" and ch not in "\t\n\r"):
            return False
    return len({ch for ch in text if not ch.isascii()}) <= MAX_LISTED


@functools.lru_cache(maxsize=1)
def texts() -> dict[str, list[str]]:
    """The candidate texts by source: ``cldr`` (an emoji, a tab, its name), ``prose`` (a few words of a
    non-English paragraph), ``spaced`` (the same, with a no-break space or across a paragraph break),
    ``crlf`` (across a line break of the Korean block)."""
    mixed = corpus.load("mixed")
    cldr = sorted({head for line in mixed.split("\n") if "\t" in line and " | " in line
                   for head in [line.split(" | ")[0]] if _usable(head)})
    prose: list[str] = []
    for locale in corpus.parallel_locales():
        if locale == "en-US":
            continue
        paragraphs = [p for p in corpus.parallel(locale) if p.strip()]
        for k, para in enumerate(paragraphs[:60]):
            nxt = paragraphs[k + 1] if k + 1 < len(paragraphs) else ""
            if locale in _CJK:
                spans = [para[i:i + 7] for i in range(0, max(1, len(para) - 7), 11)]
                tails = [nxt[:4]] if nxt else []
            else:
                words = para.split(" ")
                spans = [" ".join(words[i:i + 3]) for i in range(0, max(1, len(words) - 3), 5)]
                tails = [" ".join(nxt.split(" ")[:2])] if nxt else []
            prose += [s for s in spans if _usable(s)]
            prose += [s + "\n" + t for s in spans[-1:] for t in tails if _usable(s + "\n" + t)]
    start = mixed.index(_CRLF_BLOCK)
    block = mixed[start:mixed.index("\n==>", start + 1) if "\n==>" in mixed[start + 1:] else len(mixed)]
    crlf = []
    for pos in range(block.index("\r\n") + 2, len(block)):
        if block.startswith("\r\n", pos) and block[pos - 1] not in "\r\n":
            line = block[:pos].split("\r\n")[-1].split(" ")
            gap = "\r\n\r\n" if block.startswith("\r\n\r\n", pos) else "\r\n"
            after = block[pos + len(gap):].split("\r\n")[0].split(" ")
            for b in (1, 2):
                for a in (1, 2):
                    text = " ".join(line[-b:]) + gap + " ".join(after[:a])
                    if _usable(text) and text not in crlf:
                        crlf.append(text)
    spaced = [t for t in prose if any(ch.isspace() and ch != " " for ch in t)]
    return {"cldr": cldr, "prose": [t for t in prose if t not in set(spaced)], "spaced": spaced,
            "crlf": crlf}


def utf8_rule() -> str:
    return "UTF-8 takes 1 byte up to U+007F, 2 up to U+07FF, 3 up to U+FFFF and 4 beyond."


def pretoken_rule(text: str) -> str:
    """GPT-2's pre-tokenizer in words, exact for the texts `texts` gives."""
    contractions = "; 's, 't, 're, 've, 'm, 'll and 'd are pre-tokens of their own" if "'" in text else ""
    return ("a run of letters, a run of digits, or a run of other symbols (anything that is not a letter, digit "
            "or whitespace), each with the one space (U+0020) just before it, if there is one" + contractions +
            "; whitespace otherwise forms runs, except that a run followed by a non-space splits off its last "
            "character, which joins the next pre-token if it is a space and is a pre-token of its own if not")


def byte_form(text: str) -> str:
    """``text`` as GPT-2's vocabulary writes it: each UTF-8 byte as its printable character."""
    table = unicode.bytes_to_unicode()
    return "".join(table[b] for b in text.encode("utf-8"))


def _listed(text: str) -> str:
    chars = sorted({ch for ch in text if not ch.isascii()}, key=text.index)

    def one(ch: str) -> str:
        shown = repr(ch)[1:-1]
        name = f" {unicodedata.name(ch, '')}" if not ch.isprintable() or ch.isspace() else ""
        return f"{shown} U+{ord(ch):04X}{name}"

    return ", ".join(one(ch) for ch in chars)


#: How often each source is used.
WEIGHTS = {"cldr": 30, "prose": 15, "spaced": 35, "crlf": 20}


@functools.lru_cache(maxsize=1)
def _order() -> list[str]:
    """Every text once, the sources interleaved by `WEIGHTS` in a fixed shuffled order.

    Seed ``s`` takes the text at ``s`` modulo its length, so nearby seeds do not repeat a text
    (independent draws from pools of a few hundred texts would, now and then); a small source
    starts again, reshuffled, when its texts are used up.
    """
    shuffler = random.Random("toklab.drills.byte-level:order")
    pools: dict[str, list[str]] = {name: [] for name in sorted(WEIGHTS)}
    names = list(pools)
    order: list[str] = []
    for _ in range(sum(len(pool) for pool in texts().values())):
        name = shuffler.choices(names, weights=[WEIGHTS[n] for n in names])[0]
        if not pools[name]:  # used up (or not started): every text of the source again, reshuffled
            pools[name] = list(texts()[name])
            shuffler.shuffle(pools[name])
        order.append(pools[name].pop())
    return order


def problem(rng: random.Random, topic: str, seed: int) -> Problem:
    """``byte-level``: the most and fewest tokens of a real text, and its ``Ġ`` and ``Ċ``."""
    order = _order()
    text = order[seed % len(order)]
    pieces = pre_tokenizers.split(text, "gpt2")
    assert "".join(pieces) == text
    data = text.encode("utf-8")
    n_bytes, n_chars = len(data), len(text)
    three = sum(1 if ch.isascii() else 3 for ch in text)
    spaces, newlines = data.count(b" "), data.count(b"\n")
    space_like = sum(ch.isspace() and ch not in "\t\n\r\x0b\x0c" for ch in text)
    blank = sum(ch.isspace() for ch in text)
    nbsp_as_space = pre_tokenizers.split("".join(" " if ch.isspace() and ch not in "\t\n\r" else ch
                                                 for ch in text), "gpt2")
    parts = (
        Part("most tokens", n_bytes, (
            Mistake("One token per character", n_chars,
                    "a byte-level BPE can cut a character into its bytes: every one of the 256 bytes is a token, "
                    "so the most tokens is the number of UTF-8 bytes."),
            Mistake("Every non-ASCII character as 3 bytes", three,
                    "3 bytes is right for U+0800 to U+FFFF (most CJK); below U+0800 a character takes 2 bytes, "
                    "above U+FFFF (most emoji) 4."),
        ), hint=lambda got: "count the UTF-8 bytes: 1 per ASCII character, then 2, 3 or 4 by code point"),
        Part("fewest tokens", len(pieces), (
            Mistake("One token for the whole text", 1,
                    "no token crosses a pre-token boundary, so the fewest tokens is the number of pre-tokens."),
            Mistake("Split at whitespace only", len(text.split()),
                    "GPT-2's pre-tokenizer also separates letters from digits and symbols, and keeps whitespace "
                    "that is not a single space before a word as pre-tokens of its own."),
            Mistake("Took a no-break space for a space", len(nbsp_as_space),
                    "only U+0020 attaches to the next word; a no-break space is whitespace of its own."),
        ), hint=lambda got: "cut the text into pre-tokens with the rule given, and count them"),
        Part("Ġ", spaces, (
            Mistake("Every space-like character as Ġ", space_like,
                    "Ġ is the byte 0x20 only; a no-break space (C2 A0), a narrow one (E2 80 AF) or an ideographic "
                    "one (E3 80 80) are other bytes, written as other characters."),
            Mistake("Every whitespace character as Ġ", blank,
                    "Ġ is the byte 0x20 only; a tab is ĉ (0x09), a line feed Ċ (0x0A), a carriage return č (0x0D)."),
        ), hint=lambda got: "count the bytes 0x20"),
        Part("Ċ", newlines, (
            Mistake("Counted \\r as Ċ", newlines + text.count("\r"),
                    "CRLF is two bytes: 0x0D is written č, only 0x0A is Ċ."),
        ), hint=lambda got: "count the bytes 0x0A"),
    )
    sizes = {}
    for ch in text:
        sizes.setdefault(len(ch.encode("utf-8")), []).append(ch)
    breakdown = " + ".join(f"{len(chs)} x {n}" for n, chs in sorted(sizes.items()))
    solution = (
        f"Bytes: {breakdown} = {n_bytes} (UTF-8 of {n_chars} characters): at most {n_bytes} tokens, one per byte.\n"
        f"Pre-tokens ({len(pieces)}): {' | '.join(repr(p) for p in pieces)}: at least {len(pieces)} tokens.\n"
        f"Byte-level form: {byte_form(text)}\n"
        f"Ġ = the bytes 0x20: {spaces}; Ċ = the bytes 0x0A: {newlines}."
    )
    prompt = (
        "Byte-level BPE and GPT-2's byte map.\n"
        f"Text: {text!r} ({n_chars} characters).\n"
        f"Its characters outside ASCII: {_listed(text)}.\n"
        f"{utf8_rule()}\n"
        "GPT-2's BPE works on the text's UTF-8 bytes and writes each byte as one printable character: "
        "Ġ (U+0120) is the byte 0x20, Ċ (U+010A) the byte 0x0A. Before any merge it cuts the text into "
        f"pre-tokens, and no token crosses their boundaries: {pretoken_rule(text)}.\n"
        "Whatever merges the vocabulary has, what are the most and the fewest tokens this text can become? "
        "How many Ġ and how many Ċ does GPT-2's byte-level form of it hold?"
    )

    def read(s: str) -> tuple:
        return tuple(read_ints(p, 1)[0] for p in split_parts(s, 4))

    return Problem(topic, seed, prompt, tuple(p.live() for p in parts), solution,
                   'four whole numbers separated by ";": most tokens ; fewest tokens ; Ġ ; Ċ',
                   {"text": text, "pre_tokens": pieces}, read, lambda a: " ; ".join(map(str, a)))
