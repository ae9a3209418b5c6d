"""A recording as lanes on one time axis: one lane per task, one per connection (or the stdio pipe).

What the timeline shows, independent of how it is drawn: the analysis report gives the tasks, their
polls, states, open questions and the client's exit; a pass over the events gives the traffic.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wiretap.analysis.report import report_recording
from wiretap.analysis.states import a2a_state, mcp_state
from wiretap.model import Direction, Event, Kind
from wiretap.recording.reader import open_recording

MAX_TASK_LANES = 12
"""More tasks than this: the busiest are drawn one lane each, the rest folded into one lane."""
MAX_CONNECTION_LANES = 6
"""More HTTP connections than this: their traffic shares one lane."""


@dataclass
class Ticks:
    """Instants of one kind in a lane: polls, or messages one way."""

    name: str
    times: array[float] = field(default_factory=lambda: array("d"))
    role: str = "poll"
    """``poll``, ``c2s``, ``s2c`` or ``error``: how the renderer draws them."""


@dataclass
class Mark:
    t: float
    label: str
    role: str
    """``state`` (with ``state`` set), ``cancel``, ``answer`` or ``finding``."""
    state: str | None = None
    """The canonical state (working, input_required, completed…), for its colour."""


@dataclass
class Window:
    """A question open to the user, and the longest gap in polling while it was."""

    start: float
    end: float
    label: str
    gap: tuple[float, float] | None = None
    closed: bool = True


@dataclass
class Lane:
    title: str
    detail: str
    """One or more lines (``\\n``) under the title."""
    kind: str
    """``task``, ``tasks`` (several folded), ``questions`` or ``traffic``."""
    span: tuple[float, float] | None = None
    ticks: list[Ticks] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)
    states: list[tuple[float, str]] = field(default_factory=list)
    """(since, canonical state) for the state band along the lane's life."""


@dataclass
class Moment:
    """An instant across every lane: the client going away, the server exiting."""

    t: float
    label: str
    role: str


@dataclass
class Timeline:
    title: str
    subtitle: str
    duration: float
    lanes: list[Lane]
    moments: list[Moment]
    shaded: list[Window]
    """Questions not tied to a task: shaded across every lane."""


def _canonical(protocol: str, raw: str) -> str:
    return (a2a_state(raw) if protocol == "a2a" else mcp_state(raw)).canonical


def _window(question: dict[str, Any], end: float) -> Window:
    closed = question["closed"]
    close = closed if closed is not None else end
    what = question["task"] or ", ".join(question["keys"]) or question["kind"]
    how = question["answered_by"] or "never answered"
    label = f"question open {question['opened']:.2f}–{close:.2f} s ({what}): {how}"
    between = question["longest_gap_between"]
    gap = (float(between[0]), float(between[1])) if between else None
    return Window(float(question["opened"]), float(close), label, gap, closed is not None)


def _task_lane(
    task: dict[str, Any], questions: list[dict[str, Any]], findings: list[dict[str, Any]], end: float
) -> Lane:
    protocol = task["protocol"]
    tool = f" ({task['tool']})" if task["tool"] else ""
    asked = f"asked {task['requested_poll_ms']} ms" if task["requested_poll_ms"] is not None else "asked nothing"
    polls = array("d", task["polls"])
    detail = f"{len(polls)} polls, {asked}"
    if task["intervals"]:
        detail += f"\nmedian {task['intervals']['median']:.2f} s"
    if task["final_state"]:
        detail += f"{', ' if task['intervals'] else chr(10)}{task['final_state']}"
    states = [(float(s["t"]), _canonical(protocol, s["state"])) for s in task["states"]]
    terminal_at = next((t for t, s in states if s in ("completed", "failed", "cancelled", "rejected")), None)
    lane = Lane(f"task {task['id']}{tool}", detail, "task", (float(task["created_at"]), terminal_at or end))
    lane.ticks.append(Ticks("polls", polls))
    lane.states = states
    lane.marks += [
        Mark(float(s["t"]), s["state"], "state", c) for s, (_, c) in zip(task["states"], states, strict=True)
    ]
    lane.marks += [Mark(float(c["t"]), f"cancel ({c['via']})", "cancel") for c in task["cancels"]]
    lane.marks += [Mark(float(a["t"]), f"answer ({a['via']})", "answer") for a in task["answers"]]
    for finding in findings:
        if finding["task"] == task["id"] and finding["severity"] == "error" and finding["times"]:
            lane.marks.append(Mark(float(finding["times"][0]), finding["code"], "finding"))
    lane.windows = [_window(q, end) for q in questions if q["task"] == task["id"]]
    return lane


