"""One task's own record: its compact poll log and when it was live."""

from __future__ import annotations

from wiretap.analysis.states import mcp_state
from wiretap.analysis.task import PollLog, Task


def test_a_poll_is_answered_by_the_time_it_was_asked_and_failures_are_counted_from_the_end() -> None:
    log = PollLog()
    for t in (1.0, 2.0, 3.0):
        log.add(t)
    assert log.answer(2.0, 2.1, None, failed=False) == 1
    assert log.answer(3.0, 3.2, -32603, failed=True) == 2
    assert log.answer(9.0, 9.1, None, failed=False) is None
    assert list(log.waits(end=4.0)) == [(1.0, None), (2.0, 2.1), (3.0, 3.2)]
    assert log.last_error() == -32603
    assert log.trailing_failures() == 1
    assert len(log) == 3


def test_an_abandoned_poll_is_kept_only_while_it_is_unanswered() -> None:
    log = PollLog()
    log.add(1.0)
    log.add(2.0)
    log.answer(1.0, 1.5, None, failed=False)
    log.abandon(1.0, 1.7)
    log.abandon(2.0, 2.4)
    log.abandon(2.0, 2.9)
    assert log.abandoned == {1: 2.4}


def test_a_task_is_live_from_its_creation_until_the_first_sign_of_its_end() -> None:
    task = Task(id="t1", protocol="mcp", design="mcp-2025-11-25", created_at=1.0)
    task.states.append((1.0, mcp_state("working")))
    task.terminal_at = 5.0
    task.not_found_at = 4.0
    assert task.state == mcp_state("working")
    assert not task.live_at(0.5)
    assert task.live_at(3.9)
    assert not task.live_at(4.0)
