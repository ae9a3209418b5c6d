"""A 2026-07-28 Streamable HTTP server that validates its request headers as the specification says
(streamable-http.mdx, "Server Validation"), written apart from wiretap's own decoding so that it is a
truth to test wiretap against.

``POST /mcp``: ``Mcp-Method`` must equal ``method``, ``MCP-Protocol-Version`` the ``_meta`` protocol
version, and for ``tools/call`` / ``prompts/get`` / ``resources/read`` ``Mcp-Name`` must equal
``params.name`` / ``params.uri``, after decoding a ``=?base64?…?=`` value strictly (standard alphabet,
padding, canonical, UTF-8). A mismatch or a missing header gets ``400`` and JSON-RPC error -32020; a
good request its result (``server/discover``, ``tools/call``). ``up.rejected`` lists the ids it refused.
"""

from __future__ import annotations

import base64
import binascii
import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from scenarios.threaded_http import Served, ThreadedHTTP

VERSION = "2026-07-28"
META = "io.modelcontextprotocol/protocolVersion"
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def strict_decode(value: str) -> str | None:
    if not (value.startswith("=?base64?") and value.endswith("?=") and len(value) >= 11):
        return value
    payload = value[9:-2]
    try:
        data = base64.b64decode(payload, validate=True)
    except binascii.Error:
        return None
    if base64.b64encode(data).decode("ascii") != payload:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def mismatch(body: dict[str, Any], headers: Any) -> str | None:
    """Why the headers do not match the body, or None."""
    params = body.get("params") or {}
    if headers.get("MCP-Protocol-Version") != (params.get("_meta") or {}).get(META):
        return "MCP-Protocol-Version"
    if headers.get("Mcp-Method") != body.get("method"):
        return "Mcp-Method"
    field = NAMED.get(body.get("method", ""))
    if field is not None:
        sent = headers.get("Mcp-Name")
        if sent is None or strict_decode(sent) != params.get(field):
            return "Mcp-Name"
    return None


def result(body: dict[str, Any]) -> dict[str, Any]:
    if body.get("method") == "server/discover":
        return {"resultType": "complete", "supportedVersions": [VERSION], "capabilities": {"tools": {}}}
    name = (body.get("params") or {}).get("name")
    return {"resultType": "complete", "content": [{"type": "text", "text": f"called {name}"}]}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Served

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        wrong = mismatch(body, self.headers)
        if wrong is not None:
            self.server.seen.append(body.get("id"))
            error = {"code": -32020, "message": f"Header mismatch: {wrong} does not match the body"}
            self._send(400, {"jsonrpc": "2.0", "id": body.get("id"), "error": error})
        else:
            self._send(200, {"jsonrpc": "2.0", "id": body.get("id"), "result": result(body)})

    def do_GET(self) -> None:
        self.send_response(405)
        self.send_header("Allow", "POST")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _send(self, status: int, reply: dict[str, Any]) -> None:
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class ModernServer(ThreadedHTTP):
    def __init__(self) -> None:
        super().__init__(_Handler, "/mcp")

    @property
    def rejected(self) -> list[Any]:
        return self.seen
