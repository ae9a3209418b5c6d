"""``wiretap lab serve`` (the probe MCP server) as a real process, over stdio and Streamable HTTP: what it
answers, how it ends, and its own log."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import pytest

SERVE = [sys.executable, "-m", "wiretap", "lab", "serve"]
TIMEOUT = 30
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}


def line(rid: Any, method: str, **params: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode() + b"\n"


def read_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(row) for row in path.read_text().splitlines()]


def answer(stdout: IO[bytes]) -> dict[str, Any]:
    row = stdout.readline()
    assert row.endswith(b"\n"), row
    message: dict[str, Any] = json.loads(row)
    return message


@contextmanager
def stdio_probe(log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with subprocess.Popen([*SERVE, "--log", str(log)], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as proc:
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(TIMEOUT)


def test_over_stdio_it_answers_line_by_line_and_ends_at_end_of_input_saying_so(tmp_path: Path) -> None:
    log = tmp_path / "probe.jsonl"
    with stdio_probe(log) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(
            line(0, "initialize", **INIT) + line(1, "tools/call", name="slow_call", arguments={"seconds": 0.2})
        )
        proc.stdin.flush()
        assert answer(proc.stdout)["result"]["serverInfo"]["name"] == "wiretap-lab"
        slow = answer(proc.stdout)
        assert slow["id"] == 1 and slow["result"]["_meta"]["wiretap/lab"]["settings"] == {"seconds": 0.2}
        proc.stdin.close()
        assert proc.wait(TIMEOUT) == 0
        assert proc.stdout.read() == b""
    assert stat.S_IMODE(os.stat(log).st_mode) == 0o600
    entries = read_log(log)
    assert [e["event"] for e in entries] == ["listening", "received", "sent", "received", "call", "sent", "end"]
    assert entries[-1] == {**entries[-1], "how": "eof", "live_tasks": []}
    call, done = entries[3], entries[5]
    # The answer was held for the seconds asked; the log's monotonic clock shows it.
    assert done["mono_ns"] - call["mono_ns"] >= 200_000_000
    assert all(isinstance(e["wall_ns"], int) and isinstance(e["mono_ns"], int) for e in entries)


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_ends_the_probe_cleanly_and_the_log_names_it_and_the_live_task(
    tmp_path: Path, number: signal.Signals
) -> None:
    log = tmp_path / "probe.jsonl"
    with stdio_probe(log) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(
            line(0, "initialize", **INIT) + line(1, "tools/call", name="endless_task", arguments={}, task={})
        )
        proc.stdin.flush()
        answer(proc.stdout)
        task = answer(proc.stdout)["result"]["task"]
        assert task["status"] == "working" and task["pollInterval"] == 1000
        proc.send_signal(number)
        assert proc.wait(TIMEOUT) == 0
    assert read_log(log)[-1] == {**read_log(log)[-1], "how": number.name, "live_tasks": [task["taskId"]]}


def test_a_client_that_closes_the_probes_stdout_ends_it_cleanly_saying_so(tmp_path: Path) -> None:
    log = tmp_path / "probe.jsonl"
    command = [*SERVE, "--log", str(log)]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        proc.stdin.write(line(0, "initialize", **INIT))
        proc.stdin.flush()
        assert proc.wait(TIMEOUT) == 0
        assert proc.stderr.read() == b""
        proc.stdin.close()
    entries = read_log(log)
    assert entries[-2] == {**entries[-2], "event": "unsent", "answer_to": 0}
    assert entries[-1] == {**entries[-1], "event": "end", "how": "stdout-closed"}


@contextmanager
def http_probe(log: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    command = [*SERVE, "--http", "127.0.0.1:0", "--log", str(log)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        try:
            url = proc.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), proc.stderr.read()
            yield url, proc
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            proc.wait(TIMEOUT)


def post(url: str, body: bytes) -> tuple[int, str, bytes]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    request = urllib.request.Request(url, body, headers, method="POST")
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        return response.status, response.headers.get("Content-Type", ""), response.read()


def sse_messages(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(row[len(b"data: ") :]) for row in body.split(b"\n") if row.startswith(b"data: ")]


def test_over_http_it_prints_its_url_answers_json_streams_progress_and_ends_at_sigterm(tmp_path: Path) -> None:
    log = tmp_path / "probe.jsonl"
    with http_probe(log) as (url, proc):
        status, kind, body = post(url, line(0, "initialize", **INIT))
        assert (status, kind) == (200, "application/json")
        assert json.loads(body)["result"]["protocolVersion"] == "2025-11-25"
        notified = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
        assert post(url, notified)[0] == 202
        call = line(
            1, "tools/call", name="progress_call", arguments={"count": 2, "every_s": 0.05}, _meta={"progressToken": 7}
        )
        status, kind, body = post(url, call)
        assert (status, kind) == (200, "text/event-stream")
        first, second, result = sse_messages(body)
        assert [first["params"]["progress"], second["params"]["progress"]] == [1, 2]
        assert first["params"]["progressToken"] == 7 and result["id"] == 1
        assert result["result"]["content"][0]["text"] == "progress_call: sent 2 progress notifications"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url, timeout=TIMEOUT)
        refused.value.close()
        assert refused.value.code == 405 and refused.value.headers["Allow"] == "POST"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(TIMEOUT) == 0
    entries = read_log(log)
    assert entries[0]["event"] == "listening" and entries[0]["url"] == url
    assert [e.get("n") for e in entries if e.get("method") == "notifications/progress"] == [1, 2]
    assert entries[-1] == {**entries[-1], "event": "end", "how": "SIGTERM"}


def test_closing_the_connection_of_a_held_http_call_cancels_it_and_the_log_says_so(tmp_path: Path) -> None:
    log = tmp_path / "probe.jsonl"
    with http_probe(log) as (url, _):
        host, port = url.removeprefix("http://").removesuffix("/mcp").rsplit(":", 1)
        body = line(1, "tools/call", name="slow_call", arguments={"seconds": 600})
        head = f"POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        head += f"Content-Length: {len(body)}\r\n\r\n"
        with socket.create_connection((host, int(port)), timeout=TIMEOUT) as client:
            client.sendall(head.encode() + body)
            deadline = time.monotonic() + TIMEOUT
            while not [e for e in read_log(log) if e["event"] == "call"] and time.monotonic() < deadline:
                time.sleep(0.02)
        while not [e for e in read_log(log) if e["event"] == "stream-closed"] and time.monotonic() < deadline:
            time.sleep(0.02)
    events = [e["event"] for e in read_log(log)]
    assert events == ["listening", "received", "call", "stream-closed", "end"]


def test_a_modern_request_over_http_gets_modern_shapes_and_the_task_extension(tmp_path: Path) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    }
    with http_probe(tmp_path / "probe.jsonl") as (url, _):
        found = json.loads(post(url, line("d", "server/discover", _meta=meta))[2])["result"]
        assert found["resultType"] == "complete" and "2026-07-28" in found["supportedVersions"]
        call = line(2, "tools/call", name="poll_task", arguments={"interval_ms": 100, "seconds": 0}, _meta=meta)
        created = json.loads(post(url, call)[2])["result"]
        assert created["resultType"] == "task" and created["pollIntervalMs"] == 100
        polled = json.loads(post(url, line(3, "tasks/get", taskId=created["taskId"], _meta=meta))[2])["result"]
        assert (
            polled["status"] == "completed"
            and polled["result"]["content"][0]["text"] == "poll_task: completed after 0 s"
        )


@pytest.mark.parametrize("address", ["0.0.0.0:8765", "192.0.2.1:1", "nothost"])
def test_a_non_loopback_http_address_is_refused_in_one_line_with_status_2(address: str) -> None:
    result = subprocess.run([*SERVE, "--http", address], capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and address in result.stderr and "Traceback" not in result.stderr