def _folded_lane(tasks: list[dict[str, Any]], end: float) -> Lane:
    polls = array("d", sorted(t for task in tasks for t in task["polls"]))
    lane = Lane(f"{len(tasks)} more tasks", f"{len(polls)} polls, folded into one lane", "tasks", (0.0, end))
    lane.ticks.append(Ticks("polls", polls))
    return lane


def _interest(task: dict[str, Any], questions: list[dict[str, Any]]) -> tuple[int, int]:
    asked = any(q["task"] == task["id"] for q in questions)
    return (int(asked) + int(bool(task["live_at_client_exit"])) + int(bool(task["cancels"])), len(task["polls"]))


def task_lanes(report: dict[str, Any]) -> list[Lane]:
    """One lane per task (the most interesting ones when there are many), then task-less questions."""
    end = float(report["recording"]["duration"] or 0.0)
    tasks, questions, findings = report["tasks"], report["questions"], report["findings"]
    keep = {id(t) for t in tasks}
    if len(tasks) > MAX_TASK_LANES:
        keep = {id(t) for t in sorted(tasks, key=lambda t: _interest(t, questions), reverse=True)[: MAX_TASK_LANES - 1]}
    lanes = [_task_lane(task, questions, findings, end) for task in tasks if id(task) in keep]
    if len(keep) < len(tasks):
        lanes.append(_folded_lane([t for t in tasks if id(t) not in keep], end))
    loose = [q for q in questions if q["task"] is None]
    if loose:
        lane = Lane("questions", f"{len(loose)} not tied to a task", "questions", None)
        lane.windows = [_window(q, end) for q in loose]
        lanes.append(lane)
    return lanes


@dataclass
class _Traffic:
    lane: Lane
    c2s: Ticks
    s2c: Ticks
    errors: Ticks


def _traffic(title: str, detail: str, span: tuple[float, float] | None) -> _Traffic:
    lane = Lane(title, detail, "traffic", span)
    c2s, s2c = Ticks("client → server", role="c2s"), Ticks("server → client", role="s2c")
    errors = Ticks("errors", role="error")
    lane.ticks += [c2s, s2c, errors]
    return _Traffic(lane, c2s, s2c, errors)


def _is_error(event: Event) -> bool:
    msg = event.get("msg")
    if isinstance(msg, dict):
        return "error" in msg
    return False


