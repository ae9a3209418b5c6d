"""``wiretap report``: every analysis streamed over one recording, assembled into one JSON-able report.

The report's keys are a public contract for CI (docs/report.md: "Report JSON"); ``REPORT_FORMAT`` changes
when a key changes meaning or goes away.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

from wiretap.analysis import model
from wiretap.analysis.activity import Activity
from wiretap.analysis.client_rules import ClientRule, describe, poll_rule_for
from wiretap.analysis.conversation import Conversation, Message, OtherBody
from wiretap.analysis.exits import ExitWatch
from wiretap.analysis.findings import Findings
from wiretap.analysis.give_up import ClientLimits, GiveUps
from wiretap.analysis.header_check import HeaderCheck, VersionWatch
from wiretap.analysis.imported import ObservedFacts, mark_imported
from wiretap.analysis.methods import method_of
from wiretap.analysis.model import FIGURES, REPORT_FORMAT, Report
from wiretap.analysis.oauth import OAuthWatch
from wiretap.analysis.observe import Observer
from wiretap.analysis.poll_schedule import back_off_verdict, poll_schedule
from wiretap.analysis.questions import Question, QuestionLog, measure, task_questions, touches
from wiretap.analysis.shutdown import shutdown_verdict
from wiretap.analysis.startup import Startup
from wiretap.analysis.stats import Distribution
from wiretap.analysis.tasks import Task, TaskTracker
from wiretap.analysis.tool_calls import ToolCalls
from wiretap.analysis.traffic import Traffic
from wiretap.plural import plural
from wiretap.recording.complete import WAIT_FOR_END
from wiretap.recording.events import Event
from wiretap.recording.reader import open_recording

CLAUDE_CODE_POLL = poll_rule_for("claude-code")
__all__ = ["REPORT_FORMAT", "Analysis", "analyse", "build_report", "pattern", "report_recording"]
Limits = tuple[str | None, dict[str, str]]
"""A session's client (its ``clientInfo`` name) and the settings of its limits."""
LONG_LIVED = frozenset({"subscriptions/listen"})
"""Requests that stay open by design until the client goes away (2026-07-28 notification streams)."""
CANCEL_BEFORE_EXIT = 0.5
"""Seconds before the client left in which cancelling a task counts as cancelling it on exit: a client
cancelling on its way out does so as it closes; a cancel earlier than that (TaskStop) is a stop during the
session."""
AT_ONCE = 0.05
"""A question cancelled within this many seconds of opening was never shown to anyone."""
A2A_POLL_RULE = "A2A has no poll interval to ask for: the client's own back-off decides when it polls"
"""The rule a report of A2A tasks only states: no MCP client's poll rule is an A2A client's."""


def applied_poll_ms(requested: int | None, rule: ClientRule | None = CLAUDE_CODE_POLL) -> int | None:
    """The interval the client's poll rule applies to the server's (Claude Code's by default); None without one."""
    return rule.applied_ms(requested) if rule is not None else None


def _cancel_ended(task: Task) -> bool:
    ended = task.terminal_at if task.terminal_at is not None else task.cancel_answered_at
    return bool(task.cancels) and ended is not None and task.cancels[0][0] <= ended


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


