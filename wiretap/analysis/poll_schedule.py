"""An A2A task's poll schedule: the gap before each GetTask, the client's back-off step (from the end of the
previous poll: its answer, or the moment the client abandoned it; for the first poll, the answer that
created the task), the polls that failed, and the give-up
point (the last poll failed, the task had not ended, and no poll came after it)."""

from __future__ import annotations

from collections.abc import Callable

from wiretap.analysis import model
from wiretap.analysis.task import Task
from wiretap.plural import plural


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def poll_schedule(task: Task, pattern: Callable[[list[float]], str]) -> model.PollSchedule | None:
    polls = task.polls
    if task.protocol != "a2a" or not len(polls):
        return None
    steps: list[model.PollStep] = []
    previous_sent: float | None = None
    previous_end: float | None = None if task.seen_first_by_poll else task.created_at
    run = longest = 0
    for index, (asked, answered) in enumerate(polls.waits(0.0)):
        abandoned = polls.abandoned.get(index)
        end = answered if answered is not None else abandoned
        if index in polls.errors:
            outcome = "error"
        else:
            outcome = "answered" if answered is not None else "abandoned" if abandoned is not None else "unanswered"
        steps.append(
            model.PollStep(
                t=round(asked, 3),
                gap=_r(asked - previous_sent) if previous_sent is not None else None,
                step=_r(asked - previous_end) if previous_end is not None else None,
                waited=_r(end - asked) if end is not None else None,
                outcome=outcome,
                error=polls.errors.get(index) if outcome == "error" else None,
            )
        )
        run = run + 1 if outcome != "answered" else 0
        longest = max(longest, run)
        previous_sent, previous_end = asked, end
    last = steps[-1]
    ended = task.terminal_at is not None and task.terminal_at <= last.t
    gave_up = run > 0 and not ended
    return model.PollSchedule(
        steps=steps,
        back_off=pattern([s.step for s in steps if s.step is not None]),
        failed=sum(s.outcome != "answered" for s in steps),
        longest_failed_run=longest,
        gave_up_at=_r(last.t + (last.waited or 0.0)) if gave_up else None,
        last_poll_at=last.t,
        failed_before_giving_up=run if gave_up else None,
    )


def back_off_verdict(rows: list[model.TaskRow]) -> model.Verdict | None:
    """The client's back-off and give-up rule as the A2A tasks it polled show it."""
    polled = [row for row in rows if row.poll_schedule is not None and len(row.poll_schedule.steps) >= 2]
    if not polled:
        return None
    evidence = [_evidence(row) for row in polled]
    gave_up = [row for row in polled if row.poll_schedule and row.poll_schedule.gave_up_at is not None]
    first = polled[0].poll_schedule
    assert first is not None
    verdict = f"The client waited {first.back_off} after each poll before the next (task {polled[0].id})"
    if gave_up:
        schedule = gave_up[0].poll_schedule
        assert schedule is not None
        waits = sorted({s.waited for s in schedule.steps if s.outcome == "abandoned" and s.waited is not None})
        counted = f", each abandoned after {model.seconds(waits[len(waits) // 2])}" if waits else ""
        verdict += (
            f"; it gave up on task {gave_up[0].id} at {schedule.gave_up_at:.2f} s after "
            f"{plural(schedule.failed_before_giving_up or 0, 'failed poll', 'failed polls')} in a row{counted}, "
            "and polled it no more"
        )
    else:
        verdict += "; it gave up on no task while polling"
    return model.Verdict(verdict + ".", evidence)


def _evidence(row: model.TaskRow) -> str:
    schedule = row.poll_schedule
    assert schedule is not None
    failed = [s for s in schedule.steps if s.outcome != "answered"]
    tail = (
        f"gave up at {schedule.gave_up_at:.2f} s (last poll {schedule.last_poll_at:.2f} s)"
        if schedule.gave_up_at is not None
        else f"ended {row.final_state or 'in no known state'}"
    )
    return (
        f"task {row.id}{f' ({row.tool})' if row.tool else ''}: steps {schedule.back_off or '—'}; "
        f"{plural(len(failed), 'failed poll', 'failed polls')}{_listed(failed)}; {tail}"
    )


def _listed(failed: list[model.PollStep]) -> str:
    if not failed:
        return ""
    return f" ({', '.join(f'{s.t:.2f} s {s.outcome}' for s in failed[:6])}{' …' if len(failed) > 6 else ''})"
