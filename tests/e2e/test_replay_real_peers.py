"""Recordings of real third-party peers as regression fixtures: recorded once against the real server,
replayed to the real client without it (and the recorded client replayed against the real server).

- MCP Python SDK 2.3.0 client and server over stdio, in the 2026-07-28 era (``server/discover``) and the
  2025-11-25 one (``initialize``): the client's whole report (tools, five calls, progress) is the same
  against the replay as against the server, at the recorded pace and as fast as possible.
- The same recordings replayed as the client against the real server: no difference.
- fastmcp 4.1.4 + fastmcp-tasks over stdio: a tool that must run as a 2026-07-28 task, polled by the
  client's own backoff; the replay answers the polls by the client's clock and the result is the same.
- The SDK over Streamable HTTP through ``wiretap proxy``, both eras on one endpoint: replayed with
  ``--listen``, and the recorded client replayed against the real server with ``--upstream``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.peer_servers import PEER_SCRIPTS, serving
from support.proxyrun import running_proxy
from support.taprun import settled_read_all

pytestmark = pytest.mark.slow

WIRETAP = [sys.executable, "-m", "wiretap"]
STDERR_LINE = "sdk-peer stderr: hello"
TIMEOUT = 90


@dataclass
class ClientRun:
    returncode: int
    stdout: str
    stderr: str

    @property
    def report(self) -> dict[str, Any]:
        assert self.returncode == 0, self.stderr[-4000:]
        out: dict[str, Any] = json.loads(self.stdout)
        return out


def run(command: list[str], cwd: Path) -> ClientRun:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)
    return ClientRun(result.returncode, result.stdout, result.stderr)


def replay_server(recording: Path, *options: str) -> list[str]:
    return [*WIRETAP, "replay", str(recording), "--strict", *options]


def c2s_methods(recording: Path) -> list[str]:
    _, events, _ = settled_read_all(recording)
    return [e["msg"].get("method", "response") for e in events if e["kind"] == "message" and e["dir"] == "c2s"]


# -- MCP Python SDK over stdio ------------------------------------------------------------------------


@dataclass
class Recorded:
    path: Path
    mode: str
    report: dict[str, Any]
    server: list[str]


@pytest.fixture(scope="module", params=["auto", "legacy"], ids=["2026-07-28", "2025-11-25"])
def sdk_recording(
    request: pytest.FixtureRequest, mcp_sdk_python: Path, tmp_path_factory: pytest.TempPathFactory
) -> Recorded:
    """The SDK client against the SDK server through the tap: the fixture, recorded once."""
    root = tmp_path_factory.mktemp(f"replay-sdk-{request.param}")
    server = [str(mcp_sdk_python), str(PEER_SCRIPTS / "mcp_sdk_server.py"), "--wire-log", str(root / "wire")]
    path = root / "recording.jsonl"
    client = [str(mcp_sdk_python), str(PEER_SCRIPTS / "mcp_sdk_client.py"), request.param, "--"]
    recorded = run([*client, *WIRETAP, "tap", "--out", str(path), "--", *server], root)
    return Recorded(path, request.param, recorded.report, server)


@pytest.mark.parametrize("pace", ["recorded", "fast"])
def test_the_sdk_client_gets_the_same_results_from_the_replay_as_from_the_server(
    sdk_recording: Recorded, mcp_sdk_python: Path, tmp_path: Path, pace: str
) -> None:
    summary = tmp_path / "summary.json"
    client = [str(mcp_sdk_python), str(PEER_SCRIPTS / "mcp_sdk_client.py"), sdk_recording.mode, "--"]
    replayed = run([*client, *replay_server(sdk_recording.path, "--pace", pace, "--summary", str(summary))], tmp_path)
    assert replayed.report == sdk_recording.report
    assert replayed.report["progress"] == [[i, 3, f"step {i}"] for i in (1, 2, 3)]
    assert STDERR_LINE in replayed.stderr.splitlines(), replayed.stderr[-3000:]  # the server's stderr, replayed too
    answered = json.loads(summary.read_text())
    assert answered["misses"] == [] and answered["matched"] == answered["requests"] >= 7


def test_the_recorded_sdk_client_replayed_against_the_real_server_finds_no_difference(
    sdk_recording: Recorded, tmp_path: Path
) -> None:
    again = tmp_path / "again.jsonl"
    command = [*WIRETAP, "replay", str(sdk_recording.path), "--as", "client", "--out", str(again)]
    result = run([*command, "--pace", "fast", "--", *sdk_recording.server], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""
    assert "0 differ" in result.stderr
    assert c2s_methods(again) == c2s_methods(sdk_recording.path)


def test_a_sdk_client_of_the_other_era_is_told_what_the_recording_lacks(
    sdk_recording: Recorded, mcp_sdk_python: Path, tmp_path: Path
) -> None:
    other = "legacy" if sdk_recording.mode == "auto" else "auto"
    summary = tmp_path / "summary.json"
    client = [str(mcp_sdk_python), str(PEER_SCRIPTS / "mcp_sdk_client.py"), other, "--"]
    replayed = run([*client, *replay_server(sdk_recording.path, "--pace", "fast", "--summary", str(summary))], tmp_path)
    [miss, *_] = json.loads(summary.read_text())["misses"]
    assert "had no recorded match" in replayed.stderr
    assert miss["closest"] is not None and miss["differed"]
    if other == "auto":
        # Its server/discover probe gets an error, as from a handshake-only server: it falls back to
        # initialize, which the recording holds, and gets everything else from the replay.
        assert miss["method"] == "server/discover"
        assert replayed.report == sdk_recording.report
    else:
        assert miss["method"] == "initialize"
        assert replayed.returncode != 0
        assert "no recorded request matches initialize" in replayed.stderr


# -- fastmcp-tasks over stdio -------------------------------------------------------------------------


def test_a_fastmcp_task_client_gets_the_same_result_from_a_replayed_task_server(
    fastmcp_tasks_python: Path, tmp_path: Path
) -> None:
    python = str(fastmcp_tasks_python)
    server = [python, str(PEER_SCRIPTS / "fastmcp_tasks_stdio_server.py"), "--poll-ms", "300"]
    client = [python, str(PEER_SCRIPTS / "fastmcp_tasks_stdio_client.py"), "slow_job", '{"seconds": 1.0}', "--"]
    path = tmp_path / "tasks.jsonl"
    recorded = run([*client, *WIRETAP, "tap", "--out", str(path), "--", *server], tmp_path)
    assert recorded.report["result"] == [{"text": "slept 1.0 s", "type": "text"}]
    for pace in ("recorded", "fast"):
        summary = tmp_path / f"{pace}.json"
        replayed = run([*client, *replay_server(path, "--pace", pace, "--summary", str(summary))], tmp_path)
        assert replayed.report == recorded.report, pace
        answered = json.loads(summary.read_text())
        assert answered["misses"] == []
        assert answered["polls_by_task_clock"] >= 1
    # As fast as possible, the first poll already finds the task completed.
    assert json.loads((tmp_path / "fast.json").read_text())["polls_by_task_clock"] == 1


# -- MCP Python SDK over Streamable HTTP --------------------------------------------------------------


def http_client(python: Path, url: str, mode: str, root: Path) -> list[str]:
    script = str(PEER_SCRIPTS / "mcp_sdk_http_client.py")
    return [str(python), script, url, "--mode", mode, "--wire-log", str(root / f"client-{mode}.log")]


def test_the_sdk_http_client_gets_the_same_results_from_a_replay_served_over_http_in_both_eras(
    mcp_sdk_python: Path, tmp_path: Path
) -> None:
    path = tmp_path / "http.jsonl"
    server = [str(mcp_sdk_python), str(PEER_SCRIPTS / "mcp_sdk_http_server.py"), "--log", str(tmp_path / "server.log")]
    reports = {}
    with serving(server, tmp_path) as upstream, running_proxy(upstream, path) as proxy:
        for mode in ("auto", "legacy"):
            reports[mode] = run(http_client(mcp_sdk_python, proxy.url, mode, tmp_path), tmp_path).report
    summary = tmp_path / "summary.json"
    command = [*replay_server(path, "--pace", "fast", "--summary", str(summary)), "--listen", "127.0.0.1:0"]
    with serving(command, tmp_path) as url:
        assert url.endswith("/mcp")
        for mode in ("auto", "legacy"):
            assert run(http_client(mcp_sdk_python, url, mode, tmp_path), tmp_path).report == reports[mode], mode
    answered = json.loads(summary.read_text())
    assert answered["misses"] == []
    assert answered["matched"] == answered["requests"] == 18
    # And the recorded client against the real server, through a proxy recording the new run.
    again = tmp_path / "again.jsonl"
    with serving(server, tmp_path) as upstream:
        command = [*WIRETAP, "replay", str(path), "--as", "client", "--upstream", upstream, "--out", str(again)]
        result = run([*command, "--pace", "fast"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "18 response(s) compared, 0 differ" in result.stderr
    assert c2s_methods(again) == c2s_methods(path)


# -- a2a-sdk over HTTP ---------------------------------------------------------------------------------

A2A_BINDINGS = ("jsonrpc", "rest", "jsonrpc-0.3", "rest-0.3")


def test_the_a2a_sdk_client_gets_the_same_answers_from_a_replayed_agent_over_every_binding(
    a2a_sdk_python: Path, tmp_path: Path
) -> None:
    """Card, JSON-RPC and REST, 1.0 and 0.3, blocking and streaming; and the recorded client against a
    fresh agent, whose task ids it learns as it goes."""
    python = str(a2a_sdk_python)
    agent = [python, str(PEER_SCRIPTS / "a2a_sdk_agent.py"), "--request-log", str(tmp_path / "agent.log")]
    client = [python, str(PEER_SCRIPTS / "a2a_sdk_client.py")]
    path = tmp_path / "a2a.jsonl"
    with serving(agent, tmp_path) as upstream, running_proxy(upstream, path) as proxy:
        recorded = run([*client, proxy.url], tmp_path).report
    summary = tmp_path / "summary.json"
    with serving(
        [*replay_server(path, "--pace", "fast", "--summary", str(summary)), "--listen", "127.0.0.1:0"], tmp_path
    ) as url:
        replayed = run([*client, url], tmp_path).report
    for binding in A2A_BINDINGS:
        assert replayed[binding] == recorded[binding], binding
    # The card the replay serves points at the replay.
    [card] = replayed["cards"][:1]
    assert {i["url"].split("/a2a/")[0] for i in card["supportedInterfaces"]} == {url}
    answered = json.loads(summary.read_text())
    assert answered["misses"] == []
    assert answered["polls_by_task_clock"] >= 1
    with serving(agent, tmp_path) as upstream:
        command = [*WIRETAP, "replay", str(path), "--as", "client", "--upstream", upstream, "--pace", "fast"]
        result = run(command, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 differ" in result.stderr