def traffic_lanes(events: Iterable[Event], transport: str, end: float) -> list[Lane]:
    """The stdio pipe as one lane, or each HTTP connection as one (or all in one, when there are many)."""
    if transport != "http":
        return _stdio_lane(events, end)
    conn_of: dict[int, Any] = {}
    spans: dict[Any, list[float]] = {}
    times: dict[Any, tuple[array[float], array[float], array[float]]] = {}
    exchanges = 0
    for event in events:
        kind, t = event.get("kind"), float(event.get("t", 0.0))
        if kind == Kind.CONNECTION:
            span = spans.setdefault(event.get("conn"), [t, end])
            if event.get("state") == "closed":
                span[1] = t
        elif kind == Kind.HTTP_REQUEST and isinstance(event.get("ex"), int):
            conn_of[event["ex"]] = event.get("conn")
            exchanges += 1
        elif kind == Kind.HTTP_RESPONSE and int(event.get("status", 0)) >= 400:
            times.setdefault(conn_of.get(event.get("ex", -1)), (array("d"), array("d"), array("d")))[2].append(t)
        elif kind == Kind.MESSAGE:
            c2s, s2c, errors = times.setdefault(conn_of.get(event.get("ex", -1)), (array("d"), array("d"), array("d")))
            (c2s if event.get("dir") == Direction.C2S.value else s2c).append(t)
            if _is_error(event):
                errors.append(t)
    conns = sorted({*spans, *times}, key=lambda c: (c is None, str(c)))
    if len(conns) <= MAX_CONNECTION_LANES:
        lanes = []
        for conn in conns:
            c2s, s2c, errors = times.get(conn, (array("d"), array("d"), array("d")))
            life = spans.get(conn)
            title = f"connection {conn}" if conn is not None else "other traffic"
            lane = _traffic(title, f"{len(c2s)} in, {len(s2c)} out", (life[0], life[1]) if life else None)
            lane.c2s.times, lane.s2c.times, lane.errors.times = c2s, s2c, errors
            lanes.append(lane.lane)
        return lanes
    merged = _traffic(f"{len(conns)} connections", f"{exchanges} HTTP exchanges", (0.0, end))
    for c2s, s2c, errors in times.values():
        merged.c2s.times.extend(c2s)
        merged.s2c.times.extend(s2c)
        merged.errors.times.extend(errors)
    for ticks in (merged.c2s, merged.s2c, merged.errors):
        ticks.times = array("d", sorted(ticks.times))
    merged.lane.detail = f"{exchanges} HTTP exchanges, {len(merged.c2s.times)} in, {len(merged.s2c.times)} out"
    return [merged.lane]


def _stdio_lane(events: Iterable[Event], end: float) -> list[Lane]:
    traffic = _traffic("stdio", "", None)
    start, stop = 0.0, end
    for event in events:
        kind, t = event.get("kind"), float(event.get("t", 0.0))
        if kind == Kind.MESSAGE:
            (traffic.c2s if event.get("dir") == Direction.C2S.value else traffic.s2c).times.append(t)
            if _is_error(event):
                traffic.errors.times.append(t)
        elif kind == Kind.SPAWN:
            start = t
        elif kind == Kind.EXIT:
            stop = t
    traffic.lane.span = (start, stop)
    traffic.lane.detail = f"{len(traffic.c2s.times)} in, {len(traffic.s2c.times)} out"
    return [traffic.lane]


def _moments(report: dict[str, Any]) -> list[Moment]:
    moments = []
    client = report["client_exit"]
    if client is not None:
        moments.append(Moment(float(client["t"]), f"client exit {client['t']:.2f} s ({client['how']})", "client-exit"))
    server = report["server_exit"]
    if server is not None:
        moments.append(Moment(float(server["t"]), f"server {server['how']} {server['t']:.2f} s", "server-exit"))
    return moments


def timeline_from(report: dict[str, Any], events: Iterable[Event]) -> Timeline:
    """The timeline of a recording from its report and its events (streamed once)."""
    rec = report["recording"]
    end = float(rec["duration"] or 0.0)
    lanes = task_lanes(report)
    lanes += traffic_lanes(events, str(rec["transport"]), end)
    messages = report["messages"]
    title = (
        f"{rec['name']} ({rec['transport']}) · {end:.2f} s · {messages.get('c2s', 0) + messages.get('s2c', 0)} messages"
    )
    parts = [f"started {rec['started']}"]
    if report["tasks"]:
        parts.append(f"{len(report['tasks'])} task(s)")
    if report["questions"]:
        parts.append(f"{len(report['questions'])} open question(s)")
    if report["client_exit"] is not None:
        parts.append(f"client exit at {report['client_exit']['t']:.2f} s")
    shaded = [w for lane in lanes if lane.kind == "questions" for w in lane.windows]
    return Timeline(title, " · ".join(parts), end, lanes, _moments(report), shaded)


def timeline_of(report: dict[str, Any]) -> Timeline:
    """The timeline of the recording a report was made from (re-read from its source)."""
    with open_recording(Path(report["recording"]["source"])) as reader:
        return timeline_from(report, reader.events())


def timeline_of_recording(path: Path) -> Timeline:
    return timeline_of(report_recording(path))
