"""What wiretap's report adds to a recording's trace: a span per long-running task (its polls are
already its children), state changes and open questions as its events, findings as events where they
belong (the task's span, else the recording's root), and root attributes saying how both sides ended."""

from __future__ import annotations

from typing import Any, Protocol

from wiretap.analysis.model import FindingRow, QuestionRow, Report, TaskRow
from wiretap.otel.spans import Span, SpanEvent, SpanKind


class Trace(Protocol):
    """The ids and the clock of a recording's trace (a ``mapping.RecordingMapper`` is one)."""

    trace_id: bytes
    root_id: bytes
    last_t: float
    """The recording's last time, in its own seconds."""
    task_refs: dict[str, tuple[float, float, int]]
    """Tasks calls were about: first and last time, and how many calls."""

    def ns(self, t: float) -> int:
        """A recording time as Unix nanoseconds."""
        ...

    def task_span_id(self, task_id: str) -> bytes: ...


def report_spans(mapper: Trace, root: Span, report: Report | None) -> list[Span]:
    tasks: dict[str, Span] = {}
    if report is not None:
        _endings(root, report)
        tasks = {task.id: _task_span(mapper, task) for task in report.tasks if task.id}
    for task_id, (first, last, calls) in mapper.task_refs.items():
        if task_id not in tasks:
            tasks[task_id] = _unreported_task(mapper, task_id, first, last, calls)
    for question in report.questions if report is not None else []:
        owner = tasks.get(str(question.task), root)
        owner.events += _question_events(mapper, question)
    findings = report.findings if report is not None else []
    for finding in findings:
        owner = tasks.get(str(finding.task), root)
        owner.events.append(_finding_event(mapper, finding))
    if findings:
        root.attributes["wiretap.findings"] = len(findings)
        root.attributes["wiretap.finding.codes"] = sorted({f.code for f in findings})
    for span in tasks.values():
        span.events.sort(key=lambda e: e.time_ns)
    root.events.sort(key=lambda e: e.time_ns)
    return list(tasks.values())


def _endings(root: Span, report: Report) -> None:
    for side, ending in (("client", report.client_exit), ("server", report.server_exit)):
        if ending is not None:
            root.attributes[f"wiretap.{side}.ended"] = ending.how
            root.attributes[f"wiretap.{side}.ended_at_s"] = float(ending.t)


def _task_span(mapper: Trace, task: TaskRow) -> Span:
    polls = [float(p) for p in task.polls]
    start = float(task.created_at)
    end = float(task.states[-1].t) if task.terminal and task.states else max([start, mapper.last_t])
    attributes: dict[str, Any] = {
        "wiretap.task.id": task.id,
        "wiretap.task.protocol": task.protocol,
        "wiretap.task.design": task.design,
        "wiretap.task.polls": len(polls),
        "wiretap.task.terminal": task.terminal,
        "wiretap.task.live_at_client_exit": bool(task.live_at_client_exit),
    }
    optional = {
        "wiretap.task.final_state": task.final_state,
        "wiretap.task.pattern": task.pattern or None,
        "wiretap.task.requested_poll_ms": task.requested_poll_ms,
        "wiretap.task.median_interval_s": task.intervals.median if task.intervals is not None else None,
        "gen_ai.tool.name": task.tool,
    }
    attributes.update({k: v for k, v in optional.items() if v is not None})
    events = [
        SpanEvent("wiretap.task.state", mapper.ns(float(s.t)), {"wiretap.task.state": s.state}) for s in task.states
    ]
    name = f"task {task.tool}" if task.tool else "task"
    return Span(
        mapper.trace_id, mapper.task_span_id(task.id), mapper.root_id, name, SpanKind.INTERNAL,
        mapper.ns(start), mapper.ns(end), attributes, events,
    )  # fmt: skip


def _unreported_task(mapper: Trace, task_id: str, first: float, last: float, calls: int) -> Span:
    """A task only seen being polled (unknown to the server, or from before the recording began)."""
    attributes: dict[str, Any] = {
        "wiretap.task.id": task_id,
        "wiretap.task.polls": calls,
        "wiretap.task.reported": False,
    }
    return Span(
        mapper.trace_id, mapper.task_span_id(task_id), mapper.root_id, "task", SpanKind.INTERNAL,
        mapper.ns(first), mapper.ns(last), attributes,
    )  # fmt: skip


def _question_events(mapper: Trace, question: QuestionRow) -> list[SpanEvent]:
    attributes: dict[str, Any] = {
        "wiretap.question.kind": question.kind,
        "wiretap.question.keys": [str(k) for k in question.keys],
        "wiretap.question.polls_inside": len(question.polls_inside),
    }
    if question.longest_gap is not None:
        attributes["wiretap.question.longest_gap_s"] = float(question.longest_gap)
    if question.answered_by is not None:
        attributes["wiretap.question.answered_by"] = question.answered_by
    events = [SpanEvent("wiretap.question.opened", mapper.ns(float(question.opened)), attributes)]
    if question.closed is not None:
        events.append(SpanEvent("wiretap.question.closed", mapper.ns(float(question.closed)), dict(attributes)))
    return events


def _finding_event(mapper: Trace, finding: FindingRow) -> SpanEvent:
    attributes: dict[str, Any] = {
        "wiretap.finding.code": finding.code,
        "wiretap.finding.severity": finding.severity,
        "wiretap.finding.message": finding.message,
        "wiretap.finding.count": finding.count or 1,
    }
    return SpanEvent("wiretap.finding", mapper.ns(finding.times[0] if finding.times else 0.0), attributes)
