"""A scenario A2A 1.0 agent (aiohttp), driven only by what the client sends.

``python a2a_agent.py SCENARIO`` serves on a free loopback port and prints its base URL as its first
line; SIGTERM or SIGINT stops it. JSON-RPC at ``/a2a/jsonrpc`` (1.0 PascalCase methods, ``A2A-Version:
1.0`` required as a2a-sdk does: -32009 otherwise) and HTTP+JSON at ``/a2a`` (``POST /message:send``,
``GET /tasks/{id}``, ``POST /tasks/{id}:cancel``); the card at ``/.well-known/agent-card.json`` names both.
Every answer is immediate.

Scenarios:
  a2a-backoff         SendMessage -> TASK_STATE_SUBMITTED; GetTask 1-10 WORKING, 11 COMPLETED
  a2a-rejected-loop   (REST) message:send -> SUBMITTED; every GET /tasks/{id} -> TASK_STATE_REJECTED
  a2a-unspecified     GetTask 1 -> TASK_STATE_UNSPECIFIED, 2 -> COMPLETED
  a2a-03-in-10        answers a 1.0 exchange with 0.3 lower-case states: submitted, working, completed
  a2a-terminal        GetTask -> COMPLETED; a SendMessage to the task -> -32004; CancelTask -> -32002
"""

from __future__ import annotations

import asyncio
import signal
import sys
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

TASK_IDS = {
    "a2a-backoff": "0b6f1e7a-2d1c-4f3e-9a57-6c2f8e41d0b3",
    "a2a-rejected-loop": "5e3c9a10-7b24-4d8e-8f61-a2c0d94b7e55",
    "a2a-unspecified": "9d2a7c41-0e5b-4a3f-b8d6-1f7e3c5a9b20",
    "a2a-03-in-10": "3a8e5f02-c6d1-4b79-9e40-7d2b1a6c8f13",
    "a2a-terminal": "e1f4b7c9-3a2d-4e6f-8b05-9c7d2a1e4f68",
}
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Agent:
    def __init__(self, scenario: str) -> None:
        self.scenario = scenario
        self.task_id = TASK_IDS[scenario]
        self.context_id = "ctx-" + self.task_id[:8]
        self.polls = 0
        self.state = "TASK_STATE_SUBMITTED" if scenario != "a2a-03-in-10" else "submitted"
        self.base = ""

    # -- the task --------------------------------------------------------------------------------------

    def task(self) -> dict[str, Any]:
        task: dict[str, Any] = {
            "id": self.task_id,
            "contextId": self.context_id,
            "status": {"state": self.state, "timestamp": now_iso()},
        }
        if self.state in ("TASK_STATE_COMPLETED", "completed"):
            task["artifacts"] = [{"artifactId": "report", "name": "report", "parts": [{"text": "3 flights found."}]}]
        if self.state == "TASK_STATE_REJECTED":
            task["status"]["message"] = {
                "messageId": "reject-1",
                "role": "ROLE_AGENT",
                "parts": [{"text": "I only book travel; this request is out of scope."}],
            }
        return task

    def poll(self) -> dict[str, Any]:
        self.polls += 1
        n, s = self.polls, self.scenario
        if s == "a2a-backoff":
            self.state = "TASK_STATE_COMPLETED" if n >= 11 else "TASK_STATE_WORKING"
        elif s == "a2a-rejected-loop":
            self.state = "TASK_STATE_REJECTED"
        elif s == "a2a-unspecified":
            self.state = "TASK_STATE_UNSPECIFIED" if n == 1 else "TASK_STATE_COMPLETED"
        elif s == "a2a-03-in-10":
            self.state = "working" if n == 1 else "completed"
        elif s == "a2a-terminal":
            self.state = "TASK_STATE_COMPLETED"
        return self.task()

    # -- HTTP ------------------------------------------------------------------------------------------

    async def card(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "name": f"scenario agent ({self.scenario})",
                "description": "Books travel.",
                "version": "1.0.0",
                "supportedInterfaces": [
                    {"url": f"{self.base}/a2a/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                    {"url": f"{self.base}/a2a", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
                ],
                "capabilities": {"streaming": False, "pushNotifications": False},
                "defaultInputModes": ["text/plain"],
                "defaultOutputModes": ["text/plain"],
                "skills": [{"id": "book", "name": "Book travel", "description": "Books flights.", "tags": []}],
            }
        )

    async def jsonrpc(self, request: web.Request) -> web.Response:
        body = await request.json()
        rid, method, params = body.get("id"), body.get("method"), body.get("params") or {}

        def error(code: int, message: str, reason: str) -> web.Response:
            data = [{"@type": ERROR_INFO, "reason": reason, "domain": "a2a-protocol.org", "metadata": {}}]
            return web.json_response(
                {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message, "data": data}}
            )

        def result(value: dict[str, Any]) -> web.Response:
            return web.json_response({"jsonrpc": "2.0", "id": rid, "result": value})

        if request.headers.get("A2A-Version") != "1.0":
            return error(-32009, "A2A version '0.3' is not supported by this handler.", "VERSION_NOT_SUPPORTED")
        if method == "SendMessage":
            if params.get("message", {}).get("taskId") == self.task_id and self.polls:
                return error(-32004, f"Task {self.task_id} is in terminal state: {self.state}", "UNSUPPORTED_OPERATION")
            return result({"task": self.task()})
        if method == "GetTask":
            return result(self.poll())
        if method == "CancelTask":
            return error(-32002, f"Task cannot be canceled: state {self.state}", "TASK_NOT_CANCELABLE")
        return error(-32601, f"Method not found: {method}", "METHOD_NOT_FOUND")

    async def rest_send(self, request: web.Request) -> web.Response:
        await request.json()
        return web.json_response({"task": self.task()}, content_type="application/a2a+json")

    async def rest_get(self, request: web.Request) -> web.Response:
        return web.json_response(self.poll(), content_type="application/a2a+json")


async def serve(scenario: str) -> None:
    agent = Agent(scenario)
    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", agent.card)
    app.router.add_post("/a2a/jsonrpc", agent.jsonrpc)
    app.router.add_post("/a2a/message:send", agent.rest_send)
    app.router.add_get("/a2a/tasks/{id}", agent.rest_get)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    agent.base = f"http://127.0.0.1:{runner.addresses[0][1]}"
    print(agent.base, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1]))
