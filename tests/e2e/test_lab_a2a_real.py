"""``wiretap lab serve --a2a`` as a real process, through the real ``wiretap proxy``, polled by a scripted
client of known schedule (tests/scenarios/a2a_lab_poller.py) and driven by the real a2a-sdk 1.3.0 client
(tests/peer_scripts/a2a_lab_sdk_client.py) and the real @a2a-js/sdk 1.3.0 client on Node 24
(tests/peer_scripts/a2a_lab_js_client.mjs). Each client keeps its own log on ``time.monotonic()``, the
clock wiretap stamps with; the report's back-off steps, failed polls and give-up point are checked against
that log: at least half of a run's times within 5 ms, every one within 50 ms.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import paths
from support.lab_probe_runs import assert_close
from support.proxyrun import running_proxy
from support.report_schema import valid_report

from wiretap.analysis.report import build_report

pytestmark = pytest.mark.slow

TESTS = paths.TESTS
ROUNDING = 0.001
"""Seconds: how far a reported time may be from the client's own log of it."""
SCALE = 0.1
"""The poller's documented schedule scaled: 0.05, 0.1, 0.2, 0.4, then 0.5 s steps; a 1.5 s poll timeout."""
SILENT = "silent 1000 after 0.2"


@dataclass
class Run:
    report: dict[str, Any]
    client: dict[str, Any]
    origin: float
    agent_log: list[dict[str, Any]]

    def t(self, monotonic: float) -> float:
        return monotonic - self.origin


@contextmanager
def lab_agent(root: Path) -> Iterator[tuple[str, Path]]:
    log = root / "agent.jsonl"
    command = [sys.executable, "-m", "wiretap", "lab", "serve", "--a2a", "--log", str(log)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), proc.stderr.read() if proc.stderr else url
        yield url, log
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate(timeout=10)


