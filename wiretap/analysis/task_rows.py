"""A task and a question as the report lists them: the rows of ``tasks`` and ``questions``, with the
figures every renderer reads (poll pattern, settled cadence, median interval)."""

from __future__ import annotations

from array import array
from itertools import pairwise

from wiretap.analysis import model
from wiretap.analysis.client_rules import ClientRule, poll_rule_for
from wiretap.analysis.model import ClientExit
from wiretap.analysis.poll_schedule import poll_schedule
from wiretap.analysis.questions import Question, touches
from wiretap.analysis.stats import Distribution, median
from wiretap.analysis.task import Task

CLAUDE_CODE_POLL = poll_rule_for("claude-code")


def applied_poll_ms(requested: int | None, rule: ClientRule | None = CLAUDE_CODE_POLL) -> int | None:
    """The interval the client's poll rule applies to the server's (Claude Code's by default); None without one."""
    return rule.applied_ms(requested) if rule is not None else None


def _cancel_ended(task: Task) -> bool:
    ended = task.terminal_at if task.terminal_at is not None else task.cancel_answered_at
    return bool(task.cancels) and ended is not None and task.cancels[0][0] <= ended


def rounded(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def settled(intervals: list[float]) -> list[float]:
    """The intervals once a client has backed off to its cadence: from the first one that reaches 80 % of
    where it ends up (the median of the last three)."""
    if len(intervals) < 3:
        return intervals
    end = sorted(intervals[-3:])[1]
    start = next((n for n, value in enumerate(intervals) if value >= 0.8 * end), 0)
    return intervals[start:]


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


def rounded_t(value: float) -> float:
    return round(value, 3)


def cadence_of(task: Task, questions: list[Question], end: float, intervals: list[float] | None = None) -> list[float]:
    """A task's intervals between polls that span no open question (one about it, or about no task).
    ``intervals``: the task's intervals already measured, returned as they are when no question applies."""
    windows = [q for q in questions if q.task in (None, task.id)]
    if not windows and intervals is not None:
        return intervals
    return [b - a for a, b in pairwise(task.polls.times) if not touches(a, b, windows, end)]


def task_row(
    task: Task, questions: list[Question], end: float, client: ClientExit | None, rule: ClientRule | None
) -> model.TaskRow:
    """A task as the report lists it; ``client``: how the client left, ``rule``: its poll rule."""
    times = task.polls.times
    intervals = [b - a for a, b in pairwise(times)]
    cadence = cadence_of(task, questions, end, intervals)
    summary = Distribution.of(intervals).summary()
    steady = settled(cadence)
    live = task.live_at(client.t) if client is not None else None
    return model.TaskRow(
        protocol=task.protocol,
        design=task.design,
        id=task.id,
        tool=task.tool,
        created_at=rounded_t(task.created_at),
        seen_first_by_poll=task.seen_first_by_poll,
        requested_poll_ms=task.requested_poll_ms,
        applied_poll_ms=applied_poll_ms(task.requested_poll_ms, rule) if task.protocol == "mcp" else None,
        polls=[rounded_t(t) for t in times],
        first_poll_after=rounded(times[0] - task.created_at) if times else None,
        intervals=model.Spread(**summary.as_dict()) if summary else None,  # type: ignore[arg-type]
        pattern=pattern(intervals),
        settled_interval=rounded(median(steady)),
        failed_polls=len(task.polls.errors),
        states=[model.StateAt(rounded_t(t), s.raw) for t, s in task.states],
        final_state=task.state.raw if task.state else None,
        terminal=task.terminal_at is not None,
        live_at_client_exit=live,
        cancels=[model.Via(rounded_t(t), via) for t, via in task.cancels],
        cancelled_by_client_at=rounded(task.cancels[0][0]) if _cancel_ended(task) else None,
        refused=[model.Refusal(rounded_t(t), via, code) for t, via, code in task.refused],
        answers=[model.Via(rounded_t(t), via) for t, via in task.answers],
        median_interval=rounded(summary.median) if summary else None,
        settled_floor=rounded(min(steady)) if steady else None,
        poll_schedule=poll_schedule(task, pattern),
        cadence=array("d", cadence),
    )


def question_row(q: Question) -> model.QuestionRow:
    return model.QuestionRow(
        kind=q.kind,
        task=q.task,
        keys=q.keys,
        opened=rounded_t(q.opened),
        closed=rounded(q.closed),
        answered_by=q.answered_by,
        cancelled_instead=q.cancelled_instead,
        polls_inside=[rounded_t(t) for t in q.polls],
        longest_gap=rounded(q.longest_gap),
        longest_gap_between=[rounded_t(t) for t in q.longest_gap_between] if q.longest_gap_between else None,
        cadence_outside=rounded(q.cadence_outside),
    )
