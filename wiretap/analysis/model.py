"""The report of a recording as a typed model: what every renderer reads (text, Markdown, JSON, HTML, SVG,
``check``). ``Report.to_dict()`` is the report JSON, a public contract (docs/report.md: "Report JSON").

Every figure a report shows has one name here (the JSON key) and one label (``FIGURES``): the text
tables, the HTML page and the SVG timeline all label it the same way.

Why one module: the report JSON is one public contract with one version (``REPORT_FORMAT``); the
schema generator reads every type of it from this one namespace, and a reader of the contract finds
all of it in one place.
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from wiretap.analysis.activity import Activity
from wiretap.analysis.behaviour import Behaviour
from wiretap.analysis.headless import cancelled_at_once
from wiretap.analysis.states import TERMINAL, a2a_state, mcp_state
from wiretap.analysis.timeline import Row

REPORT_FORMAT = 1

FIGURES: dict[str, str] = {
    "settled_interval": "settled cadence",
    "settled_floor": "fastest settled interval",
    "median_interval": "median of all intervals",
    "longest_gap": "longest gap",
    "cadence_outside": "cadence outside",
}
"""JSON name → the one label every renderer uses for that figure."""


def label(figure: str) -> str:
    return FIGURES[figure]


SHORT_ID = 14
"""Ids longer than this are shortened where room is short (``3f2a9c01…``), with a key giving them in full."""


def short_id(full: str) -> str:
    """A long id as a narrow table or a picture names it: its first block, else its start."""
    if len(full) <= SHORT_ID:
        return full
    block = full.split("-")[0]
    return (block if 4 <= len(block) < SHORT_ID else full[: SHORT_ID - 2]) + "…"


def seconds(value: float | None) -> str:
    """A figure in seconds, as every renderer spells it."""
    return "—" if value is None else f"{value:.2f} s"


@dataclass
class Capped:
    """The recording reached its size cap (--max-size): from ``since`` on, the traffic passed whole but was
    counted, not stored, so whatever came later (polls, answers, task states) is missing from the report."""

    since: float
    max_size: int | None
    messages: int | None
    """Messages not stored (None: the recording has no end event that counted them)."""
    events: int | None
    """Other events not stored (stderr lines, HTTP heads, SSE comments…)."""
    bytes: int | None
    """Bytes the events not stored would have taken in the recording."""


@dataclass
class RecordingInfo:
    source: str
    name: str | None
    transport: str | None
    started: str | None
    duration: float | None
    events: int
    skipped_lines: int
    server: str | None = field(default=None, metadata={"omit_none": True})
    """The server's name in its session (None for a lone recording)."""
    offset: float = 0.0
    """Seconds from the session's t = 0 (the client's start) to this recording's t = 0."""
    incomplete: str | None = field(default=None, metadata={"omit_none": True})
    """Why the recording is not complete (still being written, or without an end event); None when it is."""
    capped: Capped | None = field(default=None, metadata={"omit_none": True})
    """Present when the recording reached its size cap."""
    imported: str | None = field(default=None, metadata={"omit_none": True})
    """For a recording rebuilt from a client's logs (``wiretap import``), where from (``claude-code``)."""


@dataclass
class MessageCounts:
    c2s: int
    s2c: int
    raw: int
    other: dict[str, int] = field(default_factory=dict)
    """Bodies that are not JSON-RPC (nor A2A REST) messages, by what they are (``agent card``, ``202 Accepted``)."""

    @property
    def total(self) -> int:
        return self.c2s + self.s2c


@dataclass
class LatencyRow:
    method: str
    count: int
    errors: int
    p50_ms: float
    p95_ms: float
    max_ms: float
    server: str | None = field(default=None, metadata={"omit_none": True})


@dataclass
class ClientExit:
    t: float
    how: str
    """``stdin closed``, ``SIGINT``…, ``last connection closed``, or ``client exited`` (session manifest)."""
    evidence: list[str]


