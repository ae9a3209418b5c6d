"""An MCP stdio server (standard library only) that shows how a client behaves: the scenario for ``compare``.

By default it speaks the session era only (``server/discover`` gets -32601, ``initialize`` gets the
client's own protocol version back); ``--both-eras`` also answers ``server/discover`` for 2026-07-28.
It has one tool, ``echo``. Before answering a call it asks the client ``roots/list`` (not with
``--no-roots``) and ``elicitation/create``, whatever the client declared, and answers the call once
both were answered (or after ``ASK_TIMEOUT`` seconds), quoting the answers; in the 2026-07-28 era the
question is an ``input_required`` result instead, answered by a retry with ``inputResponses``.
``SIGTERM`` and ``SIGINT`` end it at once, as most servers end (``--ignore-sigint``: SIGTERM only).
``--ignore-sigterm`` ignores SIGTERM too, ``--linger`` stays ``LINGER`` seconds after its stdin
closed: a server only SIGKILL ends. ``--env-out FILE`` writes its environment's names to FILE first.
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
LINGER = 3.0
"""With ``--linger``: how long it stays after its stdin closed (bounded, so a test leaves nothing behind)."""
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
    def __init__(self, *, modern: bool = False, roots: bool = True) -> None:
        self.call: tuple[Any, str] | None = None
        self.asked: dict[str, Any] = {}
        self.deadline = 0.0
        self.asks = 0
        self.serves_modern = modern
        self.roots = roots
        self.modern = False

    def reply(self, mid: Any, result: dict[str, Any]) -> None:
        send({"jsonrpc": "2.0", "id": mid, "result": {"resultType": "complete", **result} if self.modern else result})

    def modern_call(self, mid: Any, params: dict[str, Any]) -> None:
        """2026-07-28: the question comes back as an ``input_required`` result, the answer in a retry."""
        text = str((params.get("arguments") or {}).get("text", ""))
        answers = params.get("inputResponses")
        if isinstance(answers, dict):
            self.reply(
                mid, {"content": [{"type": "text", "text": f"{text} (asked: {json.dumps(answers, sort_keys=True)})"}]}
            )
            return
        ask = {"method": "elicitation/create", "params": {"mode": "form", **QUESTION}}
        send(
            {"jsonrpc": "2.0", "id": mid, "result": {"resultType": "input_required", "inputRequests": {"confirm": ask}}}
        )

    def handle(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            self.answered(message)
            return
        method, params, mid = message["method"], message.get("params") or {}, message.get("id")
        if mid is None:
            return
        if method == "server/discover" and self.serves_modern:
            self.modern = True
            versions = {"supportedVersions": ["2026-07-28", "2025-11-25"], "capabilities": {"tools": {}}}
            self.reply(mid, {**versions, "_meta": {"io.modelcontextprotocol/serverInfo": INFO}})
        elif method == "subscriptions/listen" and self.modern:
            meta = {"io.modelcontextprotocol/subscriptionId": mid}
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/subscriptions/acknowledged",
                    "params": {"_meta": meta, "notifications": {}},
                }
            )
        elif method == "tools/call" and self.modern:
            self.modern_call(mid, params)
        elif method == "initialize":
            version = params.get("protocolVersion", "2025-06-18")
            send(
                {
                    "jsonrpc": "2.0",
                    "id": mid,
                    "result": {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": INFO},
                }
            )
        elif method == "tools/list":
            self.reply(mid, {"tools": TOOLS})
        elif method == "tools/call" and self.call is None:
            self.call = (mid, str((params.get("arguments") or {}).get("text", "")))
            self.ask()
        elif method in ("ping", "resources/list", "prompts/list", "resources/templates/list"):
            key = method.split("/")[0]
            self.reply(mid, {} if key == "ping" else {key: []})
        else:
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"Method not found: {method}"}})

    def ask(self) -> None:
        self.asks += 1
        self.asked = {f"elicit-{self.asks}": None} | ({f"roots-{self.asks}": None} if self.roots else {})
        self.deadline = time.monotonic() + ASK_TIMEOUT
        if self.roots:
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
    args = sys.argv[1:]
    if "--env-out" in args:
        # What the client (or a tap in between) left of the environment: the names, one a line.
        with open(args[args.index("--env-out") + 1], "w") as f:
            f.write("".join(f"{name}\n" for name in sorted(os.environ)))
    signal.signal(signal.SIGINT, signal.SIG_IGN if "--ignore-sigint" in args else signal.SIG_DFL)
    if "--ignore-sigterm" in args:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    linger = "--linger" in args
    scenario = Scenario(modern="--both-eras" in args, roots="--no-roots" not in args)
    buffer = b""
    while True:
        ready, _, _ = select.select([sys.stdin.buffer], [], [], 0.2)
        scenario.tick()
        if not ready:
            continue
        chunk = sys.stdin.buffer.read1(65536)
        if not chunk:
            if linger:
                time.sleep(LINGER)
            return
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.strip():
                scenario.handle(json.loads(line))


if __name__ == "__main__":
    main()
