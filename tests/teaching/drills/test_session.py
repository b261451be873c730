"""Drill sessions: the plan (`toklab.teaching.drills.session.Session`) and whole sessions of ``toklab drill``
driven through standard input with a fake clock, timed and untimed, ending with a summary by topic."""

from __future__ import annotations

import io

import pytest

from toklab import cli
from toklab.teaching import drills
from toklab.cli import drill
from toklab.teaching.drills import questions
from toklab.teaching.drills.session import RIGHT, SHOWN, WRONG, Item, Session, clock_text, resolve_topics

EVERY = [*drills.TOPICS, "questions"]


def test_topics_resolve_to_names_questions_and_single_questions():
    assert resolve_topics([], drills.TOPICS) == EVERY
    assert resolve_topics(["wordpiece", "q7", "questions", "wordpiece"], drills.TOPICS) == [
        "wordpiece", "Q7", "questions"]
    with pytest.raises(ValueError, match="unknown topic 'bpe'"):
        resolve_topics(["bpe"], drills.TOPICS)
    with pytest.raises(ValueError, match="no question 'Q0'"):
        resolve_topics(["Q0"], drills.TOPICS)


def test_turns_cover_every_topic_with_seed_plus_turn_and_deal_every_question_once():
    session = Session(EVERY, 40)
    items = [session.next_item() for _ in range(len(EVERY) * 25)]
    assert {i.row for i in items[:len(EVERY)]} == set(EVERY)
    for k, item in enumerate(items):
        if not item.is_question:
            assert item.seed == 40 + k and item.problem().topic == item.topic
    asked = [i.number for i in items if i.is_question]
    assert sorted(asked) == list(range(1, 26))  # 25 turns of questions: each once
    again = Session(EVERY, 40)
    assert [i.name for i in items[:12]] == [again.next_item().name for _ in range(12)]
    assert Item("Q3", number=3).command == "python -m toklab drill Q3"
    assert Item("wordpiece", seed=9).command == "python -m toklab drill wordpiece --seed 9"


def test_a_missed_topic_comes_back_three_turns_later_when_untimed():
    session = Session(["bpe-train", "wordpiece", "byte-level"], 0)
    first = session.next_item()
    session.record(first, WRONG, 10.0)
    following = [session.next_item() for _ in range(3)]
    assert following[2].topic == first.topic and following[2].seed != first.seed
    timed = Session(["bpe-train", "wordpiece", "byte-level"], 0, revisit=False)
    item = timed.next_item()
    timed.record(item, WRONG, 10.0)
    assert [timed.next_item().topic for _ in range(3)].count(item.topic) == 1  # the plain rotation
    question = Session(["Q5"], 0)
    q = question.next_item()
    question.record(q, SHOWN, 3.0)
    assert [question.next_item() for _ in range(3)][-1] == q


def test_second_round_and_summary_by_topic():
    session = Session(["bpe-train", "wordpiece", "questions"], 1, revisit=False)
    outcomes = {0: WRONG, 1: RIGHT, 2: SHOWN, 3: WRONG, 4: RIGHT, 5: RIGHT}
    items = []
    for k in range(6):
        items.append(session.next_item())
        session.record(items[-1], outcomes[k], 60.0 * (k + 1))
    missed = session.missed()
    again = session.second_round()
    assert [i.row for i in again] == list(dict.fromkeys(i.row for i in missed))
    for old in missed:
        if old.is_question:
            assert old in again  # the same question again
    fresh = [i for i in again if not i.is_question]
    assert all(i.seed >= 1 + 6 for i in fresh)  # problems not seen in round 1
    for item in again:
        session.record(item, RIGHT, 30.0, round=2)
    table = session.summary({1: 1260.0, 2: 30.0 * len(again)})
    lines = table.splitlines()
    assert lines[0].split() == ["topic", "tried", "right", "wrong", "shown", "time", "round", "2"]
    rows = {line.split()[0]: line.split() for line in lines[1:5]}
    assert set(rows) == {"bpe-train", "wordpiece", "questions", "all"}
    assert rows["all"][1:5] == ["6", "3", "2", "1"]
    assert "round 1: 21:00" in table and "Every topic's last item was right." in table


def _script(lines, clock, step):
    """Standard input that advances ``clock`` by ``step`` seconds for every line read."""

    class Script(io.StringIO):
        def readline(self, *args):
            clock[0] += step
            return super().readline(*args)

    return Script("".join(f"{line}\n" for line in lines))


def _wrong(problem):
    part, mistake = problem.mistakes()[0]
    return problem.writer(problem.with_part(part, mistake.value))


def _lines_for(item, wrong_rows):
    """What a candidate types for ``item``: right answers, except on the rows in ``wrong_rows``
    (after an empty line, which only asks again)."""
    if item.is_question:
        return ["I would say ...", "n" if item.row in wrong_rows else "y"]
    if item.row in wrong_rows:
        return ["", _wrong(item.problem())]
    return [item.problem().answer_text]


