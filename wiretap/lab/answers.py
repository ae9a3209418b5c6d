"""The questions investigators ask of a client (does it poll as asked, cancel when headless, stop polling
while a form is open…), answered from an investigation's rows for the client that ran."""

from __future__ import annotations

from collections.abc import Callable

from wiretap.analysis.client_rules import Behaviour, ClientRule
from wiretap.analysis.model import Report
from wiretap.lab.investigation_model import Answer, Row


def answer_questions(rows: list[Row], rule: Callable[[Behaviour], ClientRule | None], report: Report) -> list[Answer]:
    """The questions investigators ask, answered from the rows; ``rule`` gives the client's known rules."""

    def rows_of(*names: str) -> list[Row]:
        return [r for r in rows if r.condition in names]

    def seen(found: list[Row], text: str | None = None) -> str:
        return text if text is not None else "; ".join(f"{r.asked}: {r.did}" for r in found) or "not exercised"

    def agrees(found: list[Row]) -> bool | None:
        said = [r.agrees for r in found if r.agrees is not None]
        return all(said) if said else None

    def rule_text(behaviour: Behaviour) -> str | None:
        known = rule(behaviour)
        return f"{known.rule} (seen on {known.since})" if known is not None else None

    poll = rule(Behaviour.POLL)
    polled = [r for r in rows_of("poll-interval", "polling") if r.agrees is not None or "polled every" in r.did]
    asked = [r for r in polled if "pollIntervalMs" in r.asked and "clamped" not in r.verdict]
    limits = [r for r in polled if r not in asked]
    clamp = None
    if poll is not None:
        bounds = []
        if poll.floor_ms is not None or poll.ceiling_ms is not None:
            bounds.append(f"clamped to {poll.floor_ms or 0}–{poll.ceiling_ms or '∞'} ms")
        if poll.default_ms is not None:
            bounds.append(f"{poll.default_ms} ms when none is given")
        clamp = "; ".join(bounds) or None
    inline = [r for r in rows if r.verdict.startswith("a one-shot call")]
    headless = [r for r in rows_of("input-required", "headless question") if r.verdict.startswith("cancels")]
    forms = [r for r in rows_of("input-required", "open form") if r not in headless]
    exits = rows_of("until-cancelled", "exit")
    forgotten = rows_of("forgotten-task")
    found = [
        Answer("Does it poll at pollIntervalMs?", rule_text(Behaviour.POLL), seen(asked), agrees(asked)),
        Answer("Its clamp and its default?", clamp, seen(limits), agrees(limits)),
        Answer(
            "Does a one-shot run answer inline?",
            None,
            seen(inline) if inline else "not exercised (every task condition was answered as a task)",
        ),
        Answer(
            "Does it cancel at input_required when headless?",
            rule_text(Behaviour.HEADLESS_QUESTION),
            seen(headless),
            agrees(headless),
        ),
        Answer(
            "Does it stop polling while a form is open, and how does it answer?",
            rule_text(Behaviour.OPEN_FORM),
            seen(forms),
            agrees(forms),
        ),
        Answer(
            "Does it cancel live tasks on exit, and what happens to a stdio server?",
            rule_text(Behaviour.EXIT_WITH_TASK),
            seen(exits),
            agrees(exits),
        ),
        Answer("How long does it keep asking for a forgotten task id?", None, seen(forgotten)),
    ]
    back_off = report.verdicts.a2a_back_off
    if back_off is not None:
        found.append(Answer("How does it back off and give up on a silent A2A worker?", None, back_off.verdict))
    return found
