"""``wiretap lab --scripted -- claude -p`` with the real Claude Code 2.1.332, offline: the shipped fake model
calls the lab's tools (the cadence at 1000 ms, 100 ms and none; a question; a task it stops with TaskStop),
and the investigation is checked against what that script made Claude Code do and what its own stream says.
The user's home, config and key are set up here and must come out untouched and unread."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wiretap.analysis.session_report import build_session_report
from wiretap.lab.investigation import LATE_SHARE, build_investigation
from wiretap.lab.investigation_model import Investigation, Row
from wiretap.recording.folders import open_session

pytestmark = pytest.mark.slow

USERS_KEY = "sk-ant-users-own-key-0123456789"
CONDITIONS = "poll-interval,input-required,until-cancelled"
CADENCE = 0.02


def users_home(root: Path) -> dict[Path, bytes]:
    """A home with the user's own Claude Code config and a server of theirs; its files, as they were."""
    home = root / "user-home"
    (home / ".claude").mkdir(parents=True)
    own = {"mcpServers": {"users-own": {"type": "stdio", "command": "false"}}, "hasCompletedOnboarding": True}
    (home / ".claude.json").write_text(json.dumps(own))
    (home / ".claude" / "settings.json").write_text(json.dumps({"env": {"ANTHROPIC_API_KEY": USERS_KEY}}))
    return {path: path.read_bytes() for path in home.rglob("*") if path.is_file()}


@pytest.fixture(scope="module")
def lab(claude_code_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("lab-claude")
    files = users_home(root)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
    env |= {"HOME": str(root / "user-home"), "ANTHROPIC_API_KEY": USERS_KEY}
    session = root / "session"
    command = [sys.executable, "-m", "wiretap", "lab", "--scripted", "--conditions", CONDITIONS, "-o", str(session)]
    done = subprocess.run(
        [*command, "--", str(claude_code_bin), "-p"],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    report = build_session_report(session)
    return {
        "root": root,
        "files": files,
        "session": session,
        "stdout": done.stdout,
        "events": events,
        "report": report,
        "investigation": build_investigation(report),
    }


def rows(investigation: Investigation, condition: str) -> list[Row]:
    return [r for r in investigation.rows if r.condition == condition]


def messages_about(session: Path, task: str) -> list[tuple[str, dict[str, Any]]]:
    """The lab server's messages that name ``task``, both ways, in the order they crossed the wire."""
    [(_, recording)] = open_session(session).recordings_of("wiretap-lab")
    events = (json.loads(line) for line in recording.read_text().splitlines())
    return [(e["dir"], e["msg"]) for e in events if e.get("kind") == "message" and task in json.dumps(e["msg"])]


def client_acts_after(session: Path, task: str, state: str) -> list[str]:
    """What the client sent about ``task`` after the server first told it the task was ``state``."""
    said = messages_about(session, task)
    told = next(i for i, (way, msg) in enumerate(said) if way == "s2c" and f'"{state}"' in json.dumps(msg))
    return [msg.get("method", "answer") for way, msg in said[told + 1 :] if way == "c2s"]


def test_the_cadence_rows_show_the_asked_interval_the_clamp_and_the_default_never_early(lab) -> None:
    investigation = lab["investigation"]
    asked, clamped, default = rows(investigation, "poll-interval")
    tasks = {t.id: t for t in lab["report"].tasks}
    for row, applied in ((asked, 1000), (clamped, 250), (default, 2000)):
        fastest = tasks[row.task].settled_floor
        # Never early; late by at most the share a busy machine may add to a client's timers.
        assert fastest is not None and -CADENCE <= fastest - applied / 1000 <= max(CADENCE, LATE_SHARE * applied / 1000)
        assert row.agrees is True
    assert asked.asked.startswith("pollIntervalMs 1000") and asked.verdict.startswith("the asked interval: as")
    assert clamped.asked.startswith("pollIntervalMs 100") and clamped.verdict.startswith("the asked interval clamped")
    assert default.asked.startswith("no interval") and default.verdict.startswith("its default, 2000 ms")
    assert investigation.client == "Claude Code" and investigation.client_version == "2.1.332"


def test_the_headless_client_answers_input_required_with_a_cancel_and_nothing_before_it(lab) -> None:
    [row] = rows(lab["investigation"], "input-required")
    assert row.verdict.startswith("cancels at input_required") and row.agrees is True
    assert client_acts_after(lab["session"], row.task, "input_required")[:1] == ["tasks/cancel"]
    [question] = [q for q in lab["report"].questions if q.task == row.task]
    assert question.cancelled_instead and question.polls_inside == []
    said = [e.get("summary", "") for e in lab["events"] if e.get("subtype") == "task_notification"]
    assert any("cannot show yet" in text for text in said)


def test_task_stop_is_two_cancels_reported_as_a_stop_during_the_session_not_a_cancel_on_exit(lab) -> None:
    stops = [
        block
        for e in lab["events"]
        if e.get("type") == "assistant"
        for block in e["message"]["content"]
        if block.get("type") == "tool_use" and block.get("name") == "TaskStop"
    ]
    assert len(stops) == 1, "the scripted model stops the endless task once"
    row, left = rows(lab["investigation"], "until-cancelled")
    assert row.verdict == "stopped during the session (TaskStop), not a cancel on exit"
    assert left.verdict == "no cancel on exit with a live task"
    assert row.did.startswith("2 cancels at once at") and "not live at exit" in row.did
    [task] = [t for t in lab["report"].tasks if t.id == row.task]
    assert len(task.cancels) == 2
    sent = [msg.get("method") for way, msg in messages_about(lab["session"], row.task) if way == "c2s"]
    first = sent.index("tasks/cancel")
    assert sent[first : first + 2] == ["tasks/cancel", "tasks/cancel"], "the two cancels come together, no poll between"
    assert task.live_at_client_exit is False
    cancel = lab["report"].verdicts.cancel_on_exit
    assert cancel.sent is False and cancel.live_tasks == [left.task] and cancel.cancelled == []
    assert "with 1 live task and cancelled none" in cancel.verdict
    assert "stopped 1 task during the session" in cancel.verdict


def test_the_users_home_config_and_key_are_neither_read_nor_written(lab) -> None:
    for path, before in lab["files"].items():
        assert path.read_bytes() == before
    manifest = open_session(lab["session"]).manifest
    assert [s["name"] for s in manifest["servers"]] == ["wiretap-lab"]
    assert manifest["lab"] == {"conditions": ["poll-interval", "input-required", "until-cancelled"], "scripted": True}
    for file in lab["session"].iterdir():
        assert USERS_KEY not in file.read_text(errors="replace"), file
    outputs = [e["output_file"] for e in lab["events"] if e.get("output_file")]
    assert outputs and not any(Path(found).exists() for found in outputs), "the throwaway folder is removed"


def test_the_investigation_is_printed_at_the_end_and_lab_report_renders_it_again(lab) -> None:
    printed = lab["stdout"][lab["stdout"].index("Investigation of") :]
    again = subprocess.run(
        [sys.executable, "-m", "wiretap", "lab", "report", str(lab["session"])],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 0 and again.stdout == printed
