"""A scenario MCP stdio server whose task runs on the clock, for tests/replay/test_replay_tasks.py.

``python replay_task_server.py [--result TEXT] [--shout] [--die-after N]`` (standard library only; a
bad option gets argparse's usage on stderr and exit status 2). It speaks the 2026-07-28
tasks extension: ``tools/call migrate`` returns ``resultType: "task"`` at once (``pollIntervalMs``
100), and the task's state depends only on time and on the client's answer, never on how often it is
polled:

- ``working`` for QUESTION_AFTER seconds after it was created,
- then ``input_required`` (``tasks/get`` inlines the question as ``inputRequests``) until the client
  sends ``tasks/update`` with ``inputResponses``,
- then ``working`` for FINISH_AFTER seconds after that answer,
- then ``completed`` (``tasks/get`` inlines the tool result, ``--result`` or the default text).

It also sends ``notifications/message`` (a log line) unprompted, LOG_AFTER seconds after ``tools/list``,
and has three plain tools:

- ``echo`` answers at once with its arguments as text (upper case with ``--shout``);
- ``slow`` sends ``notifications/progress`` (with the request's progress token) after 0.10 s and
  answers after SLOW seconds;
- ``ask`` sends the client ``elicitation/create`` (id ``ask-1``) and answers 0.10 s after the client
  does, with the client's action and content.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from datetime import UTC, datetime
from typing import Any

QUESTION_AFTER = 0.5
FINISH_AFTER = 0.4
LOG_AFTER = 0.2
SLOW = 0.3
TASK_ID = "tsk-migrate-1"
QUESTION = {
    "environment": {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Which environment?",
            "requestedSchema": {
                "type": "object",
                "properties": {"environment": {"type": "string", "enum": ["staging", "production"]}},
                "required": ["environment"],
            },
        },
    }
}


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Server:
    def __init__(self, result: str, shout: bool = False, die_after: int | None = None) -> None:
        self.result_text = result
        self.shout = shout
        self.die_after = die_after
        self.requests = 0
        self.created: float | None = None
        self.created_wall = 0.0
        self.answered: float | None = None
        self.asking: Any = None
        self.lock = threading.Lock()

    def write(self, message: dict[str, Any]) -> None:
        with self.lock:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            sys.stdout.flush()

    def status(self) -> str:
        assert self.created is not None
        now = time.monotonic()
        if self.answered is not None:
            return "completed" if now - self.answered >= FINISH_AFTER else "working"
        return "input_required" if now - self.created >= QUESTION_AFTER else "working"

    def task(self) -> dict[str, Any]:
        status = self.status()
        fields: dict[str, Any] = {
            "taskId": TASK_ID,
            "status": status,
            "createdAt": iso(self.created_wall),
            "lastUpdatedAt": iso(time.time()),
            "ttlMs": 60_000,
            "pollIntervalMs": 100,
        }
        if status == "input_required":
            fields["inputRequests"] = QUESTION
        if status == "completed":
            fields["result"] = {"content": [{"type": "text", "text": self.result_text}], "isError": False}
        return fields

    def request(self, rid: Any, method: str, params: dict[str, Any]) -> None:
        if method == "server/discover":
            capabilities = {"tools": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}
            self.write({"id": rid, "result": {"supportedVersions": ["2026-07-28"], "capabilities": capabilities}})
        elif method == "tools/list":
            self.write({"id": rid, "result": {"tools": [{"name": "migrate", "inputSchema": {"type": "object"}}]}})
            log = {"method": "notifications/message", "params": {"level": "info", "data": "warming up"}}
            timer = threading.Timer(LOG_AFTER, self.write, args=(log,))
            timer.daemon = True
            timer.start()
        elif method == "tools/call" and params.get("name") in ("echo", "slow", "ask"):
            self.tool(rid, params)
        elif method == "tools/call":
            self.created, self.created_wall = time.monotonic(), time.time()
            self.write({"id": rid, "result": {"resultType": "task", **self.task()}})
        elif method == "tasks/get" and params.get("taskId") == TASK_ID and self.created is not None:
            self.write({"id": rid, "result": {"resultType": "complete", **self.task()}})
        elif method == "tasks/update" and "inputResponses" in params:
            if self.answered is None:
                self.answered = time.monotonic()
            self.write({"id": rid, "result": {"resultType": "complete"}})
        elif method in ("tasks/get", "tasks/update"):
            self.write({"id": rid, "error": {"code": -32602, "message": "Task not found"}})
        else:
            self.write({"id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}})

    def later(self, seconds: float, message: dict[str, Any]) -> None:
        timer = threading.Timer(seconds, self.write, args=(message,))
        timer.daemon = True
        timer.start()

    def tool(self, rid: Any, params: dict[str, Any]) -> None:
        name, arguments = params["name"], params.get("arguments") or {}
        if name == "echo":
            text = json.dumps(arguments, sort_keys=True)
            text = text.upper() if self.shout else text
            self.write({"id": rid, "result": {"content": [{"type": "text", "text": text}], "isError": False}})
        elif name == "slow":
            token = (params.get("_meta") or {}).get("progressToken")
            if token is not None:
                progress = {"progressToken": token, "progress": 1, "total": 2, "message": "halfway"}
                self.later(0.10, {"method": "notifications/progress", "params": progress})
            done = {"content": [{"type": "text", "text": "slow done"}], "isError": False}
            self.later(SLOW, {"id": rid, "result": done})
        else:
            self.asking = rid
            question = {"mode": "form", "message": "Proceed?", "requestedSchema": {"type": "object"}}
            self.write({"id": "ask-1", "method": "elicitation/create", "params": question})

    def response(self, message: dict[str, Any]) -> None:
        if message.get("id") == "ask-1" and self.asking is not None:
            text = json.dumps(message.get("result"), sort_keys=True)
            self.later(0.10, {"id": self.asking, "result": {"content": [{"type": "text", "text": text}]}})

    def run(self) -> None:
        for line in sys.stdin:
            message = json.loads(line)
            if "method" in message and "id" in message:
                self.request(message["id"], message["method"], message.get("params") or {})
                self.requests += 1
                if self.requests == self.die_after:
                    sys.stderr.write(f"replay_task_server: giving up after {self.requests} requests\n")
                    sys.stderr.flush()
                    os._exit(1)
            elif "method" not in message:
                self.response(message)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--result", default="Migrated 1,204 rows on staging.")
    parser.add_argument("--shout", action="store_true")
    parser.add_argument("--die-after", type=int, help="exit with status 1 after answering this many requests")
    args = parser.parse_args()
    Server(args.result, args.shout, args.die_after).run()


if __name__ == "__main__":
    main()
