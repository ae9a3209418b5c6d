"""A client's behaviour profile: what it does on the wire, with ids, timestamps and volatile values left out.

Built sans-IO from a recording's events (``ProfileBuilder.feed``) plus the figures of the public report
JSON (tasks, questions, cancel on exit). ``diff`` compares two profiles and ``compare`` tabulates many.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from wiretap.analysis.observe import Observer
from wiretap.recording.events import Event


@dataclass(frozen=True)
class Handshake:
    method: str | None
    """``initialize``, ``server/discover``, or None when the client went straight to work (stateless HTTP)."""
    protocol_version: str | None
    era: str
    client_name: str | None
    client_version: str | None
    capabilities: dict[str, Any] | None
    meta_keys: tuple[str, ...]
    """``_meta`` keys seen on the client's requests."""
    meta_on: str
    """On how many of the client's requests ``_meta`` came: every, some, none."""
    id_types: tuple[str, ...]
    key_order: tuple[str, ...]
    """Each distinct key order of the client's requests, as ``method,params,jsonrpc,id``."""
    attempts: tuple[str, ...] = ()
    """Handshake requests in order with their outcome, e.g. ``server/discover (error -32601)``."""


@dataclass(frozen=True)
class Step:
    """Messages in flight together: their order among themselves is no behaviour."""

    items: tuple[str, ...]
    repeated: bool = False

    def label(self) -> str:
        text = " | ".join(self.items) if len(self.items) > 1 else self.items[0]
        return f"{{{text}}}" if len(self.items) > 1 else text + (" (repeated)" if self.repeated else "")


@dataclass(frozen=True)
class ServerRequest:
    method: str
    answer: str
    """``result: accept``, ``error -32601``, ``retry with inputResponses: cancel``, ``unanswered``…"""


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
class HttpTraits:
    session_id: bool
    get_stream: bool
    delete_on_exit: bool
    mcp_headers: tuple[str, ...]
    protocol_version_header: tuple[str, ...]
    """The values of ``mcp-protocol-version`` seen; empty when the client never sent it."""
    methods: tuple[str, ...]


@dataclass(frozen=True)
class ShutdownStep:
    what: str
    after: float
    """Seconds after the first step."""


@dataclass(frozen=True)
class Shutdown:
    steps: tuple[ShutdownStep, ...]
    server: str | None
    """How the server ended: ``exited with code 0``, ``was killed by SIGKILL``, or None (not seen)."""
    recording_complete: bool
    """The tap or proxy wrote its closing line (a relay killed outright cannot)."""
    orphaned: bool | None
    """The server outlived the client (known only from a session manifest)."""

    @property
    def order(self) -> tuple[str, ...]:
        return tuple(step.what for step in self.steps)


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
