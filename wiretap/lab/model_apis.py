"""Scripted OpenAI Responses and Gemini APIs on 127.0.0.1: they make Codex and Gemini CLI call MCP tools offline.

Each turn of the main conversation gets the next scripted tool call until as many tool outputs came
back as the script has calls; then a final text quoting the outputs. Gemini's router request
(``:generateContent``) gets a short text. Every request is kept.

- Codex (``wire_api = "responses"``): ``POST /v1/responses`` answered as SSE; a call is a
  ``function_call`` item with ``namespace: "mcp__SERVER"``; outputs come back as
  ``function_call_output`` items.
- Gemini: ``POST /v1beta/models/M:streamGenerateContent?alt=sse``; a call is a ``functionCall`` part
  named as the request's tool declarations name it; outputs come back as ``functionResponse`` parts.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Json = dict[str, Any]


@dataclass(frozen=True)
class Call:
    server: str
    tool: str
    arguments: Json = field(default_factory=dict)


def _codex_outputs(body: Json) -> list[str]:
    return [str(i.get("output")) for i in body.get("input") or [] if i.get("type") == "function_call_output"]


def _gemini_outputs(body: Json) -> list[Json]:
    return [
        part["functionResponse"]
        for content in body.get("contents") or []
        for part in content.get("parts") or []
        if isinstance(part, dict) and "functionResponse" in part
    ]


def _gemini_name(body: Json, call: Call) -> str:
    """The declared function for the call: Gemini names MCP tools after their server (its prefixing varies)."""
    names = [
        str(d.get("name"))
        for tool in body.get("tools") or []
        for d in tool.get("functionDeclarations") or []
        if isinstance(d, dict)
    ]
    exact = [n for n in names if n.endswith(call.tool) and call.server in n]
    return exact[0] if exact else call.tool


def _codex_namespace(body: Json, call: Call) -> str:
    """The declared namespace that holds the call's tool: Codex names it after the server, with characters
    outside ``[A-Za-z0-9_]`` made ``_`` (``mcp__wiretap_lab``)."""
    wanted = "mcp__" + "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in call.server)
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and tool.get("type") == "namespace" and tool.get("name") == wanted:
            return wanted
    return f"mcp__{call.server}"


def _sse(events: list[tuple[str | None, Json]]) -> bytes:
    lines = []
    for name, data in events:
        lines.append((f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n")
    return "".join(lines).encode()


class FakeModelAPIs:
    def __init__(self, script: list[Call]) -> None:
        self.script = script
        self.requests: list[tuple[str, Json]] = []
        self.outputs: list[Any] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeModelAPIs:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._thread.join(5)
        self._server.server_close()

    def codex(self, body: Json) -> bytes:
        outputs = _codex_outputs(body)
        self.outputs = list(outputs)
        rid = f"resp_{len(self.requests)}"
        events: list[tuple[str | None, Json]] = [
            ("response.created", {"type": "response.created", "response": {"id": rid}})
        ]
        if len(outputs) < len(self.script):
            call = self.script[len(outputs)]
            item: Json = {
                "type": "function_call",
                "id": f"fc_{len(outputs)}",
                "call_id": f"call_{len(outputs)}",
                "name": call.tool,
                "namespace": _codex_namespace(body, call),
                "arguments": json.dumps(call.arguments),
            }
        else:
            text = "Tool results: " + " | ".join(outputs)
            item = {
                "type": "message",
                "role": "assistant",
                "id": "msg_1",
                "content": [{"type": "output_text", "text": text}],
            }
            events.append(("response.output_text.delta", {"type": "response.output_text.delta", "delta": text}))
        events.insert(1, ("response.output_item.added", {"type": "response.output_item.added", "item": item}))
        events.append(("response.output_item.done", {"type": "response.output_item.done", "item": item}))
        usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
        events.append(("response.completed", {"type": "response.completed", "response": {"id": rid, "usage": usage}}))
        return _sse(events)

    def gemini(self, body: Json, stream: bool) -> bytes:
        usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
        if not stream:
            # The router asks for a JSON verdict (which model, how complex): one that fits every router.
            verdict = {
                "complexity_reasoning": "simple",
                "complexity_score": 10,
                "reasoning": "simple",
                "model_choice": "flash",
            }
            candidate = {"content": {"role": "model", "parts": [{"text": json.dumps(verdict)}]}, "finishReason": "STOP"}
            return json.dumps({"candidates": [candidate], "usageMetadata": usage}).encode()
        outputs = _gemini_outputs(body)
        self.outputs = list(outputs)
        if len(outputs) < len(self.script):
            call = self.script[len(outputs)]
            part: Json = {"functionCall": {"name": _gemini_name(body, call), "args": call.arguments}}
        else:
            part = {"text": "Tool results: " + json.dumps(outputs, sort_keys=True)}
        chunk = {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}],
            "usageMetadata": usage,
        }
        return f"data: {json.dumps(chunk)}\r\n\r\n".encode()


def _handler(api: FakeModelAPIs) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self._send(404, b"{}", "application/json")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {}
            path = self.path.split("?", 1)[0]
            with api._lock:
                api.requests.append((path, body))
                if path.endswith("/responses"):
                    self._send(200, api.codex(body), "text/event-stream")
                elif ":streamGenerateContent" in path:
                    self._send(200, api.gemini(body, True), "text/event-stream")
                elif ":generateContent" in path:
                    self._send(200, api.gemini(body, False), "application/json")
                elif ":countTokens" in path:
                    self._send(200, b'{"totalTokens": 10}', "application/json")
                else:
                    self._send(404, b"{}", "application/json")

        def _send(self, status: int, payload: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler
