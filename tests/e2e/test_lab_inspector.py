"""The MCP Inspector CLI 2.12.0 (npm) against ``wiretap lab serve``, recorded by ``wiretap tap`` (stdio) and
``wiretap proxy`` (Streamable HTTP): ``--method tools/list`` lists the probe's tools, and ``--method tools/call``
of a task condition gets the answer the recording shows. In 2026-07-28 (``--protocol-era modern``) the
Inspector declares the tasks extension, so ``poll_task`` runs as a task that it polls at the interval the
probe asked, 1 s when none is asked; in 2025-11-25 (``legacy``) it asks for a task only for a tool whose
``taskSupport`` is ``required``, so the probe's ``optional`` tool is answered inline. The report and the
investigation must say so, with the Inspector's own rule, at the times the probe's log gives."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.lab_probe_runs import WIRETAP, Run, assert_close, finish
from support.peer_servers import serving
from support.proxyrun import running_proxy

from wiretap.lab.conditions import CONDITIONS
from wiretap.lab.investigation import build_investigation
from wiretap.lab.probe.shapes import tools
from wiretap.recording.reader import read_all

pytestmark = pytest.mark.slow

TIMEOUT = 120
CADENCE = 0.02
"""Seconds: how early a poll may come against the interval the Inspector applies."""
Json = dict[str, Any]


def inspect(inspector: Path, root: Path, where: list[str], era: str, *call: str) -> subprocess.CompletedProcess[str]:
    """One Inspector CLI call; ``where`` is ``["--", SERVER…]`` or ``["--server-url", URL, "--transport", "http"]``."""
    env = {**os.environ, "HOME": str(root), "MCP_CATALOG_PATH": str(root / "catalog")}
    command = [str(inspector), "--cli", "--format", "json", "--protocol-era", era, *call, *where]
    return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=root)


def tapped(inspector: Path, root: Path, era: str, *call: str) -> Run:
    recording, log = root / "recording.jsonl", root / "probe.jsonl"
    server = [*WIRETAP, "tap", "--out", str(recording), "--", *WIRETAP, "lab", "serve", "--log", str(log)]
    return finish(inspect(inspector, root, ["--", *server], era, *call), recording, log)


def on_time(seconds: float, interval: float) -> bool:
    """A timer's interval: never early, and less than half an interval late. A busy machine can make a
    client's timers late by more than the lab's ``LATE_SHARE``, but not by half an interval, and the old
    rule this tells apart (a fixed 1 s against 300 ms asked) is further off still."""
    return -CADENCE <= seconds - interval < interval / 2


def messages(recording: Path, direction: str) -> list[Json]:
    _, events, _ = read_all(recording)
    return [e["msg"] for e in events if e["kind"] == "message" and e["dir"] == direction]


def answer_to(recording: Path, method: str) -> list[Json]:
    """The server's answers to the client's ``method`` requests, in order."""
    ids = [m["id"] for m in messages(recording, "c2s") if m.get("method") == method]
    return [m for m in messages(recording, "s2c") if "method" not in m and m.get("id") in ids]


def call_tool(name: str, **arguments: float) -> tuple[str, ...]:
    pairs = [f"{key}={value}" for key, value in arguments.items()]
    return ("--method", "tools/call", "--tool-name", name, *(("--tool-arg", *pairs) if pairs else ()))


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_inspector_lists_exactly_the_probes_tools_as_the_recording_shows_over_stdio(
    inspector: Path,
    tmp_path: Path,
    era: str,
) -> None:
    run = tapped(inspector, tmp_path, era, "--method", "tools/list")
    listed = run.client["result"]["tools"]
    assert [tool["name"] for tool in listed] == [c.tool for c in CONDITIONS]
    [answer] = answer_to(tmp_path / "recording.jsonl", "tools/list")
    assert answer["result"]["tools"] == tools(legacy=era == "legacy")
    assert [tool["name"] for tool in answer["result"]["tools"]] == [tool["name"] for tool in listed]
    assert [e["method"] for e in run.log if e["event"] == "received" and "method" in e][-1] == "tools/list"


def test_in_2026_07_28_the_inspector_polls_the_task_at_the_interval_asked_and_prints_its_result(
    inspector: Path,
    tmp_path: Path,
) -> None:
    run = tapped(inspector, tmp_path, "modern", *call_tool("poll_task", interval_ms=300, seconds=1.5))
    recording = tmp_path / "recording.jsonl"
    task = run.task()
    assert task["design"] == "mcp-tasks-extension" and task["tool"] == "poll_task"
    assert task["requested_poll_ms"] == task["applied_poll_ms"] == 300 and task["final_state"] == "completed"
    assert on_time(task["settled_interval"], 0.3), task
    assert_close(task["polls"], run.polls(task["id"]))
    completed = answer_to(recording, "tasks/get")[-1]["result"]
    assert completed["status"] == "completed"
    assert run.client["result"] == completed["result"]
    assert run.client["result"]["content"] == [{"type": "text", "text": "poll_task: completed after 1.5 s"}]
    assert run.report["poll_rule"].startswith("MCP Inspector CLI's rule (seen on 2.12.0): polls at the server's")
    [row] = build_investigation(load(recording)).rows
    assert row.verdict.startswith("the asked interval: as its rule") and row.agrees is True


def test_in_2026_07_28_the_inspector_polls_a_task_that_asks_no_interval_every_second(
    inspector: Path,
    tmp_path: Path,
) -> None:
    run = tapped(inspector, tmp_path, "modern", *call_tool("poll_task", seconds=2.5))
    task = run.task()
    assert task["requested_poll_ms"] is None and task["applied_poll_ms"] == 1000
    assert on_time(task["settled_interval"], 1.0), task
    assert_close(task["polls"], run.polls(task["id"]))
    [row] = build_investigation(load(tmp_path / "recording.jsonl")).rows
    assert row.verdict.startswith("its default, 1000 ms") and row.agrees is True


def test_in_2025_11_25_the_inspector_calls_an_optional_task_tool_plainly_and_gets_it_inline(
    inspector: Path,
    tmp_path: Path,
) -> None:
    run = tapped(inspector, tmp_path, "legacy", *call_tool("poll_task", interval_ms=300, seconds=1))
    recording = tmp_path / "recording.jsonl"
    [call] = [m for m in messages(recording, "c2s") if m.get("method") == "tools/call"]
    assert "task" not in call["params"]
    [answer] = answer_to(recording, "tools/call")
    assert run.client["result"] == answer["result"]
    assert answer["result"]["_meta"]["wiretap/lab"]["answer"] == "inline"
    assert run.report["tasks"] == [] and not any(e.get("method") == "tasks/get" for e in run.log)
    [row] = build_investigation(load(recording)).rows
    assert row.verdict == "a one-shot call: answered inline, nothing to poll"


def test_over_streamable_http_the_inspector_lists_the_tools_and_polls_the_task_through_the_proxy(
    inspector: Path,
    tmp_path: Path,
) -> None:
    recording, log = tmp_path / "http.jsonl", tmp_path / "probe.jsonl"
    serve = [sys.executable, "-m", "wiretap", "lab", "serve", "--http", "127.0.0.1:0", "--log", str(log)]
    with serving(serve, tmp_path) as url, running_proxy(url, recording) as proxy:
        where = ["--server-url", proxy.url, "--transport", "http"]
        listed = inspect(inspector, tmp_path, where, "modern", "--method", "tools/list")
        called = inspect(inspector, tmp_path, where, "modern", *call_tool("poll_task", interval_ms=300, seconds=1))
    assert listed.returncode == called.returncode == 0, listed.stderr[-2000:] + called.stderr[-2000:]
    assert [t["name"] for t in json.loads(listed.stdout)["result"]["tools"]] == [c.tool for c in CONDITIONS]
    answers = answer_to(recording, "tools/list")  # the call lists the tools too, to find the one it calls
    assert len(answers) >= 2 and all(answer["result"]["tools"] == tools(legacy=False) for answer in answers)
    completed = answer_to(recording, "tasks/get")[-1]["result"]
    assert json.loads(called.stdout)["result"] == completed["result"]
    report = load(recording)
    [task] = report.tasks
    assert task.requested_poll_ms == 300 and task.final_state == "completed"
    assert task.applied_poll_ms == 300 and len(task.polls) >= 3
    waits = waits_after_answers(recording, "tasks/get")
    assert all(on_time(wait, 0.3) for wait in waits), waits
    [row] = build_investigation(report).rows
    assert row.verdict.startswith("the asked interval") and row.tool == "poll_task"


def waits_after_answers(recording: Path, method: str) -> list[float]:
    """Seconds from each answer to a ``method`` request to the next such request (over HTTP the Inspector
    waits the interval after each answer, so a round trip adds to the gap between polls)."""
    _, events, _ = read_all(recording)
    times: list[tuple[str, float]] = []
    asked: set[Any] = set()
    for event in (e for e in events if e["kind"] == "message"):
        msg = event["msg"]
        if event["dir"] == "c2s" and msg.get("method") == method:
            asked.add(msg["id"])
            times.append(("asked", event["t"]))
        elif event["dir"] == "s2c" and "method" not in msg and msg.get("id") in asked:
            times.append(("answered", event["t"]))
    return [b - a for (x, a), (y, b) in itertools.pairwise(times) if (x, y) == ("answered", "asked")]


def load(recording: Path) -> Any:
    from wiretap.export.report_output import load_report

    return load_report(recording, "text")
