"""A tiny MCP stdio server (standard library only): both handshakes, a fast tool and a slow one.

Run it as ``python -m wiretap.demo.server``. It speaks the 2026-07-28 ``server/discover`` and the
legacy ``initialize`` handshakes, logs to stderr as real servers do, and exits on end of input.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
INFO = {"name": "wiretap-demo", "version": "1.0.0"}
TOOLS = [
    {
        "name": "echo",
        "description": "Returns its text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
    {
        "name": "build_report",
        "description": "A slow tool: takes about a second and reports progress.",
        "inputSchema": {"type": "object", "properties": {"pages": {"type": "integer"}}},
    },
]


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def log(text: str) -> None:
    print(f"[demo-server] {text}", file=sys.stderr, flush=True)


def text_result(text: str, *, is_error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def build_report(params: dict[str, Any]) -> dict[str, Any]:
    pages = int(params.get("arguments", {}).get("pages", 3))
    token = params.get("_meta", {}).get("progressToken")
    log(f"build_report: {pages} pages")
    for page in range(1, pages + 1):
        time.sleep(0.3)
        if token is not None:
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {
                        "progressToken": token,
                        "progress": page,
                        "total": pages,
                        "message": f"page {page}",
                    },
                }
            )
    return text_result(f"Report ready: {pages} pages")


def call_tool(params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    if name == "echo":
        return text_result(str(params.get("arguments", {}).get("text", "")))
    if name == "build_report":
        return build_report(params)
    return text_result(f"unknown tool {name!r}", is_error=True)


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "server/discover":
        return {
            "resultType": "complete",
            "supportedVersions": [MODERN, LEGACY],
            "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": INFO},
        }
    if method == "initialize":
        return {"protocolVersion": LEGACY, "capabilities": {"tools": {}}, "serverInfo": INFO}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return call_tool(params)
    if method == "ping":
        return {}
    raise LookupError(method)


def handle(line: str) -> None:
    try:
        message = json.loads(line)
    except ValueError:
        send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
        return
    method, msg_id = message.get("method"), message.get("id")
    if msg_id is None or not isinstance(method, str):
        return
    try:
        send({"jsonrpc": "2.0", "id": msg_id, "result": answer(method, message.get("params") or {})})
    except LookupError:
        send(
            {
                "jsonrpc": "2.0",
                "id": msg_id,
                "error": {"code": -32601, "message": f"Method not found: {method}"},
            }
        )


def main() -> None:
    log("ready")
    for line in sys.stdin:
        if line.strip():
            handle(line)
    log("stdin closed, exiting")


if __name__ == "__main__":
    main()