def pattern(intervals: list[float]) -> str:
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
    """Holds every analysis and feeds them in one pass; ``report()`` assembles the model."""

    def __init__(
        self, transport: str = "stdio", keep_rows: int = 0, keep_methods: bool = False, timeline: bool = False
    ) -> None:
        self.conversation = Conversation()
        self.findings = Findings()
        self.tasks = TaskTracker(self.findings)
        self.questions = QuestionLog()
        self.exits = ExitWatch()
        self.traffic = Traffic()
        self.activity = Activity(transport) if timeline else None
        self.observer = Observer()
        self.observed = ObservedFacts()
        self.headers, self.versions = HeaderCheck(self.findings), VersionWatch(self.findings)
        self.oauth = OAuthWatch()
        self.startup = Startup(transport)
        self.limit_settings: dict[str, str] = {}
        """The session's settings of client limits (``limits_env`` and the server's ``limits``)."""
        self.session_client: str | None = None
        self.client_exited: float | None = None
        """From a session manifest, on the recording's clock."""
        self.give_ups = GiveUps()
        self.tool_calls = ToolCalls()
        self.poll_rule: ClientRule | None = None
        """The poll rule of the client that ran (``client_rules``), once ``report`` has named it."""
        self.transport = transport
        self.events = 0
        self.keep_rows = keep_rows
        self.rows: list[Any] = []
        self.rows_left_out = 0
        self.keep_methods = keep_methods
        self.methods: list[tuple[str, str]] = []
        self._row: Callable[[dict[str, Any]], Any] | None = None
        if keep_rows:
            from wiretap.render.timeline import Pairing, row_for

            pairing = Pairing()
            self._row = lambda event: row_for(event, pairing)

    def feed(self, event: dict[str, Any]) -> None:
        self.events += 1
        if event.get("kind") == "message":
            self._message_event(event)
        else:
            self._other_event(event)
        if self.activity is not None:
            self.activity.feed(event)
        if self.keep_methods and (method := method_of(event)) is not None:
            self.methods.append((str(event.get("dir")), method))
        if self._row is not None:
            row = self._row(event)
            if len(self.rows) < self.keep_rows:
                self.rows.append(row)
            else:
                self.rows_left_out += 1
        for item in self.conversation.feed(event):
            if isinstance(item, Message):
                self.traffic.feed(item)
                self.startup.message(item)
                self.tasks.feed(item)
                self.questions.feed(item)
                self.give_ups.feed(item, self.conversation)
                self.tool_calls.feed(item)
            elif isinstance(item, OtherBody):
                self.traffic.feed_other(item)

    def _message_event(self, event: dict[str, Any]) -> None:
        """A message event, to the analyses that read message events (most events are messages)."""
        t = float(event.get("t", 0.0))
        self.exits.message(t)
        self.give_ups.message_event(t)
        self.observer.feed(event)
        if isinstance(event.get("ex"), int):
            self.headers.feed(event)
            self.oauth.feed(event)
        self.versions.feed(event)
        self.startup.message_event(event, t)
        self.traffic.feed_event(event)

    def _other_event(self, event: dict[str, Any]) -> None:
        self.exits.feed(event)
        self.give_ups.feed_event(event)
        self.observer.feed(event)
        self.observed.feed(event)
        self.headers.feed(event)
        self.versions.feed(event)
        self.oauth.feed(event)
        self.startup.feed(event)
        self.tasks.feed_event(event)

    def report(self, header: dict[str, Any], source: str, skipped: int) -> Report:
        end = self.exits.end_t
        self.exits.finish()
        self.tasks.finish(end)
        self.headers.finish()
        for request in self.conversation.pending():
            if request.method not in LONG_LIVED:
                self.findings.unanswered(request)
        if self.client_exited is not None:
            self.startup.client_exited(self.client_exited)
        self.startup.finish(self.findings, self.limit_settings, self.session_client)
        authorization = self.oauth.finish(self.findings)
        self.give_ups.finish(self.findings, self._client_limits(), end)
        tasks = sorted(self.tasks.tasks.values(), key=lambda task: task.created_at)
        handshake = self.observer.handshake()
        client = handshake.client_name or self.session_client
        designs = [task.design for task in tasks if task.protocol == "mcp"]
        design = max(set(designs), key=designs.count) if designs else None
        self.poll_rule = poll_rule_for(client, design)
        questions = self._questions(tasks, end)
        task_rows = [self._task(task, questions, end) for task in tasks]
        counts = self.traffic.counts
        capped = self._capped()
        report = Report(
            report_format=REPORT_FORMAT,
            recording=model.RecordingInfo(
                source=source,
                name=header.get("name"),
                transport=header.get("transport"),
                started=header.get("started"),
                duration=_r(end),
                events=self.events,
                skipped_lines=skipped,
                capped=capped,
            ),
            messages=model.MessageCounts(
                counts.get("c2s", 0), counts.get("s2c", 0), self.traffic.raw, dict(self.traffic.other)
            ),
            latency=[model.LatencyRow(**row) for row in self.traffic.table()],
            poll_rule=(
                A2A_POLL_RULE
                if tasks and all(t.protocol == "a2a" for t in tasks)
                else describe(client, handshake.client_version, design)
            ),
            client_exit=self._client_exit(),
            server_exit=self._server_exit(),
            tasks=task_rows,
            questions=[self._question(q) for q in questions],
            verdicts=model.Verdicts(
                poll_intervals=self._poll_verdict(tasks, questions, end),
                cancel_on_exit=self._cancel_verdict(task_rows, questions),
                elicitation_gaps=self._question_verdict(questions),
                shutdown=shutdown_verdict(self.observer.shutdown(self.client_exited)),
                a2a_back_off=back_off_verdict(task_rows),
            ),
            findings=[model.FindingRow(**f.as_dict()) for f in self.findings.all()],
            authorization=[authorization] if authorization is not None else [],
            activity=self.activity,
            rows=self.rows,
            rows_left_out=self.rows_left_out,
            methods=self.methods,
            client=client,
            client_version=handshake.client_version,
            calls=self.tool_calls.calls,
        )
        if header.get("imported"):
            mark_imported(report, header, self.observed)
        if capped is not None:
            for _, _, verdict in report.verdicts.titled():
                verdict.verdict += f" {capped_note(capped)}"
        return report

    def _client_limits(self) -> ClientLimits:
        handshake = self.observer.handshake()
        client = handshake.client_name or self.session_client
        return ClientLimits.of(client, handshake.client_version, self.transport, self.limit_settings)

    def _capped(self) -> model.Capped | None:
        """The recording's cap, and its finding (before the findings are listed)."""
        found = self.exits.capped
        if found is None:
            return None
        max_size = found.get("max_size")
        capped = model.Capped(
            since=_f(float(found["since"])),
            max_size=max_size if isinstance(max_size, int) else None,
            **{key: found.get(key) for key in ("messages", "events", "bytes")},
        )
        self.findings.recording_capped(capped.since, _size(capped.max_size), capped.messages)
        return capped

    def _questions(self, tasks: list[Task], end: float) -> list[Question]:
        questions = [q for task in tasks for q in task_questions(task)] + self.questions.questions
        questions.sort(key=lambda q: q.opened)
        for question in questions:
            measure(question, tasks, end, questions)
        return questions

    def _client_exit(self) -> model.ClientExit | None:
        client = self.exits.client
        if client is None:
            return None
        return model.ClientExit(_f(client.t), client.how, list(client.evidence))

    def _server_exit(self) -> model.ServerExit | None:
        return self.exits.describe_server()

    def _task(self, task: Task, questions: list[Question], end: float) -> model.TaskRow:
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
        return model.TaskRow(
            protocol=task.protocol,
            design=task.design,
            id=task.id,
            tool=task.tool,
            created_at=_f(task.created_at),
            seen_first_by_poll=task.seen_first_by_poll,
            requested_poll_ms=task.requested_poll_ms,
            applied_poll_ms=applied_poll_ms(task.requested_poll_ms, self.poll_rule) if task.protocol == "mcp" else None,
            polls=[_f(t) for t in times],
            first_poll_after=_r(times[0] - task.created_at) if times else None,
            intervals=model.Spread(**summary.as_dict()) if summary else None,  # type: ignore[arg-type]
            pattern=pattern(intervals),
            settled_interval=_r(_median(settled(cadence))),
            failed_polls=len(task.polls.errors),
            states=[model.StateAt(_f(t), s.raw) for t, s in task.states],
            final_state=task.state.raw if task.state else None,
            terminal=task.terminal_at is not None,
            live_at_client_exit=live,
            cancels=[model.Via(_f(t), via) for t, via in task.cancels],
            cancelled_by_client_at=_r(task.cancels[0][0]) if _cancel_ended(task) else None,
            refused=[model.Refusal(_f(t), via, code) for t, via, code in task.refused],
            answers=[model.Via(_f(t), via) for t, via in task.answers],
            median_interval=_r(summary.median) if summary else None,
            poll_schedule=poll_schedule(task, pattern),
        )

    @staticmethod
    def _question(q: Question) -> model.QuestionRow:
        return model.QuestionRow(
            kind=q.kind,
            task=q.task,
            keys=q.keys,
            opened=_f(q.opened),
            closed=_r(q.closed),
            answered_by=q.answered_by,
            cancelled_instead=q.cancelled_instead,
            polls_inside=[_f(t) for t in q.polls],
            longest_gap=_r(q.longest_gap),
            longest_gap_between=[_f(t) for t in q.longest_gap_between] if q.longest_gap_between else None,
            cadence_outside=_r(q.cadence_outside),
        )

    def _poll_verdict(self, tasks: list[Task], questions: list[Question], end: float) -> model.PollVerdict:
        polled = [task for task in tasks if len(task.polls) >= 2]
        if not tasks:
            return model.PollVerdict("No long-running tasks in this recording.", [])
        if not polled:
            return model.PollVerdict(
                f"{plural(len(tasks), 'task')}, polled fewer than twice: no poll interval to measure.", []
            )
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
            return model.PollVerdict("Every interval between polls spans an open question: see the question below.", [])
        median, steady = pooled.quantile(0.5), after_ramp.quantile(0.5)
        asked = [task.requested_poll_ms for task in polled if task.requested_poll_ms is not None]
        if asked:
            requested = max(set(asked), key=asked.count)
            ratio = steady / (requested / 1000) if requested else float("inf")
            tail = f"the server asked for {requested} ms: {ratio:.2f}× the requested interval"
        elif all(task.protocol == "mcp" for task in polled):
            rule = self.poll_rule
            default = rule.applied_ms(None) if rule is not None else None
            tail = "the server asked for no interval" + (
                f" ({rule.who}'s rule would poll every {default / 1000:.2f} s)" if rule and default else ""
            )
        else:
            tail = "the server asked for no interval (A2A has none to ask)"
        measured = (
            f"{FIGURES['settled_interval']}: median of {after_ramp.count} of {plural(pooled.count, 'interval')} "
            f"after any back-off, {plural(len(polled), 'task')}"
        )
        verdict = f"The client polled every {steady:.2f} s ({measured}); {tail}."
        if abs(median - steady) > 0.2 * steady:
            verdict += (
                f" Its first polls came {'sooner' if median < steady else 'later'}"
                f" ({FIGURES['median_interval']} {model.seconds(median)}, back-off included)."
            )
        evidence = []
        for task in polled:
            times = task.polls.times
            intervals = [b - a for a, b in pairwise(times)]
            asked_text = f"asked {task.requested_poll_ms} ms" if task.requested_poll_ms is not None else "asked nothing"
            evidence.append(
                f"task {task.id}{f' ({task.tool})' if task.tool else ''}: {asked_text}; "
                f"polls at {', '.join(f'{t:.2f}' for t in times[:12])}{' …' if len(times) > 12 else ''} s; "
                f"intervals {pattern(intervals)}"
            )
        return model.PollVerdict(
            verdict,
            evidence,
            median_interval=_r(median),
            settled_interval=_r(steady),
            requested_poll_ms=max(set(asked), key=asked.count) if asked else None,
        )

    def _cancel_verdict(self, task_rows: list[model.TaskRow], questions: list[Question]) -> model.CancelVerdict:
        client = self.exits.client
        if client is None:
            return model.CancelVerdict("Unknown: the recording does not show the client going away.", [])
        server = self.exits.describe_server()
        server_text = (
            f"; the server {server.how}, {server.after_client_exit:.2f} s later"
            if server is not None and server.after_client_exit is not None
            else ""
        )
        live = [row for row in task_rows if row.live_at_client_exit]
        # A task the client cancelled on its way out had ended by the time it left: not live at exit (as
        # tasks[] says), but credited as cancelled on exit.
        # A cancel that answered a question the moment it opened (a headless client) is that answer, not an exit.
        at_once = {
            q.task for q in questions if q.cancelled_instead and q.closed is not None and q.closed - q.opened <= AT_ONCE
        }
        way_out = [
            row
            for row in task_rows
            if not row.live_at_client_exit
            and row.id not in at_once
            and row.cancelled_by_client_at is not None
            and client.t - row.cancelled_by_client_at <= CANCEL_BEFORE_EXIT
        ]
        stopped = [
            row
            for row in task_rows
            if row.cancelled_by_client_at is not None and row not in way_out and not row.live_at_client_exit
        ]
        headless = [row for row in stopped if row.id in at_once]
        stopped = [row for row in stopped if row.id not in at_once]
        cancelled = [row for row in live if row.cancels] + way_out
        went = f"The client went away at {client.t:.2f} s ({client.how})"
        if live:
            done = (
                f"cancelled {len(cancelled) - len(way_out)} of them"
                if len(cancelled) > len(way_out)
                else "cancelled none"
            )
            verdict = f"{went} with {plural(len(live), 'live task')} and {done}"
        else:
            verdict = f"{went} with no live task"
        if way_out:
            verdict += f", having cancelled {plural(len(way_out), 'task')} on its way out"
        if stopped:
            before = min(client.t - (row.cancelled_by_client_at or 0.0) for row in stopped)
            verdict += (
                f"; it had stopped {plural(len(stopped), 'task')} during the session"
                f" ({before:.2f} s or more before leaving: not a cancel on exit)"
            )
        if headless:
            verdict += (
                f"; it cancelled {plural(len(headless), 'task')} the moment a question opened"
                " (a headless client cannot show it), not on exit"
            )
        verdict += f"{server_text}."
        evidence = list(client.evidence)
        for row in [*live, *way_out]:
            how = ", ".join(f"{c.via} at {c.t:.2f} s" for c in row.cancels) or "never cancelled"
            evidence.append(f"task {row.id} was {row.final_state}: {how}")
        return model.CancelVerdict(
            verdict,
            evidence,
            live_tasks=[r.id for r in live],
            cancelled=[r.id for r in cancelled],
            sent=bool(cancelled) if live or way_out else None,
        )

    @staticmethod
    def _question_verdict(questions: list[Question]) -> model.QuestionVerdict:
        if not questions:
            return model.QuestionVerdict("No question to the user was open in this recording.", [])
        worst = max(questions, key=lambda q: q.longest_gap or 0.0)
        closed = f"{worst.closed:.2f}" if worst.closed is not None else "the end"
        cadence = (
            f", against a {FIGURES['cadence_outside']} of {worst.cadence_outside:.2f} s"
            if worst.cadence_outside
            else ""
        )
        if worst.answered_by is None:
            answered = "; never answered"
        elif worst.cancelled_instead and worst.closed is not None and worst.closed - worst.opened <= AT_ONCE:
            answered = (
                f"; cancelled at once by {worst.answered_by}, {(worst.closed - worst.opened) * 1000:.0f} ms after"
                " it opened: the client never showed the question (a headless client)"
            )
        else:
            answered = f"; {'cancelled instead by' if worst.cancelled_instead else 'answered by'} {worst.answered_by}"
        verdict = (
            f"While a question was open ({worst.opened:.2f}–{closed} s) the {FIGURES['longest_gap']} in polling was "
            f"{model.seconds(worst.longest_gap or 0.0)} with {plural(len(worst.polls), 'poll')} inside{cadence}"
            f"{answered}."
        )
        evidence = []
        for q in questions:
            end = f"{q.closed:.2f}" if q.closed is not None else "end"
            evidence.append(
                f"{q.kind} {q.task or ', '.join(q.keys)}: open {q.opened:.2f}–{end} s, "
                f"{plural(len(q.polls), 'poll')} inside, "
                f"{FIGURES['longest_gap']} {model.seconds(q.longest_gap or 0.0)}, "
                f"{q.answered_by or 'never answered'}"
            )
        return model.QuestionVerdict(verdict, evidence, longest_gap=_r(worst.longest_gap))


