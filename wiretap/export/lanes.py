"""A recording as lanes on one time axis: one lane per task, one per connection (or the stdio pipe).

What the timeline shows, independent of how it is drawn, all from the report model: the tasks, their
polls, states, open questions, the exits, and the traffic gathered in the report's one pass.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from pathlib import Path

from wiretap.analysis.activity import Activity, Channel
from wiretap.analysis.model import FindingRow, QuestionRow, Report, TaskRow, label, seconds, short_id
from wiretap.analysis.report import build_report
from wiretap.plural import plural

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
    gap_seconds: float | None = None
    """The report's longest gap (the figure shown everywhere), when ``gap`` is set."""


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
    key: str | None = None
    """The full id behind a shortened heading, listed under the picture."""
    heading: str | None = None
    """What the picture shows for the title, when shorter (a long id shortened)."""


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


def _window(question: QuestionRow, end: float) -> Window:
    close = question.closed if question.closed is not None else end
    how = question.answered_by or "never answered"
    label = f"question open {question.opened:.2f}–{close:.2f} s ({question.what}): {how}"
    between = question.longest_gap_between
    gap = (float(between[0]), float(between[1])) if between else None
    return Window(question.opened, close, label, gap, question.closed is not None, question.longest_gap)


def _task_lane(task: TaskRow, report: Report, end: float) -> Lane:
    asked = f"asked {task.requested_poll_ms} ms" if task.requested_poll_ms is not None else "asked nothing"
    polls = array("d", task.polls)
    lines = [f"{task.server} server"] if task.server else []
    lines.append(f"{plural(len(polls), 'poll')}, {asked}")
    if task.settled_interval is not None:
        lines.append(f"{label('settled_interval')} {seconds(task.settled_interval)}")
    if task.final_state:
        lines.append(task.final_state)
    states = [(s.t, task.canonical(s.state)) for s in task.states]
    tool = f" ({task.tool})" if task.tool else ""
    lane = Lane(f"task {task.id}{tool}", "\n".join(lines), "task", (task.created_at, task.terminal_at or end))
    lane.heading = f"task {short_id(task.id)}{tool}"
    if short_id(task.id) != task.id:
        lane.key = f"{short_id(task.id)} = task {task.id}"
    lane.ticks.append(Ticks("polls", polls))
    lane.states = states
    lane.marks += [Mark(s.t, s.state, "state", c) for s, (_, c) in zip(task.states, states, strict=True)]
    lane.marks += [Mark(c.t, f"cancel ({c.via})", "cancel") for c in task.cancels]
    lane.marks += [Mark(a.t, f"answer ({a.via})", "answer") for a in task.answers]
    for finding in report.findings:
        if finding.task == task.id and finding.server == task.server and finding.severity == "error":
            lane.marks += [Mark(t, finding.code, "finding") for t in finding_times(finding, task)]
    lane.windows = [_window(q, end) for q in report.questions if q.task == task.id and q.server == task.server]
    return lane


def finding_times(finding: FindingRow, task: TaskRow) -> list[float]:
    """Every instant a finding flags on its task's lane: each flagged poll, not only the first."""
    if finding.code == "poll-after-terminal" and task.terminal_at is not None and finding.times:
        told = finding.times[0]
        return [t for t in task.polls if t >= told]
    return list(finding.times[:1])


def _folded_lane(tasks: list[TaskRow], end: float) -> Lane:
    polls = array("d", sorted(t for task in tasks for t in task.polls))
    lane = Lane(f"{len(tasks)} more tasks", f"{plural(len(polls), 'poll')}, folded into one lane", "tasks", (0.0, end))
    lane.ticks.append(Ticks("polls", polls))
    return lane


def _interest(task: TaskRow, questions: list[QuestionRow]) -> tuple[int, int]:
    asked = any(q.task == task.id for q in questions)
    return (int(asked) + int(bool(task.live_at_client_exit)) + int(bool(task.cancels)), len(task.polls))


def task_lanes(report: Report) -> list[Lane]:
    """One lane per task (the most interesting ones when there are many), then task-less questions."""
    end = float(report.recording.duration or 0.0)
    tasks, questions = report.tasks, report.questions
    keep = {id(t) for t in tasks}
    if len(tasks) > MAX_TASK_LANES:
        keep = {id(t) for t in sorted(tasks, key=lambda t: _interest(t, questions), reverse=True)[: MAX_TASK_LANES - 1]}
    lanes = [_task_lane(task, report, end) for task in tasks if id(task) in keep]
    if len(keep) < len(tasks):
        lanes.append(_folded_lane([t for t in tasks if id(t) not in keep], end))
    loose = [q for q in questions if q.task is None]
    if loose:
        lane = Lane("questions", f"{len(loose)} not tied to a task", "questions", None)
        lane.windows = [_window(q, end) for q in loose]
        lanes.append(lane)
    return lanes


def _traffic_lane(title: str, channel: Channel, span: tuple[float, float] | None) -> Lane:
    lane = Lane(title, f"{len(channel.c2s)} in, {len(channel.s2c)} out", "traffic", span)
    lane.ticks += [
        Ticks("client → server", channel.c2s, role="c2s"),
        Ticks("server → client", channel.s2c, role="s2c"),
        Ticks("errors", channel.errors, role="error"),
    ]
    return lane


def traffic_lanes(activity: Activity, end: float, server: str | None = None, offset: float = 0.0) -> list[Lane]:
    """The stdio pipe as one lane, or each HTTP connection as one (or all in one, when there are many)."""
    prefix = f"{server}: " if server else ""
    channels = sorted(activity.channels.values(), key=lambda c: (c.key is None, str(c.key)))
    if activity.transport != "http":
        channel = activity.channels.get("stdio") or Channel("stdio")
        life = (
            channel.start if channel.start is not None else offset,
            channel.stop if channel.stop is not None else end,
        )
        return [_traffic_lane(f"{prefix}stdio", channel, life)]
    if len(channels) <= MAX_CONNECTION_LANES:
        lanes = []
        for channel in channels:
            span: tuple[float, float] | None = (
                (channel.start, channel.stop if channel.stop is not None else end)
                if channel.start is not None
                else None
            )
            title = f"connection {channel.key}" if channel.key is not None else "other traffic"
            lanes.append(_traffic_lane(f"{prefix}{title}", channel, span))
        return lanes
    merged = Channel("all")
    for channel in channels:
        merged.c2s.extend(channel.c2s)
        merged.s2c.extend(channel.s2c)
        merged.errors.extend(channel.errors)
    merged.c2s, merged.s2c, merged.errors = (array("d", sorted(x)) for x in (merged.c2s, merged.s2c, merged.errors))
    lane = _traffic_lane(f"{prefix}{len(channels)} connections", merged, (offset, end))
    lane.detail = f"{activity.exchanges} HTTP exchanges, {len(merged.c2s)} in, {len(merged.s2c)} out"
    return [lane]


def _moments(report: Report) -> list[Moment]:
    moments = []
    client = report.client_exit
    if client is not None:
        moments.append(Moment(client.t, f"client exit {client.t:.2f} s ({client.how})", "client-exit"))
    for part in report.parts or [report]:
        server = part.server_exit
        if server is not None:
            who = f"{part.recording.server} server" if report.parts else "server"
            moments.append(Moment(server.t, f"{who} {server.how} {server.t:.2f} s", "server-exit"))
    return moments


def timeline_of(report: Report) -> Timeline:
    """The timeline of a report: its tasks, questions and exits, and the traffic gathered in the same pass."""
    rec = report.recording
    end = float(rec.duration or 0.0)
    lanes = task_lanes(report)
    for part in report.parts or [report]:
        if part.activity is not None:
            lanes += traffic_lanes(part.activity, end, part.recording.server, part.recording.offset)
    title = f"{rec.name} ({rec.transport}) · {end:.2f} s · {plural(report.messages.total, 'message')}"
    parts = [f"started {rec.started}"]
    if report.tasks:
        parts.append(plural(len(report.tasks), "task"))
    if report.questions:
        parts.append(plural(len(report.questions), "open question"))
    if report.client_exit is not None:
        parts.append(f"client exit at {report.client_exit.t:.2f} s")
    shaded = [w for lane in lanes if lane.kind == "questions" for w in lane.windows]
    return Timeline(title, " · ".join(parts), end, lanes, _moments(report), shaded)


def timeline_of_recording(path: Path) -> Timeline:
    return timeline_of(build_report(path, timeline=True))
