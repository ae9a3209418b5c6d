"""``wiretap lab serve`` driven by the real Claude Code 2.1.332, offline, in ``-p`` mode against the fake
Messages API, its stdio recorded by ``wiretap tap``.

With stream-json input and the seeded flag cache (wiretap/lab/offline.py ``tasks_in_print_mode``) it
runs MCP Tasks (the 2026-07-28 extension): the report of the recording must give the interval the probe
asked for, and the task's states at the times the probe's log gives; at ``input_required`` a headless
client cancels at once. A plain ``-p PROMPT`` declares no tasks, and the probe answers inline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from scenarios.fake_messages_api import FakeMessagesAPI, ToolUse
from support.claude import offline_env, run_claude, write_mcp_config
from support.lab_probe_runs import assert_close, assert_near
from support.report_schema import valid_report
from support.taprun import settled_read_all

import wiretap
from wiretap.lab.offline import claude_env, claude_home

pytestmark = pytest.mark.slow

WIRETAP = ["env", f"PYTHONPATH={Path(wiretap.__file__).resolve().parent.parent}", sys.executable, "-m", "wiretap"]
TIMEOUT = 120
AFTER_THE_END = 1.0
"""Seconds the session stays open after the task ended, for the client's last turn."""
Json = dict[str, Any]


@dataclass
class Session:
    report: Json
    origin: float
    log: list[Json]
    events: list[Json]
    wire: list[Json]
    """The recording's events: what crossed the wire, as the tap saw it."""

    def t(self, entry: Json) -> float:
        return float(entry["mono_ns"]) / 1e9 - self.origin

    def task(self) -> Json:
        [task] = self.report["tasks"]
        return task

    def logged_states(self, task_id: str) -> list[tuple[float, str]]:
        seen: list[tuple[float, str]] = []
        for entry in self.log:
            mine = entry["event"] == "sent" and entry.get("task") == task_id and "status" in entry
            if mine and (not seen or seen[-1][1] != entry["status"]):
                seen.append((self.t(entry), entry["status"]))
        return seen

    def wire_polls(self, task_id: str) -> int:
        return sum(
            1
            for e in self.wire
            if e.get("kind") == "message" and e.get("dir") == "c2s" and e["msg"].get("method") == "tasks/get"
            and e["msg"].get("params", {}).get("taskId") == task_id
        )  # fmt: skip

    def logged_polls(self, task_id: str) -> list[float]:
        return [self.t(e) for e in self.log if e.get("method") == "tasks/get" and e.get("task") == task_id]


def lab_server(root: Path) -> Json:
    tapped = ["tap", "--out", str(root / "recording.jsonl"), "--", *WIRETAP, "lab", "serve"]
    return {"type": "stdio", "command": WIRETAP[0], "args": [*WIRETAP[1:], *tapped, "--log", str(root / "probe.jsonl")]}


def logged(log: Path) -> list[Json]:
    return [json.loads(row) for row in log.read_text().splitlines() if row.endswith("}")] if log.exists() else []


def ended(entries: list[Json]) -> bool:
    return any(e["event"] == "sent" and e.get("status") in ("completed", "cancelled", "failed") for e in entries)


