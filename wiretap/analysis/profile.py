"""A client's behaviour profile: what it does on the wire, with ids, timestamps and volatile values left out.

Read off the typed report of the one pass (``profile_of``): what the client did (``Report.behaviour``)
and the report's figures (tasks, questions, cancel on exit). ``diff`` compares two profiles and
``compare`` tabulates many.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from wiretap.analysis.behaviour import Handshake, HttpTraits, ServerRequest, Shutdown, Step
from wiretap.analysis.model import Report


@dataclass(frozen=True)
class TaskTrait:
    design: str | None
    tool: str | None
    requested_poll_ms: int | None
    settled_interval: float | None
    pattern: str
    final_state: str | None
    live_at_client_exit: bool | None
    cancelled: bool


@dataclass(frozen=True)
class QuestionTrait:
    kind: str
    keys: tuple[str, ...]
    answered_by: str | None
    cancelled_instead: bool


@dataclass(frozen=True)
class Latency:
    method: str
    count: int
    p50_ms: float


@dataclass(frozen=True)
class Profile:
    name: str
    transport: str
    handshake: Handshake
    sequence: tuple[Step, ...]
    server_requests: tuple[ServerRequest, ...]
    tasks: tuple[TaskTrait, ...]
    questions: tuple[QuestionTrait, ...]
    cancel_on_exit: bool | None
    http: HttpTraits | None
    shutdown: Shutdown
    findings: tuple[str, ...]
    latency: tuple[Latency, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["sequence"] = [step.label() for step in self.sequence]
        data["shutdown"]["order"] = list(self.shutdown.order)
        return data


def _tasks(report: Report) -> tuple[TaskTrait, ...]:
    return tuple(
        TaskTrait(
            design=row.design,
            tool=row.tool,
            requested_poll_ms=row.requested_poll_ms,
            settled_interval=row.settled_interval,
            pattern=row.pattern,
            final_state=row.final_state,
            live_at_client_exit=row.live_at_client_exit,
            cancelled=bool(row.cancels),
        )
        for row in report.tasks
    )


def _questions(report: Report) -> tuple[QuestionTrait, ...]:
    return tuple(QuestionTrait(q.kind, tuple(q.keys), q.answered_by, q.cancelled_instead) for q in report.questions)


def _latency(report: Report) -> tuple[Latency, ...]:
    return tuple(Latency(row.method, row.count, float(row.p50_ms)) for row in report.latency)


def profile_of(report: Report) -> Profile:
    """The profile of a report built with ``behaviour=True`` (``build_report``)."""
    seen = report.behaviour
    if seen is None:
        raise ValueError("a behaviour profile needs a report built with behaviour=True")
    return Profile(
        name=report.recording.name or "?",
        transport=report.recording.transport or "?",
        handshake=seen.handshake,
        sequence=seen.sequence,
        server_requests=seen.server_requests,
        tasks=_tasks(report),
        questions=_questions(report),
        cancel_on_exit=report.verdicts.cancel_on_exit.sent,
        http=seen.http,
        shutdown=seen.shutdown,
        findings=tuple(sorted({f.code for f in report.findings})),
        latency=_latency(report),
    )