def _size(max_size: int | None) -> str:
    from wiretap.recording.cap import format_size

    return format_size(max_size) if max_size else "?"


def capped_note(capped: model.Capped) -> str:
    """What every verdict of a capped recording adds: it measures the stored part only."""
    return f"(The recording was capped at {capped.since:.2f} s: what came later is not in it.)"


def _f(value: float) -> float:
    return round(value, 3)


def build_report(
    path: Path,
    *,
    client_exited_monotonic: float | None = None,
    keep_rows: int = 0,
    keep_methods: bool = False,
    clock_origin: float | None = None,
    timeline: bool = False,
    wait: float | None = WAIT_FOR_END,
    limits: Limits | None = None,
) -> Report:
    """Stream one recording once through every analysis into the report model. Raises NotARecording / OSError.

    ``client_exited_monotonic``: the client's exit from a session manifest, on the machine's monotonic
    clock; it counts when it comes before every sign of leaving in the traffic. ``keep_rows``: how many
    timeline rows to keep for a page that lists the messages; ``timeline``: gather the traffic per
    connection for a picture (it grows with the recording). ``clock_origin``: t = 0 on the machine's
    monotonic clock (a session's client start): every time in the report is then on that clock. ``wait``:
    how long to wait for a recording still being finished (``open_recording``). ``limits``: the session's
    client and its limit settings, for the findings that judge a start against the client's limit.
    """
    return analyse_into_model(
        path,
        client_exited_monotonic=client_exited_monotonic,
        keep_rows=keep_rows,
        keep_methods=keep_methods,
        clock_origin=clock_origin,
        timeline=timeline,
        wait=wait,
        limits=limits,
    )[0]


