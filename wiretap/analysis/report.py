"""``wiretap report``: every analysis streamed over one recording, assembled into one JSON-able report.

The report's keys are a public contract for CI (docs/report.md: "Report JSON"); ``REPORT_FORMAT`` changes
when a key changes meaning or goes away.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from wiretap.analysis import model
from wiretap.analysis.activity import Activity
from wiretap.analysis.behaviour import Behaviour
from wiretap.analysis.client_rules import ClientRule, describe, poll_rule_for
from wiretap.analysis.conversation import Conversation, Message, OtherBody
from wiretap.analysis.exits import ExitWatch
from wiretap.analysis.findings import Findings
from wiretap.analysis.give_up import ClientLimits, GiveUps
from wiretap.analysis.header_check import HeaderCheck, VersionWatch
from wiretap.analysis.imported import ObservedFacts, mark_imported
from wiretap.analysis.methods import method_of
from wiretap.analysis.model import REPORT_FORMAT, Report
from wiretap.analysis.oauth import OAuthWatch
from wiretap.analysis.observe import Observer
from wiretap.analysis.poll_schedule import back_off_verdict
from wiretap.analysis.questions import Question, QuestionLog, measure, task_questions
from wiretap.analysis.shutdown import shutdown_verdict
from wiretap.analysis.startup import Startup
from wiretap.analysis.task import Task
from wiretap.analysis.task_rows import question_row, rounded, rounded_t, task_row
from wiretap.analysis.tasks import TaskTracker
from wiretap.analysis.timeline import Pairing, Row, row_for
from wiretap.analysis.tool_calls import ToolCalls
from wiretap.analysis.traffic import Traffic
from wiretap.analysis.verdicts import cancel_verdict, capped_note, poll_verdict, question_verdict
from wiretap.recording.complete import WAIT_FOR_END
from wiretap.recording.events import Event
from wiretap.recording.reader import open_recording

__all__ = ["REPORT_FORMAT", "Analysis", "ReportPass", "build_report"]
Limits = tuple[str | None, dict[str, str]]
"""A session's client (its ``clientInfo`` name) and the settings of its limits."""
LONG_LIVED = frozenset({"subscriptions/listen"})
"""Requests that stay open by design until the client goes away (2026-07-28 notification streams)."""
A2A_POLL_RULE = "A2A has no poll interval to ask for: the client's own back-off decides when it polls"
"""The rule a report of A2A tasks only states: no MCP client's poll rule is an A2A client's."""


