"""``wiretap lab serve`` driven by real MCP clients, recorded by ``wiretap tap`` (stdio) and ``wiretap
proxy`` (Streamable HTTP): ``wiretap report`` of each recording must show what the probe asked for (its
poll interval) and the task states it went through, at the times the probe's own ``--log`` gives.

- MCP Python SDK 1.30.0, 2025-11-25 core tasks (tests/peer_scripts/mcp_tasks_client.py over stdio,
  lab_mcp_tasks_http_client.py over HTTP): ``call_tool_as_task``, ``poll_task`` at the server's
  ``pollInterval``, ``tasks/result`` at ``input_required``, which carries the probe's form and
  ``roots/list``.
- fastmcp 4.1.4 + fastmcp-tasks 4.1.4, the 2026-07-28 tasks extension
  (tests/peer_scripts/fastmcp_tasks_stdio_client.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import paths
from support.lab_probe_runs import WIRETAP, Json, Run, assert_close, finish
from support.proxyrun import running_proxy

pytestmark = pytest.mark.slow

PEER_SCRIPTS = paths.PEER_SCRIPTS
TIMEOUT = 120


def tapped(python: Path, client: str, tool: str, arguments: Json, root: Path) -> Run:
    recording, log = root / "recording.jsonl", root / "probe.jsonl"
    server = [*WIRETAP, "tap", "--out", str(recording), "--", *WIRETAP, "lab", "serve", "--log", str(log)]
    command = [str(python), str(PEER_SCRIPTS / client), tool, json.dumps(arguments), "--", *server]
    return finish(subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=TIMEOUT), recording, log)


def proxied(python: Path, client: str, tool: str, arguments: Json, root: Path) -> Run:
    recording, log = root / "recording.jsonl", root / "probe.jsonl"
    serve = [sys.executable, "-m", "wiretap", "lab", "serve", "--http", "127.0.0.1:0", "--log", str(log)]
    with subprocess.Popen(serve, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as probe:
        assert probe.stdout is not None and probe.stderr is not None
        try:
            url = probe.stdout.readline().strip()
            assert url.endswith("/mcp"), probe.stderr.read()
            with running_proxy(url, recording) as proxy:
                command = [str(python), str(PEER_SCRIPTS / client), tool, json.dumps(arguments), proxy.url]
                result = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=TIMEOUT)
        finally:
            probe.terminate()
            probe.wait(TIMEOUT)
    return finish(result, recording, log)


def assert_matches_the_probe_log(run: Run) -> None:
    task = run.task()
    assert_close(task["polls"], run.polls(task["id"]))
    logged = run.states(task["id"])
    assert [s["state"] for s in task["states"]] == [state for _, state in logged]
    assert_close([s["t"] for s in task["states"]], [t for t, _ in logged])


@pytest.fixture(scope="module")
def mcp_sdk_tasks_python() -> Path:
    from support import peers

    return peers.mcp_sdk_tasks()


def test_the_mcp_sdk_polls_a_2025_task_at_the_interval_the_probe_asked_as_the_report_and_log_agree(
    mcp_sdk_tasks_python: Path, tmp_path: Path
) -> None:
    run = tapped(
        mcp_sdk_tasks_python, "mcp_tasks_client.py", "poll_task", {"interval_ms": 300, "seconds": 1.5}, tmp_path
    )
    task = run.task()
    assert task["design"] == "mcp-2025-11-25" and task["tool"] == "poll_task"
    assert run.client["created"]["pollInterval"] == 300 == task["requested_poll_ms"]
    assert [s["state"] for s in task["states"]] == ["working", "completed"]
    assert len(task["polls"]) == len(run.client["statuses"])
    assert_matches_the_probe_log(run)
    lab = run.client["result"]["meta"]["wiretap/lab"]
    assert lab == {
        **lab,
        "condition": "poll-interval",
        "answer": "task",
        "settings": {"interval_ms": 300, "seconds": 1.5},
    }
    assert run.log[-1]["how"] == "eof"  # the SDK closes the server's stdin


def test_the_mcp_sdk_answers_the_input_tasks_form_and_roots_through_tasks_result_over_stdio(
    mcp_sdk_tasks_python: Path, tmp_path: Path
) -> None:
    run = tapped(
        mcp_sdk_tasks_python, "mcp_tasks_client.py", "input_task", {"after_s": 0.6, "interval_ms": 200}, tmp_path
    )
    task = run.task()
    assert [s["state"] for s in task["states"]] == ["working", "input_required", "working", "completed"]
    assert run.client["statuses"][-1][1] == "input_required"
    [asked] = run.client["elicitations"]
    assert asked["answer"] == {"environment": "staging", "confirm": "yes"}
    assert [e["task"] for e in run.sent("elicitation/create") + run.sent("roots/list")] == [task["id"]] * 2
    assert_matches_the_probe_log(run)


def test_the_mcp_sdk_runs_the_input_task_over_http_with_the_questions_on_the_tasks_result_stream(
    mcp_sdk_tasks_python: Path, tmp_path: Path
) -> None:
    arguments = {"after_s": 0.6, "interval_ms": 200}
    run = proxied(mcp_sdk_tasks_python, "lab_mcp_tasks_http_client.py", "input_task", arguments, tmp_path)
    task = run.task()
    assert task["requested_poll_ms"] == 200
    assert [s["state"] for s in task["states"]][:2] == ["working", "input_required"]
    assert task["final_state"] == "completed"
    assert len(run.client["elicitations"]) == 1
    assert "staging" in run.client["result"]["content"][0]["text"]
    assert_close(task["polls"], run.polls(task["id"]))
    assert run.log[-1]["how"] == "SIGTERM"


def test_fastmcp_polls_an_extension_task_and_the_report_shows_the_interval_the_probe_asked(
    fastmcp_tasks_python: Path, tmp_path: Path
) -> None:
    arguments = {"interval_ms": 200, "seconds": 1}
    run = tapped(fastmcp_tasks_python, "fastmcp_tasks_stdio_client.py", "poll_task", arguments, tmp_path)
    task = run.task()
    assert task["design"] == "mcp-tasks-extension"
    assert run.client["created"]["resultType"] == "task" and run.client["created"]["pollIntervalMs"] == 200
    assert task["requested_poll_ms"] == 200 and task["final_state"] == "completed"
    assert run.client["result"] == [{"type": "text", "text": "poll_task: completed after 1 s"}]
    assert_matches_the_probe_log(run)
