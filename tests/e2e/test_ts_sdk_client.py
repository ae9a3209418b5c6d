"""The MCP TypeScript SDK 1.32.2's own ``Client`` (npm) as a real client: recorded through wiretap
against the real MCP Python SDK server, replayed as the server to the same client, and replayed as
the client to the real server: the same answers, no misses, no differences. Over stdio
(``StdioClientTransport`` through ``wiretap tap``), Streamable HTTP (``StreamableHTTPClientTransport``
through ``wiretap proxy``) and legacy HTTP+SSE (``SSEClientTransport``, 2024-11-05, against the Python
SDK's ``sse_app``). And the TypeScript SDK as the server too: the reference "everything" server over
stdio, both ends TypeScript."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.peer_servers import PEER_SCRIPTS, serving
from support.proxyrun import running_proxy

pytestmark = pytest.mark.slow

WIRETAP = [sys.executable, "-m", "wiretap"]
TIMEOUT = 120
CLIENT = PEER_SCRIPTS / "ts_sdk_client.mjs"


def ts_client(modules: Path, *arguments: str) -> Any:
    """One run of the TypeScript SDK client (``[--tool NAME] TRANSPORT TARGET…``): its tools/list and
    tools/call results."""
    command = ["node", str(CLIENT), str(modules), *arguments]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(done.stdout)


def replay_as_server(recording: Path, summary: Path) -> list[str]:
    return [*WIRETAP, "replay", str(recording), "--strict", "--pace", "fast", "--summary", str(summary)]


def assert_real_answers(answers: Any) -> None:
    names = [tool["name"] for tool in answers["tools"]["tools"]]
    assert "add" in names and "fail" in names
    assert answers["call"]["structuredContent"] == {"result": 42}
    assert answers["call"].get("isError") is not True


def assert_replayed_clean(done: subprocess.CompletedProcess[str]) -> None:
    """``replay --as client`` compared every response of the TS client's session (a server that died at
    once also gives "0 differ", with nothing compared) and none differed."""
    assert done.returncode == 0, done.stdout + done.stderr
    compared = re.search(r"(\d+) response\(s\) compared, (\d+) differ", done.stderr)
    assert compared is not None, done.stderr
    assert int(compared[1]) >= 3 and int(compared[2]) == 0, done.stderr


def test_the_typescript_sdk_client_over_stdio_gets_the_same_answers_from_the_replay_and_its_client_replays_clean(
    ts_sdk: Path, mcp_sdk_python: Path, tmp_path: Path
) -> None:
    server = [str(mcp_sdk_python), str(PEER_SCRIPTS / "mcp_sdk_server.py"), "--wire-log", str(tmp_path / "wire")]
    recording = tmp_path / "stdio.jsonl"
    recorded = ts_client(ts_sdk, "stdio", *WIRETAP, "tap", "--out", str(recording), "--", *server)
    assert_real_answers(recorded)
    summary = tmp_path / "summary.json"
    replayed = ts_client(ts_sdk, "stdio", *replay_as_server(recording, summary))
    assert replayed == recorded
    answered = json.loads(summary.read_text())
    assert answered["misses"] == []
    assert answered["matched"] == answered["requests"] == 3  # initialize, tools/list, tools/call
    command = [*WIRETAP, "replay", str(recording), "--as", "client", "--pace", "fast", "--", *server]
    again = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    assert_replayed_clean(again)


def test_the_typescript_sdk_client_over_streamable_http_gets_the_same_answers_from_the_replay_and_replays_clean(
    ts_sdk: Path, mcp_sdk_python: Path, tmp_path: Path
) -> None:
    server = [str(mcp_sdk_python), str(PEER_SCRIPTS / "mcp_sdk_http_server.py"), "--log", str(tmp_path / "server.log")]
    recording = tmp_path / "http.jsonl"
    with serving(server, tmp_path) as upstream, running_proxy(upstream, recording) as proxy:
        recorded = ts_client(ts_sdk, "http", proxy.url)
    assert_real_answers(recorded)
    summary = tmp_path / "summary.json"
    with serving([*replay_as_server(recording, summary), "--listen", "127.0.0.1:0"], tmp_path) as url:
        replayed = ts_client(ts_sdk, "http", url)
    assert replayed == recorded
    answered = json.loads(summary.read_text())
    assert answered["misses"] == []
    assert answered["matched"] == answered["requests"] >= 3
    with serving(server, tmp_path) as upstream:
        command = [*WIRETAP, "replay", str(recording), "--as", "client", "--upstream", upstream, "--pace", "fast"]
        again = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    assert_replayed_clean(again)


def test_the_typescript_sdk_client_over_legacy_http_sse_gets_the_same_answers_from_the_replay_and_replays_clean(
    ts_sdk: Path, mcp_sdk_python: Path, tmp_path: Path
) -> None:
    """2024-11-05: the endpoint event on the GET stream, each POST accepted with 202 and answered there."""
    server = [
        str(mcp_sdk_python),
        str(PEER_SCRIPTS / "mcp_sdk_http_server.py"),
        "--sse",
        "--log",
        str(tmp_path / "log"),
    ]
    recording = tmp_path / "sse.jsonl"
    with serving(server, tmp_path) as upstream, running_proxy(upstream, recording) as proxy:
        recorded = ts_client(ts_sdk, "sse", proxy.url)
    assert_real_answers(recorded)
    events = [e for e in proxy.events if e["kind"] == "message" and e["dir"] == "s2c"]
    assert events[0]["sse"]["event"] == "endpoint"
    posts = [e for e in proxy.of_kind("http_request") if e["method"] == "POST"]
    answered = {e["ex"]: e["status"] for e in proxy.of_kind("http_response")}
    assert len(posts) == 4 and {answered[e["ex"]] for e in posts} == {202}  # 3 requests and initialized
    summary = tmp_path / "summary.json"
    with serving([*replay_as_server(recording, summary), "--listen", "127.0.0.1:0"], tmp_path) as url:
        assert url.endswith("/sse")
        replayed = ts_client(ts_sdk, "sse", url)
    assert replayed == recorded
    answered_by_replay = json.loads(summary.read_text())
    assert answered_by_replay["misses"] == []
    assert answered_by_replay["matched"] == answered_by_replay["requests"] == 3
    with serving(server, tmp_path) as upstream:
        command = [*WIRETAP, "replay", str(recording), "--as", "client", "--upstream", upstream, "--pace", "fast"]
        again = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    assert_replayed_clean(again)


def test_the_typescript_sdk_server_over_stdio_replays_to_its_client_and_its_client_replays_clean(
    ts_sdk: Path, server_everything_bin: Path, tmp_path: Path
) -> None:
    """Both ends TypeScript: the reference "everything" server (SDK 1.32.2) through ``wiretap tap``."""
    server = [str(server_everything_bin), "stdio"]
    recording = tmp_path / "everything.jsonl"
    tapped = [*WIRETAP, "tap", "--out", str(recording), "--", *server]
    recorded = ts_client(ts_sdk, "--tool", "get-sum", "stdio", *tapped)
    assert recorded["call"]["content"] == [{"type": "text", "text": "The sum of 2 and 40 is 42."}]
    summary = tmp_path / "summary.json"
    replayed = ts_client(ts_sdk, "--tool", "get-sum", "stdio", *replay_as_server(recording, summary))
    assert replayed == recorded
    answered = json.loads(summary.read_text())
    assert answered["misses"] == []
    assert answered["matched"] == answered["requests"] == 3
    command = [*WIRETAP, "replay", str(recording), "--as", "client", "--pace", "fast", "--", *server]
    again = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    assert_replayed_clean(again)
