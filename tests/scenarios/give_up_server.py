"""A stdio MCP server whose one tool answers late: ``slow`` sleeps ``seconds``, sending a progress
notification at each offset in ``progress`` (seconds after the call), then answers, cancelled or not.

    python give_up_server.py            # JSON lines on stdin and stdout
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

LOCK = threading.Lock()
SLOW = {
    "name": "slow",
    "description": "Answers after `seconds`.",
    "inputSchema": {
        "type": "object",
        "properties": {"seconds": {"type": "number"}, "progress": {"type": "array", "items": {"type": "number"}}},
    },
}


def send(message: dict[str, Any]) -> None:
    with LOCK:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def slow(request: dict[str, Any]) -> None:
    params = request.get("params", {})
    arguments = params.get("arguments", {})
    token = params.get("_meta", {}).get("progressToken")
    started = time.monotonic()
    for n, offset in enumerate(arguments.get("progress", []), 1):
        time.sleep(max(0.0, started + offset - time.monotonic()))
        send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": n}})
    time.sleep(max(0.0, started + float(arguments.get("seconds", 0.0)) - time.monotonic()))
    send({"jsonrpc": "2.0", "id": request["id"], "result": {"content": [{"type": "text", "text": "done"}]}})


def answer(request: dict[str, Any]) -> None:
    method = request.get("method")
    if method == "initialize":
        result = {
            "protocolVersion": request["params"].get("protocolVersion", "2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "give-up", "version": "1"},
        }
        send({"jsonrpc": "2.0", "id": request["id"], "result": result})
    elif method == "tools/call":
        threading.Thread(target=slow, args=(request,)).start()
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": request["id"], "result": {"tools": [SLOW]}})
    elif "id" in request:
        error = {"code": -32601, "message": f"no method {method}"}
        send({"jsonrpc": "2.0", "id": request["id"], "error": error})


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            answer(json.loads(line))


if __name__ == "__main__":
    main()