def finish(root: Path, events: list[Json]) -> Session:
    recording = root / "recording.jsonl"
    header, wire, skipped = settled_read_all(recording)
    assert not skipped, skipped.describe()
    result = subprocess.run(
        [sys.executable, "-m", "wiretap", "report", str(recording), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    log = [json.loads(row) for row in (root / "probe.jsonl").read_text().splitlines()]
    return Session(valid_report(json.loads(result.stdout)), float(header["monotonic_origin"]), log, events, wire)


def stream_json_session(
    claude: Path,
    root: Path,
    tool: str,
    arguments: Json,
    *,
    stop: bool = False,
    until: Callable[[list[Json]], bool] = ended,
) -> Session:
    """One ``-p`` stream-json session with tasks on: the prompt, kept open until the probe's log shows
    ``until`` (by default: the task has ended)."""
    project = root / "project"
    project.mkdir(parents=True)
    claude_home(root, project, tasks_in_print_mode=True)
    config = write_mcp_config(root / "mcp.json", {"lab": lab_server(root)})
    name = f"mcp__lab__{tool}"
    with FakeMessagesAPI([ToolUse(name, arguments, stop=stop)]) as api:
        env = claude_env(root, api.url, os.environ, tasks_in_print_mode=True)
        argv = [
            str(claude), "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
            "--mcp-config", str(config), "--strict-mcp-config", "--allowedTools", name, "--no-session-persistence",
        ]  # fmt: skip
        prompt = {"type": "user", "message": {"role": "user", "content": f"Call {tool}."}}
        with subprocess.Popen(
            argv, cwd=project, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        ) as proc:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(prompt) + "\n")
            proc.stdin.flush()
            deadline = time.monotonic() + TIMEOUT
            while not until(logged(root / "probe.jsonl")) and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.05)
            time.sleep(AFTER_THE_END)
            stdout, stderr = proc.communicate(input=None, timeout=TIMEOUT)
    assert proc.returncode == 0, stderr[-4000:]
    events = [json.loads(row) for row in stdout.splitlines() if row.startswith("{")]
    return finish(root, events)


def test_claude_code_polls_the_probes_task_at_the_interval_asked_and_the_report_agrees_with_its_log(
    claude_code_bin: Path, tmp_path: Path
) -> None:
    session = stream_json_session(claude_code_bin, tmp_path, "poll_task", {"interval_ms": 500, "seconds": 2})
    task = session.task()
    assert task["design"] == "mcp-tasks-extension" and task["tool"] == "poll_task"
    assert task["requested_poll_ms"] == 500 == task["applied_poll_ms"]
    assert [s["state"] for s in task["states"]] == ["working", "completed"]
    logged = session.logged_states(task["id"])
    assert [s["state"] for s in task["states"]] == [state for _, state in logged]
    assert_close([s["t"] for s in task["states"]], [t for t, _ in logged])
    polls = session.logged_polls(task["id"])
    assert len(task["polls"]) == len(polls) >= 3
    assert_close(task["polls"], polls)
    assert task["live_at_client_exit"] is False
    assert session.log[-1]["how"] == "SIGINT"  # Claude Code stops a stdio server with SIGINT


def test_headless_claude_code_cancels_the_probes_task_the_moment_it_asks_for_input(
    claude_code_bin: Path, tmp_path: Path
) -> None:
    session = stream_json_session(claude_code_bin, tmp_path, "input_task", {"after_s": 1, "interval_ms": 300})
    task = session.task()
    # A 2026-07-28 cancel is acknowledged with an empty result: the last state on the wire is the question.
    assert [s["state"] for s in task["states"]] == ["working", "input_required"]
    logged = session.logged_states(task["id"])
    assert [state for _, state in logged] == ["working", "input_required"]
    assert_close([s["t"] for s in task["states"]], [t for t, _ in logged])
    changes = [e["state"] for e in session.log if e["event"] == "task"]
    assert changes == ["working", "input_required", "cancelled"]
    # The next thing the client sent after the poll that showed the question was the cancel.
    asked = next(i for i, e in enumerate(session.log) if e.get("status") == "input_required" and e["event"] == "sent")
    after = next(e for e in session.log[asked + 1 :] if e["event"] == "received")
    assert after["method"] == "tasks/cancel" and after["task"] == task["id"]
    assert not [e for e in session.log if e.get("method") == "tasks/update"]
    [cancel] = task["cancels"]
    assert cancel["via"] == "tasks/cancel"
    assert_near(cancel["t"], session.t(after))
    assert task["cancelled_by_client_at"] == cancel["t"] and task["live_at_client_exit"] is False


