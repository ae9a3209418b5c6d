"""A scripted Anthropic Messages API on 127.0.0.1: it makes Claude Code call MCP tools offline, no key needed.

The main conversation (a request that offers the scripted tool) gets one ``tool_use`` block per
step of the script, the next step each time the last user message carries a ``tool_result``, and a
final text when the script is done. Anything else (titles, summaries, other side requests) gets a
short text. Every request is kept, so a test can read the tool results Claude Code sent back.

A step marked ``stop`` whose result says Claude Code moved the call to the background ("moved to the
background as task ID X") is answered with a ``TaskStop`` call for that task before the next step.

In a test::

    with FakeMessagesAPI([ToolUse("mcp__demo__echo", {"text": "hi"})]) as api:
        env["ANTHROPIC_BASE_URL"] = api.url
        ...
        api.tool_results()  # the tool_result blocks, in order

As a script: ``python -m wiretap.lab.messages_api --tool mcp__demo__echo --input '{"text": "hi"}'``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Json = dict[str, Any]
SIDE_TEXT = "OK"
STOP_TOOL = "TaskStop"
_BACKGROUND = re.compile(r"moved to the background as task (?:ID)?[:\s]*[`'\"]?([\x21-\x7e]+?)[`'\".,]?(?:\s|$)")


@dataclass(frozen=True)
class ToolUse:
    """One scripted model turn: call ``name`` (``mcp__SERVER__TOOL``) with ``input``."""

    name: str
    input: Json = field(default_factory=dict)
    stop: bool = False
    """When the client moves this call to the background, stop it with TaskStop before the next step."""


@dataclass(frozen=True)
class Captured:
    """One request as the fake API received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Json | None

    @property
    def endpoint(self) -> str:
        return self.path.split("?", 1)[0]


def default_final_text(results: list[Json]) -> str:
    """The model's last answer: what the tools returned, so that a changed result changes the answer."""
    contents = [r.get("content") for r in results]
    return "Tool results: " + json.dumps(contents, ensure_ascii=False, sort_keys=True)


def last_user_tool_results(body: Json) -> list[Json]:
    messages = body.get("messages") or []
    if not messages or messages[-1].get("role") != "user":
        return []
    content = messages[-1].get("content")
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, dict) and block.get("type") == "tool_result"]


