"""``wiretap replay --as client`` against a live HTTP server: each recorded session its own live session,
and a server that cannot be reached or started named at once, with its own exit status.

The server is tests/scenarios/session_server.py: stateful sessions that refuse a second ``initialize``
and count each session's requests, so a replay that mixed sessions up would differ."""

from __future__ import annotations

import contextlib
import http.server
import json
import socket
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scenarios.session_server import SessionServer
from support.proxyrun import running_proxy

WIRETAP = [sys.executable, "-m", "wiretap"]
UNREACHABLE = 3


def call(url: str, body: dict[str, Any], session: str | None = None, method: str = "POST") -> tuple[int, Any, str]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session:
        headers["Mcp-Session-Id"] = session
    data = json.dumps({"jsonrpc": "2.0", **body}).encode() if body else None
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    with urllib.request.urlopen(request, timeout=10) as response:
        raw = response.read()
        return response.status, json.loads(raw) if raw.strip() else None, response.headers.get("Mcp-Session-Id", "")


def one_session(url: str, n: int) -> list[Any]:
    """initialize, initialized, n × tools/list, DELETE: the request counts each session answered."""
    _, _, session = call(url, {"id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}})
    call(url, {"method": "notifications/initialized"}, session)
    counts = [call(url, {"id": i, "method": "tools/list"}, session)[1]["result"] for i in range(1, n + 1)]
    call(url, {}, session, method="DELETE")
    return [c["requests_in_this_session"] for c in counts]


def replay_client(recording: Path, upstream: str, *options: str) -> subprocess.CompletedProcess[str]:
    command = [*WIRETAP, "replay", str(recording), "--as", "client", "--upstream", upstream, *options]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_each_recorded_client_session_runs_as_its_own_live_session(tmp_path: Path) -> None:
    path = tmp_path / "three-sessions.jsonl"
    with SessionServer() as server, running_proxy(f"{server.url}/mcp", path) as proxy:
        assert [one_session(proxy.url, n) for n in (2, 3, 1)] == [[1, 2], [1, 2, 3], [1]]
    with SessionServer() as fresh:
        result = replay_client(path, f"{fresh.url}/mcp", "--pace", "fast")
        assert fresh.sessions == {}  # each live session was ended, as each recorded one was
    assert result.returncode == 0, result.stdout + result.stderr
    assert "9 response(s) compared, 0 differ" in result.stderr


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_dead_upstream_is_named_with_its_own_exit_status_instead_of_a_difference(tmp_path: Path) -> None:
    path = tmp_path / "one-session.jsonl"
    with SessionServer() as server, running_proxy(f"{server.url}/mcp", path) as proxy:
        one_session(proxy.url, 2)
    dead = f"http://127.0.0.1:{free_port()}/mcp"
    summary = tmp_path / "summary.json"
    result = replay_client(path, dead, "--summary", str(summary))
    assert result.returncode == UNREACHABLE
    assert result.stderr.startswith(f"wiretap replay: cannot connect to {dead}: ")
    assert "Traceback" not in result.stderr and "differ" not in result.stderr
    assert json.loads(summary.read_text())["unreachable"].startswith("cannot connect to")


def test_a_server_command_that_cannot_start_is_named_with_the_same_exit_status(tmp_path: Path) -> None:
    path = tmp_path / "one-session.jsonl"
    with SessionServer() as server, running_proxy(f"{server.url}/mcp", path) as proxy:
        one_session(proxy.url, 1)
    command = [*WIRETAP, "replay", str(path), "--as", "client", "--", str(tmp_path / "no-such-server")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == UNREACHABLE
    assert result.stderr.startswith("wiretap replay: cannot start ")
    assert "no-such-server" in result.stderr and "Traceback" not in result.stderr


def test_a_server_that_refuses_each_request_with_an_http_error_differs_at_once_saying_so(tmp_path: Path) -> None:
    """Nothing to wait for once the POST got 404 and no JSON-RPC response (not --timeout per request)."""
    path = tmp_path / "one-session.jsonl"
    with SessionServer() as server, running_proxy(f"{server.url}/mcp", path) as proxy:
        one_session(proxy.url, 2)
    with refusing_server() as url:
        result = replay_client(path, url, "--pace", "fast")
    assert result.returncode == 1
    missing = result.stdout.splitlines()
    assert [line.split(maxsplit=1)[0] for line in missing] == ["#1", "#2", "#3"]  # initialize, tools/list × 2
    assert all(line.endswith(": no live response (HTTP 404 Not Found)") for line in missing), missing
    assert "3 response(s) compared, 3 differ" in result.stderr


@contextlib.contextmanager
def refusing_server() -> Iterator[str]:
    """An HTTP server that answers every request 404 with a plain-text body."""

    class Refuse(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_error(404)

        do_GET = do_DELETE = do_POST

        def log_message(self, *_: Any) -> None:
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuse) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
        finally:
            server.shutdown()