def test_taskstop_cancels_the_probes_endless_task_twice_in_one_tick_and_it_is_not_live_at_exit(
    claude_code_bin: Path, tmp_path: Path
) -> None:
    session = stream_json_session(claude_code_bin, tmp_path, "endless_task", {"interval_ms": 500}, stop=True)
    task = session.task()
    cancels = [e for e in session.log if e.get("method") == "tasks/cancel"]
    assert len(cancels) == 2 and {e["task"] for e in cancels} == {task["id"]}
    answered = [e for e in session.log if e["event"] == "sent" and e.get("answer_to") in {c["id"] for c in cancels}]
    assert len(answered) == 2 and all("error" not in e for e in answered)
    assert_close([c["t"] for c in task["cancels"]], [session.t(e) for e in cancels])
    assert task["live_at_client_exit"] is False
    assert session.log[-1] == {**session.log[-1], "how": "SIGINT", "live_tasks": []}


NOT_FOUND_POLLS = 6


def not_found(entries: list[Json]) -> list[Json]:
    return [e for e in entries if e["event"] == "sent" and e.get("error") == -32602]


def test_claude_code_keeps_polling_a_forgotten_task_id_and_the_report_counts_every_not_found(
    claude_code_bin: Path, tmp_path: Path
) -> None:
    arguments = {"forget_after_s": 0.5, "interval_ms": 250}
    session = stream_json_session(
        claude_code_bin, tmp_path, "forgotten_task", arguments, until=lambda log: len(not_found(log)) >= NOT_FOUND_POLLS
    )
    task = session.task()
    [forgot] = [e for e in session.log if e["event"] == "forgotten"]
    after = [e for e in session.log if e.get("method") == "tasks/get" and e["mono_ns"] > forgot["mono_ns"]]
    # Every poll after the server forgot the task was answered "not found", and the client went on asking.
    assert len(after) == len(not_found(session.log)) >= NOT_FOUND_POLLS
    assert not [e for e in session.log if e.get("method") == "tasks/cancel"]
    findings = [f for f in session.report["findings"] if f["code"] == "polling-unknown-task"]
    [finding] = findings
    assert finding["task"] == task["id"]
    # The finding counts the polls after the first "not found", from that answer on.
    misses = not_found(session.log)
    # The session is torn down once the log shows enough misses: one last poll may be on the wire, recorded
    # by the tap, that the probe never read.
    unread = session.wire_polls(task["id"]) - len(session.logged_polls(task["id"]))
    assert unread in (0, 1)
    assert finding["count"] == len(misses) - 1 + unread
    assert_near(finding["times"][0], session.t(misses[0]))
    assert len(task["polls"]) == session.wire_polls(task["id"])


def test_claude_code_retries_the_probes_failing_polls_and_the_report_counts_them(
    claude_code_bin: Path, tmp_path: Path
) -> None:
    arguments = {"failures": 3, "seconds": 2, "interval_ms": 300}
    session = stream_json_session(claude_code_bin, tmp_path, "failing_polls_task", arguments)
    task = session.task()
    failed = [e for e in session.log if e["event"] == "sent" and e.get("error") == -32603]
    assert len(failed) == task["failed_polls"] == 3
    assert task["final_state"] == "completed" and task["requested_poll_ms"] == 300
    polls = session.logged_polls(task["id"])
    assert len(polls) == len(task["polls"]) > 3
    assert_close(task["polls"], polls)


def test_plain_print_mode_declares_no_tasks_and_the_probe_answers_inline(claude_code_bin: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    config = write_mcp_config(tmp_path / "mcp.json", {"lab": lab_server(tmp_path)})
    with FakeMessagesAPI([ToolUse("mcp__lab__poll_task", {"interval_ms": 500, "seconds": 1})]) as api:
        run = run_claude(
            claude_code_bin,
            "Call poll_task.",
            env=offline_env(tmp_path, api.url),
            cwd=project,
            mcp_config=config,
            allowed_tools=["mcp__lab__poll_task"],
        )
        results = api.tool_results()
    assert run.returncode == 0, run.describe()
    session = finish(tmp_path, run.events)
    assert session.report["tasks"] == []
    [text] = [block["text"] for r in results for block in r["content"] if block.get("type") == "text"]
    assert text == "poll_task: answered inline after 1 s"
    answers = [e for e in session.log if e["event"] == "call"]
    assert answers == [{**answers[0], "condition": "poll-interval", "answer": "inline"}]
