"""Scenario stdio servers that misbehave on purpose, with known truth. ``python stdio_server.py MODE``.

Modes:
  answer       answers every JSON-RPC request with {"echo": <params>}; exits 0 on end of input
  one-and-bye  answers the first request, says "bye" on stderr and exits 0
  crash        answers the first request, writes half a line, and exits with code 3
  segfault     answers the first request, then kills itself with SIGSEGV
  on-sigint    prints its pid to stderr, waits; exits 0 on SIGINT, saying so on stderr
  stubborn     prints its pid, ignores SIGINT, dies on SIGTERM (what Claude Code's escalation meets)
  sleeper      prints its pid and sleeps forever, ignoring end of input

MCP modes (a minimal MCP server with one tool, ``echo``, for small clients and real ones alike;
``server/discover`` gets -32601, so a 2026-07-28 client falls back to ``initialize``):
  mcp            answers the handshake, ``tools/list`` and ``tools/call``; exits 0 on end of input
  banner         first prints BANNER on stdout (a log line), then serves as ``mcp``
  noisy          serves as ``mcp``, printing NOISE on stdout after every answer that follows ``initialize``
  slow-start N   serves as ``mcp``, sleeping N seconds before it answers ``initialize``, saying so on stderr
                 every HEARTBEAT seconds meanwhile (the recording then shows until when it was alive)
  dies-at-start  writes DYING on stderr, line by line, and exits with code 1 before reading anything
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def answer_lines(limit: int | None = None) -> None:
    answered = 0
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"echo": request.get("params")}}))
        sys.stdout.write("\n")
        sys.stdout.flush()
        answered += 1
        if limit is not None and answered >= limit:
            return


BANNER = "Starting scenario server v1.0 on stdio..."
NOISE = "INFO handled a request"
HEARTBEAT = 0.5
STARTING = "initialize received: starting slowly"
DYING = ["Traceback (most recent call last):", "ModuleNotFoundError: No module named 'scenario_deps'"]
ECHO = {
    "name": "echo",
    "description": "Returns its text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}


def mcp_result(method: str, params: dict[str, object]) -> dict[str, object] | None:
    if method == "initialize":
        version = params.get("protocolVersion") or "2025-06-18"
        info = {"name": "wiretap-stdio-scenario", "version": "1.0.0"}
        return {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}
    if method == "tools/list":
        return {"tools": [ECHO]}
    if method == "tools/call":
        text = str((params.get("arguments") or {}).get("text", ""))  # type: ignore[attr-defined]
        return {"content": [{"type": "text", "text": text}]}
    if method == "ping":
        return {}
    return None


def start_slowly(seconds: float) -> None:
    say(STARTING)
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        time.sleep(min(HEARTBEAT, left))
        say(f"still starting: {seconds - max(0.0, deadline - time.monotonic()):.1f} s")


def serve_mcp(*, noisy: bool = False, slow: float = 0.0) -> None:
    signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
    initialized = False
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request or "method" not in request:
            continue
        method = request["method"]
        if method == "initialize" and slow:
            start_slowly(slow)
        result = mcp_result(method, request.get("params") or {})
        answer = {"jsonrpc": "2.0", "id": request["id"]}
        if result is None:
            answer["error"] = {"code": -32601, "message": f"Method not found: {method}"}
        else:
            answer["result"] = result
        sys.stdout.write(json.dumps(answer) + "\n")
        if noisy and initialized:
            sys.stdout.write(NOISE + "\n")
        initialized = initialized or method == "initialize"
        sys.stdout.flush()


def wait_forever() -> None:
    while True:
        time.sleep(3600)


def main(mode: str) -> None:
    if mode == "answer":
        answer_lines()
    elif mode == "one-and-bye":
        answer_lines(limit=1)
        say("bye")
    elif mode == "crash":
        answer_lines(limit=1)
        sys.stdout.write('{"jsonrpc":"2.0","method":"notifications/mess')
        sys.stdout.flush()
        os._exit(3)
    elif mode == "segfault":
        answer_lines(limit=1)
        os.kill(os.getpid(), signal.SIGSEGV)
    elif mode == "on-sigint":
        signal.signal(signal.SIGINT, lambda *_: (say("got SIGINT, bye"), sys.exit(0)))
        say(f"pid {os.getpid()}")
        wait_forever()
    elif mode == "stubborn":
        signal.signal(signal.SIGINT, lambda *_: say("ignoring SIGINT"))
        say(f"pid {os.getpid()}")
        wait_forever()
    elif mode == "sleeper":
        say(f"pid {os.getpid()}")
        wait_forever()
    elif mode == "mcp":
        serve_mcp()
    elif mode == "banner":
        print(BANNER, flush=True)
        serve_mcp()
    elif mode == "noisy":
        serve_mcp(noisy=True)
    elif mode == "slow-start":
        serve_mcp(slow=float(sys.argv[2]))
    elif mode == "dies-at-start":
        for line in DYING:
            say(line)
        sys.exit(1)
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1])