def all_tool_results(body: Json) -> list[Json]:
    return [
        block
        for message in body.get("messages") or []
        if message.get("role") == "user" and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def offered_tools(body: Json) -> set[str]:
    return {tool.get("name", "") for tool in body.get("tools") or [] if isinstance(tool, dict)}


def tool_use_id(step: int) -> str:
    """The id of the scripted step's tool_use: the same in every run, so that runs compare equal."""
    return f"toolu_fake_step{step:02d}"


def stop_use_id(step: int) -> str:
    return f"toolu_fake_stop{step:02d}"


def result_text(result: Json) -> str:
    content = result.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def background_task_id(result: Json) -> str | None:
    """The task id in a tool result that says the call went to the background, else None."""
    found = _BACKGROUND.search(result_text(result))
    return found.group(1) if found else None


def estimate_tokens(body: Json) -> int:
    return max(1, len(json.dumps(body)) // 4)


class FakeMessagesAPI:
    """The fake API server; a context manager that serves from a background thread."""

    def __init__(
        self,
        script: Sequence[ToolUse] = (),
        *,
        final_text: Callable[[list[Json]], str] = default_final_text,
        side_text: str = SIDE_TEXT,
        model: str = "claude-fake-1",
    ) -> None:
        self.script = list(script)
        self.final_text = final_text
        self.side_text = side_text
        self.model = model
        self.requests: list[Captured] = []
        self._lock = threading.Lock()
        self._ids = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeMessagesAPI:
        serve = self._server.serve_forever
        self._thread = threading.Thread(target=serve, name="fake-messages-api", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> FakeMessagesAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # What the tests read.

    def messages_requests(self) -> list[Captured]:
        with self._lock:
            return [r for r in self.requests if r.endpoint == "/v1/messages" and r.body is not None]

    def conversation(self) -> list[Captured]:
        """The requests of the scripted conversation: those that offered the first scripted tool."""
        if not self.script:
            return []
        return [r for r in self.messages_requests() if self.script[0].name in offered_tools(r.body or {})]

    def tool_results(self) -> list[Json]:
        """Every tool_result block Claude Code sent back, in order (from the conversation's last request)."""
        conversation = self.conversation()
        return all_tool_results(conversation[-1].body or {}) if conversation else []

    # Answers.

    def answer(self, body: Json) -> Json:
        """The assistant message for a ``/v1/messages`` request body."""
        if not self.script or self.script[0].name not in offered_tools(body):
            return self._message([{"type": "text", "text": self.side_text}], "end_turn")
        results = {str(r.get("tool_use_id")): r for r in all_tool_results(body)}
        done = sum(1 for step in range(len(self.script)) if tool_use_id(step) in results)
        if done and self.script[done - 1].stop and stop_use_id(done - 1) not in results:
            task = background_task_id(results[tool_use_id(done - 1)])
            if task is not None:
                block = {"type": "tool_use", "id": stop_use_id(done - 1), "name": STOP_TOOL, "input": {"task_id": task}}
                return self._message([block], "tool_use")
        if done < len(self.script):
            step = self.script[done]
            block = {"type": "tool_use", "id": tool_use_id(done), "name": step.name, "input": step.input}
            return self._message([block], "tool_use")
        return self._message([{"type": "text", "text": self.final_text(all_tool_results(body))}], "end_turn")

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}_fake{self._ids:04d}"

    def _message(self, content: list[Json], stop_reason: str) -> Json:
        return {
            "id": self._next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }

    def capture(self, request: Captured) -> None:
        with self._lock:
            self.requests.append(request)


def _block_events(index: int, block: Json) -> Iterator[tuple[str, Json]]:
    opened: Json
    delta: Json
    if block["type"] == "text":
        opened, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
    else:
        opened = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": opened}
    yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": index}


def sse_events(message: Json) -> Iterator[tuple[str, Json]]:
    """A complete message as the stream of server-sent events the real API would send."""
    start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        yield from _block_events(index, block)
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    usage = {"output_tokens": message["usage"]["output_tokens"]}
    yield "message_delta", {"type": "message_delta", "delta": delta, "usage": usage}
    yield "message_stop", {"type": "message_stop"}


def encode_sse(message: Json) -> bytes:
    events = sse_events(message)
    return b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)


def _handler_for(api: FakeMessagesAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self._read_body()
            api.capture(Captured("POST", self.path, dict(self.headers.items()), body))
            endpoint = self.path.split("?", 1)[0]
            if body is None:
                self._send_error(400, "invalid_request_error", "the body is not a JSON object")
            elif endpoint == "/v1/messages/count_tokens":
                self._send_json(200, {"input_tokens": estimate_tokens(body)})
            elif endpoint == "/v1/messages":
                message = api.answer(body)
                if body.get("stream"):
                    self._send(200, "text/event-stream", encode_sse(message))
                else:
                    self._send_json(200, message)
            else:
                self._not_found()

        def do_GET(self) -> None:
            api.capture(Captured("GET", self.path, dict(self.headers.items()), None))
            self._not_found()

        def _read_body(self) -> Json | None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                return None
            return body if isinstance(body, dict) else None

        def _not_found(self) -> None:
            self._send_error(404, "not_found_error", self.path)

        def _send_error(self, status: int, kind: str, message: str) -> None:
            self._send_json(status, {"type": "error", "error": {"type": kind, "message": message}})

        def _send_json(self, status: int, payload: Json) -> None:
            self._send(status, "application/json", json.dumps(payload).encode())

        def _send(self, status: int, content_type: str, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", "req_fake")
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", action="append", default=[], help="mcp__SERVER__TOOL to call (repeatable)")
    parser.add_argument("--input", action="append", default=[], help="JSON input for the matching --tool")
    args = parser.parse_args()
    inputs = [json.loads(text) for text in args.input] + [{}] * (len(args.tool) - len(args.input))
    with FakeMessagesAPI([ToolUse(name, data) for name, data in zip(args.tool, inputs, strict=False)]) as api:
        print(f"ANTHROPIC_BASE_URL={api.url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