def recorded_run(root: Path, client: list[str]) -> Run:
    root.mkdir(parents=True, exist_ok=True)
    recording = root / "recording.jsonl"
    with lab_agent(root) as (url, log), running_proxy(url, recording) as proxy:
        done = subprocess.run([*client, proxy.url], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    origin = json.loads(recording.read_text().splitlines()[0])["monotonic_origin"]
    agent_log = [json.loads(line) for line in log.read_text().splitlines()]
    return Run(valid_report(build_report(recording).to_dict()), json.loads(done.stdout), origin, agent_log)


@pytest.fixture(scope="module")
def poller(tmp_path_factory: pytest.TempPathFactory) -> Run:
    script = str(TESTS / "scenarios" / "a2a_lab_poller.py")
    command = [sys.executable, script, "--scale", str(SCALE), "--text", SILENT]
    return recorded_run(tmp_path_factory.mktemp("lab-a2a-poller"), command)


@pytest.fixture(scope="module")
def sdk(a2a_sdk_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    script = str(TESTS / "peer_scripts" / "a2a_lab_sdk_client.py")
    return recorded_run(tmp_path_factory.mktemp("lab-a2a-sdk"), [str(a2a_sdk_python), script])


@pytest.fixture(scope="module")
def js(tmp_path_factory: pytest.TempPathFactory) -> Run:
    from support import peers

    script = str(TESTS / "peer_scripts" / "a2a_lab_js_client.mjs")
    command = ["env", f"NODE_PATH={peers.a2a_js()}", str(peers.node_24()), script]
    return recorded_run(tmp_path_factory.mktemp("lab-a2a-js"), command)


def test_the_poller_backs_off_on_schedule_and_gives_up_after_six_polls_the_silent_agent_left_unanswered(
    poller: Run,
) -> None:
    [task] = poller.report["tasks"]
    schedule = task["poll_schedule"]
    polls = poller.client["polls"]
    assert [p["outcome"] for p in polls] == ["answered"] * 2 + ["timed out"] * 6
    assert [s["outcome"] for s in schedule["steps"]] == ["answered"] * 2 + ["abandoned"] * 6
    times: list[tuple[str, float | None, float]] = []
    previous_end = poller.client["created"]
    for n, (step, poll) in enumerate(zip(schedule["steps"], polls, strict=True)):
        times.append((f"poll {n} sent", step["t"], poller.t(poll["sent"])))
        times.append((f"back-off step before poll {n}", step["step"], poll["sent"] - previous_end))
        times.append((f"wait for poll {n}", step["waited"], poll["ended"] - poll["sent"]))
        previous_end = poll["ended"]
    assert (schedule["failed"], schedule["longest_failed_run"], schedule["failed_before_giving_up"]) == (6, 6, 6)
    times.append(("last poll", schedule["last_poll_at"], poller.t(polls[-1]["sent"])))
    times.append(("gave up", schedule["gave_up_at"], poller.t(poller.client["gave_up"])))
    what, reported, logged = zip(*times, strict=True)
    assert_close(reported, logged, what)
    verdict = poller.report["verdicts"]["a2a_back_off"]["verdict"]
    assert f"gave up on task {task['id']} at {schedule['gave_up_at']:.2f} s after 6 failed polls in a row" in verdict


def test_the_silent_agent_received_every_poll_and_answered_only_those_before_its_silence(poller: Run) -> None:
    requests = {e["n"]: e for e in poller.agent_log if e.get("event") == "request"}
    answered = {e["n"] for e in poller.agent_log if e.get("event") == "answer"}
    gets = [n for n, e in requests.items() if e["rpc"] == "GetTask"]
    assert len(gets) == len(poller.client["polls"]) == 8
    assert [n in answered for n in gets] == [True] * 2 + [False] * 6


def test_the_sdk_client_sees_every_condition_as_the_agent_sent_it(sdk: Run) -> None:
    for binding in ("jsonrpc", "rest"):
        got = sdk.client[binding]
        assert got["slow"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert got["reject"]["status"]["state"] == "TASK_STATE_REJECTED"
        assert got["reject"]["status"]["message"]["parts"] == [{"text": "out of scope"}]
        summary = got["failing-artifact"]["artifacts"][0]
        assert (summary["name"], summary["parts"][0]["data"]) == (
            "summary.json",
            {"tests": 4, "passed": 3, "failed": 1},
        )
        for condition in ("input-required", "auth-required"):
            asked, answered = got[condition]
            assert asked["status"]["state"] == f"TASK_STATE_{condition.upper().replace('-', '_')}"
            assert answered["status"]["state"] == "TASK_STATE_COMPLETED"
        assert got["cancel_done"] == "TaskNotCancelableError"
        assert got["message_to_done"] == "UnsupportedOperationError"


def test_the_report_flags_the_rejected_tasks_and_the_completed_tasks_whose_summary_says_failed(sdk: Run) -> None:
    findings = sdk.report["findings"]
    by_code: dict[str, list[dict[str, Any]]] = {}
    for finding in findings:
        by_code.setdefault(finding["code"], []).append(finding)
    ids = {binding: sdk.client[binding] for binding in ("jsonrpc", "rest")}
    assert sorted(f["task"] for f in by_code["task-rejected"]) == sorted(b["reject"]["id"] for b in ids.values())
    assert all("'out of scope'" in f["message"] for f in by_code["task-rejected"])
    failing = by_code["completed-with-failing-artifact"]
    assert sorted(f["task"] for f in failing) == sorted(b["failing-artifact"]["id"] for b in ids.values())
    assert all('summary.json reports failure ("failed": 1)' in f["message"] for f in failing)
    # The refused message and cancel of the finished task: -32004 and -32002 (HTTP 400 over REST).
    assert len(by_code["request-to-terminal-task"]) == 4
    flagged = {f["task"] for code in ("task-rejected", "completed-with-failing-artifact") for f in by_code[code]}
    slow = {b["slow"]["task"]["id"] for b in ids.values()}
    assert not flagged & slow


def test_the_sdk_clients_polls_of_the_slow_task_are_its_poll_schedule(sdk: Run) -> None:
    rows = {row["id"]: row for row in sdk.report["tasks"]}
    for binding in ("jsonrpc", "rest"):
        got = sdk.client[binding]["slow"]
        schedule = rows[got["task"]["id"]]["poll_schedule"]
        assert len(schedule["steps"]) == len(got["polls"]) >= 4
        # The SDK's own time to build and send a request is not the wire's: each poll reached the wire
        # between the client's call and its return.
        for step, (called, returned) in zip(schedule["steps"], got["polls"], strict=True):
            assert sdk.t(called) - ROUNDING <= step["t"] <= sdk.t(returned) + ROUNDING, (
                f"{binding} poll on the wire at {step['t']}, the client called at {sdk.t(called):.4f} "
                f"and had its answer at {sdk.t(returned):.4f}"
            )
        assert [s["outcome"] for s in schedule["steps"]] == ["answered"] * len(got["polls"])
        assert schedule["gave_up_at"] is None and schedule["failed"] == 0


def test_the_crash_condition_ends_the_agent_process_mid_task_with_status_1(tmp_path: Path) -> None:
    log = tmp_path / "agent.jsonl"
    command = [sys.executable, "-m", "wiretap", "lab", "serve", "--a2a", "--log", str(log)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                "params": {"message": {"parts": [{"text": "crash 0.3"}]}}}  # fmt: skip
        request = urllib.request.Request(f"{url}/a2a/jsonrpc", json.dumps(body).encode(), method="POST")
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert json.loads(answer.read())["result"]["task"]["status"]["state"] == "TASK_STATE_WORKING"
        assert proc.wait(timeout=30) == 1
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["event"] for e in events] == ["listening", "request", "answer", "exit"]
    assert events[-1]["mono_ns"] - events[1]["mono_ns"] >= 300_000_000


def test_the_js_client_uses_each_binding_and_sees_every_condition_as_the_agent_sent_it(js: Run) -> None:
    for binding, transport in (("jsonrpc", "JSONRPC"), ("rest", "HTTP+JSON")):
        got = js.client[binding]
        assert got["transport"] == transport
        assert got["slow"]["task"]["state"] == "TASK_STATE_COMPLETED"
        assert (got["reject"]["state"], got["reject"]["message"]) == ("TASK_STATE_REJECTED", ["out of scope"])
        assert got["failing-artifact"]["artifacts"] == [
            {"name": "summary.json", "data": {"tests": 4, "passed": 3, "failed": 1}}
        ]


def test_the_report_flags_the_js_clients_rejected_and_failing_tasks_and_its_polls_are_its_schedule(js: Run) -> None:
    codes: dict[str, set[str]] = {}
    for finding in js.report["findings"]:
        codes.setdefault(finding["code"], set()).add(finding.get("task"))
    bindings = [js.client[b] for b in ("jsonrpc", "rest")]
    assert codes["task-rejected"] == {b["reject"]["id"] for b in bindings}
    assert codes["completed-with-failing-artifact"] == {b["failing-artifact"]["id"] for b in bindings}
    rows = {row["id"]: row for row in js.report["tasks"]}
    for got in (b["slow"] for b in bindings):
        schedule = rows[got["task"]["id"]]["poll_schedule"]
        assert len(schedule["steps"]) == len(got["polls"]) >= 4
        for step, (called, returned) in zip(schedule["steps"], got["polls"], strict=True):
            assert js.t(called) - ROUNDING <= step["t"] <= js.t(returned) + ROUNDING, (step, called, returned)
        assert schedule["gave_up_at"] is None and schedule["failed"] == 0
