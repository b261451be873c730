"""Arithmetic interviews ask for: fertility and bits per byte of a real text, the five numbers of a vocabulary.

``fertility-bpb`` takes a short mixed English and Chinese text from the bundled corpus
(sometimes with an emoji), its real token count under ``cl100k_base``, and a total
negative log-likelihood, and asks for the UTF-8 bytes, tokens per byte, loss per token
and BPB (`toklab.measure.metrics` computes the same numbers). ``five-numbers`` starts from a
real rank file's ordinary tokens and specials, registers new specials at given IDs and
pads the embedding, and asks for the five sizes (`toklab.measure.vocab_facts.of_bpe` computes
the first four from a tokenizer built that way).
"""

from __future__ import annotations

import functools
import math
import random
import re

from ...bpe import ByteBPE
from ...data import corpus, vocabs
from ...measure import metrics
from .problem import SIG_DIGITS, Mistake, Part, Problem, read_ints, read_numbers, show_number, split_parts

__all__ = ["fertility_problem", "five_numbers_problem", "BASES", "NEW_SPECIALS", "cl100k"]

#: The real rank files a five-numbers problem starts from.
BASES = ("r50k_base", "cl100k_base", "o200k_base")
NEW_SPECIALS = ("<|im_start|>", "<|im_end|>", "<|tool_call|>", "<|/tool_call|>", "<|pad|>", "<|image|>")
_THREE_BYTES = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff01-\uff5e]{3,8}")


@functools.lru_cache(maxsize=1)
def cl100k() -> ByteBPE:
    """The real ``cl100k_base`` (loaded once per process)."""
    return ByteBPE.from_tiktoken("cl100k_base")


@functools.lru_cache(maxsize=1)
def _lines() -> dict[str, list[str]]:
    en = [line for line in corpus.load("en", 300_000).splitlines() if line.isascii() and len(line) > 40]
    zh = [m for line in corpus.load("zh", 300_000).splitlines() for m in _THREE_BYTES.findall(line)]
    # printable ones only: the prompt shows the text with repr(), which escapes the others
    emoji = sorted({ch for ch in corpus.load("mixed") if 0x1F300 <= ord(ch) <= 0x1FAFF and ch.isprintable()})
    return {"en": en, "zh": zh, "emoji": emoji}


def _text(rng: random.Random) -> str:
    lines = _lines()
    words = rng.choice(lines["en"]).split()
    start = rng.randrange(max(1, len(words) - 4))
    english = " ".join(words[start:start + rng.randint(2, 4)])
    chinese = rng.choice(lines["zh"])
    parts = [english, chinese] if rng.random() < 0.5 else [chinese, english]
    text = " ".join(parts)
    return text + rng.choice(lines["emoji"]) if rng.random() < 0.5 else text


@functools.lru_cache(maxsize=None)
def _vocabulary(name: str) -> tuple[int, dict[str, int]]:
    spec = vocabs.load(name)
    return len(spec.ranks), dict(spec.special_tokens)


def fertility_problem(rng: random.Random, topic: str, seed: int) -> Problem:
    """``fertility-bpb``: bytes, tokens per byte, loss per token and BPB of one real text."""
    text = _text(rng)
    n_tokens = len(cl100k().encode_ordinary(text))
    nll = round(n_tokens * rng.uniform(0.8, 3.0), 2)
    n_bytes, n_chars = metrics.count_units(text, "bytes"), metrics.count_units(text, "chars")
    ln2 = math.log(2)
    utf16 = sum(2 if ord(c) <= 0xFFFF else 4 for c in text if not c.isascii()) + sum(c.isascii() for c in text)
    parts = (
        Part("bytes", n_bytes, (
            Mistake("Counted characters", n_chars, "B counts UTF-8 bytes, not characters: a Chinese character "
                    "or punctuation mark is 3 bytes, an emoji 4."),
            Mistake("Chinese as 2 bytes", utf16, "that is the UTF-16 (or GBK) size; in UTF-8 a Chinese character "
                    "is 3 bytes and an emoji 4."),
        ), hint=lambda got: "add 1 byte per ASCII character, 3 per Chinese character or punctuation mark, 4 per emoji"),
        Part("tokens per byte", n_tokens / n_bytes, (
            Mistake("Bytes per token", n_bytes / n_tokens, "that is bytes per token; the question asks tokens per byte."),
            Mistake("Tokens per character", n_tokens / n_chars, "divide by bytes, not by characters."),
        ), numeric=True, hint=lambda got: "tokens / bytes"),
        Part("loss per token", nll / n_tokens, (
            Mistake("Bits, not nats", nll / n_tokens / ln2, "the NLL is in nats and so is the loss per token: "
                    "divide by the number of tokens only."),
            Mistake("Per byte, not per token", nll / n_bytes, "the loss per token divides by the tokens."),
        ), numeric=True, hint=lambda got: "total NLL / tokens"),
        Part("BPB", nll / (n_bytes * ln2), (
            Mistake("Forgot ln 2", nll / n_bytes, "that is nats per byte; divide by ln 2 to turn nats into bits."),
            Mistake("Bits per token", nll / (n_tokens * ln2), "BPB divides by the bytes of the text, which do not "
                    "depend on the tokenizer, not by its tokens."),
            Mistake("Bits per character", nll / (n_chars * ln2), "divide by UTF-8 bytes, not characters."),
            Mistake("Multiplied by ln 2", nll * ln2 / n_bytes, "bits = nats / ln 2, not nats x ln 2."),
        ), numeric=True, hint=lambda got: "total NLL / (bytes x ln 2)"),
    )
    solution = (
        f"B = {n_bytes} UTF-8 bytes ({n_chars} characters).\n"
        f"tokens per byte = {n_tokens} / {n_bytes} = {show_number(n_tokens / n_bytes)}\n"
        f"loss per token = {nll} / {n_tokens} = {show_number(nll / n_tokens)} nats\n"
        f"BPB = {nll} / ({n_bytes} x ln 2) = {show_number(nll / (n_bytes * ln2))} "
        f"(= loss per token x tokens per byte / ln 2)"
    )
    prompt = (
        "Fertility and bits per byte.\n"
        f"Text: {text!r} ({n_chars} characters).\n"
        f"cl100k_base cuts it into {n_tokens} tokens, and a language model gives those tokens a total negative "
        f"log-likelihood of {nll} nats.\n"
        "UTF-8 sizes: an ASCII character is 1 byte, a Chinese character or punctuation mark 3, an emoji 4.\n"
        "Give the number of UTF-8 bytes B, the tokens per byte, the loss per token (nats) and the BPB, "
        f"the last three to {SIG_DIGITS} significant digits."
    )

    def read(s: str) -> tuple:
        b, tpb, loss, bpb = split_parts(s, 4)
        return (read_ints(b, 1)[0], read_numbers(tpb, 1)[0], read_numbers(loss, 1)[0], read_numbers(bpb, 1)[0])

    return Problem(topic, seed, prompt, tuple(p.live() for p in parts), solution,
                   'four numbers separated by ";": bytes ; tokens per byte ; loss per token ; BPB '
                   f'(the last three to {SIG_DIGITS} significant digits)',
                   {"text": text, "tokens": n_tokens, "nll": nll}, read,
                   lambda a: " ; ".join([str(a[0])] + [show_number(x) for x in a[1:]]))


