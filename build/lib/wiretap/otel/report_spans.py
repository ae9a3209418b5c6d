"""What wiretap's report adds to a recording's trace: a span per long-running task (its polls are
already its children), state changes and open questions as its events, findings as events where they
belong (the task's span, else the recording's root), and root attributes saying how both sides ended."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wiretap.otel.spans import Span, SpanEvent, SpanKind

if TYPE_CHECKING:
    from wiretap.otel.mapping import RecordingMapper


def report_spans(mapper: RecordingMapper, root: Span, report: dict[str, Any]) -> list[Span]:
    _endings(root, report)
    tasks = {str(task["id"]): _task_span(mapper, task) for task in report.get("tasks") or [] if task.get("id")}
    for task_id, (first, last, calls) in mapper.task_refs.items():
        if task_id not in tasks:
            tasks[task_id] = _unreported_task(mapper, task_id, first, last, calls)
    for question in report.get("questions") or []:
        owner = tasks.get(str(question.get("task")), root)
        owner.events += _question_events(mapper, question)
    findings = report.get("findings") or []
    for finding in findings:
        owner = tasks.get(str(finding.get("task")), root)
        owner.events.append(_finding_event(mapper, finding))
    if findings:
        root.attributes["wiretap.findings"] = len(findings)
        root.attributes["wiretap.finding.codes"] = sorted({str(f.get("code")) for f in findings})
    for span in tasks.values():
        span.events.sort(key=lambda e: e.time_ns)
    root.events.sort(key=lambda e: e.time_ns)
    return list(tasks.values())


def _endings(root: Span, report: dict[str, Any]) -> None:
    for side in ("client", "server"):
        ending = report.get(f"{side}_exit")
        if isinstance(ending, dict) and isinstance(ending.get("how"), str):
            root.attributes[f"wiretap.{side}.ended"] = ending["how"]
            if isinstance(ending.get("t"), int | float):
                root.attributes[f"wiretap.{side}.ended_at_s"] = float(ending["t"])


def _task_span(mapper: RecordingMapper, task: dict[str, Any]) -> Span:
    task_id = str(task["id"])
    states = [s for s in task.get("states") or [] if isinstance(s.get("t"), int | float)]
    polls = [float(p) for p in task.get("polls") or []]
    created = task.get("created_at")
    start = float(created) if isinstance(created, int | float) else (polls or [mapper.last_t])[0]
    end = float(states[-1]["t"]) if task.get("terminal") and states else max([start, mapper.last_t])
    attributes: dict[str, Any] = {
        "wiretap.task.id": task_id,
        "wiretap.task.protocol": str(task.get("protocol") or ""),
        "wiretap.task.design": str(task.get("design") or ""),
        "wiretap.task.polls": len(polls),
        "wiretap.task.terminal": bool(task.get("terminal")),
        "wiretap.task.live_at_client_exit": bool(task.get("live_at_client_exit")),
    }
    optional = {
        "wiretap.task.final_state": task.get("final_state"),
        "wiretap.task.pattern": task.get("pattern") or None,
        "wiretap.task.requested_poll_ms": task.get("requested_poll_ms"),
        "wiretap.task.median_interval_s": (task.get("intervals") or {}).get("median"),
        "gen_ai.tool.name": task.get("tool"),
    }
    attributes.update({k: v for k, v in optional.items() if v is not None})
    events = [
        SpanEvent("wiretap.task.state", mapper.ns(float(s["t"])), {"wiretap.task.state": str(s.get("state"))})
        for s in states
    ]
    name = f"task {task['tool']}" if task.get("tool") else "task"
    return Span(
        mapper.trace_id, mapper.task_span_id(task_id), mapper.root_id, name, SpanKind.INTERNAL,
        mapper.ns(start), mapper.ns(end), attributes, events,
    )  # fmt: skip


def _unreported_task(mapper: RecordingMapper, task_id: str, first: float, last: float, calls: int) -> Span:
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


def _question_events(mapper: RecordingMapper, question: dict[str, Any]) -> list[SpanEvent]:
    attributes: dict[str, Any] = {
        "wiretap.question.kind": str(question.get("kind") or ""),
        "wiretap.question.keys": [str(k) for k in question.get("keys") or []],
        "wiretap.question.polls_inside": len(question.get("polls_inside") or []),
    }
    if isinstance(question.get("longest_gap"), int | float):
        attributes["wiretap.question.longest_gap_s"] = float(question["longest_gap"])
    if isinstance(question.get("answered_by"), str):
        attributes["wiretap.question.answered_by"] = question["answered_by"]
    events = [SpanEvent("wiretap.question.opened", mapper.ns(float(question.get("opened") or 0.0)), attributes)]
    if isinstance(question.get("closed"), int | float):
        events.append(SpanEvent("wiretap.question.closed", mapper.ns(float(question["closed"])), dict(attributes)))
    return events


def _finding_event(mapper: RecordingMapper, finding: dict[str, Any]) -> SpanEvent:
    times = [float(t) for t in finding.get("times") or [] if isinstance(t, int | float)]
    attributes: dict[str, Any] = {
        "wiretap.finding.code": str(finding.get("code") or ""),
        "wiretap.finding.severity": str(finding.get("severity") or ""),
        "wiretap.finding.message": str(finding.get("message") or ""),
        "wiretap.finding.count": int(finding.get("count") or 1),
    }
    return SpanEvent("wiretap.finding", mapper.ns(times[0] if times else 0.0), attributes)
