"""The investigation of a lab session: a row per condition the client ran (what the server asked, what the
client did, the verdict, the times that show it) and the questions investigators ask, answered for the
client that ran only. Built from the one typed ``Report`` (its tool calls, tasks, questions and exits) and
the ``_meta["wiretap/lab"]`` the probe put on the wire; every renderer reads this model.

A recording with no lab call gets a row per behaviour its tasks show (polling, an open form, a headless
cancel, the exit), so any task recording reads the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wiretap.analysis.client_rules import Behaviour, ClientRule, rules_for
from wiretap.analysis.model import QuestionRow, Report, TaskRow, ToolCall, Via
from wiretap.analysis.verdicts import CANCEL_BEFORE_EXIT
from wiretap.lab.answers import answer_questions
from wiretap.lab.conditions import Condition, Kind, condition_of, settings_of
from wiretap.lab.investigation_model import Investigation, Row

CADENCE_MS = 20
"""A client whose fastest settled interval is this close to the interval its rule applies agrees with the
rule: a busy machine runs a client's timers late, never early, so the fastest shows what it schedules."""
LATE_SHARE = 0.1
"""Or later by up to this share of the interval."""
TOGETHER = 0.1
"""Cancels this close together were sent in one go (TaskStop's pair): closer than a person asks twice, and
wide enough for a client on a loaded machine."""


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def _s(seconds: float) -> str:
    return f"{seconds:.2f} s"


def _settings_text(settings: dict[str, Any]) -> str:
    shown = [f"{k} {v:g}" if isinstance(v, int | float) else f"{k} {v}" for k, v in settings.items() if v is not None]
    return ", ".join(shown) or "defaults"


