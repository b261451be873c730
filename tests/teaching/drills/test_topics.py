"""Every topic, many seeds: the reference answer passes, every known mistake is rejected by name,
problems are deterministic (across processes and hash seeds) and differ between seeds."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from toklab.teaching import drills

SEEDS = range(60)


@pytest.fixture(scope="module")
def problems():
    return {(t, s): drills.generate(t, s) for t in drills.TOPICS for s in SEEDS}


def test_topics_are_listed_with_descriptions():
    assert len(drills.TOPICS) == 8 and set(drills.DESCRIPTIONS) == set(drills.TOPICS)
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


# The trap each topic is built around must be live in every single problem of it.
TRAPS = {
    "bpe-train": {"Tie broken the wrong way", "Word counts ignored"},
    "bpe-encode": {"Frequency instead of rank"},
    "wordpiece": {"Kept the pieces before the failure", "Forgot the ## prefix"},
    "unigram-viterbi": {"Greedy longest match", "That is P(x), not the best path"},
    "unigram-forward": {"Max instead of sum"},
    "fertility-bpb": {"Counted characters", "Forgot ln 2", "Bits per token"},
    "five-numbers": {"Forgot the specials", "Max ID, not max ID + 1", "No padding"},
    "prefix-instability": {"Assumed the prompt's tokens are final"},
}


@pytest.mark.parametrize("topic", drills.TOPICS)
def test_the_topics_trap_is_in_every_problem(problems, topic):
    for seed in SEEDS:
        titles = " | ".join(m.feedback() for _, m in problems[topic, seed].mistakes())
        assert all(trap.lower() in titles.lower() for trap in TRAPS[topic]), (topic, seed, titles)


def test_bpe_train_problems_have_a_tie_that_matters(problems):
    for seed in SEEDS:
        assert "a tie, so the smallest pair" in problems["bpe-train", seed].solution


def test_some_problems_need_more_than_one_token_backed_off(problems):
    m = [problems["prefix-instability", s].answer[1] for s in SEEDS]
    assert min(m) >= 1 and sum(x >= 2 for x in m) >= len(m) // 4


def test_some_wordpiece_problems_have_a_greedy_dead_end(problems):
    dead = [s for s in SEEDS if any("Backtracked" in m.feedback() for _, m in problems["wordpiece", s].mistakes())]
    assert len(dead) >= len(SEEDS) // 2


@pytest.mark.parametrize("topic", drills.TOPICS)
def test_different_seeds_give_different_problems(problems, topic):
    prompts = {problems[topic, s].prompt for s in SEEDS}
    assert len(prompts) >= len(SEEDS) - 2, f"{topic}: only {len(prompts)} distinct problems in {len(SEEDS)} seeds"


_DUMP = """
import json, sys
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
