"""Peers with known truth for ``client-gave-up``, ``answer-after-give-up`` and ``idle-timeout-risk``: a
client that calls the slow tool and then cancels, walks away or waits, over stdio (through ``wiretap
tap`` and give_up_server.py) or HTTP (through ``wiretap proxy`` and ``SlowHttpServer``). Each delay here
is the peer's own: the condition under test. The client names itself ``claude-code``, so Claude Code's
limits apply.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import subprocess
import time
from typing import IO, Any
from urllib.parse import urlsplit

from aiohttp import web
from scenarios.threaded_app import ThreadedApp

CLIENT_INFO = {"name": "claude-code", "version": "2.1.332"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO},
}


def slow_call(seconds: float, progress: tuple[float, ...] = (), msg_id: int = 2) -> dict[str, Any]:
    arguments = {"seconds": seconds, "progress": list(progress)}
    params = {"name": "slow", "arguments": arguments, "_meta": {"progressToken": f"p{msg_id}"}}
    return {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": params}


def cancel(msg_id: int = 2) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": msg_id}}


# -- stdio ------------------------------------------------------------------------------------------


def _write(stream: IO[bytes], message: dict[str, Any]) -> None:
    stream.write(json.dumps(message).encode() + b"\n")
    stream.flush()


def _read_until(stream: IO[bytes], msg_id: int) -> dict[str, Any]:
    while line := stream.readline():
        message = json.loads(line)
        if message.get("id") == msg_id:
            return dict(message)
    raise EOFError(f"no response #{msg_id}")


def stdio_client(
    argv: list[str],
    seconds: float,
    *,
    cancel_after: float | None = None,
    abandon_after: float | None = None,
    progress: tuple[float, ...] = (),
) -> int:
    """Run ``argv`` (a ``wiretap tap``) as the client: initialize, call ``slow``; then cancel it after
    ``cancel_after`` s and read the late answer anyway, or after ``abandon_after`` s close stdin and stop
    reading; else wait for the answer. Closes stdin and returns the tap's exit status."""
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as proc:
        return _drive(proc, seconds, cancel_after, abandon_after, progress)


def _drive(
    proc: subprocess.Popen[bytes],
    seconds: float,
    cancel_after: float | None,
    abandon_after: float | None,
    progress: tuple[float, ...],
) -> int:
    assert proc.stdin is not None and proc.stdout is not None
    _write(proc.stdin, INITIALIZE)
    _read_until(proc.stdout, 1)
    _write(proc.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    _write(proc.stdin, slow_call(seconds, progress))
    if abandon_after is not None:
        time.sleep(abandon_after)
        proc.stdin.close()
        proc.stdout.close()
        return proc.wait(30)
    if cancel_after is not None:
        time.sleep(cancel_after)
        _write(proc.stdin, cancel())
    _read_until(proc.stdout, 2)
    proc.stdin.close()
    proc.stdout.read()
    return proc.wait(30)


# -- HTTP -------------------------------------------------------------------------------------------


class SlowHttpServer(ThreadedApp):
    """``with SlowHttpServer(stream=False) as up: up.url``: an MCP endpoint at /mcp whose ``slow`` answers
    after ``seconds``: as a JSON body then (its head with it), or (``stream``) on an event stream whose
    head goes at once."""

    PATH = "/mcp"
    SHUTDOWN_TIMEOUT = 0.5

    def __init__(self, *, stream: bool) -> None:
        super().__init__()
        self.stream = stream

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/mcp", self._mcp)
        return app

    async def _mcp(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        if body.get("method") == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "slow"}}
            return web.json_response({"jsonrpc": "2.0", "id": body["id"], "result": result})
        if "id" not in body:
            return web.Response(status=202)
        seconds = float(body.get("params", {}).get("arguments", {}).get("seconds", 0.0))
        answer = {"jsonrpc": "2.0", "id": body["id"], "result": {"content": [{"type": "text", "text": "done"}]}}
        if not self.stream:
            await asyncio.sleep(seconds)
            return web.json_response(answer)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await asyncio.sleep(seconds)
        await response.write(f"event: message\ndata: {json.dumps(answer)}\n\n".encode())
        await response.write_eof()
        return response


def _post(url: str, message: dict[str, Any]) -> http.client.HTTPConnection:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=120)
    body = json.dumps(message)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    connection.request("POST", parts.path, body, headers)
    return connection


def http_client(
    url: str, seconds: float, *, cancel_after: float | None = None, disconnect_after: float | None = None
) -> str:
    """Initialize, call ``slow``; then cancel it after ``cancel_after`` s (on another connection) and read
    the late answer anyway, or close the call's connection after ``disconnect_after`` s; else read the
    answer. Returns the call's response body ("" when the client walked away)."""
    first = _post(url, INITIALIZE)
    first.getresponse().read()
    first.close()
    call = _post(url, slow_call(seconds))
    if disconnect_after is not None:
        time.sleep(disconnect_after)
        call.close()
        return ""
    if cancel_after is not None:
        time.sleep(cancel_after)
        other = _post(url, cancel())
        other.getresponse().read()
        other.close()
    text = call.getresponse().read().decode()
    call.close()
    return text