def five_numbers_problem(rng: random.Random, topic: str, seed: int) -> Problem:
    """``five-numbers``: ordinary, special, len(), max ID + 1 and embedding rows after registering specials."""
    name = rng.choice(BASES)
    ordinary, specials = _vocabulary(name)
    top = max([ordinary - 1, *specials.values()])
    new = rng.sample(NEW_SPECIALS, rng.randint(1, 3))
    ids, next_id = {}, top + 1 + (rng.choice((0, 0, rng.randint(1, 30))))
    for tok in new:
        ids[tok] = next_id
        next_id += 1 + (rng.randint(1, 9) if rng.random() < 0.4 else 0)
    every = {**specials, **ids}
    multiple = rng.choice((64, 128, 256))
    entries, space = ordinary + len(every), max([ordinary - 1, *every.values()]) + 1
    if space == entries:  # no hole yet: start the new IDs one later, so the ID space has one
        ids = {tok: i + 1 for tok, i in ids.items()}
        every = {**specials, **ids}
        space += 1

    def pad(n: int) -> int:
        return -(-n // multiple) * multiple

    parts = (
        Part("ordinary", ordinary, (Mistake("Counted the specials as ordinary", entries,
                                            "ordinary tokens are the ones text is cut into: the rank file's entries."),)),
        Part("special", len(every), (Mistake("Only the new specials", len(ids),
                                             "count every registered special, the file's own and the new ones."),)),
        Part("entries", entries, (
            Mistake("Forgot the specials", ordinary, "len(tokenizer) counts special tokens too."),
            Mistake("Counted the holes", space, "len(tokenizer) counts the IDs that mean something; unassigned "
                    "IDs between them (holes) are not entries."),
        )),
        Part("ID space", space, (
            Mistake("Max ID, not max ID + 1", space - 1, "IDs start at 0, so the ID space is the largest ID + 1."),
            Mistake("Ignored the holes", entries, "the ID space runs up to the largest ID, holes included."),
        )),
        Part("embedding rows", pad(space), (
            Mistake("No padding", space, f"the model pads its embedding to a multiple of {multiple}."),
            Mistake("Padded the entries", pad(entries), "every ID up to the largest needs a row: pad the ID space, "
                    "not the number of entries."),
        ), hint=lambda got: f"round the ID space up to a multiple of {multiple}"),
    )
    listed = ", ".join(f"{t} = {i:,}" for t, i in specials.items())
    added = ", ".join(f"{t} = {i:,}" for t, i in ids.items())
    holes = space - entries
    solution = (
        f"ordinary = {ordinary:,} (IDs 0-{ordinary - 1:,}); special = {len(specials)} + {len(ids)} = {len(every)}; "
        f"entries = {ordinary:,} + {len(every)} = {entries:,}; ID space = largest ID {space - 1:,} + 1 = {space:,} "
        f"({holes} unassigned ID{'s' if holes != 1 else ''}); embedding rows = {space:,} rounded up to a multiple "
        f"of {multiple} = {pad(space):,}."
    )
    prompt = (
        "The five numbers of a vocabulary.\n"
        f"{name}'s file holds {ordinary:,} ordinary tokens with IDs 0 to {ordinary - 1:,} and registers these "
        f"special tokens: {listed}.\n"
        f"A team registers new special tokens: {added}. Their model's embedding has one row per ID of the ID "
        f"space, padded up to a multiple of {multiple}.\n"
        "Give the numbers of ordinary tokens, special tokens, entries (len of the tokenizer), the ID space "
        "(largest ID + 1) and the embedding rows."
    )
    return Problem(topic, seed, prompt, tuple(p.live() for p in parts), solution,
                   "five whole numbers separated by spaces (100,256 or 100256)",
                   {"base": name, "specials": every, "new_specials": ids, "multiple": multiple},
                   lambda s: tuple(read_ints(s, 5)), lambda a: " ".join(map(str, a)))
