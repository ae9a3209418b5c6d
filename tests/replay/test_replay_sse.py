"""HTTP replay reproduces event streams as the recording shows them: event names (the legacy ``endpoint``
event included), ids, ``retry``, priming events with empty data, and the server closing a stream before
its response so that the client resumes with ``Last-Event-ID`` (SEP-1699). The recordings are of
tests/scenarios/session_server.py through the real proxy; the client here speaks the wire itself."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import pytest
from scenarios.session_server import RETRY_MS, SessionServer
from support.proxyrun import running_proxy

WIRETAP = [sys.executable, "-m", "wiretap"]
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def read_events(stream: IO[bytes], count: int | None = None) -> list[dict[str, str]]:
    """SSE events as their fields (``data`` joined), until ``count`` events or the end of the stream."""
    events: list[dict[str, str]] = []
    fields: dict[str, str] = {}
    for raw in stream:
        line = raw.decode().rstrip("\r\n")
        if not line:
            if fields:
                events.append(fields)
                fields = {}
                if count is not None and len(events) == count:
                    break
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        fields[name] = f"{fields[name]}\n{value}" if name == "data" and name in fields else value
    return events


def request(url: str, body: dict[str, Any] | None, headers: dict[str, str] | None = None) -> Any:
    data = json.dumps({"jsonrpc": "2.0", **body}).encode() if body is not None else None
    return urllib.request.urlopen(urllib.request.Request(url, data=data, headers={**HEADERS, **(headers or {})}))


def resumable_session(url: str) -> dict[str, Any]:
    """initialize, then a call whose stream closes after a priming event and is resumed with a GET."""
    with request(url, {"id": 1, "method": "initialize", "params": {}}) as opened:
        session = opened.headers["Mcp-Session-Id"]
        json.loads(opened.read())
    call = {"id": 2, "method": "tools/call", "params": {"name": "resumable", "arguments": {}}}
    with request(url, call, {"Mcp-Session-Id": session}) as posted:
        assert posted.headers["Content-Type"].startswith("text/event-stream")
        first = read_events(posted)
    resume = {"Mcp-Session-Id": session, "Last-Event-ID": first[-1]["id"], "Accept": "text/event-stream"}
    with request(url, None, resume) as resumed:
        second = read_events(resumed)
    return {"first": first, "second": second, "answer": json.loads(second[-1]["data"])}


def legacy_session(base: str) -> dict[str, Any]:
    """GET /sse (the endpoint event), POST a request there (202), its answer on the stream."""
    with urllib.request.urlopen(urllib.request.Request(f"{base}/sse", headers={"Accept": "text/event-stream"})) as sse:
        [endpoint] = read_events(sse, 1)
        target = endpoint["data"] if "://" in endpoint["data"] else f"{base}{endpoint['data']}"
        with request(target, {"id": 1, "method": "tools/list", "params": {}}) as posted:
            status = posted.status
        [answer] = read_events(sse, 1)
    return {"endpoint": endpoint, "status": status, "answer": answer}


@contextmanager
def replaying(recording: Path) -> Iterator[str]:
    command = [*WIRETAP, "replay", str(recording), "--pace", "fast", "--strict", "--listen", "127.0.0.1:0"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        try:
            yield proc.stdout.readline().strip()
        finally:
            proc.send_signal(signal.SIGINT)
            _, stderr = proc.communicate(timeout=10)
    assert proc.returncode == 0, stderr


@pytest.fixture(scope="module")
def resumable(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = tmp_path_factory.mktemp("sse") / "resumable.jsonl"
    with SessionServer() as server, running_proxy(f"{server.url}/mcp", path) as proxy:
        return path, resumable_session(proxy.url)


def test_a_replayed_stream_sends_the_priming_event_closes_where_the_server_did_and_resumes_by_event_id(
    resumable: tuple[Path, dict[str, Any]],
) -> None:
    path, recorded = resumable
    [priming] = recorded["first"]
    assert priming == {"id": priming["id"], "retry": str(RETRY_MS), "data": ""}
    with replaying(path) as url:
        replayed = resumable_session(url)
    assert replayed["first"] == recorded["first"]  # the priming event only: the stream was closed after it
    assert [e["id"] for e in replayed["second"]] == [e["id"] for e in recorded["second"]]
    assert replayed["answer"] == recorded["answer"]


def test_the_recorded_resuming_client_replayed_against_the_server_resumes_too(
    resumable: tuple[Path, dict[str, Any]],
) -> None:
    path, _ = resumable
    with SessionServer() as fresh:
        command = [*WIRETAP, "replay", str(path), "--as", "client", "--upstream", f"{fresh.url}/mcp", "--pace", "fast"]
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 response(s) compared, 0 differ" in result.stderr


def test_a_legacy_http_sse_recording_replays_with_its_endpoint_event_and_answers_on_the_stream(tmp_path: Path) -> None:
    path = tmp_path / "legacy.jsonl"
    with SessionServer() as server, running_proxy(f"{server.url}/sse", path) as proxy:
        recorded = legacy_session(proxy.url.removesuffix("/sse"))
    assert recorded["endpoint"]["event"] == "endpoint" and recorded["status"] == 202
    with replaying(path) as url:
        replayed = legacy_session(url.removesuffix("/sse"))
    assert replayed["endpoint"]["event"] == "endpoint"
    assert replayed["status"] == 202
    assert replayed["answer"]["event"] == "message"
    assert json.loads(replayed["answer"]["data"]) == json.loads(recorded["answer"]["data"])
