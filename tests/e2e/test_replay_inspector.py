"""The MCP Inspector CLI 2.12.0 (npm) as a real client: recorded through wiretap against the real MCP
Python SDK server, replayed as the server to the same Inspector, and replayed as the client to the
real server: the same answers, no misses, no differences. Over stdio in both protocol eras, and over
Streamable HTTP through ``wiretap proxy``; and against the TypeScript SDK's reference server
(server-everything, SDK 1.32.2) over legacy HTTP+SSE and Streamable HTTP."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.peer_servers import PEER_SCRIPTS, serving
from support.proxyrun import running_proxy

pytestmark = pytest.mark.slow

WIRETAP = [sys.executable, "-m", "wiretap"]
TIMEOUT = 120


def inspect(inspector: Path, home: Path, target: list[str], *args: str) -> Any:
    """One Inspector CLI call (``--method …``) against ``target`` (a server command or a URL)."""
    env = {**os.environ, "HOME": str(home), "MCP_CATALOG_PATH": str(home / "catalog")}
    where = ["--server-url", target[0], "--transport", "http", *args] if "://" in target[0] else [*args, "--", *target]
    command = [str(inspector), "--cli", "--format", "json", *where]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=home)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(done.stdout)


CALLS = [
    ("--method", "tools/list"),
    ("--method", "tools/call", "--tool-name", "add", "--tool-arg", "a=2", "b=40"),
    ("--method", "tools/call", "--tool-name", "count", "--tool-arg", "n=3"),
]


def replay_as_server(recording: Path, summary: Path) -> list[str]:
    return [*WIRETAP, "replay", str(recording), "--strict", "--pace", "fast", "--summary", str(summary)]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_inspector_over_stdio_gets_the_same_answers_from_the_replay_and_its_client_replays_clean(
    inspector: Path, mcp_sdk_python: Path, tmp_path: Path, era: str
) -> None:
    server = [str(mcp_sdk_python), str(PEER_SCRIPTS / "mcp_sdk_server.py"), "--wire-log", str(tmp_path / "wire")]
    recordings = [tmp_path / f"call-{n}.jsonl" for n in range(len(CALLS))]
    recorded = [
        inspect(inspector, tmp_path, [*WIRETAP, "tap", "--out", str(path), "--", *server], "--protocol-era", era, *call)
        for path, call in zip(recordings, CALLS, strict=True)
    ]
    assert recorded[1]["result"]["structuredContent"] == {"result": 42}
    for n, (path, call) in enumerate(zip(recordings, CALLS, strict=True)):
        summary = tmp_path / f"summary-{n}.json"
        replayed = inspect(inspector, tmp_path, replay_as_server(path, summary), "--protocol-era", era, *call)
        assert replayed == recorded[n], call
        answered = json.loads(summary.read_text())
        assert answered["misses"] == [] and answered["matched"] == answered["requests"] >= 2
        command = [*WIRETAP, "replay", str(path), "--as", "client", "--pace", "fast", "--", *server]
        again = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
        assert again.returncode == 0, again.stdout + again.stderr
        assert " 0 differ" in again.stderr


def test_the_inspector_over_streamable_http_gets_the_same_answers_from_the_replay_and_its_client_replays_clean(
    inspector: Path, mcp_sdk_python: Path, tmp_path: Path
) -> None:
    server = [str(mcp_sdk_python), str(PEER_SCRIPTS / "mcp_sdk_http_server.py"), "--log", str(tmp_path / "server.log")]
    path = tmp_path / "http.jsonl"
    with serving(server, tmp_path) as upstream, running_proxy(upstream, path) as proxy:
        recorded = [inspect(inspector, tmp_path, [proxy.url], "--protocol-era", "legacy", *call) for call in CALLS]
    assert recorded[1]["result"]["structuredContent"] == {"result": 42}
    summary = tmp_path / "summary.json"
    with serving([*replay_as_server(path, summary), "--listen", "127.0.0.1:0"], tmp_path) as url:
        replayed = [inspect(inspector, tmp_path, [url], "--protocol-era", "legacy", *call) for call in CALLS]
    assert replayed == recorded
    answered = json.loads(summary.read_text())
    assert answered["misses"] == []
    with serving(server, tmp_path) as upstream:
        command = [*WIRETAP, "replay", str(path), "--as", "client", "--upstream", upstream, "--pace", "fast"]
        again = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    assert again.returncode == 0, again.stdout + again.stderr
    assert " 0 differ" in again.stderr


# -- the TypeScript SDK's reference server (server-everything 2026.8.31, TS SDK 1.32.2) -------------------

EVERYTHING_CALLS = [
    ("--method", "tools/list"),
    ("--method", "tools/call", "--tool-name", "get-sum", "--tool-arg", "a=2", "b=40"),
]


@contextlib.contextmanager
def everything(binary: Path, root: Path, mode: str) -> Iterator[str]:
    """server-everything on ``sse`` (legacy HTTP+SSE, 2024-11-05) or ``streamableHttp``, bound to
    loopback: its URL."""
    from support.mcp_http_peers import PRELOAD
    from support.mcp_http_peers import serving as serving_node

    listen = root / f"listen-{time.monotonic_ns()}.jsonl"
    env = os.environ | {"NODE_OPTIONS": f"--require={PRELOAD}", "WIRETAP_PRELOAD_LISTEN": str(listen), "PORT": "0"}
    with serving_node([str(binary), mode], root / "everything.err", env) as proc:
        deadline = time.monotonic() + 30
        while not (listen.exists() and listen.read_text()) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert listen.exists() and listen.read_text(), (root / "everything.err").read_text()
        path = "/sse" if mode == "sse" else "/mcp"
        yield f"http://127.0.0.1:{json.loads(listen.read_text().splitlines()[0])['port']}{path}"


@pytest.mark.parametrize(("mode", "transport"), [("sse", "sse"), ("streamableHttp", "http")])
def test_the_inspector_and_the_typescript_sdk_server_over_http_replay_both_ways(
    inspector: Path, server_everything_bin: Path, tmp_path: Path, mode: str, transport: str
) -> None:
    """Legacy HTTP+SSE and Streamable HTTP, the TypeScript SDK 1.32.2 on the server side."""
    path = tmp_path / "http.jsonl"
    with everything(server_everything_bin, tmp_path, mode) as upstream, running_proxy(upstream, path) as proxy:
        recorded = [inspect_http(inspector, tmp_path, proxy.url, transport, call) for call in EVERYTHING_CALLS]
    assert recorded[1]["result"]["content"][0]["text"] == "The sum of 2 and 40 is 42."
    summary = tmp_path / "summary.json"
    with serving([*replay_as_server(path, summary), "--listen", "127.0.0.1:0"], tmp_path) as url:
        assert url.endswith("/sse" if mode == "sse" else "/mcp")
        replayed = [inspect_http(inspector, tmp_path, url, transport, call) for call in EVERYTHING_CALLS]
    assert replayed == recorded
    assert json.loads(summary.read_text())["misses"] == []
    with everything(server_everything_bin, tmp_path, mode) as upstream:
        command = [*WIRETAP, "replay", str(path), "--as", "client", "--upstream", upstream, "--pace", "fast"]
        again = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    assert again.returncode == 0, again.stdout + again.stderr
    assert " 0 differ" in again.stderr


def inspect_http(inspector: Path, home: Path, url: str, transport: str, call: tuple[str, ...]) -> Any:
    env = {**os.environ, "HOME": str(home), "MCP_CATALOG_PATH": str(home / "catalog")}
    command = [str(inspector), "--cli", "--format", "json", "--server-url", url, "--transport", transport, *call]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=home)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(done.stdout)
