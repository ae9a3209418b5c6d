"""A scenario MCP stdio server with long-running tasks, driven only by what the client sends.

``python mcp_task_server.py SCENARIO`` (standard library only). Every answer is immediate unless the
scenario says otherwise, so the timing of a recording is the client's schedule (mcp_task_client.py),
plus the few delays below, counted from the request that triggers them.

Task designs: the 2026-07-28 tasks extension (``resultType: "task"``, ``pollIntervalMs``, ``tasks/get``
inlining ``inputRequests``, ``tasks/update``, ``tasks/cancel`` acks) and the 2025-11-25 core tasks
(``params.task``, nested ``result.task`` with ``pollInterval``, ``tasks/result`` blocking while the
server asks with ``elicitation/create`` tagged ``related-task``, ``notifications/tasks/status``).

Delays are kept to the millisecond and each says on stderr how late it fired (wiretap records the line).

Scenarios (and what the server does that matters):
  cc-ext-polling        extension task, pollIntervalMs 3000: polls 1-4 working, poll 5 completed
  cc-ext-form           extension task: poll 2 input_required with a two-field form (two inputRequests
                        keys); after tasks/update, completed
  cc-ext-headless       as cc-ext-form; tasks/cancel is acknowledged and the task ends cancelled
  core-tasks            2025-11-25 task, pollInterval 1000: poll 2 input_required (status notification
                        first); tasks/result blocks and sends elicitation/create "task-<id>-1"; the
                        answer sets working, and 0.50 s later completed + the tasks/result answer
  exit-no-cancel        2025-11-25 task, pollInterval 500, always working; on end of input the server
                        takes 0.30 s to clean up, then exits 0 at once (os._exit)
  exit-cancel           as exit-no-cancel; tasks/cancel returns the task cancelled; exits at once on EOF
  task-without-support  returns an extension task to a client that did not declare the extension
  unknown-task          extension task, pollIntervalMs 500: poll 1 working, then -32602 (task not found)
  repeat-after-unknown  tools/call deploy: the first gets -32001 "Request timed out" 2.00 s after it
                        arrived, a repeat succeeds at once
  slow-poll             extension task, pollIntervalMs 500: poll 1 is answered (completed) 15.10 s late
  failed-poll-run       extension task, pollIntervalMs 500: polls 1-3 fail with -32603, 4 working,
                        5 completed
  unanswered            2025-11-25 session: tools/call hang and resources/read are never answered;
                        the tools/call makes the server send roots/list, which the client never answers
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from datetime import UTC, datetime
from typing import Any

TASKS_EXT = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
EXTENSION = {
    "cc-ext-polling",
    "cc-ext-form",
    "cc-ext-headless",
    "task-without-support",
    "unknown-task",
    "slow-poll",
    "failed-poll-run",
}
POLL_MS = {"cc-ext-polling": 3000, "cc-ext-form": 3000, "cc-ext-headless": 3000, "core-tasks": 1000}
TASK_IDS = {
    "cc-ext-polling": "tsk-5d1f9c2e",
    "cc-ext-form": "tsk-8a41e07b",
    "cc-ext-headless": "tsk-c3f0a915",
    "core-tasks": "7c2e4b10-95d3-4c6e-a1f8-0b9d2e6f4a31",
    "exit-no-cancel": "task-exit-1",
    "exit-cancel": "task-exit-2",
    "task-without-support": "tsk-unasked",
    "unknown-task": "tsk-forgotten",
    "slow-poll": "tsk-slow",
    "failed-poll-run": "tsk-flaky",
}
FORM = {
    "environment": {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Which environment should the migration run against?",
            "requestedSchema": {
                "type": "object",
                "properties": {"environment": {"type": "string", "enum": ["staging", "production"]}},
                "required": ["environment"],
            },
        },
    },
    "confirm_downtime": {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "The migration locks the orders table for about a minute. Go ahead?",
            "requestedSchema": {
                "type": "object",
                "properties": {"confirm": {"type": "boolean"}},
                "required": ["confirm"],
            },
        },
    },
}


def say(text: str) -> None:
    print(f"[scenario-tasks] {text}", file=sys.stderr, flush=True)


def wait_until(due: float) -> float:
    """Sleep, then spin the last 2 ms (a sleep may overshoot); return how late it is now."""
    if due - time.monotonic() > 0.002:
        time.sleep(due - time.monotonic() - 0.002)
    while time.monotonic() < due:
        pass
    return time.monotonic() - due


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Server:
    def __init__(self, scenario: str) -> None:
        self.scenario = scenario
        self.task_id = TASK_IDS.get(scenario, "task-1")
        self.extension = scenario in EXTENSION
        self.poll_ms = POLL_MS.get(scenario, 500)
        self.created = now_iso()
        self.polls = 0
        self.status = "working"
        self.answered = False
        self.calls = 0
        self.blocked_result: Any = None
        self._write_lock = threading.Lock()

    # -- wire ----------------------------------------------------------------------------------------

    def write(self, message: dict[str, Any]) -> None:
        line = json.dumps({"jsonrpc": "2.0", **message}) + "\n"
        with self._write_lock:
            sys.stdout.write(line)
            sys.stdout.flush()

    def result(self, request_id: Any, result: dict[str, Any]) -> None:
        if self.extension or self.scenario in ("repeat-after-unknown",):
            result = {"resultType": "complete", **result}
        self.write({"id": request_id, "result": result})

    def error(self, request_id: Any, code: int, message: str) -> None:
        self.write({"id": request_id, "error": {"code": code, "message": message}})

    def later(self, seconds: float, action: Any) -> None:
        """Do ``action`` ``seconds`` from now, and say on stderr how late it was (make_recordings.py
        reads that line from the recording to tell whether the machine kept the scenario's timing)."""
        due = time.monotonic() + seconds

        def fire() -> None:
            late = wait_until(due)
            action()
            say(f"timer of {seconds:.2f} s fired {late * 1000:.1f} ms late")

        threading.Thread(target=fire, daemon=True).start()

    # -- tasks ---------------------------------------------------------------------------------------

    def task(self, **more: Any) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created,
            "lastUpdatedAt": now_iso(),
        }
        if self.extension:
            fields.update(ttlMs=3_600_000, pollIntervalMs=self.poll_ms)
        else:
            fields.update(ttl=60_000, pollInterval=self.poll_ms)
        return {**fields, **more}

    def tool_result(self, text: str) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": text}], "isError": False}

    # -- dispatch ------------------------------------------------------------------------------------

    def run(self) -> None:
        for line in sys.stdin:
            message = json.loads(line)
            if "method" in message and "id" in message:
                self.request(message["id"], message["method"], message.get("params") or {})
            elif "method" not in message:
                self.response(message)
        self.end_of_input()

    def request(self, rid: Any, method: str, params: dict[str, Any]) -> None:
        if method == "server/discover":
            self.result(
                rid,
                {
                    "supportedVersions": ["2026-07-28", "2025-11-25"],
                    "capabilities": {"tools": {}, "prompts": {}, "resources": {}, "extensions": {TASKS_EXT: {}}},
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scenario-tasks", "version": "1.0.0"}},
                },
            )
        elif method == "initialize":
            self.write(
                {
                    "id": rid,
                    "result": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {
                            "tools": {},
                            "prompts": {},
                            "resources": {},
                            "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
                        },
                        "serverInfo": {"name": "scenario-tasks", "version": "1.0.0"},
                    },
                }
            )
        elif method == "tools/list":
            tool = {"name": "run_migration", "inputSchema": {"type": "object"}}
            if not self.extension:
                tool["execution"] = {"taskSupport": "optional"}
            self.result(rid, {"tools": [tool]})
        elif method == "prompts/list":
            self.result(rid, {"prompts": []})
        elif method == "resources/list":
            self.result(rid, {"resources": []})
        elif method == "tools/call":
            self.tools_call(rid, params)
        elif method == "tasks/get":
            self.tasks_get(rid)
        elif method == "tasks/update":
            self.answered = True
            self.result(rid, {})
        elif method == "tasks/cancel":
            self.status = "cancelled"
            self.result(rid, {} if self.extension else self.task(statusMessage="Cancelled by request."))
        elif method == "tasks/result":
            self.tasks_result(rid)
        elif self.scenario == "unanswered":
            pass  # resources/read: never answered
        else:
            self.error(rid, -32601, f"Method not found: {method}")

    def tools_call(self, rid: Any, params: dict[str, Any]) -> None:
        if self.scenario == "repeat-after-unknown":
            self.calls += 1
            if self.calls == 1:
                self.later(2.00, lambda: self.error(rid, -32001, "Request timed out"))
            else:
                self.result(rid, self.tool_result("Deployed billing 2.4.1."))
        elif self.scenario == "unanswered":
            self.write({"id": "roots-1", "method": "roots/list", "params": {}})
        elif self.extension:
            self.write({"id": rid, "result": {"resultType": "task", **self.task()}})
        else:
            self.write({"id": rid, "result": {"task": self.task()}})

    def tasks_get(self, rid: Any) -> None:
        self.polls += 1
        n, s = self.polls, self.scenario
        if s == "unknown-task" and n >= 2:
            self.error(rid, -32602, "Failed to retrieve task: Task not found")
            return
        if s == "failed-poll-run" and n <= 3:
            self.error(rid, -32603, "Internal error: task store unavailable")
            return
        more: dict[str, Any] = {}
        if s in ("cc-ext-polling", "failed-poll-run") and n == 5:
            self.status = "completed"
        elif s in ("cc-ext-form", "cc-ext-headless") and n == 2:
            self.status = "input_required"
        elif s == "cc-ext-form" and self.answered:
            self.status = "completed"
        elif s == "core-tasks" and n == 2:
            self.status = "input_required"
            self.write({"method": "notifications/tasks/status", "params": self.task()})
        if self.status == "input_required" and self.extension:
            more["inputRequests"] = FORM
        if self.status == "completed" and self.extension:
            more["result"] = self.tool_result("Migration finished: 1,204,311 rows in 58 s.")
        if s == "slow-poll":
            self.status = "completed"
            more["result"] = self.tool_result("Done.")
            reply = self.task(**more)
            self.later(15.10, lambda: self.result(rid, reply))
            return
        self.result(rid, self.task(**more))

    def tasks_result(self, rid: Any) -> None:
        """2025-11-25: block until the task ends; meanwhile ask the question on this request's stream."""
        self.blocked_result = rid
        self.write(
            {
                "id": f"task-{self.task_id}-1",
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "Which environment should the migration run against?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"environment": {"type": "string", "enum": ["staging", "production"]}},
                        "required": ["environment"],
                    },
                    "_meta": {RELATED: {"taskId": self.task_id}},
                },
            }
        )

    def response(self, message: dict[str, Any]) -> None:
        if message.get("id") == f"task-{self.task_id}-1" and self.blocked_result is not None:
            self.status = "working"
            self.write({"method": "notifications/tasks/status", "params": self.task()})
            self.later(0.50, self.finish_core_task)

    def finish_core_task(self) -> None:
        self.status = "completed"
        self.write({"method": "notifications/tasks/status", "params": self.task()})
        result = {**self.tool_result("Migration finished on staging."), "_meta": {RELATED: {"taskId": self.task_id}}}
        self.write({"id": self.blocked_result, "result": result})

    def end_of_input(self) -> None:
        if self.scenario == "exit-no-cancel":
            late = wait_until(time.monotonic() + 0.30)
            say(f"cleanup of 0.30 s done {late * 1000:.1f} ms late; exiting")
            os._exit(0)


if __name__ == "__main__":
    Server(sys.argv[1]).run()
