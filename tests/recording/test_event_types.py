"""The typed shapes of recording lines (``event_types``) agree with the recording schema, and with what
wiretap really writes."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any, get_type_hints
from urllib.parse import urlsplit

import pytest
from scenarios.http_upstream import Upstream
from support.paths import REPO
from support.proxyrun import running_proxy
from support.taprun import SCENARIO_SERVER, run_tap

from wiretap.recording import event_types
from wiretap.recording.event_types import BY_KIND
from wiretap.recording.events import Kind
from wiretap.recording.streams import BodyStream, SSEStream
from wiretap.recording.websocket_stream import WebSocketStream
from wiretap.schemas import schema_text
from wiretap.wire.websocket import BINARY, CLOSE, TEXT, encode_frame

SCHEMA = json.loads(schema_text("recording"))
COMMON = {"t", "kind"}
"""What every event has (the schema's ``event``); a kind's own fields are in its ``if kind`` blocks."""


def schema_keys(kind: str) -> tuple[set[str], set[str]]:
    """The properties the schema names for ``kind``, and those it requires of every line of that kind
    (a block that applies only to some of them, such as an ``error`` of one sort, requires nothing of
    the rest)."""
    if kind == "header":
        header = SCHEMA["$defs"]["header"]
        return set(header["properties"]), set(header["required"])
    properties, required = set(COMMON), set(COMMON)
    for block in SCHEMA["$defs"]["event"]["allOf"]:
        condition = block["if"]
        if condition["properties"]["kind"].get("const") != kind:
            continue
        properties |= set(block["then"].get("properties", {}))
        if set(condition) == {"properties"} and set(condition["properties"]) == {"kind"}:
            required |= set(block["then"].get("required", []))
    return properties, required


def declared(kind: str) -> set[str]:
    return set(get_type_hints(BY_KIND[kind]))


def test_every_kind_has_its_typed_shape_and_every_shape_names_its_kind() -> None:
    assert set(BY_KIND) == {kind.value for kind in Kind}
    for kind, shape in BY_KIND.items():
        assert str(get_type_hints(shape)["kind"]) == f"typing.Literal['{kind}']"
    assert set(event_types.AnyEvent.__args__) == {shape for kind, shape in BY_KIND.items() if kind != "header"}


def test_the_schema_knows_every_kind_that_has_a_typed_shape() -> None:
    assert set(SCHEMA["$defs"]["event"]["properties"]["kind"]["enum"]) == set(BY_KIND) - {"header"}


@pytest.mark.parametrize("kind", sorted(BY_KIND))
def test_each_typed_shape_has_the_fields_the_schema_names_for_its_kind(kind: str) -> None:
    properties, _ = schema_keys(kind)
    assert declared(kind) == properties, (
        f"only typed: {sorted(declared(kind) - properties)}, only in the schema: {sorted(properties - declared(kind))}"
    )


@pytest.mark.parametrize("kind", sorted(BY_KIND))
def test_each_typed_shape_requires_what_the_schema_requires_of_its_kind(kind: str) -> None:
    _, required = schema_keys(kind)
    shape = BY_KIND[kind]
    assert set(shape.__required_keys__) == required
    assert set(shape.__optional_keys__) == declared(kind) - required


def undeclared(lines: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(kind, key) of every key a line holds that its kind's shape does not declare."""
    return sorted({(line["kind"], key) for line in lines for key in set(line) - declared(line["kind"])})


def test_a_stdio_recording_holds_only_the_fields_its_kinds_declare(tmp_path: Path) -> None:
    chunks = [
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"api_key":"sk-live-0123456789abcdefghij"}}\r\n',
        b"not json at all\n",
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
    ]
    run = run_tap(tmp_path / "rec.jsonl", [*SCENARIO_SERVER, "crash"], chunks)
    kinds = {event["kind"] for event in run.events}
    assert {"spawn", "message", "eof", "exit", "end"} <= kinds
    assert undeclared([dict(run.header), *run.events]) == []


def _exchange(url: str, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> None:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    data = json.dumps(body).encode() if body is not None else None
    sent = {"Content-Type": "application/json", **(headers or {})} if data is not None else headers or {}
    connection.request(method, path, body=data, headers=sent)
    connection.getresponse().read()
    connection.close()


def test_an_http_recording_holds_only_the_fields_its_kinds_declare(tmp_path: Path) -> None:
    with Upstream() as upstream, running_proxy(upstream.url, tmp_path / "rec.jsonl") as proxy:
        _exchange(proxy.url, "POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        _exchange(proxy.url, "GET", "/mcp")
        _exchange(proxy.url, "GET", "/sse-two-events", headers={"Accept": "text/event-stream"})
        _exchange(proxy.url, "GET", "/.well-known/agent-card.json")
        _exchange(proxy.url, "POST", "/a2a/message:send", {"message": {"role": "ROLE_USER", "parts": []}})
        _exchange(proxy.url, "GET", "/a2a/tasks/task-1")
    kinds = {event["kind"] for event in proxy.events}
    assert {"listen", "connection", "http_request", "http_response", "http_end", "message", "rewrite"} <= kinds
    assert any("rest" in event for event in proxy.of_kind("message"))
    header = json.loads((tmp_path / "rec.jsonl").read_text().splitlines()[0])
    assert undeclared([header, *proxy.events]) == []


def _events(recorded: Any) -> list[dict[str, Any]]:
    return [event for event, _ in recorded]


def test_the_events_of_http_streams_hold_only_the_fields_their_kinds_declare() -> None:
    base: dict[str, Any] = {"dir": "s2c", "ex": 3, "rest": {"operation": "GetTask", "method": "GET", "path": "/t"}}
    body = BodyStream(dict(base), redact=True)
    lines = _events(body.feed(1.0, b'{"id":"t1"}')) + _events(body.close(1.0))
    sse = SSEStream(dict(base), redact=True)
    lines += _events(sse.feed(1.0, b'event: endpoint\nid: 7\nretry: 10\n\ndata: {"a":1}\n\ndata: {"b"'))
    lines += _events(sse.close(2.0))
    frames = encode_frame(TEXT, b'{"jsonrpc":"2.0","id":1,"method":"ping"}') + encode_frame(BINARY, b"\x00")
    frames += encode_frame(CLOSE, b"\x03\xe8bye")
    ws = WebSocketStream({"dir": "c2s", "ex": 4}, redact=True)
    lines += _events(ws.feed(1.0, frames)) + _events(ws.close(2.0))
    assert {line["kind"] for line in lines} == {"message", "sse", "websocket"}
    assert undeclared(lines) == []


@pytest.mark.parametrize("recording", sorted((REPO / "recordings").glob("*.jsonl")), ids=lambda path: path.stem)
def test_every_line_of_every_shipped_recording_holds_only_the_fields_its_kind_declares(recording: Path) -> None:
    lines = [json.loads(line) for line in recording.read_text().splitlines()]
    assert undeclared(lines) == []