class Analysis:
    """Holds every analysis and feeds them in one pass; ``report()`` assembles the model."""

    def __init__(
        self,
        transport: str = "stdio",
        keep_rows: int = 0,
        keep_methods: bool = False,
        timeline: bool = False,
        behaviour: bool = False,
    ) -> None:
        self.conversation = Conversation()
        self.findings = Findings()
        self.tasks = TaskTracker(self.findings)
        self.questions = QuestionLog()
        self.exits = ExitWatch()
        self.traffic = Traffic()
        self.activity = Activity(transport) if timeline else None
        self.observer = Observer(behaviour)
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
        self.rows: list[Row] = []
        self.rows_left_out = 0
        self.keep_methods = keep_methods
        self.methods: list[tuple[str, str]] = []
        self.keep_behaviour = behaviour
        self._row: Callable[[Event], Row] | None = None
        self._readers: tuple[Callable[[Message], None], ...] = (
            self.traffic.feed,
            self.startup.message,
            self.tasks.feed,
            self.questions.feed,
            self.tool_calls.feed,
            self.versions.message,
        )
        """What reads each message of the conversation (with ``give_ups``, which also asks the conversation)."""
        if not behaviour:
            self._readers += (self.observer.handshake_message,)
        if keep_rows:
            pairing = Pairing()
            self._row = lambda event: row_for(event, pairing)

    def feed(self, event: dict[str, Any]) -> None:
        self.events += 1
        is_message = event.get("kind") == "message"
        if is_message:
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
        if not is_message:
            self.conversation.other(event)
            return
        for item in self.conversation.message(event):
            if type(item) is Message:
                for read in self._readers:
                    read(item)
                self.give_ups.feed(item, self.conversation)
            else:
                assert isinstance(item, OtherBody)
                self.traffic.feed_other(item)

    def _message_event(self, event: dict[str, Any]) -> None:
        """A message event, to the analyses that read message events (most events are messages)."""
        t = float(event.get("t", 0.0))
        self.exits.message(t)
        self.give_ups.message_event(t)
        if self.keep_behaviour:
            self.observer.feed(event)
        if isinstance(event.get("ex"), int):
            self.headers.feed(event)
            self.oauth.feed(event)
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
        leaving = self.exits.client.t if self.exits.client is not None else None
        for request in self.conversation.pending():
            # Sent once the client had told the server to stop (a signal, stdin closed): no answer was coming.
            if request.method not in LONG_LIVED and (leaving is None or request.t < leaving):
                self.findings.unanswered(request)
        if self.client_exited is not None:
            self.startup.client_exited(self.client_exited)
        self.startup.finish(self.findings, self.limit_settings, self.session_client)
        authorization = self.oauth.finish(self.findings)
        self.give_ups.finish(self.findings, self._client_limits(), end, leaving)
        tasks = sorted(self.tasks.tasks.values(), key=lambda task: task.created_at)
        handshake = self.observer.handshake()
        client = handshake.client_name or self.session_client
        designs = [task.design for task in tasks if task.protocol == "mcp"]
        design = max(set(designs), key=designs.count) if designs else None
        self.poll_rule = poll_rule_for(client, design)
        questions = self._questions(tasks, end)
        task_rows = [task_row(task, questions, end, self.exits.client, self.poll_rule) for task in tasks]
        counts = self.traffic.counts
        capped = self._capped()
        report = Report(
            report_format=REPORT_FORMAT,
            recording=model.RecordingInfo(
                source=source,
                name=header.get("name"),
                transport=header.get("transport"),
                started=header.get("started"),
                duration=rounded(end),
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
            questions=[question_row(q) for q in questions],
            verdicts=model.Verdicts(
                poll_intervals=poll_verdict(tasks, questions, end, self.poll_rule),
                cancel_on_exit=cancel_verdict(task_rows, questions, self.exits.client, self.exits.describe_server()),
                elicitation_gaps=question_verdict(questions),
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
        if self.keep_behaviour:
            report.behaviour = self._behaviour()
        if header.get("imported"):
            mark_imported(report, header, self.observed)
        if capped is not None:
            for _, _, verdict in report.verdicts.titled():
                verdict.verdict += f" {capped_note(capped)}"
        return report

    def _behaviour(self) -> Behaviour:
        seen = self.observer
        http = seen.http_traits() if self.transport == "http" else None
        return Behaviour(
            seen.handshake(), seen.steps(), seen.server_requests(), http, seen.shutdown(self.client_exited)
        )

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
            since=rounded_t(float(found["since"])),
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
        return model.ClientExit(rounded_t(client.t), client.how, list(client.evidence))

    def _server_exit(self) -> model.ServerExit | None:
        return self.exits.describe_server()


def _size(max_size: int | None) -> str:
    from wiretap.recording.cap import format_size

    return format_size(max_size) if max_size else "?"


class ReportPass:
    """One recording read once: each event fed through every analysis as ``events()`` gives it (a caller
    that maps the same events, OpenTelemetry, reads them there), then ``report()``. Raises NotARecording /
    OSError on opening. The options are ``build_report``'s."""

    def __init__(
        self,
        path: Path,
        *,
        client_exited_monotonic: float | None = None,
        keep_rows: int = 0,
        keep_methods: bool = False,
        clock_origin: float | None = None,
        timeline: bool = False,
        wait: float | None = WAIT_FOR_END,
        limits: Limits | None = None,
        behaviour: bool = False,
    ) -> None:
        self.path = path
        self.reader = open_recording(path, wait=wait)
        self.header: Event = self.reader.header
        analysis = Analysis(str(self.header.get("transport", "stdio")), keep_rows, keep_methods, timeline, behaviour)
        if limits is not None:
            analysis.session_client, analysis.limit_settings = limits
        found = self.header.get("monotonic_origin")
        origin = float(found) if isinstance(found, int | float) and not isinstance(found, bool) else None
        self.offset = origin - clock_origin if clock_origin is not None and origin is not None else 0.0
        self.client_exited: float | None = None
        """The client's exit from a session manifest, on the report's clock."""
        if client_exited_monotonic is not None and origin is not None:
            zero = clock_origin if clock_origin is not None else origin
            self.client_exited = client_exited_monotonic - zero
            analysis.give_ups.client_exit = self.client_exited
        self.analysis = analysis

    def __enter__(self) -> ReportPass:
        return self

    def __exit__(self, *exc: object) -> None:
        self.reader.close()

    def __del__(self) -> None:
        # A pass opened for errors to surface at once, then dropped unread, still closes its file.
        if hasattr(self, "reader"):
            self.reader.close()

    def events(self) -> Iterator[Event]:
        """The recording's events (as recorded, on its own clock), each fed to the analyses first."""
        feed, offset = self.analysis.feed, self.offset
        for event in self.reader.events():
            feed(event if not offset else {**event, "t": float(event.get("t", 0.0)) + offset})
            yield event

    def report(self) -> Report:
        analysis = self.analysis
        if self.client_exited is not None:
            analysis.exits.manifest_exit(self.client_exited, "the client exited (session manifest)")
            analysis.client_exited = self.client_exited
        report = analysis.report(self.header, str(self.path), len(self.reader.skipped.lines))
        report.recording.offset = round(self.offset, 6)
        if not self.reader.completion.complete:
            report.recording.incomplete = self.reader.completion.describe()
        return report


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
    behaviour: bool = False,
) -> Report:
    """Stream one recording once through every analysis into the report model: the one way a report is
    built (``report.to_dict()`` is its JSON). Raises NotARecording / OSError.

    ``client_exited_monotonic``: the client's exit from a session manifest, on the machine's monotonic
    clock; it counts when it comes before every sign of leaving in the traffic. ``keep_rows``: how many
    timeline rows to keep for a page that lists the messages; ``timeline``: gather the traffic per
    connection for a picture (it grows with the recording). ``clock_origin``: t = 0 on the machine's
    monotonic clock (a session's client start): every time in the report is then on that clock. ``wait``:
    how long to wait for a recording still being finished (``open_recording``). ``limits``: the session's
    client and its limit settings, for the findings that judge a start against the client's limit.
    ``behaviour``: keep what the client did on the wire (``Report.behaviour``), for a behaviour profile.
    """
    with ReportPass(
        path,
        client_exited_monotonic=client_exited_monotonic,
        keep_rows=keep_rows,
        keep_methods=keep_methods,
        clock_origin=clock_origin,
        timeline=timeline,
        wait=wait,
        limits=limits,
        behaviour=behaviour,
    ) as one_pass:
        for _ in one_pass.events():
            pass
        return one_pass.report()
