"""An MCP stdio server (standard library only) that shows how a client behaves: the scenario for ``compare``.

It speaks the session era only (``server/discover`` gets -32601, ``initialize`` gets the client's own
protocol version back) and has one tool, ``echo``. Before answering a call it asks the client
``roots/list`` and ``elicitation/create``, whatever the client declared, and answers the call once
both were answered (or after ``ASK_TIMEOUT`` seconds), quoting the answers. ``SIGTERM`` and
``SIGINT`` end it at once, as most servers end. ``--env-out FILE`` writes the names of its
environment variables to FILE first.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
from typing import Any

INFO = {"name": "wiretap-behaviour-scenario", "version": "1.0.0"}
ASK_TIMEOUT = 5.0
TOOLS = [
    {
        "name": "echo",
        "description": "Returns its text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    }
]
QUESTION = {
    "message": "Go ahead?",
    "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


class Scenario:
    def __init__(self) -> None:
        self.call: tuple[Any, str] | None = None
        self.asked: dict[str, Any] = {}
        self.deadline = 0.0
        self.asks = 0

    def handle(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            self.answered(message)
            return
        method, params, mid = message["method"], message.get("params") or {}, message.get("id")
        if mid is None:
            return
        if method == "initialize":
            version = params.get("protocolVersion", "2025-06-18")
            send(
                {
                    "jsonrpc": "2.0",
                    "id": mid,
                    "result": {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": INFO},
                }
            )
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
        elif method == "tools/call" and self.call is None:
            self.call = (mid, str((params.get("arguments") or {}).get("text", "")))
            self.ask()
        elif method in ("ping", "resources/list", "prompts/list", "resources/templates/list"):
            key = method.split("/")[0]
            send({"jsonrpc": "2.0", "id": mid, "result": {} if key == "ping" else {key: []}})
        else:
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"Method not found: {method}"}})

    def ask(self) -> None:
        self.asks += 1
        self.asked = {f"roots-{self.asks}": None, f"elicit-{self.asks}": None}
        self.deadline = time.monotonic() + ASK_TIMEOUT
        send({"jsonrpc": "2.0", "id": f"roots-{self.asks}", "method": "roots/list"})
        send({"jsonrpc": "2.0", "id": f"elicit-{self.asks}", "method": "elicitation/create", "params": QUESTION})

    def answered(self, message: dict[str, Any]) -> None:
        if message.get("id") in self.asked:
            self.asked[message["id"]] = message.get("result", message.get("error"))
        if all(v is not None for v in self.asked.values()):
            self.finish()

    def finish(self) -> None:
        if self.call is None:
            return
        mid, text = self.call
        answers = json.dumps(self.asked, sort_keys=True)
        send(
            {
                "jsonrpc": "2.0",
                "id": mid,
                "result": {"content": [{"type": "text", "text": f"{text} (asked: {answers})"}]},
            }
        )
        self.call, self.asked = None, {}

    def tick(self) -> None:
        if self.call is not None and time.monotonic() > self.deadline:
            self.finish()


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--env-out":
        # What the client (or a tap in between) left of the environment: the names, one a line.
        with open(sys.argv[2], "w") as f:
            f.write("".join(f"{name}\n" for name in sorted(os.environ)))
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    scenario = Scenario()
    buffer = b""
    while True:
        ready, _, _ = select.select([sys.stdin.buffer], [], [], 0.2)
        scenario.tick()
        if not ready:
            continue
        chunk = sys.stdin.buffer.read1(65536)
        if not chunk:
            return
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.strip():
                scenario.handle(json.loads(line))


if __name__ == "__main__":
    main()
