"""Every topic, many seeds: the reference answer passes, every known mistake is rejected by name,
problems are deterministic (across processes and hash seeds) and differ between seeds."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from toklab import unigram
from toklab.teaching import drills

SEEDS = range(60)


@pytest.fixture(scope="module")
def problems():
    return {(t, s): drills.generate(t, s) for t in drills.TOPICS for s in SEEDS}


def test_topics_are_listed_with_descriptions():
    assert len(drills.TOPICS) == 11 and set(drills.DESCRIPTIONS) == set(drills.TOPICS)
    assert all(drills.DESCRIPTIONS.values())


@pytest.mark.parametrize("topic", drills.TOPICS)
def test_reference_answer_passes_as_a_value_and_as_typed_text(problems, topic):
    for seed in SEEDS:
        p = problems[topic, seed]
        assert p.topic == topic and p.seed == seed
        assert p.check(p.answer) == (True, "correct"), (seed, p.prompt)
        assert p.check(p.answer_text) == (True, "correct"), (seed, p.answer_text)
        assert p.parse(p.answer_text) is not None
        assert p.prompt and p.solution and p.answer_format


@pytest.mark.parametrize("topic", drills.TOPICS)
def test_every_known_mistake_is_rejected_with_its_name(problems, topic):
    titles = set()
    for seed in SEEDS:
        p = problems[topic, seed]
        assert p.mistakes(), f"{topic} seed {seed} catches no mistake"
        for part, mistake in p.mistakes():
            ok, feedback = p.check(p.with_part(part, mistake.value))
            assert not ok
            assert mistake.title in feedback and mistake.detail in feedback, (topic, seed, feedback)
            titles.add(mistake.title)
    assert len(titles) >= 2, f"{topic}: only {titles} ever caught"


# The trap each topic is built around must be live in every single problem of it; a
# problem whose answer has no [UNK] (WordPiece) or nothing to back off (prefix) has
# another trap instead.
TRAPS = {
    "bpe-train": {"Tie broken the wrong way", "Word counts ignored"},
    "bpe-encode": {"Frequency instead of rank"},
    "wordpiece": {"Forgot the ## prefix"},
    "unigram-viterbi": {"Greedy longest match", "That is P(x), not the best path"},
    "unigram-forward": {"Max instead of sum"},
    "fertility-bpb": {"Counted characters", "Forgot ln 2", "Bits per token"},
    "five-numbers": {"Forgot the specials", "Max ID, not max ID + 1", "No padding"},
    "prefix-instability": set(),
    "bpe-dropout": {"Dropout as a smaller merge table", "Every cut of the word"},
    "unigram-sampling": {"Forgot to normalize", "Kept α = 1", "Every cut of the text"},
    "byte-level": {"One token per character"},
}


def _traps(p):
    extra = set()
    if p.topic == "wordpiece":
        extra = {"Kept the pieces before the failure"} if "[UNK]" in p.answer else {"Shortest match first"}
    if p.topic == "prefix-instability":
        extra = {"Assumed the prompt's tokens are final"} if p.answer[1] else {"Backed off a stable cut"}
    if p.topic == "unigram-sampling":
        extra = {"Read α backwards"} if p.data["alpha"] == 0 else {"Read α as a temperature"}
    return TRAPS[p.topic] | extra


@pytest.mark.parametrize("topic", drills.TOPICS)
def test_the_topics_trap_is_in_every_problem(problems, topic):
    for seed in SEEDS:
        titles = " | ".join(m.feedback() for _, m in problems[topic, seed].mistakes())
        assert all(trap.lower() in titles.lower() for trap in _traps(problems[topic, seed])), (topic, seed, titles)


def test_bpe_train_problems_have_a_tie_that_matters(problems):
    for seed in SEEDS:
        assert "a tie, so the smallest pair" in problems["bpe-train", seed].solution


def test_prefix_cuts_vary_from_stable_to_two_tokens_and_always_merge(problems):
    m = [problems["prefix-instability", s].answer[1] for s in SEEDS]
    assert min(m) == 0 and max(m) >= 2
    assert all(sum(x == k for x in m) >= len(m) // 8 for k in (0, 1, 2)), m
    for s in SEEDS:
        p = problems["prefix-instability", s]
        assert len(p.answer[0]) < p.data["cut"], "the cut prompt's encoding is just its letters"


def test_some_wordpiece_problems_have_a_greedy_dead_end(problems):
    dead = [s for s in SEEDS if any("Backtracked" in m.feedback() for _, m in problems["wordpiece", s].mistakes())]
    assert len(dead) >= len(SEEDS) // 3


def test_wordpiece_sentences_vary_in_length_and_in_failing_words(problems):
    shapes = {(len(problems["wordpiece", s].data["words"]), problems["wordpiece", s].answer.count("[UNK]"))
              for s in SEEDS}
    assert {n for n, _ in shapes} == {3, 4} and {u for _, u in shapes} == {0, 1, 2}


def test_unigram_models_are_distributions(problems):
    for topic in ("unigram-viterbi", "unigram-forward", "unigram-sampling"):
        for s in SEEDS:
            probs = problems[topic, s].data["probs"]
            assert sum(round(v * 100) for v in probs.values()) == 100 and min(probs.values()) >= 0.02
            assert all(abs(v * 100 - round(v * 100)) < 1e-9 for v in probs.values())
            assert "sum to 1" in problems[topic, s].prompt


def test_numeric_answers_state_their_precision(problems):
    for (topic, s), p in problems.items():
        if any(part.numeric for part in p.parts):
            assert "4 significant digits" in p.answer_format, topic


# What makes a problem of each topic worth doing by hand: none is answered by reading it off.
NOT_TRIVIAL = {
    "bpe-train": lambda p: len(p.answer) >= 3,
    "bpe-encode": lambda p: len(p.answer) < len(p.data["word"]) - 2,
    "wordpiece": lambda p: any(len(t.removeprefix("##")) > 1 for t in p.answer),
    "unigram-viterbi": lambda p: len(list(unigram.segmentations(p.data["text"], p.data["probs"]))) >= 3,
    "unigram-forward": lambda p: len(set(p.answer)) == len(p.answer),
    "fertility-bpb": lambda p: p.answer[0] > len(p.data["text"]),
    "five-numbers": lambda p: p.answer[3] > p.answer[2],
    "prefix-instability": lambda p: len(p.answer[0]) < p.data["cut"],
    "bpe-dropout": lambda p: p.answer[1] >= 4 and len(p.answer[0]) < len(p.data["word"]),
    "unigram-sampling": lambda p: p.answer[0] >= 3 and p.answer[1] < 1,
    "byte-level": lambda p: p.answer[0] > len(p.data["text"]),
}


@pytest.mark.parametrize("topic", drills.TOPICS)
def test_no_trivial_problems(problems, topic):
    for s in SEEDS:
        assert NOT_TRIVIAL[topic](problems[topic, s]), (topic, s, problems[topic, s].prompt)


@pytest.mark.parametrize("topic", drills.TOPICS)
def test_at_least_15_distinct_problems_in_20_seeds_that_pass_their_own_answer(topic):
    batch = [drills.generate(topic, s) for s in range(1000, 1020)]
    assert len({p.prompt for p in batch}) >= 15
    assert all(p.check(p.answer_text) == (True, "correct") for p in batch)


@pytest.mark.parametrize("topic", drills.TOPICS)
def test_different_seeds_give_different_problems(problems, topic):
    prompts = {problems[topic, s].prompt for s in SEEDS}
    assert len(prompts) >= len(SEEDS) - 2, f"{topic}: only {len(prompts)} distinct problems in {len(SEEDS)} seeds"


_DUMP = """
import json, sys
from toklab import unigram
from toklab.teaching import drills
out = {f"{t}:{s}": [drills.generate(t, s).prompt, drills.generate(t, s).answer_text]
       for t in drills.TOPICS for s in range(8)}
json.dump(out, sys.stdout)
"""


def test_same_seed_same_problem_in_other_processes_and_hash_seeds(problems):
    here = {f"{t}:{s}": [problems[t, s].prompt, problems[t, s].answer_text] for t in drills.TOPICS for s in range(8)}
    for hash_seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run([sys.executable, "-c", _DUMP], capture_output=True, text=True, env=env, check=True)
        assert json.loads(out.stdout) == here
