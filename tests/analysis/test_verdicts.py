"""``analysis.verdicts``: what each verdict says when there is nothing to judge, and the note a capped
recording adds."""

from __future__ import annotations

from wiretap.analysis.model import Capped, ClientExit
from wiretap.analysis.questions import Question
from wiretap.analysis.task import Task
from wiretap.analysis.verdicts import cancel_verdict, capped_note, poll_verdict, question_verdict


def test_no_task_and_a_task_polled_once_have_no_poll_interval() -> None:
    assert poll_verdict([], [], 1.0, None).verdict == "No long-running tasks in this recording."
    once = Task("T", "mcp", "extension", 0.0)
    once.polls.times.append(1.0)
    assert "polled fewer than twice" in poll_verdict([once], [], 2.0, None).verdict


def test_a_steady_client_polls_at_its_interval_against_the_one_asked_for() -> None:
    task = Task("T", "mcp", "extension", 0.0, requested_poll_ms=1000)
    task.polls.times.extend([1.0, 3.0, 5.0, 7.0])
    verdict = poll_verdict([task], [], 8.0, None)
    assert verdict.settled_interval == 2.0 and verdict.requested_poll_ms == 1000
    assert "2.00× the requested interval" in verdict.verdict


def test_without_the_client_leaving_cancel_on_exit_is_unknown() -> None:
    assert cancel_verdict([], [], None, None).verdict.startswith("Unknown")
    went = cancel_verdict([], [], ClientExit(3.0, "stdin closed", []), None)
    assert went.verdict == "The client went away at 3.00 s (stdin closed) with no live task." and went.sent is None


def test_the_longest_gap_is_named_with_its_question() -> None:
    assert question_verdict([]).verdict == "No question to the user was open in this recording."
    asked = Question("elicitation_request", 1.0, 4.0, keys=["go on?"], answered_by="elicitation result: accept")
    asked.longest_gap = 3.0
    verdict = question_verdict([asked])
    assert verdict.longest_gap == 3.0 and "(1.00–4.00 s)" in verdict.verdict


def test_a_capped_recording_says_where_its_stored_part_ends() -> None:
    note = capped_note(Capped(since=12.5, max_size=1024, messages=3, events=1, bytes=99))
    assert note == "(The recording was capped at 12.50 s: what came later is not in it.)"