class _Builder:
    def __init__(self, report: Report) -> None:
        self.report = report
        self.tasks: dict[tuple[str | None, str], TaskRow] = {(t.server, t.id): t for t in report.tasks}
        self.questions = report.questions
        self.parts = {p.recording.server: p for p in report.parts}
        self.design = next((t.design for t in report.tasks if t.protocol == "mcp"), None)

    def rule(self, behaviour: Behaviour) -> ClientRule | None:
        found = rules_for(self.report.client, behaviour, self.design)
        return found[0] if found else None

    def task_of(self, call: ToolCall) -> TaskRow | None:
        return self.tasks.get((call.server, call.task)) if call.task is not None else None

    def question_of(self, task: TaskRow) -> QuestionRow | None:
        return next((q for q in self.questions if q.task == task.id and q.server == task.server), None)

    def server_exit(self, server: str | None) -> str | None:
        part = self.parts.get(server, self.report)
        found = part.server_exit
        if found is None:
            return None
        after = (
            f", {found.after_client_exit:.2f} s after the client left" if found.after_client_exit is not None else ""
        )
        return f"the server {found.how}{after}"

    # One row per lab call.

    def row(self, call: ToolCall, condition: Condition) -> Row:
        settings = settings_of(call, condition)
        asked = _settings_text(settings)
        task = self.task_of(call)
        base = Row(condition.name, call.tool, asked, "", "", [call.t], task=call.task, server=call.server)
        if condition.kind is Kind.TASK and call.outcome != "task":
            return self._not_a_task(base, call)
        if task is None and condition.kind is Kind.TASK:
            base.did, base.verdict = "no task seen", "nothing to judge"
            return base
        if condition.name == "poll-interval":
            assert task is not None
            return self._polling(base, task)
        if condition.name == "input-required":
            assert task is not None
            return self._input(base, task)
        if condition.name == "forgotten-task":
            assert task is not None
            return self._forgotten(base, task, settings)
        if condition.name == "failing-polls":
            assert task is not None
            return self._failing(base, task)
        if condition.name == "until-cancelled":
            assert task is not None
            return self._endless(base, task)
        if condition.name == "progress":
            return self._progress(base, call, settings)
        return self._slow(base, call, settings)

    def _not_a_task(self, row: Row, call: ToolCall) -> Row:
        declared = "the call declared tasks" if call.declared_tasks else "the call declared no tasks"
        if call.outcome == "inline" and call.answered_at is not None:
            row.did = f"answered inline after {_s(call.answered_at - call.t)} ({declared})"
            row.verdict = "a one-shot call: answered inline, nothing to poll"
            row.evidence.append(call.answered_at)
        elif call.outcome == "error":
            row.did = f"answered with error {call.error} ({declared})"
            row.verdict = "the call failed"
        else:
            row.did = f"never answered ({declared})"
            row.verdict = "nothing to judge"
        return row

    def _polling(self, row: Row, task: TaskRow) -> Row:
        asked = f"pollIntervalMs {task.requested_poll_ms}" if task.requested_poll_ms is not None else "no interval"
        row.asked = f"{asked} ({row.asked})"
        row.evidence = [task.created_at, *task.polls[:3]]
        if len(task.polls) < 2 or task.settled_interval is None or task.settled_floor is None:
            row.did = f"polled {len(task.polls)} times"
            row.verdict = "too few polls to measure a cadence"
            return row
        first = f", the first {_ms(task.first_poll_after)} after the task" if task.first_poll_after is not None else ""
        row.did = f"polled every {_ms(task.settled_interval)} ({len(task.polls)} polls{first}); {task.final_state}"
        rule = self.rule(Behaviour.POLL)
        applied = task.applied_poll_ms
        if rule is None or applied is None:
            if task.requested_poll_ms:
                ratio = task.settled_interval * 1000 / task.requested_poll_ms
                row.verdict = f"{ratio:.2f}× the asked interval (no known rule for this client)"
            else:
                row.verdict = "its own interval, none asked (no known rule for this client)"
            return row
        allowed = max(CADENCE_MS, LATE_SHARE * applied)
        floor = task.settled_floor * 1000 - applied
        off = abs(floor)
        row.agrees = -CADENCE_MS <= floor <= allowed
        if task.requested_poll_ms is None:
            what = f"its default, {applied} ms"
        elif applied != task.requested_poll_ms:
            what = f"the asked interval clamped to {applied} ms"
        else:
            what = "the asked interval"
        row.verdict = f"{what}: {'as' if row.agrees else 'not as'} its rule ({off:.0f} ms off)"
        late = task.settled_interval * 1000 - applied
        if row.agrees and late > allowed:
            row.verdict += f"; its timers ran {late:.0f} ms late at the median, a busy machine"
        return row

    def _input(self, row: Row, task: TaskRow) -> Row:
        question = self.question_of(task)
        if question is None:
            row.did, row.verdict = f"no question seen; the task ended {task.final_state}", "nothing to judge"
            return row
        closed = question.closed
        row.evidence = [question.opened, *([closed] if closed is not None else [])]
        if question.cancelled_at_once and closed is not None:
            row.did = f"cancelled the task {_ms(closed - question.opened)} after it turned input_required"
            row.verdict = "cancels at input_required: a headless client cannot show the question"
            row.agrees = True if self.rule(Behaviour.HEADLESS_QUESTION) is not None else None
            return row
        inside = len(question.polls_inside)
        after = next((t for t in task.polls if closed is not None and t > closed), None)
        if after is not None:
            row.evidence.append(after)
        window = f"{_s(question.opened)}–{_s(closed)}" if closed is not None else f"{_s(question.opened)}–the end"
        resumed = f", the next poll {_ms(after - closed)} later" if after is not None and closed is not None else ""
        row.did = (
            f"form open {window} with {inside} polls inside; answered by {question.answered_by or 'nothing'}{resumed}"
        )
        row.verdict = "stops polling while the form is open" if not inside else "keeps polling while it is open"
        if self.rule(Behaviour.OPEN_FORM) is not None:
            row.agrees = not inside and question.answered_by is not None and not question.cancelled_instead
        return row

    def _forgotten(self, row: Row, task: TaskRow, settings: dict[str, Any]) -> Row:
        forget = settings.get("forget_after_s")
        if not isinstance(forget, int | float):
            row.did, row.verdict = f"{task.failed_polls} polls failed", "the server stated no time to forget the task"
            return row
        forgotten = task.created_at + forget
        row.asked += f" (forgotten at {_s(forgotten)})"
        after = [t for t in task.polls if t >= forgotten]
        if task.terminal or not after:
            row.did = f"no poll after the server forgot it; the task was {task.final_state}"
            row.verdict = "never asked for the forgotten id"
            return row
        first, last = after[0], after[-1]
        row.evidence = [forgotten, first, last]
        row.did = f"{len(after)} polls for the forgotten id ({task.failed_polls} failed), {_s(first)} to {_s(last)}"
        client = self.report.client_exit
        interval = task.median_interval or task.settled_interval or 1.0
        if client is not None and client.t - last <= 2 * interval:
            row.did += f"; the client left at {_s(client.t)}"
            row.verdict = f"kept asking until it left: {_s(last - forgotten)} after the id was forgotten"
        else:
            row.verdict = f"gave up {_s(last - forgotten)} after the id was forgotten ({len(after)} polls)"
        return row

    def _failing(self, row: Row, task: TaskRow) -> Row:
        row.evidence = task.polls[: task.failed_polls + 1]
        row.did = (
            f"{task.failed_polls} polls failed, {len(task.polls) - task.failed_polls} succeeded; {task.final_state}"
        )
        if task.terminal and len(task.polls) > task.failed_polls:
            row.verdict = f"retries failed polls: went on after {task.failed_polls} failures"
        else:
            row.verdict = f"gave up after {task.failed_polls} failed polls"
        return row

    def _endless(self, row: Row, task: TaskRow) -> Row:
        client = self.report.client_exit
        server = self.server_exit(task.server)
        refused = [r for r in task.refused if "cancel" in r.via]
        cancels = sorted([*task.cancels, *(Via(r.t, r.via) for r in refused)], key=lambda c: c.t)
        row.evidence = [c.t for c in cancels] + ([client.t] if client is not None else [])
        rule = self.rule(Behaviour.EXIT_WITH_TASK)
        if cancels and (client is None or client.t - cancels[0].t > CANCEL_BEFORE_EXIT):
            together = len(cancels) > 1 and cancels[-1].t - cancels[0].t <= TOGETHER
            sent = f"{len(cancels)} cancels {'at once' if together else ''} at {_s(cancels[0].t)}".replace("  ", " ")
            if refused:
                sent += f" ({len(refused)} refused: the task had ended)"
            before = f", {_s(client.t - cancels[0].t)} before the client left" if client is not None else ""
            live = "live" if task.live_at_client_exit else "not live"
            ended = task.final_state if task.terminal else "its cancel answered"
            row.did = f"{sent}{before}; {ended}, {live} at exit"
            row.verdict = "stopped during the session (TaskStop), not a cancel on exit"
            return row
        if client is None:
            row.did, row.verdict = "the recording does not show the client leaving", "nothing to judge"
            return row
        tail = f"; {server}" if server else ""
        if cancels:
            row.did = f"cancelled at {_s(cancels[0].t)}, as it left at {_s(client.t)} ({client.how}){tail}"
            row.verdict = "cancels a live task on exit"
            row.agrees = False if rule is not None else None
        else:
            row.did = f"left at {_s(client.t)} ({client.how}) with the task {task.final_state}, no cancel{tail}"
            row.verdict = "no cancel on exit with a live task"
            row.agrees = True if rule is not None else None
        return row

    def _progress(self, row: Row, call: ToolCall, settings: dict[str, Any]) -> Row:
        row.evidence = [call.t, *call.progress[:3], *([call.answered_at] if call.answered_at is not None else [])]
        if not call.progress_token:
            row.did = "sent no progressToken: the server could send no progress"
            row.verdict = "asks for no progress"
            return row
        got = f"{call.progress_count} progress notifications"
        asked = settings.get("count")
        if call.cancelled_at is not None:
            row.did = f"{got}, then cancelled the call {_s(call.cancelled_at - call.t)} in"
            row.verdict = "gave up on a call that was making progress"
        elif call.answered_at is not None:
            row.did = f"{got}; answered after {_s(call.answered_at - call.t)}"
            row.verdict = "waited for the answer through its progress" + (
                "" if not isinstance(asked, int | float) or call.progress_count == asked else " (some progress missing)"
            )
        else:
            row.did, row.verdict = f"{got}; never answered", "the call was left open"
        return row

    def _slow(self, row: Row, call: ToolCall, settings: dict[str, Any]) -> Row:
        if call.cancelled_at is not None:
            row.evidence.append(call.cancelled_at)
            row.did = f"cancelled the call after {_s(call.cancelled_at - call.t)} (notifications/cancelled)"
            row.verdict = f"its request timeout: {_s(call.cancelled_at - call.t)}"
        elif call.answered_at is not None:
            row.evidence.append(call.answered_at)
            row.did = f"waited {_s(call.answered_at - call.t)} for the answer"
            row.verdict = f"waits at least {_s(call.answered_at - call.t)} for an inline answer"
        else:
            row.did, row.verdict = "never answered and never cancelled", "the call was left open"
        return row

    # Rows of a recording without lab calls: what its tasks show.

    def plain_rows(self) -> list[Row]:
        rows: list[Row] = []
        for task in self.report.tasks:
            if len(task.polls) >= 2 and task.settled_interval is not None:
                name = "polling (A2A)" if task.protocol == "a2a" else "polling"
                row = Row(name, task.tool, "", "", "", task=task.id, server=task.server)
                rows.append(self._polling(row, task))
                row.asked = row.asked.removesuffix(" ()")
        for question in self.questions:
            asked = self.tasks.get((question.server, question.task or ""))
            if asked is None:
                continue
            row = self._input(
                Row("open form", asked.tool, question.kind, "", "", task=asked.id, server=asked.server), asked
            )
            if row.verdict.startswith("cancels"):
                row.condition = "headless question"
            rows.append(row)
        if self.report.client_exit is not None:
            rows.append(self._exit_row())
        return rows

    def _exit_row(self) -> Row:
        client = self.report.client_exit
        assert client is not None
        cancel = self.report.verdicts.cancel_on_exit
        live = [t for t in self.report.tasks if t.live_at_client_exit]
        server = self.server_exit(None)
        row = Row("exit", None, f"{len(self.report.tasks)} tasks, {len(live)} live at exit", "", "", [client.t])
        row.did = f"left at {_s(client.t)} ({client.how})" + (f"; {server}" if server else "")
        if not live:
            row.verdict = "no live task at exit"
        else:
            row.verdict = "cancels live tasks on exit" if cancel.sent else "no cancel on exit with a live task"
            if self.rule(Behaviour.EXIT_WITH_TASK) is not None:
                row.agrees = not cancel.sent
        return row


def build_investigation(report: Report, conditions: Sequence[Condition] | None = None) -> Investigation:
    """The investigation of a report (a lab session's, or any recording's); ``conditions`` narrows it."""
    builder = _Builder(report)
    wanted = list(conditions) if conditions is not None else None
    rows = []
    ran: set[str] = set()
    lab_calls = [(c, found) for c in report.calls if (found := condition_of(c)) is not None]
    for call, condition in lab_calls:
        ran.add(condition.name)
        if wanted is None or condition in wanted:
            rows.append(builder.row(call, condition))
    if not lab_calls:
        rows = builder.plain_rows()
    not_run = [c.name for c in wanted or [] if c.name not in ran] if lab_calls or wanted else []
    who = _who(report, builder.design)
    return Investigation(
        source=report.recording.source,
        name=report.recording.name,
        client=who,
        client_version=report.client_version,
        poll_rule=report.poll_rule,
        rows=rows,
        answers=answer_questions(rows, builder.rule, report),
        not_run=not_run,
    )


def _who(report: Report, design: str | None) -> str | None:
    for behaviour in Behaviour:
        found = rules_for(report.client, behaviour, design)
        if found:
            return found[0].who
    return report.client