@dataclass
class ServerExit:
    t: float
    how: str
    status: int | None
    after_client_exit: float | None


@dataclass
class Spread:
    count: int
    min: float
    median: float
    p95: float
    max: float


@dataclass
class StateAt:
    t: float
    state: str


@dataclass
class Via:
    t: float
    via: str


@dataclass
class Refusal:
    t: float
    via: str
    error: int | None


@dataclass
class PollStep:
    """One poll of an A2A task, and how long the client waited before it and for it."""

    t: float
    """When the client sent the poll (GetTask)."""
    gap: float | None
    """Seconds since the previous poll was sent."""
    step: float | None
    """Seconds since the previous poll ended (answered, or abandoned by the client): the client's back-off
    step; None when the previous poll had not ended."""
    waited: float | None
    """Seconds from the poll to its answer or to the client abandoning it; None when neither came."""
    outcome: str
    """``answered``, ``error``, ``abandoned`` (the client closed its exchange unanswered) or ``unanswered``."""
    error: int | None = field(default=None, metadata={"omit_none": True})


@dataclass
class PollSchedule:
    """How a client polled an A2A task: its back-off steps, the polls that failed, and where it gave up."""

    steps: list[PollStep]
    back_off: str
    """The back-off steps as a pattern (``0.50, 1.00, 2.00, 4.00, 5.00 ×7 s``)."""
    failed: int
    """Polls that failed: answered with an error, abandoned by the client, or never answered."""
    longest_failed_run: int
    gave_up_at: float | None
    """When the client gave up on the task: its last poll failed and it polled no more although the task had
    not ended (when it abandoned that poll; else when it sent it). None when it did not give up."""
    last_poll_at: float | None
    failed_before_giving_up: int | None
    """The failed polls in a row that ended with giving up."""


@dataclass
class TaskRow:
    protocol: str
    design: str
    id: str
    tool: str | None
    created_at: float
    seen_first_by_poll: bool
    requested_poll_ms: int | None
    applied_poll_ms: int | None
    polls: list[float]
    first_poll_after: float | None
    intervals: Spread | None
    pattern: str
    settled_interval: float | None
    failed_polls: int
    states: list[StateAt]
    final_state: str | None
    terminal: bool
    live_at_client_exit: bool | None
    cancels: list[Via]
    cancelled_by_client_at: float | None
    refused: list[Refusal]
    answers: list[Via]
    median_interval: float | None = None
    """The median of every interval between polls (back-off and open questions included)."""
    settled_floor: float | None = field(default=None, metadata={"omit_none": True})
    """The shortest settled interval: the cadence the client schedules, as a timer fires late, never early."""
    server: str | None = field(default=None, metadata={"omit_none": True})
    poll_schedule: PollSchedule | None = field(default=None, metadata={"omit_none": True})
    """For a polled A2A task: the back-off steps, failed polls and the give-up point."""
    cadence: Sequence[float] = field(default_factory=lambda: array("d"), metadata={"json": False})
    """The intervals between polls that span no open question: the client's own cadence (``check``); packed,
    as a long recording's tasks hold one per poll."""

    def canonical(self, raw: str) -> str:
        return (a2a_state(raw) if self.protocol == "a2a" else mcp_state(raw)).canonical

    @property
    def terminal_at(self) -> float | None:
        return next((s.t for s in self.states if self.canonical(s.state) in TERMINAL), None)


@dataclass
class QuestionRow:
    kind: str
    task: str | None
    keys: list[str]
    opened: float
    closed: float | None
    answered_by: str | None
    cancelled_instead: bool
    polls_inside: list[float]
    longest_gap: float | None
    longest_gap_between: list[float] | None
    cadence_outside: float | None
    server: str | None = field(default=None, metadata={"omit_none": True})

    @property
    def what(self) -> str:
        return self.task or ", ".join(self.keys) or self.kind

    @property
    def cancelled_at_once(self) -> bool:
        return cancelled_at_once(self.opened, self.closed, self.cancelled_instead, self.polls_inside)


