"""``wiretap report`` on recordings of real peers, checked against what those peers are documented,
and were seen, to do (PEERS.md).

Each peer runs once per module, through ``wiretap tap`` (stdio) or ``wiretap proxy`` (HTTP), and the
report of its recording (``wiretap report --format json``) is checked three ways: against the
recording itself (the raw ``tasks/get`` / ``GetTask`` times), against what the client says it saw,
and against the library's documented behaviour:

- MCP Python SDK 1.30.0, 2025-11-25 core tasks: ``poll_task`` polls ``tasks/get`` at once, then
  sleeps the server's ``pollInterval`` after each answer (mcp/shared/experimental/tasks/polling.py),
  so every interval is ``pollInterval`` plus one round trip. Its stdio client closes stdin at the end
  and SIGTERMs a server still running 2 s later.
- fastmcp 4.1.4 + fastmcp-tasks 4.1.4, the 2026-07-28 tasks extension: ``ToolTask.result()`` polls
  at once, then sleeps 20 ms, doubling each round up to the server's ``pollIntervalMs``
  (fastmcp_tasks/client.py: ``MIN_POLL_INTERVAL``, ``_next_poll_delay``).
- server-everything 2026.8.31, ``simulate-research-query``: a 2025-11-25 task with ``pollInterval``
  1000 that goes working -> input_required, asks with an ``elicitation/create`` delivered through
  ``tasks/result``, then working -> completed; driven here by the mcp 1.30 client, which answers.
- a2a-sdk 1.3.0 through ``wiretap proxy``: one task polled with ``GetTask`` (a2a-sdk leaves the
  polling loop to its caller), one streamed, one streamed to input-required and answered; over
  JSON-RPC and HTTP+JSON. A2A has no server-requested interval.
- Claude Code 2.1.332 (offline, fake Messages API): declares no tasks support; it stops a stdio
  server with SIGINT. Against a server that returns a task anyway, the report must flag it.

Where the report is wrong, the test is marked ``xfail(strict=True)`` with the reason.
"""

from __future__ import annotations

import itertools
import json
import re
import signal
import statistics
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from scenarios.fake_messages_api import FakeMessagesAPI, ToolUse
from support import paths
from support.claude import offline_env, run_claude, stdio_server, write_mcp_config
from support.proxyrun import running_proxy
from support.report_schema import valid_report
from support.taprun import settled_read_all

from wiretap.recording.events import Event

pytestmark = pytest.mark.slow

PEER_SCRIPTS = paths.PEER_SCRIPTS
WIRETAP = [sys.executable, "-m", "wiretap"]
TIMEOUT = 120
Json = dict[str, Any]

# mcp 1.30: our server asks for 500 ms; the task sleeps 2.25 s, so it ends midway between two polls.
MCP_POLL_MS = 500
MCP_TASK_SECONDS = 2.25
# Each interval is the requested sleep plus one tasks/get round trip and the event loop's wake-up:
# typically (the median) within ROUND_TRIP_SLACK, and never past LOAD_SLACK on a busy machine.
ROUND_TRIP_SLACK = 0.05
LOAD_SLACK = 0.3
# Poll times in the report are rounded to the millisecond.
ROUNDING = 0.002
# fastmcp-tasks: MIN_POLL_INTERVAL, doubling up to pollIntervalMs.
FASTMCP_POLL_MS = 1000
FASTMCP_FIRST_DELAY = 0.02
FASTMCP_TASK_SECONDS = 3.0
# server-everything's simulate-research-query (dist/tools/simulate-research-query.js).
EVERYTHING_POLL_MS = 1000
# mcp 1.30's stdio client: PROCESS_TERMINATION_TIMEOUT before SIGTERM.
SDK_SIGTERM_AFTER_STDIN_CLOSE = (1.9, 3.0)
# a2a_polling_client.py's own cadence.
A2A_POLL_SECONDS = 0.25
A2A_STATES = {
    "TASK_STATE_SUBMITTED",
    "TASK_STATE_WORKING",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_COMPLETED",
}


# -- running peers and reporting on their recordings ----------------------------------------------


def wiretap_report(recording: Path, fmt: str = "json") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*WIRETAP, "report", str(recording), "--format", fmt],
        capture_output=True,
        text=True,
        timeout=60,
    )


