"""Open questions to the user (elicitations) and how the client polled while one was open.

Three shapes of question: a task in ``input_required`` (MCP) or ``TASK_STATE_INPUT_REQUIRED`` (A2A);
an ``elicitation/create`` request awaiting its answer; and, in the 2026-07-28 era, a result with
``resultType: "input_required"`` until the client retries with ``inputResponses``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from wiretap.analysis.conversation import REQUEST, RESPONSE, Message
from wiretap.analysis.headless import cancelled_at_once
from wiretap.analysis.states import INTERRUPTED
from wiretap.analysis.stats import median
from wiretap.analysis.task import Task
from wiretap.analysis.tasks import related_task
from wiretap.wire.json_values import as_dict

TASK_INPUT, ELICITATION, INPUT_REQUIRED_RESULT = (
    "task_input_required",
    "elicitation_request",
    "input_required_result",
)


@dataclass
class Question:
    kind: str
    opened: float
    closed: float | None = None
    task: str | None = None
    keys: list[str] = field(default_factory=list)
    answered_by: str | None = None
    cancelled_instead: bool = False
    polls: list[float] = field(default_factory=list)
    longest_gap: float | None = None
    longest_gap_between: tuple[float, float] | None = None
    cadence_outside: float | None = None

    def contains(self, t: float, end: float) -> bool:
        return self.opened < t < (self.closed if self.closed is not None else end)

    @property
    def cancelled_at_once(self) -> bool:
        return cancelled_at_once(self.opened, self.closed, self.cancelled_instead, self.polls)


def _actions(responses: dict[str, Any]) -> str:
    actions = sorted({str(as_dict(v).get("action", "?")) for v in responses.values()})
    return "/".join(actions)


class QuestionLog:
    """Streams over messages and keeps the questions that are not task states."""

    def __init__(self) -> None:
        self.questions: list[Question] = []
        self._mrtr_open: list[Question] = []
        self._elicitations: dict[int, Question] = {}

    def feed(self, m: Message) -> None:
        if m.kind == REQUEST and m.method == "elicitation/create" and related_task(m.params) is None:
            asked = Question(ELICITATION, m.t, keys=[str(m.params.get("message", ""))[:80]])
            self.questions.append(asked)
            self._elicitations[id(m)] = asked
        elif m.kind == RESPONSE and m.request is not None and m.request.method == "elicitation/create":
            answered = self._elicitations.pop(id(m.request), None)
            if answered is not None:
                answered.closed = m.t
                answered.answered_by = f"elicitation result: {as_dict(m.result).get('action', 'error')}"
        elif m.kind == RESPONSE and as_dict(m.result).get("resultType") == "input_required":
            keys = list(as_dict(as_dict(m.result).get("inputRequests")))
            question = Question(INPUT_REQUIRED_RESULT, m.t, keys=keys)
            self.questions.append(question)
            self._mrtr_open.append(question)
        elif m.kind == REQUEST and "inputResponses" in m.params and m.method != "tasks/update" and self._mrtr_open:
            question = self._mrtr_open.pop(0)
            question.closed = m.t
            question.answered_by = f"retry with inputResponses ({_actions(as_dict(m.params['inputResponses']))})"


def task_questions(task: Task) -> list[Question]:
    """The windows in which a task waited for input, closed by an answer, a cancel or a state change."""
    questions: list[Question] = []
    for n, (t, state) in enumerate(task.states):
        if state.canonical not in INTERRUPTED:
            continue
        later_state = next((t2 for t2, s in task.states[n + 1 :] if s.canonical not in INTERRUPTED), None)
        answer = next(((t2, via) for t2, via in task.answers if t2 >= t), None)
        cancel = next(((t2, via) for t2, via in task.cancels if t2 >= t), None)
        question = Question(TASK_INPUT, t, task=task.id, keys=task.input_keys.get(t, [state.raw]))
        candidates = [c for c in (answer, cancel) if c is not None]
        if candidates:
            first = min(candidates, key=lambda c: c[0])
            question.closed = first[0]
            question.answered_by = first[1]
            question.cancelled_instead = first is cancel
        elif later_state is not None:
            question.closed = later_state
            question.answered_by = "state changed"
        if questions and questions[-1].closed is not None and questions[-1].closed >= t:
            continue
        questions.append(question)
    return questions


def touches(a: float, b: float, windows: list[Question], end: float) -> bool:
    """Whether the interval between polls at ``a`` and ``b`` overlaps an open question."""
    return any(w.contains(a, end) or w.contains(b, end) or (a <= w.opened and b >= (w.closed or end)) for w in windows)


def measure(question: Question, tasks: list[Task], end: float, windows: list[Question]) -> None:
    """Fill in the polls inside a question's window, its longest gap, and the cadence outside."""
    relevant = [task for task in tasks if question.task is None or task.id == question.task]
    polls = sorted(t for task in relevant for t in task.polls.times if question.contains(t, end))
    question.polls = polls
    close = question.closed if question.closed is not None else end
    marks = [question.opened, *polls, close]
    gaps = [(b - a, a, b) for a, b in pairwise(marks)]
    if gaps:
        gap, start, stop = max(gaps)
        question.longest_gap, question.longest_gap_between = gap, (start, stop)
    outside = [b - a for task in relevant for a, b in pairwise(task.polls.times) if not touches(a, b, windows, end)]
    question.cadence_outside = median(outside)
    if question.cancelled_at_once:
        question.answered_by = f"{question.answered_by}, right after the question (headless client)"