def test_a_twenty_minute_session_ends_with_a_summary_by_topic():
    step, minutes = 50.0, 20
    topics = ["bpe-encode", "wordpiece", "byte-level", "questions"]
    wrong_rows = ("wordpiece", "questions")
    # the candidate's script, planned with the same deal the command makes: each line read takes 50 s
    plan = Session(resolve_topics(topics, drills.TOPICS), 7, revisit=False)
    typed, spent, first = [], 0.0, []
    while spent < minutes * 60:
        item = plan.next_item()
        lines = _lines_for(item, wrong_rows)
        typed += lines
        spent += step * len(lines)
        first.append(item)
        plan.record(item, WRONG if item.row in wrong_rows else RIGHT, step * len(lines))
        if spent >= minutes * 60:
            break
        typed.append("")  # Enter for the next item
        spent += step
    second = plan.second_round()
    for k, item in enumerate(second):
        typed += _lines_for(item, ())
        if k < len(second) - 1:
            typed.append("")
    assert 8 <= len(first) and {i.row for i in second} == set(wrong_rows)

    clock = [1000.0]
    args = cli.build_parser()[0].parse_args(["drill", *topics, "--seed", "7", "--minutes", str(minutes)])
    out = io.StringIO()
    assert drill.run(args, stdin=_script(typed, clock, step), stdout=out, clock=lambda: clock[0]) == 0
    text = out.getvalue()
    assert text.startswith("A 20:00 session")
    round_one, round_two = text.split("\nTime is up (")
    assert round_one.count("\n== ") == len(first) and "[20:00 left]" in round_one
    assert round_two.startswith(f"{clock_text(spent)}).") and spent >= minutes * 60
    assert f"Second round, untimed: {len(second)} items on what you missed (" in round_two
    assert round_two.count("[round 2, ") == len(second)
    summary = text.split("Summary by topic\n")[1]
    rows = {line.split()[0]: line.split() for line in summary.splitlines()[1:6]}
    assert list(rows) == ["bpe-encode", "wordpiece", "byte-level", "questions", "all"]
    assert rows["all"][1] == str(len(first))
    assert rows["wordpiece"][3] == rows["wordpiece"][1] != "0"  # every wordpiece problem wrong ...
    assert " ".join(rows["wordpiece"][6:]) == "1 of 1 right" and rows["byte-level"][6:] == ["-"]
    assert rows["bpe-encode"][2] == rows["bpe-encode"][1] and rows["bpe-encode"][-1] == "-"
    assert f"round 1: {clock_text(spent)}" in summary and "Every topic's last item was right." in summary


def test_quitting_a_timed_session_early_skips_the_second_round():
    clock = [0.0]
    p = drills.generate("bpe-train", 3)
    args = cli.build_parser()[0].parse_args(["drill", "bpe-train", "--seed", "3", "--minutes", "20"])
    out = io.StringIO()
    typed = [_wrong(p), "q"]
    assert drill.run(args, stdin=_script(typed, clock, 30.0), stdout=out, clock=lambda: clock[0]) == 0
    text = out.getvalue()
    assert "Time is up" not in text and "round 2" not in text
    assert "python -m toklab drill bpe-train --seed 3" in text.split("To work on")[1]


def test_an_untimed_session_revisits_a_missed_topic_and_counts_self_grades():
    session_topics = ["unigram-forward", "Q19"]
    plan = Session(resolve_topics(session_topics, drills.TOPICS), 2)
    typed, dealt = [], []
    for k in range(5):
        item = plan.next_item()
        dealt.append(item.name)
        if item.is_question:
            grade = "n" if "Q19 (L3)" not in dealt[:-1] else "y"
            typed += ["bits per byte ...", grade]
            plan.record(item, RIGHT if grade == "y" else WRONG, 1.0)
        else:
            typed.append(item.problem().answer_text if k else "?")
            plan.record(item, RIGHT if k else SHOWN, 1.0)
        typed.append("")
    typed[-1] = "q"
    # the problem shown with '?' (turn 0) and the question missed (turn 1) come back three turns later
    assert dealt == ["unigram-forward, seed 2", "Q19 (L3)", "unigram-forward, seed 4", "unigram-forward, seed 5",
                     "Q19 (L3)"]
    args = cli.build_parser()[0].parse_args(["drill", *session_topics, "--seed", "2"])
    out = io.StringIO()
    clock = [0.0]
    assert drill.run(args, stdin=_script(typed, clock, 5.0), stdout=out, interactive=True,
                     clock=lambda: clock[0]) == 0
    text = out.getvalue()
    assert text.count("Did your answer make the model answer's points? (y/n) ") == text.count("== Q19 (L3)") == 2
    assert questions.question(19).title in text
    summary = text.split("Summary by topic\n")[1]
    assert "round 2" not in summary.splitlines()[0]

    def counts(table):  # every row without its time column
        return [line.split()[:5] for line in table.splitlines()[:4]]

    assert counts(summary) == counts(plan.summary())
    assert counts(summary)[1:] == [["unigram-forward", "3", "2", "0", "1"], ["questions", "2", "1", "1", "0"],
                                   ["all", "5", "3", "1", "1"]]
    assert "Every topic's last item was right." in summary


def test_clock_text():
    assert [clock_text(s) for s in (0, 59.9, 61, 1200, 3725)] == ["0:00", "0:59", "1:01", "20:00", "1:02:05"]


def test_ctrl_c_ends_a_session_with_its_summary():
    p = drills.generate("bpe-train", 3)

    class Interrupted(io.StringIO):
        def readline(self, *args):
            line = super().readline(*args)
            if not line:
                raise KeyboardInterrupt
            return line

    args = cli.build_parser()[0].parse_args(["drill", "bpe-train", "--seed", "3", "--minutes", "20"])
    out = io.StringIO()
    assert drill.run(args, stdin=Interrupted(f"{p.answer_text}\n"), stdout=out, clock=lambda: 0.0) == 0
    summary = out.getvalue().split("Summary by topic\n")[1]
    assert summary.splitlines()[1].split()[:5] == ["bpe-train", "1", "1", "0", "0"]
