"""``analysis.task_rows``: the figures of a task row — its poll pattern, its settled cadence, and the
intervals that count as the client's own cadence (none that spans an open question)."""

from __future__ import annotations

from wiretap.analysis.questions import Question
from wiretap.analysis.task import Task
from wiretap.analysis.task_rows import cadence_of, pattern, question_row, settled


def polled(times: list[float], task_id: str = "T") -> Task:
    task = Task(task_id, "mcp", "extension", 0.0)
    task.polls.times.extend(times)
    return task


def test_a_back_off_reads_as_its_steps_and_a_steady_run_as_one_value_with_a_count() -> None:
    assert pattern([0.5, 1.0, 2.0, 4.0, 5.0, 5.0, 5.002]) == "0.50, 1.00, 2.00, 4.00, 5.00 ×3 s"
    assert pattern([]) == ""


def test_the_settled_intervals_start_where_the_back_off_reaches_its_cadence() -> None:
    assert settled([0.5, 1.0, 2.0, 4.0, 5.0, 5.0]) == [4.0, 5.0, 5.0]
    assert settled([1.0, 9.0]) == [1.0, 9.0]


def test_an_interval_that_touches_a_question_about_the_task_or_no_task_is_left_out() -> None:
    task = polled([1.0, 2.0, 3.0, 4.0, 5.0])
    about_it = Question("task_input_required", 2.5, 2.7, task="T")
    about_another = Question("task_input_required", 3.5, 3.7, task="U")
    assert cadence_of(task, [about_it, about_another], 10.0) == [1.0, 1.0, 1.0]
    assert cadence_of(task, [Question("elicitation_request", 4.0, 4.0)], 10.0) == [1.0, 1.0]


def test_a_question_still_open_at_the_end_covers_every_later_interval() -> None:
    task = polled([1.0, 2.0, 3.0, 4.0])
    assert cadence_of(task, [Question("elicitation_request", 2.5)], 10.0) == [1.0]


def test_a_question_row_rounds_its_times_to_the_millisecond() -> None:
    question = Question("elicitation_request", 1.23456, 2.34567, polls=[1.5555])
    row = question_row(question)
    assert (row.opened, row.closed, row.polls_inside) == (1.235, 2.346, [1.556])
