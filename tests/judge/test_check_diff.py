"""``wiretap check`` against YAML expectations, and ``wiretap diff`` between recordings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.check_fixtures import DEMO, EXT, REPO, expectations, task_recording

from wiretap.analysis.report import build_report
from wiretap.recording.events import Header
from wiretap.recording.writer import encode_event


def wiretap(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wiretap", *args], capture_output=True, text=True, timeout=60)


def test_the_shipped_demo_expectations_hold() -> None:
    result = wiretap("check", str(DEMO), "--expect", str(REPO / "recordings" / "demo.expect.yaml"))
    assert result.returncode == 0, result.stdout
    assert result.stdout.strip().endswith("7 of 7 expectations hold")


def test_polls_within_tolerance_pass_and_a_drifting_client_fails_with_evidence(tmp_path: Path) -> None:
    rules = expectations(
        tmp_path / "e.yaml", "  - poll_interval: {within: 10%, every: true}\n  - cancel_on_exit: sent\n"
    )
    steady = task_recording(tmp_path / "steady.jsonl", [3.2, 6.2, 9.2, 12.2], cancel=True)
    assert wiretap("check", str(steady), "--expect", str(rules)).returncode == 0
    drifting = task_recording(tmp_path / "drift.jsonl", [3.2, 6.2, 10.2, 14.2])
    result = wiretap("check", str(drifting), "--expect", str(rules))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"FAIL {rules}:3 poll_interval: task T: 2 intervals outside 3.000 s ± 10%")
    assert "intervals 3.00, 4.00 ×2 s" in lines[1]
    assert any(
        line.startswith(f"FAIL {rules}:4 cancel_on_exit: expected sent, the recording shows not_sent") for line in lines
    )


def test_every_interval_is_the_reports_cadence_so_a_question_open_for_no_time_still_counts(tmp_path: Path) -> None:
    """A question opened and answered in the same instant, at a poll: the report leaves out both intervals
    around it, and ``check`` judges the same intervals."""
    path = task_recording(tmp_path / "asked.jsonl", [3.2, 6.2, 10.2, 13.2])
    lines = path.read_bytes().splitlines(keepends=True)
    asked = {"id": 50, "method": "elicitation/create", "params": {"message": "go on?"}}
    for direction, body in (("s2c", asked), ("c2s", {"id": 50, "result": {"action": "accept"}})):
        event = {"t": 6.2, "kind": "message", "dir": direction, "msg": {"jsonrpc": "2.0", **body}}
        lines.insert(-4, encode_event(event)[0])
    path.write_bytes(b"".join(lines))
    (task,) = build_report(path).tasks
    assert [round(v, 3) for v in task.cadence] == [3.0]
    rules = expectations(tmp_path / "e.yaml", "  - poll_interval: {within: 10%, every: true}\n")
    result = wiretap("check", str(path), "--expect", str(rules))
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        ("  - poll_interval: {within: lots}\n", 3, "percentage"),
        ("  - cancel_on_exit: maybe\n", 3, "one of: sent, not_sent, no_live_tasks"),
        ("  - messages: {method: x}\n  - teleport: yes\n", 4, "unknown check 'teleport'"),
        ("  - messages: {method: [unclosed\n", 4, "not valid YAML"),
        ("  - !!python/object:os.system {}\n", 3, "not valid YAML"),
    ],
)
def test_a_bad_expectations_file_exits_2_naming_the_line(tmp_path: Path, body: str, line: int, message: str) -> None:
    rules = expectations(tmp_path / "bad.yaml", body)
    result = wiretap("check", str(DEMO), "--expect", str(rules))
    assert result.returncode == 2
    assert result.stderr.startswith(f"Error: {rules}:{line}: ") and message in result.stderr
    assert "Traceback" not in result.stderr


def test_diff_finds_a_changed_cadence_and_a_new_finding_and_nothing_when_equal(tmp_path: Path) -> None:
    a = task_recording(tmp_path / "a.jsonl", [3.2, 6.2, 9.2])
    b = task_recording(tmp_path / "b.jsonl", [1.2, 2.2, 3.2, 4.2, 5.2])
    same = wiretap("diff", str(a), str(a))
    assert same.returncode == 0 and same.stdout.strip().endswith("no difference in behaviour")
    changed = wiretap("diff", str(a), str(b))
    assert changed.returncode == 1
    assert "task 1 (build): poll interval 3.0 s → 1.0 s" in changed.stdout
    assert changed.stdout.strip().endswith("the recordings behave differently")


def test_diff_shows_a_changed_method_sequence(tmp_path: Path) -> None:
    a = task_recording(tmp_path / "a.jsonl", [3.2, 6.2])
    b = task_recording(tmp_path / "b.jsonl", [3.2, 6.2], cancel=True)
    result = wiretap("diff", str(a), str(b))
    assert result.returncode == 1
    assert "+→ tasks/cancel" in result.stdout


@pytest.mark.parametrize(
    ("name", "code", "failing"),
    [
        ("demo", 0, []),
        ("cc-ext-polling", 0, []),
        ("a2a-rejected-loop", 0, []),
        ("cc-ext-form", 1, ["max_elicitation_gap: 1 open question with a polling gap over 5 s"]),
        ("exit-no-cancel", 1, ["cancel_on_exit: expected sent, the recording shows not_sent"]),
    ],
)
def test_the_shipped_expectations_pass_and_fail_for_the_right_reasons(name: str, code: int, failing: list[str]) -> None:
    recordings = REPO / "recordings"
    result = wiretap("check", str(recordings / f"{name}.jsonl"), "--expect", str(recordings / f"{name}.expect.yaml"))
    assert result.returncode == code, result.stdout
    failures = [line.split(" ", 2)[2] for line in result.stdout.splitlines() if line.startswith("FAIL ")]
    assert [f for f in failures if not any(f.startswith(want) for want in failing)] == []
    assert len(failures) == len(failing)


def side_by_side(path: Path, tasks: dict[str, list[float]], *, abort_last_poll: bool = False) -> Path:
    """One 2026-07-28 extension task per tool, all started at once, each polled at its own times (the polls
    of all the tasks on the wire in time order); the client cancels the build task, if it ran, at 9 s, and
    with ``abort_last_poll`` sends ``notifications/cancelled`` with it for the last poll before it (answered
    already)."""
    events: list[dict[str, Any]] = []

    def msg(t: float, direction: str, body: dict[str, Any]) -> None:
        events.append({"t": t, "kind": "message", "dir": direction, "msg": {"jsonrpc": "2.0", **body}})

    polls: list[tuple[float, str]] = []
    for n, (tool, times) in enumerate(tasks.items(), 1):
        msg(0.1 * n, "c2s", {"id": n, "method": "tools/call", "params": {"name": tool, "_meta": EXT}})
        created = {"resultType": "task", "taskId": tool, "status": "working", "pollIntervalMs": 1000}
        msg(0.1 * n + 0.01, "s2c", {"id": n, "result": created})
        polls += [(t, tool) for t in times]
    for n, (t, tool) in enumerate(sorted(polls), 100):
        msg(t, "c2s", {"id": n, "method": "tasks/get", "params": {"taskId": tool}})
        msg(t + 0.001, "s2c", {"id": n, "result": {"resultType": "complete", "taskId": tool, "status": "working"}})
    if "build" in tasks:
        msg(9.0, "c2s", {"id": 99, "method": "tasks/cancel", "params": {"taskId": "build"}})
        msg(9.001, "s2c", {"id": 99, "result": {"resultType": "complete"}})
    if abort_last_poll:
        last = 100 + max(n for n, (t, _) in enumerate(sorted(polls)) if t < 9.0)
        msg(9.0, "c2s", {"method": "notifications/cancelled", "params": {"requestId": last, "reason": "aborted"}})
    events.append({"t": 9.5, "kind": "eof", "dir": "c2s"})
    header = Header(transport="stdio", name="t", argv=[]).to_dict()
    path.write_bytes(b"".join(encode_event(e)[0] for e in [header, *sorted(events, key=lambda e: e["t"])]))
    return path


def test_where_polls_of_tasks_side_by_side_fall_among_other_requests_is_no_difference(tmp_path: Path) -> None:
    """The cancel comes before a poll of the other task in A and after it in B, and in B the client aborts
    its last poll as it cancels: the clock's doing, both."""
    a = side_by_side(tmp_path / "a.jsonl", {"build": [1.2, 2.2, 3.2], "deploy": [1.5, 2.5, 3.5, 8.9]})
    b = side_by_side(
        tmp_path / "b.jsonl", {"build": [1.2, 2.2, 3.2], "deploy": [1.5, 2.5, 3.5, 9.1]}, abort_last_poll=True
    )
    same = wiretap("diff", str(a), str(b))
    assert (same.returncode, same.stdout) == (0, "no difference in behaviour\n")
    slower = side_by_side(tmp_path / "c.jsonl", {"build": [1.2, 2.2, 3.2], "deploy": [2.5, 4.5, 6.5, 8.5]})
    changed = wiretap("diff", str(a), str(slower))
    assert changed.returncode == 1
    assert "task 2 (deploy): poll interval 1.0 s → 2.0 s" in changed.stdout
    assert "== method sequence" not in changed.stdout


def test_tasks_pair_by_tool_so_a_task_only_one_side_ran_is_named_and_the_rest_still_compare(tmp_path: Path) -> None:
    a = side_by_side(tmp_path / "a.jsonl", {"build": [1.2, 2.2, 3.2], "deploy": [1.5, 2.5, 3.5]})
    b = side_by_side(tmp_path / "b.jsonl", {"deploy": [1.5, 3.5, 5.5]})
    result = wiretap("diff", str(a), str(b))
    assert result.returncode == 1
    tasks = result.stdout.split("== tasks\n")[1].split("==")[0]
    assert [line.strip() for line in tasks.splitlines()] == [
        "tasks: 2 → 1",
        "task 1 (build): only in A",
        "task 2 (deploy): poll interval 1.0 s → 2.0 s (1.00 ×2 s → 2.00 ×2 s)",
    ]
