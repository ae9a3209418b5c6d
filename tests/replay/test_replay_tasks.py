"""A replayed task server answers polls by the live client's clock, not one recorded poll after another.

The scenario server (tests/scenarios/replay_task_server.py) runs its task on the clock: ``working`` for
0.50 s, ``input_required`` until the client answers, ``working`` for 0.40 s more, then ``completed``.
It is recorded once (through the real tap) with a client polling every 0.05 s and answering 0.30 s
after the question; the replay is then polled by clients with other cadences and other answer times,
and each poll must show the state the real server would have shown at that moment. Polls closer than
TOLERANCE to a state change are not judged: the recording knows each change only to within one
recorded poll.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from scenarios.replay_task_server import FINISH_AFTER, QUESTION_AFTER
from support.replayrun import TASK_CLIENT, TASK_SERVER, WIRETAP

RECORDED_POLL, RECORDED_ANSWER_AFTER = 0.05, 0.30
TOLERANCE = 0.08


def run_client(server: list[str], poll: float, answer_after: float) -> dict[str, Any]:
    command = [*TASK_CLIENT, "--poll", str(poll), "--answer-after", str(answer_after), "--", *server]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def truth(at: float, answered_at: float | None, speed: float = 1.0) -> str | None:
    """The state at ``at`` seconds after the task was created; None too close to a change to judge."""
    changes = [QUESTION_AFTER / speed] + ([answered_at, answered_at + FINISH_AFTER / speed] if answered_at else [])
    if any(abs(at - change) < TOLERANCE for change in changes):
        return None
    if answered_at is not None and at >= answered_at:
        return "completed" if at >= answered_at + FINISH_AFTER / speed else "working"
    return "input_required" if at >= QUESTION_AFTER / speed else "working"


def judged(run: dict[str, Any], speed: float = 1.0) -> list[tuple[float, str, str]]:
    """Every poll that can be judged: (when, what it showed, what the server would have shown)."""
    out = []
    for at, status in run["polls"]:
        expected = truth(at, run["answered_at"], speed)
        if expected is not None:
            out.append((at, status, expected))
    return out


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = tmp_path_factory.mktemp("replay-tasks") / "tasks.jsonl"
    run = run_client([*WIRETAP, "tap", "--out", str(path), "--", *TASK_SERVER], RECORDED_POLL, RECORDED_ANSWER_AFTER)
    assert [status for _, status, expected in judged(run) if status != expected] == []
    return path, run


@pytest.mark.parametrize(("poll", "answer_after"), [(0.3, 0.35), (0.12, 1.0)], ids=["slower", "answers-later"])
def test_a_client_polling_at_its_own_rate_sees_what_the_real_server_would_have_shown_it(
    recording: tuple[Path, dict[str, Any]], poll: float, answer_after: float, tmp_path: Path
) -> None:
    path, recorded = recording
    summary = tmp_path / "summary.json"
    replayed = run_client([*WIRETAP, "replay", str(path), "--summary", str(summary)], poll, answer_after)
    live = run_client(TASK_SERVER, poll, answer_after)
    for run in (replayed, live):
        assert [(at, status, expected) for at, status, expected in judged(run) if status != expected] == []
        assert len(judged(run)) >= 4
    assert [status for _, status in replayed["polls"]][-1] == "completed"
    assert replayed["result"] == recorded["result"] == live["result"]
    assert replayed["logs"] == ["warming up"]
    # Its own cadence, not the recorded one: as many polls as it made, each answered by the task clock.
    assert len(replayed["polls"]) != len(recorded["polls"])
    answered = json.loads(summary.read_text())
    assert answered["polls_by_task_clock"] == len(replayed["polls"])
    assert answered["misses"] == []


def test_a_faster_pace_runs_the_task_clock_faster(recording: tuple[Path, dict[str, Any]]) -> None:
    path, _ = recording
    replayed = run_client([*WIRETAP, "replay", str(path), "--pace", "2"], 0.12, 0.3)
    assert [(at, status, expected) for at, status, expected in judged(replayed, speed=2) if status != expected] == []
    assert len(judged(replayed, speed=2)) >= 3


def test_fast_pace_shows_the_question_at_once_and_the_end_once_it_is_answered(
    recording: tuple[Path, dict[str, Any]],
) -> None:
    path, recorded = recording
    replayed = run_client([*WIRETAP, "replay", str(path), "--pace", "fast"], 0.05, 0.1)
    statuses = [status for _, status in replayed["polls"]]
    answered_at = replayed["answered_at"]
    assert statuses[0] == "input_required"
    assert all(status == "input_required" for at, status in replayed["polls"] if at < answered_at)
    assert all(status == "completed" for at, status in replayed["polls"] if at > answered_at)
    assert replayed["result"] == recorded["result"]
