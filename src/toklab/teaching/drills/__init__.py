"""Fresh practice problems for the hand computations interviews ask, each with a checker.

``generate(topic, seed=...)`` returns a `Problem`: its ``prompt`` (text with every
number the problem needs), ``answer`` (toklab's answer, computed by the package's
reference functions) and ``check(answer) -> (ok, feedback)``. The feedback names the
likely mistake: each problem carries the answers that the usual wrong methods give on
it, and is drawn so that the main ones differ from the right answer (a tie that matters,
a word whose most frequent pair is not its lowest-ranked one, a word that fails after a
first match). The same topic and seed always give the same problem, in every process;
different seeds give different problems. `TOPICS` lists the topics.

Files:

- `problem`: `Problem`, `Part`, `Mistake`, and the readers of typed answers;
- `bpe`: ``bpe-train`` (merges of a small corpus with a tie) and ``bpe-encode``
  (encoding with given ranks: the rank-vs-frequency trap);
- `wordpiece`: ``wordpiece`` (longest match first, whole-word ``[UNK]``);
- `unigram`: ``unigram-viterbi`` and ``unigram-forward`` (random unigram models);
- `measures`: ``fertility-bpb`` (a real text under ``cl100k_base``) and
  ``five-numbers`` (a real rank file with new specials);
- `prefix`: ``prefix-instability`` (a cut prompt and the tokens to back off);
- `regularization`: ``bpe-dropout`` and ``unigram-sampling`` (what subword
  regularization can vary, and what it cannot);
- `bytelevel`: ``byte-level`` (UTF-8 bytes, GPT-2's pre-tokens and byte map, on real text);
- `questions` (with `questions_source`, its data): §8's twenty-five questions, for
  reveal-and-self-grade drilling;
- `session`: a session's plan (turns, missed topics again, a second round) and its
  summary by topic.

``python -m toklab drill [TOPIC ...]`` drills in a terminal (`toklab.cli.drill`).
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable

from . import bpe, bytelevel, measures, prefix, regularization, unigram, wordpiece
from .problem import Mistake, Part, Problem

__all__ = ["TOPICS", "DESCRIPTIONS", "generate", "Problem", "Part", "Mistake"]

_GENERATORS: dict[str, tuple[Callable[[random.Random, str, int], Problem], str]] = {
    "bpe-train": (bpe.train_problem, "the first merges of a small corpus, with a tie"),
    "bpe-encode": (bpe.encode_problem, "encode a word with frozen ranks (rank, not frequency)"),
    "wordpiece": (wordpiece.problem, "longest match first; a failing word is one [UNK]"),
    "unigram-viterbi": (unigram.viterbi_problem, "the most probable segmentation and its probability"),
    "unigram-forward": (unigram.forward_problem, "the forward table: every segmentation summed"),
    "fertility-bpb": (measures.fertility_problem, "bytes, tokens per byte, loss per token, BPB of a real text"),
    "five-numbers": (measures.five_numbers_problem, "ordinary, special, len, max ID + 1, embedding rows"),
    "prefix-instability": (prefix.problem, "encode a cut prompt; how many tokens to back off"),
    "bpe-dropout": (regularization.dropout_problem, "what BPE-dropout can output: how many segmentations, fewest tokens"),
    "unigram-sampling": (regularization.sampling_problem, "sampling with P(z)^α: the best segmentation's chance at two α"),
    "byte-level": (bytelevel.problem, "UTF-8 bytes, GPT-2 pre-tokens, Ġ and Ċ of a real text: most and fewest tokens"),
}

#: The topic names, in the order the book introduces them.
TOPICS: tuple[str, ...] = tuple(_GENERATORS)
#: One line about each topic.
DESCRIPTIONS: dict[str, str] = {name: text for name, (_, text) in _GENERATORS.items()}


def generate(topic: str, seed: int | None = None) -> Problem:
    """A problem of ``topic`` (one of `TOPICS`); the same ``seed`` gives the same problem.

    Without a seed a random one is drawn (and recorded in ``problem.seed``, so the
    problem can be generated again). The random stream is seeded from the text
    ``"toklab.drills:<topic>:<seed>"`` (the package's first name, kept so that every seed
    gives the problem it always gave), so it is the same in every process and under every
    ``PYTHONHASHSEED``.
    """
    if topic not in _GENERATORS:
        raise ValueError(f"unknown drill topic {topic!r}; topics: {', '.join(TOPICS)}")
    if seed is None:
        seed = secrets.randbelow(10**6)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    rng = random.Random(f"toklab.drills:{topic}:{seed}")
    return _GENERATORS[topic][0](rng, topic, seed)
