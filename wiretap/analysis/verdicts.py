"""The report's verdicts: how the client polled, whether it cancelled its tasks on exit, how it polled
while a question was open; and the note every verdict of a capped recording adds."""

from __future__ import annotations

from itertools import pairwise

from wiretap.analysis import model
from wiretap.analysis.client_rules import ClientRule
from wiretap.analysis.model import FIGURES, ClientExit, ServerExit
from wiretap.analysis.questions import Question
from wiretap.analysis.stats import Distribution
from wiretap.analysis.task import Task
from wiretap.analysis.task_rows import cadence_of, pattern, rounded, settled
from wiretap.plural import plural

CANCEL_BEFORE_EXIT = 0.5
"""Seconds before the client left in which cancelling a task counts as cancelling it on exit: a client
cancelling on its way out does so as it closes; a cancel earlier than that (TaskStop) is a stop during the
session."""


def poll_verdict(
    tasks: list[Task], questions: list[Question], end: float, rule: ClientRule | None
) -> model.PollVerdict:
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
        intervals = cadence_of(task, questions, end)
        pooled.extend(intervals)
        after_ramp.extend(settled(intervals))
    if not pooled.count:
        return model.PollVerdict("Every interval between polls spans an open question: see the question below.", [])
    median, steady = pooled.quantile(0.5), after_ramp.quantile(0.5)
    asked = [task.requested_poll_ms for task in polled if task.requested_poll_ms is not None]
    if asked:
        requested = max(set(asked), key=asked.count)
        ratio = steady / (requested / 1000) if requested else float("inf")
        tail = f"the server asked for {requested} ms: {ratio:.2f}× the requested interval"
    elif all(task.protocol == "mcp" for task in polled):
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
        median_interval=rounded(median),
        settled_interval=rounded(steady),
        requested_poll_ms=max(set(asked), key=asked.count) if asked else None,
    )


def cancel_verdict(
    task_rows: list[model.TaskRow], questions: list[Question], client: ClientExit | None, server: ServerExit | None
) -> model.CancelVerdict:
    if client is None:
        return model.CancelVerdict("Unknown: the recording does not show the client going away.", [])
    server_text = (
        f"; the server {server.how}, {server.after_client_exit:.2f} s later"
        if server is not None and server.after_client_exit is not None
        else ""
    )
    live = [row for row in task_rows if row.live_at_client_exit]
    # A task the client cancelled on its way out had ended by the time it left: not live at exit (as
    # tasks[] says), but credited as cancelled on exit.
    # A cancel that answered a question the moment it opened (a headless client) is that answer, not an exit.
    at_once = {q.task for q in questions if q.cancelled_at_once}
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
            f"cancelled {len(cancelled) - len(way_out)} of them" if len(cancelled) > len(way_out) else "cancelled none"
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


def question_verdict(questions: list[Question]) -> model.QuestionVerdict:
    if not questions:
        return model.QuestionVerdict("No question to the user was open in this recording.", [])
    worst = max(questions, key=lambda q: q.longest_gap or 0.0)
    closed = f"{worst.closed:.2f}" if worst.closed is not None else "the end"
    cadence = (
        f", against a {FIGURES['cadence_outside']} of {worst.cadence_outside:.2f} s" if worst.cadence_outside else ""
    )
    if worst.answered_by is None:
        answered = "; never answered"
    elif worst.cancelled_at_once and worst.closed is not None:
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
    return model.QuestionVerdict(verdict, evidence, longest_gap=rounded(worst.longest_gap))


def capped_note(capped: model.Capped) -> str:
    """What every verdict of a capped recording adds: it measures the stored part only."""
    return f"(The recording was capped at {capped.since:.2f} s: what came later is not in it.)"
