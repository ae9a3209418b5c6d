"""Sans-IO MCP server protocol: one line in, at most one line out.

Both eras are served on one connection. Legacy clients (2025-06-18, 2025-11-25) ``initialize`` first;
2026-07-28 clients send ``server/discover`` and carry the protocol version in every request's ``_meta``
(a request with it is answered in that era: ``resultType`` on the result, cacheable lists with ``ttlMs``
and ``cacheScope``). Tools answer with ``structuredContent`` and the same JSON as one text block; a tool
that fails says so in the result (``isError``), and a message that is not a usable request gets a
JSON-RPC error.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from wiretap.wire import jsonrpc

MODERN = "2026-07-28"
LEGACY = ("2025-11-25", "2025-06-18")
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
METHOD_NOT_FOUND, INVALID_PARAMS, UNSUPPORTED_VERSION = -32601, -32602, -32022

Json = dict[str, Any]


class ToolError(Exception):
    """A tool could not answer; the message (one line) goes back to the model as a tool error."""


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: Json
    call: Callable[[Json], Json]
    """Arguments to the structured result; raises ToolError."""

    def listed(self) -> Json:
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False},
        }


class _Refused(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def encode(message: Json) -> bytes:
    """One message as a line: compact UTF-8 JSON, which never holds a raw newline."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def tool_result(structured: Json) -> Json:
    return {"content": [{"type": "text", "text": encode(structured)[:-1].decode()}], "structuredContent": structured}


def tool_error(message: str) -> Json:
    return {"content": [{"type": "text", "text": message}], "isError": True}


class Protocol:
    """``receive(line)`` gives the line to write back, or None (a notification, a response, a blank line)."""

    def __init__(self, tools: Sequence[Tool], info: Json, instructions: str) -> None:
        self.tools = {tool.name: tool for tool in tools}
        self.info = info
        self.instructions = instructions

    def receive(self, line: bytes) -> bytes | None:
        if not line.strip():
            return None
        parsed = jsonrpc.parse(line)
        if parsed.batch:
            return encode(jsonrpc.error(jsonrpc.INVALID_REQUEST, "Invalid Request: batches are not supported"))
        if parsed.errors:
            return encode(parsed.errors[0])
        message = parsed.messages[0]
        if jsonrpc.kind_of(message) != jsonrpc.REQUEST:
            return None
        msg_id = message["id"]
        if not isinstance(msg_id, str | int) or isinstance(msg_id, bool):
            return encode(jsonrpc.error(jsonrpc.INVALID_REQUEST, "Invalid Request: id must be a string or number"))
        try:
            result = self._answer(message["method"], message.get("params"))
        except _Refused as refused:
            error: Json = {"code": refused.code, "message": refused.message}
            if refused.data is not None:
                error["data"] = refused.data
            return encode({"jsonrpc": "2.0", "id": msg_id, "error": error})
        return encode({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def _answer(self, method: str, params: Any) -> Json:
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise _Refused(INVALID_PARAMS, "Invalid params: params must be an object")
        meta = params.get("_meta")
        version = meta.get(VERSION_KEY) if isinstance(meta, dict) else None
        if version is not None and version != MODERN:
            data = {"supported": [MODERN], "requested": version}
            raise _Refused(UNSUPPORTED_VERSION, "Unsupported protocol version", data)
        modern = version == MODERN
        if method == "initialize":
            return self._initialize(params)
        if method == "server/discover":
            return self._cacheable(
                {
                    "supportedVersions": [MODERN, *LEGACY],
                    "capabilities": {"tools": {}},
                    "instructions": self.instructions,
                    "_meta": {SERVER_INFO_KEY: self.info},
                },
                modern=True,
            )
        if method == "ping":
            return self._era({}, modern)
        if method == "tools/list":
            return self._cacheable({"tools": [tool.listed() for tool in self.tools.values()]}, modern=modern)
        if method == "tools/call":
            return self._era(self._call(params), modern)
        raise _Refused(METHOD_NOT_FOUND, f"Method not found: {method}")

    def _initialize(self, params: Json) -> Json:
        asked = params.get("protocolVersion")
        return {
            "protocolVersion": asked if asked in LEGACY else LEGACY[0],
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": self.info,
            "instructions": self.instructions,
        }

    def _call(self, params: Json) -> Json:
        name, arguments = params.get("name"), params.get("arguments")
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            raise _Refused(INVALID_PARAMS, f"Unknown tool: {name!r} (tools: {', '.join(self.tools)})")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return tool_error("arguments must be an object")
        try:
            return tool_result(tool.call(arguments))
        except ToolError as exc:
            return tool_error(str(exc))
        except Exception as exc:  # a bug in one tool must not end the server the client relies on
            return tool_error(f"{name} failed: {type(exc).__name__}: {exc}")

    @staticmethod
    def _era(result: Json, modern: bool) -> Json:
        return {"resultType": "complete", **result} if modern else result

    @classmethod
    def _cacheable(cls, result: Json, *, modern: bool) -> Json:
        if not modern:
            return result
        return cls._era({**result, "ttlMs": 0, "cacheScope": "private"}, modern)
