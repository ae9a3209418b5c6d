"""``wiretap report``: every analysis streamed over one recording, assembled into one JSON-able report.

The report's keys are a public contract for CI (README: "Report JSON"); ``REPORT_FORMAT`` changes
when a key changes meaning or goes away.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

from wiretap.analysis.conversation import Conversation, Message
from wiretap.analysis.exits import ExitWatch
from wiretap.analysis.findings import Findings
from wiretap.analysis.observe import Observer
from wiretap.analysis.questions import Question, QuestionLog, measure, task_questions, touches
from wiretap.analysis.shutdown import shutdown_verdict
from wiretap.analysis.stats import Distribution
from wiretap.analysis.tasks import Task, TaskTracker
from wiretap.analysis.traffic import Traffic
from wiretap.model import Event
from wiretap.recording.reader import open_recording

REPORT_FORMAT = 1
LONG_LIVED = frozenset({"subscriptions/listen"})
"""Requests that stay open by design until the client goes away (2026-07-28 notification streams)."""
CANCEL_BEFORE_EXIT = 5.0
"""Seconds before the client left in which cancelling a task counts as cancelling it on exit."""
POLL_RULE = "Claude Code's rule: the server's interval clamped to 250 ms–30 s; 2 s when the server gives none"


def applied_poll_ms(requested: int | None) -> int:
    return 2000 if requested is None else max(250, min(30_000, requested))


def _r(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def settled(intervals: list[float]) -> list[float]:
    """The intervals once a client has backed off to its cadence: from the first one that reaches 80 % of
    where it ends up (the median of the last three)."""
    if len(intervals) < 3:
        return intervals
    end = sorted(intervals[-3:])[1]
    start = next((n for n, value in enumerate(intervals) if value >= 0.8 * end), 0)
    return intervals[start:]


def _median(values: list[float]) -> float | None:
    distribution = Distribution()
    for value in values:
        distribution.add(value)
    return distribution.quantile(0.5) if distribution.count else None


def _pattern(intervals: list[float]) -> str:
    """Intervals as a person reads them: 0.50, 1.00, 2.00, 4.00, 5.00 ×7 s. A few milliseconds of jitter
    (5 %, at least 5 ms) do not break a run; a run shows its median."""
    if not intervals:
        return ""
    runs: list[list[float]] = []
    for value in intervals:
        if runs and abs(value - runs[-1][0]) <= max(0.005, 0.05 * runs[-1][0]):
            runs[-1].append(value)
        else:
            runs.append([value])
    parts = [f"{sorted(run)[len(run) // 2]:.2f}" + (f" ×{len(run)}" if len(run) > 1 else "") for run in runs]
    if len(parts) > 12:
        parts = [*parts[:10], "…", parts[-1]]
    return ", ".join(parts) + " s"


class Analysis:
    """Holds every analysis and feeds them; ``report()`` assembles the result."""

    def __init__(self) -> None:
        self.conversation = Conversation()
        self.findings = Findings()
        self.tasks = TaskTracker(self.findings)
        self.questions = QuestionLog()
        self.exits = ExitWatch()
        self.traffic = Traffic()
        self.observer = Observer()
        self.client_exited: float | None = None
        """From a session manifest, on the recording's clock."""
        self.events = 0

    def feed(self, event: dict[str, Any]) -> None:
        self.events += 1
        self.exits.feed(event)
        self.observer.feed(event)
        self.traffic.feed_event(event)
        for item in self.conversation.feed(event):
            if isinstance(item, Message):
                self.traffic.feed(item)
                self.tasks.feed(item)
                self.questions.feed(item)

    def report(self, header: dict[str, Any], source: str, skipped: int) -> dict[str, Any]:
        end = self.exits.end_t
        self.exits.finish()
        self.tasks.finish(end)
        for request in self.conversation.pending():
            if request.method not in LONG_LIVED:
                self.findings.unanswered(request)
        tasks = sorted(self.tasks.tasks.values(), key=lambda task: task.created_at)
        questions = self._questions(tasks, end)
        task_rows = [self._task(task, questions, end) for task in tasks]
        return {
            "report_format": REPORT_FORMAT,
            "recording": {
                "source": source,
                "name": header.get("name"),
                "transport": header.get("transport"),
                "started": header.get("started"),
                "duration": _r(end),
                "events": self.events,
                "skipped_lines": skipped,
            },
            "messages": {**self.traffic.counts, "raw": self.traffic.raw},
            "latency": self.traffic.table(),
            "poll_rule": POLL_RULE,
            "client_exit": self._client_exit(),
            "server_exit": self.exits.describe_server(),
            "tasks": task_rows,
            "questions": [self._question(q) for q in questions],
            "verdicts": {
                "poll_intervals": self._poll_verdict(tasks, questions, end),
                "cancel_on_exit": self._cancel_verdict(task_rows),
                "elicitation_gaps": self._question_verdict(questions),
                "shutdown": shutdown_verdict(self.observer.shutdown(self.client_exited)),
            },
            "findings": [f.as_dict() for f in self.findings.all()],
        }

    def _questions(self, tasks: list[Task], end: float) -> list[Question]:
        questions = [q for task in tasks for q in task_questions(task)] + self.questions.questions
        questions.sort(key=lambda q: q.opened)
        for question in questions:
            measure(question, tasks, end, questions)
        return questions

    def _client_exit(self) -> dict[str, Any] | None:
        client = self.exits.client
        if client is None:
            return None
        return {"t": _r(client.t), "how": client.how, "evidence": client.evidence}

    def _task(self, task: Task, questions: list[Question], end: float) -> dict[str, Any]:
        times = task.polls.times
        intervals = [b - a for a, b in pairwise(times)]
        windows = [q for q in questions if q.task in (None, task.id)]
        cadence = [b - a for a, b in pairwise(times) if not touches(a, b, windows, end)]
        distribution = Distribution()
        for interval in intervals:
            distribution.add(interval)
        summary = distribution.summary()
        client = self.exits.client
        live = task.live_at(client.t) if client is not None else None
        cancels = [{"t": _r(t), "via": via} for t, via in task.cancels]
        return {
            "protocol": task.protocol,
            "design": task.design,
            "id": task.id,
            "tool": task.tool,
            "created_at": _r(task.created_at),
            "seen_first_by_poll": task.seen_first_by_poll,
            "requested_poll_ms": task.requested_poll_ms,
            "applied_poll_ms": applied_poll_ms(task.requested_poll_ms) if task.protocol == "mcp" else None,
            "polls": [_r(t) for t in times],
            "first_poll_after": _r(times[0] - task.created_at) if times else None,
            "intervals": summary.as_dict() if summary else None,
            "pattern": _pattern(intervals),
            "settled_interval": _r(_median(settled(cadence))),
            "failed_polls": len(task.polls.errors),
            "states": [{"t": _r(t), "state": s.raw} for t, s in task.states],
            "final_state": task.state.raw if task.state else None,
            "terminal": task.terminal_at is not None,
            "live_at_client_exit": live,
            "cancels": cancels,
            "cancelled_by_client_at": _r(task.cancels[0][0])
            if task.cancels and task.terminal_at is not None and task.cancels[0][0] <= task.terminal_at
            else None,
            "refused": [{"t": _r(t), "via": via, "error": code} for t, via, code in task.refused],
            "answers": [{"t": _r(t), "via": via} for t, via in task.answers],
        }

    @staticmethod
    def _question(q: Question) -> dict[str, Any]:
        return {
            "kind": q.kind,
            "task": q.task,
            "keys": q.keys,
            "opened": _r(q.opened),
            "closed": _r(q.closed),
            "answered_by": q.answered_by,
            "cancelled_instead": q.cancelled_instead,
            "polls_inside": [_r(t) for t in q.polls],
            "longest_gap": _r(q.longest_gap),
            "longest_gap_between": [_r(t) for t in q.longest_gap_between] if q.longest_gap_between else None,
            "cadence_outside": _r(q.cadence_outside),
        }

    def _poll_verdict(self, tasks: list[Task], questions: list[Question], end: float) -> dict[str, Any]:
        polled = [task for task in tasks if len(task.polls) >= 2]
        if not tasks:
            return {"verdict": "No long-running tasks in this recording.", "evidence": []}
        if not polled:
            return {
                "verdict": f"{len(tasks)} task(s), polled fewer than twice: no poll interval to measure.",
                "evidence": [],
            }
        pooled, after_ramp = Distribution(), Distribution()
        for task in polled:
            # The cadence is the client's own: intervals while a question was open are measured apart.
            windows = [q for q in questions if q.task in (None, task.id)]
            intervals = [b - a for a, b in pairwise(task.polls.times) if not touches(a, b, windows, end)]
            for interval in intervals:
                pooled.add(interval)
            for interval in settled(intervals):
                after_ramp.add(interval)
        if not pooled.count:
            return {
                "verdict": "Every interval between polls spans an open question: see the question below.",
                "evidence": [],
            }
        median, steady = pooled.quantile(0.5), after_ramp.quantile(0.5)
        asked = [task.requested_poll_ms for task in polled if task.requested_poll_ms is not None]
        if asked:
            requested = max(set(asked), key=asked.count)
            ratio = steady / (requested / 1000) if requested else float("inf")
            tail = f"the server asked for {requested} ms: {ratio:.2f}× the requested interval"
        elif all(task.protocol == "mcp" for task in polled):
            tail = "the server asked for no interval (Claude Code's rule would poll every 2.00 s)"
        else:
            tail = "the server asked for no interval (A2A has none to ask)"
        measured = f"median of {after_ramp.count} of {pooled.count} intervals after any back-off, {len(polled)} task(s)"
        verdict = f"The client polled every {steady:.2f} s ({measured}); {tail}."
        if abs(median - steady) > 0.2 * steady:
            verdict += (
                f" Its first polls came {'sooner' if median < steady else 'later'} (overall median {median:.2f} s)."
            )
        evidence = []
        for task in polled:
            times = task.polls.times
            intervals = [b - a for a, b in pairwise(times)]
            asked_text = f"asked {task.requested_poll_ms} ms" if task.requested_poll_ms is not None else "asked nothing"
            evidence.append(
                f"task {task.id}{f' ({task.tool})' if task.tool else ''}: {asked_text}; "
                f"polls at {', '.join(f'{t:.2f}' for t in times[:12])}{' …' if len(times) > 12 else ''} s; "
                f"intervals {_pattern(intervals)}"
            )
        return {
            "verdict": verdict,
            "evidence": evidence,
            "median_interval": _r(median),
            "settled_interval": _r(steady),
            "requested_poll_ms": max(set(asked), key=asked.count) if asked else None,
        }

    def _cancel_verdict(self, task_rows: list[dict[str, Any]]) -> dict[str, Any]:
        client = self.exits.client
        if client is None:
            return {"verdict": "Unknown: the recording does not show the client going away.", "evidence": []}
        server = self.exits.describe_server()
        server_text = (
            f"; the server {server['how']}, {server['after_client_exit']:.2f} s later"
            if server and server["after_client_exit"] is not None
            else ""
        )
        # A task the client cancelled on its way out counts too, though it had ended by the time it left.
        live = [
            row
            for row in task_rows
            if row["live_at_client_exit"]
            or (
                row["cancelled_by_client_at"] is not None
                and client.t - row["cancelled_by_client_at"] <= CANCEL_BEFORE_EXIT
            )
        ]
        cancelled = [row for row in live if row["cancels"]]
        if not live:
            verdict = f"The client went away at {client.t:.2f} s ({client.how}) with no live task{server_text}."
        else:
            verdict = (
                f"The client went away at {client.t:.2f} s ({client.how}) with {len(live)} live task(s) "
                f"and cancelled {len(cancelled) if cancelled else 'none'}"
                f"{' of them' if cancelled else ''}{server_text}."
            )
        evidence = list(client.evidence)
        for row in live:
            how = ", ".join(f"{c['via']} at {c['t']:.2f} s" for c in row["cancels"]) or "never cancelled"
            evidence.append(f"task {row['id']} was {row['final_state']}: {how}")
        return {
            "verdict": verdict,
            "evidence": evidence,
            "live_tasks": [r["id"] for r in live],
            "cancelled": [r["id"] for r in cancelled],
            "sent": bool(cancelled) if live else None,
        }

    @staticmethod
    def _question_verdict(questions: list[Question]) -> dict[str, Any]:
        if not questions:
            return {"verdict": "No question to the user was open in this recording.", "evidence": []}
        worst = max(questions, key=lambda q: q.longest_gap or 0.0)
        closed = f"{worst.closed:.2f}" if worst.closed is not None else "the end"
        cadence = f", against a {worst.cadence_outside:.2f} s cadence outside it" if worst.cadence_outside else ""
        if worst.answered_by is None:
            answered = "; never answered"
        else:
            answered = f"; {'cancelled instead by' if worst.cancelled_instead else 'answered by'} {worst.answered_by}"
        verdict = (
            f"While a question was open ({worst.opened:.2f}–{closed} s) the longest polling gap was "
            f"{worst.longest_gap or 0.0:.2f} s with {len(worst.polls)} poll(s) inside{cadence}{answered}."
        )
        evidence = []
        for q in questions:
            end = f"{q.closed:.2f}" if q.closed is not None else "end"
            evidence.append(
                f"{q.kind} {q.task or ', '.join(q.keys)}: open {q.opened:.2f}–{end} s, "
                f"{len(q.polls)} poll(s) inside, longest gap {q.longest_gap or 0.0:.2f} s, "
                f"{q.answered_by or 'never answered'}"
            )
        return {"verdict": verdict, "evidence": evidence, "longest_gap": _r(worst.longest_gap)}


def report_recording(path: Path, *, client_exited_monotonic: float | None = None) -> dict[str, Any]:
    """Stream one recording through every analysis. Raises NotARecording / OSError.

    ``client_exited_monotonic``: the client's exit from a session manifest, on the machine's monotonic
    clock; it counts when it comes before every sign of leaving in the traffic.
    """
    return analyse(path, client_exited_monotonic=client_exited_monotonic)[0]


def analyse(path: Path, *, client_exited_monotonic: float | None = None) -> tuple[dict[str, Any], Analysis, Event]:
    """The report, the analysis behind it (for a behaviour profile: the same single pass) and the header."""
    analysis = Analysis()
    with open_recording(path) as reader:
        for event in reader.events():
            analysis.feed(event)
        origin = reader.header.get("monotonic_origin")
        if client_exited_monotonic is not None and isinstance(origin, int | float):
            analysis.exits.manifest_exit(client_exited_monotonic - origin, "the client exited (session manifest)")
            analysis.client_exited = client_exited_monotonic - origin
        return analysis.report(reader.header, str(path), len(reader.skipped.lines)), analysis, reader.header
