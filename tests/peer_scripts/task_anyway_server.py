"""An MCP stdio server (standard library only) that returns a task to clients that never asked for one.

For tests/e2e/test_report_real_peers.py: ``task_anyway_server.py --design 2025|2026``. Its one tool,
``research``, answers every ``tools/call`` with a task handle, whatever the request said:

- ``2025``: a legacy server (``server/discover`` gets -32601, ``initialize`` answers 2025-11-25)
  whose result is a 2025-11-25 ``CreateTaskResult`` (``{"task": {..., "pollInterval": 500}}``),
  although the request carried no ``params.task``;
- ``2026``: a 2026-07-28 server (answers ``server/discover``) whose result is a tasks-extension
  handle (``resultType: "task"``, ``pollIntervalMs`` 500), although the client's per-request
  capabilities did not declare ``io.modelcontextprotocol/tasks``.

Both designs answer ``tasks/get`` (working for the first second, then completed) and ``tasks/cancel``.
It logs to stderr and exits on end of input or SIGINT/SIGTERM (their default actions).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from datetime import UTC, datetime
from typing import Any

MODERN, LEGACY = "2026-07-28", "2025-11-25"
INFO = {"name": "wiretap-task-anyway", "version": "1.0.0"}
POLL_MS = 500
WORK_SECONDS = 1.0
TOOL = {
    "name": "research",
    "description": "Researches a topic (slowly).",
    "inputSchema": {"type": "object", "properties": {"topic": {"type": "string"}}},
}
TASKS: dict[str, float] = {}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def task_fields(task_id: str, design: str) -> dict[str, Any]:
    done = time.monotonic() - TASKS[task_id] >= WORK_SECONDS
    fields: dict[str, Any] = {
        "taskId": task_id,
        "status": "completed" if done else "working",
        "createdAt": now(),
        "lastUpdatedAt": now(),
    }
    if design == "2025":
        return fields | {"ttl": 60_000, "pollInterval": POLL_MS}
    fields |= {"ttlMs": 60_000, "pollIntervalMs": POLL_MS}
    if done:
        fields["result"] = {"content": [{"type": "text", "text": "research done"}], "isError": False}
    return fields


def answer(method: str, params: dict[str, Any], design: str) -> dict[str, Any]:
    if method == "server/discover" and design == "2026":
        return {
            "resultType": "complete",
            "supportedVersions": [MODERN],
            "capabilities": {"tools": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
            "_meta": {"io.modelcontextprotocol/serverInfo": INFO},
        }
    if method == "initialize" and design == "2025":
        capabilities = {"tools": {}, "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}}
        return {"protocolVersion": LEGACY, "capabilities": capabilities, "serverInfo": INFO}
    if method == "tools/list":
        tool = TOOL | ({"execution": {"taskSupport": "optional"}} if design == "2025" else {})
        return {"tools": [tool]}
    if method == "tools/call":
        task_id = str(uuid.uuid4())
        TASKS[task_id] = time.monotonic()
        print(f"[task-anyway] {params.get('name')}: task {task_id} without being asked", file=sys.stderr)
        if design == "2025":
            return {"task": task_fields(task_id, design)}
        return {"resultType": "task", **task_fields(task_id, design)}
    if method in ("tasks/get", "tasks/cancel") and params.get("taskId") in TASKS:
        fields = task_fields(params["taskId"], design)
        return fields | {"status": "cancelled"} if method == "tasks/cancel" else fields
    if method == "ping":
        return {}
    raise LookupError(method)


def handle(line: str, design: str) -> None:
    message = json.loads(line)
    method, msg_id = message.get("method"), message.get("id")
    if msg_id is None or not isinstance(method, str):
        return
    try:
        send({"jsonrpc": "2.0", "id": msg_id, "result": answer(method, message.get("params") or {}, design)})
    except LookupError:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        send({"jsonrpc": "2.0", "id": msg_id, "error": error})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--design", choices=["2025", "2026"], required=True)
    design = parser.parse_args().design
    for line in sys.stdin:
        if line.strip():
            handle(line, design)


if __name__ == "__main__":
    main()
