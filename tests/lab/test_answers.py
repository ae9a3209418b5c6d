"""The questions investigators ask, answered from an investigation's rows and the client's known rules."""

from __future__ import annotations

from support import paths

from wiretap.analysis.client_rules import Behaviour, ClientRule
from wiretap.analysis.report import build_report
from wiretap.lab.answers import answer_questions
from wiretap.lab.investigation_model import Answer, Row


def by_question(answers: list[Answer]) -> dict[str, Answer]:
    return {a.question: a for a in answers}


def no_rule(behaviour: Behaviour) -> ClientRule | None:
    return None


def test_a_question_no_condition_tested_is_not_exercised_and_has_no_verdict() -> None:
    report = build_report(paths.RECORDINGS / "demo.jsonl")
    answers = by_question(answer_questions([], no_rule, report))
    headless = answers["Does it cancel at input_required when headless?"]
    assert (headless.seen, headless.agrees, headless.rule) == ("not exercised", None, None)
    assert answers["Does a one-shot run answer inline?"].seen.startswith("not exercised")


def test_a_headless_cancel_answers_its_question_and_agrees_only_if_every_row_does() -> None:
    report = build_report(paths.RECORDINGS / "demo.jsonl")
    rows = [
        Row("input-required", "ask", "input_required", "cancelled at once", "cancels at input_required", agrees=True),
        Row("input-required", "ask", "input_required again", "cancelled", "cancels at input_required", agrees=False),
        Row("poll-interval", "poll", "pollIntervalMs 500", "polled every 0.50 s", "as asked", agrees=True),
    ]
    answers = by_question(answer_questions(rows, no_rule, report))
    headless = answers["Does it cancel at input_required when headless?"]
    assert headless.seen == "input_required: cancelled at once; input_required again: cancelled"
    assert headless.agrees is False
    poll = answers["Does it poll at pollIntervalMs?"]
    assert (poll.seen, poll.agrees) == ("pollIntervalMs 500: polled every 0.50 s", True)