@dataclass
class Verdict:
    verdict: str
    evidence: list[str]


@dataclass
class PollVerdict(Verdict):
    median_interval: float | None = None
    settled_interval: float | None = None
    requested_poll_ms: int | None = None


@dataclass
class CancelVerdict(Verdict):
    live_tasks: list[str] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    sent: bool | None = None


@dataclass
class QuestionVerdict(Verdict):
    longest_gap: float | None = None


@dataclass
class ShutdownVerdict(Verdict):
    order: list[str] = field(default_factory=list)
    """The shutdown steps in order (the client's signals and stdin close, the server's end)."""
    server: str | None = None
    """How the server ended."""
    orphaned: bool | None = None
    """None when it cannot be told (no session manifest)."""
    recording_complete: bool = True


@dataclass
class Verdicts:
    poll_intervals: PollVerdict
    cancel_on_exit: CancelVerdict
    elicitation_gaps: QuestionVerdict
    shutdown: ShutdownVerdict | None = field(default=None, metadata={"omit_none": True})
    a2a_back_off: Verdict | None = field(default=None, metadata={"omit_none": True})
    """How the client backed off polling A2A tasks and when it gave up on them (only with polled A2A tasks)."""

    TITLES = (
        ("poll_intervals", "Poll intervals"),
        ("a2a_back_off", "Back-off and giving up (A2A)"),
        ("cancel_on_exit", "Cancel on exit"),
        ("elicitation_gaps", "Polling while a question was open"),
        ("shutdown", "Shutdown"),
    )

    def titled(self) -> list[tuple[str, str, Verdict]]:
        return [(key, title, verdict) for key, title in self.TITLES if (verdict := getattr(self, key)) is not None]


@dataclass
class HeaderMismatch:
    """A 2026-07-28 request header that does not say what the JSON-RPC body says (header-body-mismatch)."""

    header: str
    """``Mcp-Method``, ``Mcp-Name`` or ``MCP-Protocol-Version``."""
    sent: str | None
    """The header as sent; None when it was missing."""
    decoded: str | None
    """What it stands for once decoded (``=?base64?…?=``); None when missing or undecodable."""
    problem: str | None
    """How it breaks the encoding rules, if it does."""
    field: str
    """The body field it mirrors: ``method``, ``params.name``, ``params.uri``, ``params.taskId``, ``params._meta…``."""
    body: str
    """That field's value."""
    method: str
    id: Any
    t: float
    """When the request's body was recorded."""
    status: int | None
    """The HTTP status the server answered with; None when none was recorded."""
    status_at: float | None
    error_code: int | None
    """The JSON-RPC error code of its answer, if an error."""
    error_at: float | None


@dataclass
class OAuthStep:
    t: float
    step: str
    """challenge, resource metadata, server metadata, registration, authorization, token, refresh."""
    method: str
    path: str
    status: int | None
    detail: str | None = field(default=None, metadata={"omit_none": True})
    """Why it failed (the server's ``error`` and ``error_description``), or what it said."""


@dataclass
class AuthorizationRow:
    steps: list[OAuthStep]
    resource: str | None = None
    """The protected resource metadata's ``resource``."""
    authorization_servers: list[str] = field(default_factory=list)
    scopes: list[str] = field(default_factory=list)
    grants: list[str] = field(default_factory=list)
    """The grant types of the token requests, in order."""
    refreshed: list[float] = field(default_factory=list)
    """When a token was refreshed (the times of ``grant_type=refresh_token`` requests)."""
    server: str | None = field(default=None, metadata={"omit_none": True})


@dataclass
class FindingRow:
    code: str
    severity: str
    message: str
    advice: str
    times: list[float]
    task: str | None
    count: int
    server: str | None = field(default=None, metadata={"omit_none": True})
    header: HeaderMismatch | None = field(default=None, metadata={"omit_none": True})
    """For ``header-body-mismatch``: the header, its decoded value and the body's, and the server's answer."""