@dataclass
class Recorded:
    """One peer run: what its client printed, the recording, and the report of it."""

    client: Json
    recording: Path
    events: list[Event]
    report: Json = field(default_factory=dict)

    def __post_init__(self) -> None:
        result = wiretap_report(self.recording)
        assert result.returncode == 0, result.stderr
        self.report = valid_report(json.loads(result.stdout))

    @property
    def tasks(self) -> list[Json]:
        return list(self.report["tasks"])

    def task(self) -> Json:
        [task] = self.tasks
        return task

    def finding_codes(self) -> list[str]:
        return [f["code"] for f in self.report["findings"]]

    def messages(self, direction: str) -> list[Event]:
        return [e for e in self.events if e["kind"] == "message" and e["dir"] == direction]

    def requests(self, method: str) -> list[Event]:
        return [e for e in self.messages("c2s") if isinstance(e["msg"], dict) and e["msg"].get("method") == method]

    def latency(self, method: str) -> Json:
        return next(row for row in self.report["latency"] if row["method"] == method)


def run_tapped_client(python: Path, client: str, tool: str, arguments: Json, server: list[str], root: Path) -> Recorded:
    """A peer client (in its own venv) runs ``server`` through ``wiretap tap`` and calls ``tool``."""
    root.mkdir(parents=True, exist_ok=True)
    recording = root / "recording.jsonl"
    tapped = [*WIRETAP, "tap", "--out", str(recording), "--", *server]
    command = [str(python), str(PEER_SCRIPTS / client), tool, json.dumps(arguments), "--", *tapped]
    result = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 0, f"{client} exited {result.returncode}:\n{result.stderr[-4000:]}"
    _, events, skipped = settled_read_all(recording)
    assert not skipped, skipped.describe()
    return Recorded(json.loads(result.stdout), recording, events)


def intervals(times: list[float]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(times)]


def assert_sleeps_plus_round_trips(measured: list[float], sleeps: list[float]) -> None:
    """Each interval is the client's sleep plus a round trip: never shorter than the sleep, typically
    within ROUND_TRIP_SLACK of it, and none held up past LOAD_SLACK."""
    excess = [m - d for m, d in zip(measured, sleeps, strict=True)]
    assert excess, "no intervals"
    assert min(excess) >= -ROUNDING, (measured, sleeps)
    assert statistics.median(excess) <= ROUND_TRIP_SLACK, (measured, sleeps)
    assert max(excess) <= LOAD_SLACK, (measured, sleeps)


def raw_mcp_polls(run: Recorded, task_id: str) -> list[float]:
    """When the client sent ``tasks/get`` for ``task_id``, read straight from the recording."""
    return [e["t"] for e in run.requests("tasks/get") if e["msg"]["params"].get("taskId") == task_id]


def assert_same_times(reported: list[float], raw: list[float]) -> None:
    assert len(reported) == len(raw), (reported, raw)
    assert all(abs(a - b) <= 0.0015 for a, b in zip(reported, raw, strict=True)), (reported, raw)


# -- MCP Python SDK 1.30.0: 2025-11-25 core tasks ------------------------------------------------


@pytest.fixture(scope="module")
def mcp_sdk_tasks_python() -> Path:
    """The python of the venv holding the MCP Python SDK 1.30.0 (PEERS.md), built on first use."""
    from support import peers

    return peers.mcp_sdk_tasks()