def analyse_into_model(
    path: Path,
    *,
    client_exited_monotonic: float | None = None,
    keep_rows: int = 0,
    keep_methods: bool = False,
    clock_origin: float | None = None,
    timeline: bool = False,
    wait: float | None = WAIT_FOR_END,
    limits: Limits | None = None,
) -> tuple[Report, Analysis, Event]:
    """``build_report``, with the analysis behind the report (a behaviour profile reads the same single
    pass) and the recording's header."""
    with open_recording(path, wait=wait) as reader:
        analysis = Analysis(str(reader.header.get("transport", "stdio")), keep_rows, keep_methods, timeline)
        if limits is not None:
            analysis.session_client, analysis.limit_settings = limits
        found = reader.header.get("monotonic_origin")
        origin = float(found) if isinstance(found, int | float) and not isinstance(found, bool) else None
        offset = origin - clock_origin if clock_origin is not None and origin is not None else 0.0
        if client_exited_monotonic is not None and origin is not None:
            zero = clock_origin if clock_origin is not None else origin
            analysis.give_ups.client_exit = client_exited_monotonic - zero
        for event in reader.events():
            analysis.feed(event if not offset else {**event, "t": float(event.get("t", 0.0)) + offset})
        if client_exited_monotonic is not None and origin is not None:
            zero = clock_origin if clock_origin is not None else origin
            analysis.exits.manifest_exit(client_exited_monotonic - zero, "the client exited (session manifest)")
            analysis.client_exited = client_exited_monotonic - zero
        report = analysis.report(reader.header, str(path), len(reader.skipped.lines))
        report.recording.offset = round(offset, 6)
        if not reader.completion.complete:
            report.recording.incomplete = reader.completion.describe()
        return report, analysis, reader.header


def report_recording(path: Path, *, client_exited_monotonic: float | None = None) -> dict[str, Any]:
    """The report JSON of one recording (``build_report(...).to_dict()``). Raises NotARecording / OSError."""
    return build_report(path, client_exited_monotonic=client_exited_monotonic).to_dict()


def analyse(path: Path, *, client_exited_monotonic: float | None = None) -> tuple[dict[str, Any], Analysis, Event]:
    """The report JSON, the analysis behind it (for a behaviour profile: the same single pass) and the header."""
    report, analysis, header = analyse_into_model(path, client_exited_monotonic=client_exited_monotonic)
    return report.to_dict(), analysis, header