@dataclass
class ToolCall:
    """One ``tools/call`` as the wire shows it (``analysis.tool_calls``)."""

    t: float
    id: Any
    tool: str
    arguments: dict[str, Any]
    declared_tasks: bool
    """The call said the client takes a task for an answer (``params.task`` or the tasks extension)."""
    progress_token: bool
    answered_at: float | None = None
    outcome: str = "unanswered"
    """``inline``, ``task``, ``error`` or ``unanswered``."""
    task: str | None = None
    error: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    """The ``_meta`` of the answer (a task's and the result's, merged)."""
    progress: list[float] = field(default_factory=list)
    progress_count: int = 0
    cancelled_at: float | None = None
    """When the client sent ``notifications/cancelled`` for it."""
    server: str | None = None


@dataclass
class Report:
    """One recording's (or one session's) report. Fields marked ``json: False`` in their metadata are for
    renderers only (the traffic the timeline draws, the rows the HTML page lists)."""

    report_format: int
    recording: RecordingInfo
    messages: MessageCounts
    latency: list[LatencyRow]
    poll_rule: str
    client_exit: ClientExit | None
    server_exit: ServerExit | None
    tasks: list[TaskRow]
    questions: list[QuestionRow]
    verdicts: Verdicts
    findings: list[FindingRow]
    servers: list[str] = field(default_factory=list)
    """The servers whose recordings this report covers (a session); empty for a lone recording."""
    authorization: list[AuthorizationRow] = field(default_factory=list)
    """The OAuth authorization flow each recording shows (a session: one per server that had one)."""
    activity: Activity | None = field(default=None, metadata={"json": False})
    """The traffic per connection, for the timeline."""
    rows: list[Row] = field(default_factory=list, metadata={"json": False})
    """Timeline rows kept for the HTML page, at most its limit."""
    rows_left_out: int = field(default=0, metadata={"json": False})
    methods: list[tuple[str, str]] = field(default_factory=list, metadata={"json": False})
    """(direction, method) of every request and notification, in order, when asked for (``check``)."""
    parts: list[Report] = field(default_factory=list, metadata={"json": False})
    """A session's report: each server's own report, on the session's clock."""
    behaviour: Behaviour | None = field(default=None, metadata={"json": False})
    """What the client did on the wire, when asked for (a behaviour profile)."""
    client: str | None = field(default=None, metadata={"json": False})
    """The client that ran: its ``clientInfo`` name, else the session's wrapped client."""
    client_version: str | None = field(default=None, metadata={"json": False})
    calls: list[ToolCall] = field(default_factory=list, metadata={"json": False})
    """Every ``tools/call`` (at most ``tool_calls.MAX_CALLS`` per recording)."""

    def to_dict(self) -> dict[str, Any]:
        return {f.name: plain(getattr(self, f.name)) for f in fields(self) if f.metadata.get("json", True)}


def plain(value: Any) -> Any:
    """A part of the report as its JSON has it (``to_dict``'s rule: renderer-only fields left out)."""
    if is_dataclass(value) and not isinstance(value, type):
        found = {}
        for name, omit_none in _json_fields(type(value)):
            field_value = getattr(value, name)
            if not (omit_none and field_value is None):
                found[name] = plain(field_value)
        return found
    if isinstance(value, list | tuple):
        if all(type(v) in _SCALARS for v in value):  # a task's poll times: no call per value
            return list(value)
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


_SCALARS = frozenset({str, int, float, bool, type(None)})


@functools.cache
def _json_fields(cls: type) -> tuple[tuple[str, bool], ...]:
    """The fields of a report part its JSON holds, and whether each is left out when None."""
    return tuple((f.name, bool(f.metadata.get("omit_none"))) for f in fields(cls) if f.metadata.get("json", True))