@pytest.fixture(scope="module")
def sdk_task(mcp_sdk_tasks_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    server = [str(mcp_sdk_tasks_python), str(PEER_SCRIPTS / "mcp_tasks_server.py"), "--poll-ms", str(MCP_POLL_MS)]
    return run_tapped_client(
        mcp_sdk_tasks_python,
        "mcp_tasks_client.py",
        "slow_job",
        {"seconds": MCP_TASK_SECONDS},
        server,
        tmp_path_factory.mktemp("report-mcp-sdk-1.30"),
    )


def test_mcp_sdk_task_is_one_2025_task_that_asked_500_ms_and_completed(sdk_task: Recorded) -> None:
    task = sdk_task.task()
    assert task["protocol"] == "mcp" and task["design"] == "mcp-2025-11-25"
    assert task["id"] == sdk_task.client["created"]["taskId"]
    assert task["tool"] == "slow_job"
    assert sdk_task.client["created"]["pollInterval"] == MCP_POLL_MS
    assert task["requested_poll_ms"] == MCP_POLL_MS == task["applied_poll_ms"]
    assert [s["state"] for s in task["states"]] == ["working", "completed"]
    assert task["final_state"] == "completed" and task["terminal"] is True
    assert sdk_task.client["statuses"][-1][1] == "completed"
    assert sdk_task.client["result"]["content"] == [{"type": "text", "text": f"slept {MCP_TASK_SECONDS} s"}]


def test_mcp_sdk_client_polls_at_the_servers_interval_and_the_report_measures_it(sdk_task: Recorded) -> None:
    task = sdk_task.task()
    polls = task["polls"]
    assert_same_times(polls, raw_mcp_polls(sdk_task, task["id"]))
    # One poll per status the client saw: at once, then every 500 ms until completed (6 seen: the
    # task ends at 2.25 s, between the polls at 2.0 and 2.5 s).
    assert len(polls) == len(sdk_task.client["statuses"]) >= MCP_TASK_SECONDS // (MCP_POLL_MS / 1000) + 1
    assert task["first_poll_after"] < LOAD_SLACK < MCP_POLL_MS / 1000  # no sleep before the first poll
    requested = MCP_POLL_MS / 1000
    measured = intervals(polls)
    # Seen: 0.502–0.504 s each (500 ms sleep + a 2–4 ms round trip) on an idle machine; one of
    # 0.580 s once while other suites ran.
    assert_sleeps_plus_round_trips(measured, [requested] * len(measured))
    summary = task["intervals"]
    assert summary["count"] == len(measured)
    assert summary["median"] == pytest.approx(statistics.median(measured), abs=ROUNDING)
    assert requested <= summary["median"] <= requested + ROUND_TRIP_SLACK
    assert summary["min"] == pytest.approx(min(measured), abs=ROUNDING)
    assert summary["max"] == pytest.approx(max(measured), abs=ROUNDING)
    verdict = sdk_task.report["verdicts"]["poll_intervals"]
    assert verdict["requested_poll_ms"] == MCP_POLL_MS
    assert verdict["median_interval"] == summary["median"]


def test_mcp_sdk_latency_table_has_the_task_methods(sdk_task: Recorded) -> None:
    polls = sdk_task.latency("tasks/get")
    assert polls["count"] == len(sdk_task.task()["polls"]) and polls["errors"] == 0
    assert sdk_task.latency("tools/call")["count"] == 1
    assert sdk_task.latency("tasks/result")["count"] == 1
    # tasks/get is a state read: answered in milliseconds.
    assert polls["max_ms"] < 200


def test_mcp_sdk_client_closes_stdin_with_no_live_task(sdk_task: Recorded) -> None:
    exit_ = sdk_task.report["client_exit"]
    assert exit_["how"] == "stdin closed"
    assert sdk_task.task()["live_at_client_exit"] is False
    cancel = sdk_task.report["verdicts"]["cancel_on_exit"]
    assert cancel["live_tasks"] == [] and cancel["sent"] is None
    assert sdk_task.report["server_exit"]["how"].endswith("exited with code 0"), sdk_task.report["server_exit"]


def test_mcp_sdk_run_has_no_finding_besides_poll_after_terminal(sdk_task: Recorded) -> None:
    assert set(sdk_task.finding_codes()) <= {"poll-after-terminal"}
    assert sdk_task.report["questions"] == []


def test_mcp_sdk_the_poll_that_discovers_completion_is_not_a_poll_after_terminal(sdk_task: Recorded) -> None:
    task = sdk_task.task()
    notified = [
        e["t"]
        for e in sdk_task.messages("s2c")
        if e["msg"].get("method") == "notifications/tasks/status" and e["msg"]["params"]["status"] == "completed"
    ]
    # The setup that makes the difference: the server said so before the client's last poll.
    assert notified and notified[0] < task["polls"][-1]
    assert "poll-after-terminal" not in sdk_task.finding_codes()


# -- fastmcp 4.1.4 + fastmcp-tasks 4.1.4: the 2026-07-28 tasks extension -------------------------


@pytest.fixture(scope="module")
def fastmcp_task(fastmcp_tasks_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    server = [
        str(fastmcp_tasks_python),
        str(PEER_SCRIPTS / "fastmcp_tasks_stdio_server.py"),
        "--poll-ms",
        str(FASTMCP_POLL_MS),
    ]
    return run_tapped_client(
        fastmcp_tasks_python,
        "fastmcp_tasks_stdio_client.py",
        "slow_job",
        {"seconds": FASTMCP_TASK_SECONDS},
        server,
        tmp_path_factory.mktemp("report-fastmcp-tasks"),
    )


def fastmcp_delays(count: int) -> list[float]:
    """fastmcp-tasks' sleeps between polls: 20 ms, doubling, capped at pollIntervalMs."""
    return [min(FASTMCP_FIRST_DELAY * 2**k, FASTMCP_POLL_MS / 1000) for k in range(count)]


def test_fastmcp_task_is_one_extension_task_that_asked_1000_ms_and_completed(fastmcp_task: Recorded) -> None:
    task = fastmcp_task.task()
    assert task["protocol"] == "mcp" and task["design"] == "mcp-tasks-extension"
    assert task["tool"] == "slow_job"
    created = fastmcp_task.client["created"]
    assert created["resultType"] == "task" and created["pollIntervalMs"] == FASTMCP_POLL_MS
    assert task["requested_poll_ms"] == FASTMCP_POLL_MS == task["applied_poll_ms"]
    assert [s["state"] for s in task["states"]] == ["working", "completed"]
    assert task["final_state"] == "completed" and task["terminal"] is True
    assert fastmcp_task.client["result"] == [{"type": "text", "text": f"slept {FASTMCP_TASK_SECONDS} s"}]
    assert fastmcp_task.client["is_error"] is False


def test_fastmcp_poller_starts_at_20_ms_and_doubles_up_to_the_interval(fastmcp_task: Recorded) -> None:
    task = fastmcp_task.task()
    polls = task["polls"]
    assert_same_times(polls, raw_mcp_polls(fastmcp_task, task["id"]))
    assert task["first_poll_after"] < ROUND_TRIP_SLACK
    measured = intervals(polls)
    expected = fastmcp_delays(len(measured))
    # Seen: 0.023, 0.044, 0.083, 0.164, 0.324, 0.644, 1.007, 1.006 s: each sleep plus 3–7 ms.
    assert_sleeps_plus_round_trips(measured, expected)
    # The ramp reaches the ceiling: 0.02 → 0.64 is six rounds, then the interval.
    assert expected[:7] == [0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.0]
    assert len(measured) >= 8
    summary = task["intervals"]
    assert summary["min"] == pytest.approx(min(measured), abs=ROUNDING)
    assert summary["max"] == pytest.approx(max(measured), abs=ROUNDING)
    # The pattern reads the same: "0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.01 ×2 s" (seen). A part shows its
    # run's median (the upper one of two): the last "1.01 ×2" is the larger of the last two intervals.
    first, *_, last = task["pattern"].removesuffix(" s").split(", ")
    first_shown, _, first_times = first.partition(" ×")
    last_shown, _, last_times = last.partition(" ×")
    head, tail = measured[: int(first_times or 1)], measured[-int(last_times or 1) :]
    assert float(first_shown) == pytest.approx(sorted(head)[len(head) // 2], abs=0.006), task["pattern"]
    assert float(last_shown) == pytest.approx(sorted(tail)[len(tail) // 2], abs=0.006), task["pattern"]


def test_fastmcp_latency_table_and_exit(fastmcp_task: Recorded) -> None:
    assert fastmcp_task.latency("tasks/get")["count"] == len(fastmcp_task.task()["polls"])
    assert fastmcp_task.report["client_exit"]["how"] == "stdin closed"
    assert fastmcp_task.report["verdicts"]["cancel_on_exit"]["live_tasks"] == []
    assert fastmcp_task.report["findings"] == []
    assert fastmcp_task.report["questions"] == []


def test_fastmcp_poll_verdict_describes_the_settled_cadence(fastmcp_task: Recorded) -> None:
    task = fastmcp_task.task()
    backed_off = [i for i, d in zip(intervals(task["polls"]), fastmcp_delays(99), strict=False) if d == 1.0]
    assert len(backed_off) >= 2  # the client did settle at the requested interval
    settled = statistics.median(backed_off)
    verdicts = fastmcp_task.report["verdicts"]["poll_intervals"]
    match = re.search(r"([\d.]+)× the requested interval", verdicts["verdict"])
    assert match, verdicts["verdict"]
    assert float(match.group(1)) == pytest.approx(settled, abs=0.02), verdicts["verdict"]
    assert verdicts.get("settled_interval") == pytest.approx(settled, abs=ROUNDING), verdicts
    assert task.get("settled_interval") == pytest.approx(settled, abs=ROUNDING), task


# -- server-everything's simulate-research-query, driven by the mcp 1.30 client ------------------


@pytest.fixture(scope="module")
def everything_task(
    mcp_sdk_tasks_python: Path, server_everything_bin: Path, tmp_path_factory: pytest.TempPathFactory
) -> Recorded:
    return run_tapped_client(
        mcp_sdk_tasks_python,
        "mcp_tasks_client.py",
        "simulate-research-query",
        {"topic": "python", "ambiguous": True},
        [str(server_everything_bin), "stdio"],
        tmp_path_factory.mktemp("report-server-everything"),
    )


def test_everything_task_asks_1000_ms_and_goes_through_input_required(everything_task: Recorded) -> None:
    task = everything_task.task()
    assert task["design"] == "mcp-2025-11-25" and task["tool"] == "simulate-research-query"
    assert everything_task.client["created"]["pollInterval"] == EVERYTHING_POLL_MS
    assert task["requested_poll_ms"] == EVERYTHING_POLL_MS == task["applied_poll_ms"]
    assert [s["state"] for s in task["states"]] == ["working", "input_required", "working", "completed"]
    assert task["final_state"] == "completed" and task["live_at_client_exit"] is False
    # The client saw working until input_required, answered, and got the report on the answer.
    assert [s for _, s in everything_task.client["statuses"]][-1] == "input_required"
    [asked] = everything_task.client["elicitations"]
    assert asked["answer"] == {"interpretation": "programming"}
    assert "python (programming)" in everything_task.client["result"]["content"][0]["text"]


def test_everything_polls_are_a_second_apart_until_the_question(everything_task: Recorded) -> None:
    task = everything_task.task()
    assert_same_times(task["polls"], raw_mcp_polls(everything_task, task["id"]))
    assert len(task["polls"]) == len(everything_task.client["statuses"])
    measured = intervals(task["polls"])
    # Seen: 1.002 s, 1.003 s; then tasks/result holds the client until the task is done.
    assert_sleeps_plus_round_trips(measured, [EVERYTHING_POLL_MS / 1000] * len(measured))
    assert task["intervals"]["median"] == pytest.approx(statistics.median(measured), abs=ROUNDING)


def test_everything_input_required_window_is_found_and_answered_by_the_elicitation(
    everything_task: Recorded,
) -> None:
    task = everything_task.task()
    [question] = everything_task.report["questions"]
    assert question["kind"] == "task_input_required" and question["task"] == task["id"]
    input_required_at = next(s["t"] for s in task["states"] if s["state"] == "input_required")
    assert question["opened"] == input_required_at
    # Closed by the client's answer to the server's elicitation/create (delivered via tasks/result).
    [elicit] = [e for e in everything_task.messages("s2c") if e["msg"].get("method") == "elicitation/create"]
    meta = elicit["msg"]["params"]["_meta"]["io.modelcontextprotocol/related-task"]
    assert meta["taskId"] == task["id"]
    [answer] = [
        e for e in everything_task.messages("c2s") if e["msg"].get("id") == elicit["msg"]["id"] and "result" in e["msg"]
    ]
    assert answer["msg"]["result"]["action"] == "accept"
    assert question["closed"] == pytest.approx(answer["t"], abs=0.0015)
    assert question["answered_by"] == "elicitation accept" and question["cancelled_instead"] is False
    # server-everything moves to its question stage 2 s after creating the task, just when the client
    # polls for the third time (both run on 1 s clocks from the create): that poll may go out just
    # before the state changes (then it sees input_required, or working and the next one a second
    # later sees it), or just after. The window holds exactly the polls sent inside it, whichever.
    seeing = task["polls"][-1]
    assert seeing >= question["opened"] - ROUND_TRIP_SLACK
    opened, closed, inside = question["opened"], question["closed"], question["polls_inside"]
    surely = {t for t in task["polls"] if opened + ROUNDING / 2 < t < closed - ROUNDING / 2}
    maybe = {t for t in task["polls"] if opened - ROUNDING / 2 <= t <= closed + ROUNDING / 2}
    assert surely <= set(inside) <= maybe, (question, task["polls"])
    marks = [opened, *inside, closed]
    assert question["longest_gap"] == pytest.approx(max(intervals(marks)), abs=ROUNDING)
    assert task["answers"] == [{"t": question["closed"], "via": "elicitation accept"}]
    gaps = everything_task.report["verdicts"]["elicitation_gaps"]
    assert gaps["longest_gap"] == question["longest_gap"]
    assert "answered by elicitation accept" in gaps["verdict"]


def test_everything_run_has_no_findings_and_the_sdk_sigterms_the_server(everything_task: Recorded) -> None:
    assert everything_task.report["findings"] == []
    assert everything_task.latency("tasks/result")["count"] == 1
    assert everything_task.report["client_exit"]["how"] == "stdin closed"
    server = everything_task.report["server_exit"]
    # server-everything keeps running on end of input; the SDK client SIGTERMs it 2 s later.
    assert server["how"].endswith("killed by SIGTERM"), server
    low, high = SDK_SIGTERM_AFTER_STDIN_CLOSE
    assert low <= server["after_client_exit"] <= high


# -- a2a-sdk 1.3.0 through wiretap proxy ------------------------------------------------------------


@pytest.fixture(scope="module")
def a2a_tasks(a2a_sdk_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    python = a2a_sdk_python
    root = tmp_path_factory.mktemp("report-a2a")
    agent = subprocess.Popen(
        [str(python), str(PEER_SCRIPTS / "a2a_slow_agent.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert agent.stdout is not None
        upstream = agent.stdout.readline().strip()
        assert upstream, agent.stderr.read() if agent.stderr else "the agent did not start"
        with running_proxy(upstream, root / "recording.jsonl") as proxy:
            client = subprocess.run(
                [str(python), str(PEER_SCRIPTS / "a2a_polling_client.py"), proxy.url, "--poll", str(A2A_POLL_SECONDS)],
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
            )
            assert client.returncode == 0, client.stderr[-4000:]
        assert proxy.proc.returncode == 0, proxy.stderr
        yield Recorded(json.loads(client.stdout), proxy.recording, proxy.events)
    finally:
        agent.send_signal(signal.SIGINT)
        try:
            agent.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            agent.kill()
            agent.communicate()


def raw_a2a_polls(run: Recorded, task_id: str) -> list[float]:
    """When the client sent GetTask for ``task_id`` (JSON-RPC or REST), read straight from the recording."""

    def polls(event: Event) -> bool:
        rest, msg = event.get("rest"), event.get("msg")
        if rest is not None:
            return bool(rest.get("operation") == "GetTask" and rest.get("taskId") == task_id)
        return isinstance(msg, dict) and msg.get("method") == "GetTask" and msg["params"].get("id") == task_id

    return [event["t"] for event in run.messages("c2s") if polls(event)]


def a2a_polled(run: Recorded) -> dict[str, Json]:
    """The tasks the client polled, by binding: what it saw, and what the report made of them."""
    by_id = {t["id"]: t for t in run.tasks}
    return {
        binding: {"client": out["polled"], "task": by_id[out["polled"]["id"]]} for binding, out in run.client.items()
    }


def test_a2a_tasks_are_found_with_their_a2a_1_0_states_and_completed(a2a_tasks: Recorded) -> None:
    tasks = a2a_tasks.tasks
    assert len(tasks) == 3 * len(a2a_tasks.client)  # polled, streamed, asked; per binding
    for task in tasks:
        assert task["protocol"] == "a2a" and task["design"] == "a2a-1.0"
        assert {s["state"] for s in task["states"]} <= A2A_STATES, task["states"]
        assert task["states"][0]["state"] == "TASK_STATE_SUBMITTED"
        assert task["final_state"] == "TASK_STATE_COMPLETED" and task["terminal"] is True
        assert task["requested_poll_ms"] is None and task["applied_poll_ms"] is None
        assert task["live_at_client_exit"] is False


def test_a2a_polled_tasks_match_what_the_client_saw(a2a_tasks: Recorded) -> None:
    for binding, polled in a2a_polled(a2a_tasks).items():
        seen, task = polled["client"]["states"], polled["task"]
        # Every GetTask the client sent (the first state came with SendMessage).
        assert len(task["polls"]) == len(seen) - 1, binding
        assert_same_times(task["polls"], raw_a2a_polls(a2a_tasks, task["id"]))
        distinct = [state for n, (_, state) in enumerate(seen) if n == 0 or seen[n - 1][1] != state]
        assert [s["state"] for s in task["states"]] == distinct, binding
        assert distinct == ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
        measured = intervals(task["polls"])
        # Seen: 0.254–0.261 s: the client's 0.25 s sleep plus a GetTask round trip.
        assert_sleeps_plus_round_trips(measured, [A2A_POLL_SECONDS] * len(measured))
        assert task["intervals"]["median"] == pytest.approx(statistics.median(measured), abs=ROUNDING)
        assert task["failed_polls"] == 0
    verdict = a2a_tasks.report["verdicts"]["poll_intervals"]
    assert verdict["requested_poll_ms"] is None
    assert A2A_POLL_SECONDS <= verdict["median_interval"] <= A2A_POLL_SECONDS + ROUND_TRIP_SLACK


def test_a2a_input_required_is_a_question_answered_by_the_follow_up_message(a2a_tasks: Recorded) -> None:
    asked = [t for t in a2a_tasks.tasks if any(s["state"] == "TASK_STATE_INPUT_REQUIRED" for s in t["states"])]
    assert len(asked) == len(a2a_tasks.client)
    questions = a2a_tasks.report["questions"]
    assert sorted(q["task"] for q in questions) == sorted(t["id"] for t in asked)
    for question in questions:
        assert question["kind"] == "task_input_required"
        assert question["answered_by"] == "SendStreamingMessage" and question["cancelled_instead"] is False
        assert question["closed"] is not None and question["closed"] >= question["opened"]
    for task in asked:
        states = [s["state"] for s in task["states"]]
        assert states == [
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_INPUT_REQUIRED",
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED",
        ]
        assert [a["via"] for a in task["answers"]] == ["SendStreamingMessage"]


def test_a2a_run_has_no_findings_and_the_latency_table_counts_every_call(a2a_tasks: Recorded) -> None:
    assert a2a_tasks.report["findings"] == []
    polls = sum(len(p["client"]["states"]) - 1 for p in a2a_polled(a2a_tasks).values())
    assert a2a_tasks.latency("GetTask")["count"] == polls
    assert a2a_tasks.latency("GetTask")["errors"] == 0
    assert a2a_tasks.latency("SendMessage")["count"] == len(a2a_tasks.client)
    assert a2a_tasks.latency("SendStreamingMessage")["count"] == 3 * len(a2a_tasks.client)
    cancel = a2a_tasks.report["verdicts"]["cancel_on_exit"]
    assert a2a_tasks.report["client_exit"]["how"] == "last connection closed"
    assert cancel["live_tasks"] == [] and cancel["sent"] is None


# -- Claude Code 2.1.332, offline ------------------------------------------------------------------


@dataclass
class ClaudeRecorded:
    run: Recorded
    tool_results: list[Json]


def claude_tapped(claude: Path, root: Path, server: list[str], tool: str, arguments: Json) -> ClaudeRecorded:
    root.mkdir(parents=True, exist_ok=True)
    recording = root / "recording.jsonl"
    entry = stdio_server(sys.executable, ["-m", "wiretap", "tap", "--out", str(recording), "--", *server])
    config = write_mcp_config(root / "mcp.json", {"srv": entry})
    name = f"mcp__srv__{tool}"
    with FakeMessagesAPI([ToolUse(name, arguments)]) as api:
        run = run_claude(
            claude,
            f"Call the {tool} tool.",
            env=offline_env(root, api.url),
            cwd=root,
            mcp_config=config,
            allowed_tools=[name],
        )
        results = api.tool_results()
    assert run.returncode == 0, run.describe()
    assert run.mcp_status("srv") == "connected", run.describe()
    _, events, skipped = settled_read_all(recording)
    assert not skipped, skipped.describe()
    return ClaudeRecorded(Recorded({}, recording, events), results)


@pytest.fixture(scope="module")
def claude_echo(claude_code_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> ClaudeRecorded:
    server = [sys.executable, "-m", "wiretap.demo.server"]
    return claude_tapped(claude_code_bin, tmp_path_factory.mktemp("report-claude-echo"), server, "echo", {"text": "hi"})


@pytest.fixture(scope="module", params=["2025", "2026"])
def claude_task_anyway(
    request: pytest.FixtureRequest, claude_code_bin: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, ClaudeRecorded]:
    design: str = request.param
    server = [sys.executable, str(PEER_SCRIPTS / "task_anyway_server.py"), "--design", design]
    root = tmp_path_factory.mktemp(f"report-claude-task-{design}")
    return design, claude_tapped(claude_code_bin, root, server, "research", {"topic": "wire"})


def test_claude_code_exit_is_sigint_with_no_live_task(claude_echo: ClaudeRecorded) -> None:
    report = claude_echo.run.report
    assert claude_echo.tool_results[0]["content"] == [{"type": "text", "text": "hi"}]
    assert report["client_exit"]["how"] == "SIGINT"
    assert report["tasks"] == []
    cancel = report["verdicts"]["cancel_on_exit"]
    assert cancel["live_tasks"] == [] and cancel["cancelled"] == [] and cancel["sent"] is None
    assert "(SIGINT) with no live task" in cancel["verdict"]
    assert report["server_exit"]["how"].endswith("killed by SIGINT"), report["server_exit"]
    # It died of that SIGINT (not of the SIGTERM Claude Code sends 100 ms later), after it arrived.
    assert report["server_exit"]["after_client_exit"] >= 0
    assert report["findings"] == []


def test_a_task_returned_to_claude_code_is_flagged_and_left_live(
    claude_task_anyway: tuple[str, ClaudeRecorded],
) -> None:
    design, claude = claude_task_anyway
    report = claude.run.report
    [call] = claude.run.requests("tools/call")
    # Claude Code asked for no task: no params.task, no tasks extension in its capabilities.
    assert "task" not in call["msg"]["params"]
    capabilities = call["msg"]["params"].get("_meta", {}).get("io.modelcontextprotocol/clientCapabilities", {})
    assert "io.modelcontextprotocol/tasks" not in capabilities.get("extensions", {})
    [task] = report["tasks"]
    assert task["design"] == {"2025": "mcp-2025-11-25", "2026": "mcp-tasks-extension"}[design]
    assert task["requested_poll_ms"] == 500 and task["polls"] == []
    [finding] = [f for f in report["findings"] if f["code"] == "task-without-client-support"]
    assert finding["severity"] == "error" and finding["task"] == task["id"]
    assert [f["code"] for f in report["findings"]] == ["task-without-client-support"]
    # Claude Code rejects the handle as a tool result, never polls, and on exit cancels nothing.
    assert claude.tool_results[0]["is_error"] is True
    assert report["client_exit"]["how"] == "SIGINT"
    assert task["live_at_client_exit"] is True and task["cancels"] == []
    cancel = report["verdicts"]["cancel_on_exit"]
    assert cancel["live_tasks"] == [task["id"]] and cancel["sent"] is False


# -- every format renders every real recording ---------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_the_human_formats_render_every_real_recording(
    fmt: str,
    sdk_task: Recorded,
    fastmcp_task: Recorded,
    everything_task: Recorded,
    a2a_tasks: Recorded,
    claude_echo: ClaudeRecorded,
) -> None:
    for run in (sdk_task, fastmcp_task, everything_task, a2a_tasks, claude_echo.run):
        result = wiretap_report(run.recording, fmt)
        assert result.returncode == 0, result.stderr
        assert "Poll intervals" in result.stdout, result.stdout[:2000]
