"""A client's behaviour profile: what it does on the wire, with ids, timestamps and volatile values left out.

Built sans-IO from a recording's events (``ProfileBuilder.feed``) plus the figures of the public report
JSON (tasks, questions, cancel on exit). ``diff`` compares two profiles and ``compare`` tabulates many.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from wiretap.analysis.behaviour import Handshake, HttpTraits, ServerRequest, Shutdown, Step
from wiretap.analysis.observe import Observer
from wiretap.recording.events import Event


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


def _tasks(report: dict[str, Any]) -> tuple[TaskTrait, ...]:
    return tuple(
        TaskTrait(
            design=row.get("design"),
            tool=row.get("tool"),
            requested_poll_ms=row.get("requested_poll_ms"),
            settled_interval=row.get("settled_interval"),
            pattern=str(row.get("pattern") or ""),
            final_state=row.get("final_state"),
            live_at_client_exit=row.get("live_at_client_exit"),
            cancelled=bool(row.get("cancels")),
        )
        for row in report.get("tasks") or []
    )


def _questions(report: dict[str, Any]) -> tuple[QuestionTrait, ...]:
    return tuple(
        QuestionTrait(
            kind=str(q.get("kind")),
            keys=tuple(q.get("keys") or ()),
            answered_by=q.get("answered_by"),
            cancelled_instead=bool(q.get("cancelled_instead")),
        )
        for q in report.get("questions") or []
    )


def _findings(report: dict[str, Any]) -> tuple[str, ...]:
    return tuple(sorted({str(f.get("code")) for f in report.get("findings") or []}))


def _latency(report: dict[str, Any]) -> tuple[Latency, ...]:
    return tuple(
        Latency(str(row["method"]), int(row["count"]), float(row["p50_ms"])) for row in report.get("latency") or []
    )


class ProfileBuilder:
    """Feed a recording's events, then ``profile(header, report)``; or hand it the report's own observer."""

    def __init__(self, observer: Observer | None = None) -> None:
        self.observer = observer or Observer()

    def feed(self, event: Event) -> None:
        self.observer.feed(event)

    def profile(self, header: dict[str, Any], report: dict[str, Any], *, client_exited: float | None = None) -> Profile:
        seen = self.observer
        cancel = (report.get("verdicts") or {}).get("cancel_on_exit") or {}
        transport = str(header.get("transport") or "?")
        return Profile(
            name=str(header.get("name") or "?"),
            transport=transport,
            handshake=seen.handshake(),
            sequence=seen.steps(),
            server_requests=seen.server_requests(),
            tasks=_tasks(report),
            questions=_questions(report),
            cancel_on_exit=cancel.get("sent"),
            http=seen.http_traits() if transport == "http" else None,
            shutdown=seen.shutdown(client_exited),
            findings=_findings(report),
            latency=_latency(report),
        )
