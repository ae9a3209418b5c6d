"""Events to timeline rows: direction, method, pairing of responses with requests, and a summary."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from wiretap.analysis.conversation import describe_body
from wiretap.analysis.observed_summary import observed_summary
from wiretap.analysis.summarize import clip, summarize_error, summarize_request, summarize_result
from wiretap.recording.event_types import AnyEvent, HttpRequestEvent, HttpResponseEvent, WebSocketEvent, typed
from wiretap.recording.events import Direction, Event, Kind
from wiretap.wire import jsonrpc, mcp_headers
from wiretap.wire.json_values import as_dict

IN, OUT, LIFE, ERR = "IN", "OUT", "---", "ERR"
_LANES = {Direction.C2S.value: IN, Direction.S2C.value: OUT}
_SHOWN_REQUEST_HEADERS = (
    "mcp-method",
    "mcp-name",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    "a2a-version",
    "a2a-extensions",
)
_SHOWN_RESPONSE_HEADERS = ("content-type", "mcp-session-id")


@dataclass
class Row:
    t: float
    lane: str
    """IN (to the server), OUT (from it), --- (lifecycle), ERR (server stderr)."""
    title: str
    summary: str
    event: Event
    method: str | None = None
    """The JSON-RPC method (or A2A REST operation); for a response, that of its request."""
    id: Any = None
    latency: float | None = None
    error: bool = False
    server: str | None = None
    """The server (or agent) the row's recording is of."""

    @property
    def where(self) -> str:
        """The HTTP exchange (x7) or connection (c3) the row belongs to; empty for stdio."""
        if "ex" in self.event:
            return f"x{self.event['ex']}"
        return f"c{self.event['conn']}" if "conn" in self.event else ""


def format_latency(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


@dataclass
class _Open:
    method: str
    t: float
    ex: Any


class Pairing:
    """Open requests per direction, so that responses can name their method and latency (``wiretap.wire.jsonrpc``)."""

    def __init__(self) -> None:
        self._pairs: jsonrpc.Pairing[_Open] = jsonrpc.Pairing()
        self.status: dict[Any, int] = {}
        """The HTTP status of each exchange, to name a body that is not JSON-RPC (``202 Accepted``)."""

    def request(self, direction: str, key: Any, method: str, t: float, ex: Any = None) -> None:
        self._pairs.open(direction, key, _Open(method, t, ex), ex)

    def response(
        self, direction: str, key: Any, ex: Any = None, *, error: bool = False, stream: bool = False
    ) -> _Open | None:
        """The request answered; an event stream's request stays open for its later events."""
        if stream:
            found = self._pairs.find(direction, key, ex, error=error)
            return found.item if found is not None else None
        return self._pairs.take(direction, key, ex, error=error)


def _message_row(event: Event, pairing: Pairing) -> Row:
    lane = _LANES.get(event.get("dir", ""), "?")
    t = float(event["t"])
    if "rest" in event:
        return _rest_row(event, lane, t, pairing)
    if "msg" not in event:
        return _raw_row(event, lane, pairing.status.get(event.get("ex")))
    msg = event["msg"]
    if isinstance(msg, list):
        return Row(t, lane, "batch", f"{len(msg)} messages", event)
    if not isinstance(msg, dict):
        return Row(t, lane, "json", clip(json.dumps(msg)), event)
    if not jsonrpc.is_message(msg):
        what = describe_body(msg, None, None)
        return Row(t, lane, what, clip(json.dumps(msg, ensure_ascii=False)), event)
    method = msg.get("method")
    msg_id = msg.get("id")
    if isinstance(method, str):
        if msg_id is not None:
            pairing.request(event["dir"], msg_id, method, t, event.get("ex"))
        tag = f"#{msg_id} " if msg_id is not None else ""
        return Row(t, lane, method, tag + summarize_request(method, msg.get("params")), event, method, msg_id)
    return _response_row(event, msg, lane, t, pairing)


def _response_row(event: Event, msg: dict[str, Any], lane: str, t: float, pairing: Pairing) -> Row:
    msg_id = msg.get("id")
    is_error = "error" in msg
    stream = event.get("sse") is not None
    paired = pairing.response(event["dir"], msg_id, event.get("ex"), error=is_error, stream=stream)
    method, latency = (paired.method, t - paired.t) if paired else (None, None)
    took = format_latency(latency) if latency is not None else None
    if is_error:
        outcome = summarize_error(msg["error"]) + (f" after {took}" if took else "")
    else:
        outcome = (f"ok {took} " if took else "") + summarize_result(method, msg.get("result"))
    title = method or "response"
    tag = f"#{msg_id} " if msg_id is not None else ""
    return Row(t, lane, title, f"{tag}{outcome}".rstrip(), event, method, msg_id, latency, is_error)


def _rest_row(event: Event, lane: str, t: float, pairing: Pairing) -> Row:
    rest = event["rest"]
    operation = str(rest.get("operation", "REST"))
    body = event.get("msg")
    if event["dir"] == Direction.C2S.value:
        pairing.request(event["dir"], ("rest", event.get("ex")), operation, t)
        detail = summarize_request(operation, body) if isinstance(body, dict) else ""
        return Row(t, lane, operation, f"{rest.get('method')} {rest.get('path')} {detail}".rstrip(), event, operation)
    paired = pairing.response(event["dir"], ("rest", event.get("ex")))
    latency = t - paired.t if paired else None
    body = as_dict(body)
    is_error = "error" in body
    outcome = summarize_error(body["error"]) if is_error else summarize_result(operation, body.get("task", body))
    took = f"{'error' if is_error else 'ok'} {format_latency(latency)} " if latency is not None else ""
    return Row(t, lane, operation, f"{took}{outcome}".rstrip(), event, operation, None, latency, is_error)


def _raw_row(event: Event, lane: str, status: int | None = None) -> Row:
    note = " (not UTF-8)" if "raw_base64" in event else ""
    text = str(event.get("raw", ""))
    summary = f"{clip(repr(text)[1:-1], 60)}{note} [{event.get('size', len(text))} bytes]"
    if status is not None and "raw_base64" not in event:
        return Row(float(event["t"]), lane, describe_body(None, text, status), summary, event)
    return Row(float(event["t"]), lane, "raw", summary, event)


def _headers(event: HttpRequestEvent | HttpResponseEvent, names: Iterable[str]) -> str:
    headers = event.get("headers") or {}
    return " ".join(f"{name}={_shown(name, headers[name])}" for name in names if name in headers)


def _shown(name: str, value: Any) -> str:
    """A header's value; a base64-wrapped ``mcp-name`` with what it decodes to."""
    if name != mcp_headers.NAME or not isinstance(value, str):
        return str(value)
    decoded = mcp_headers.decode_header(value)
    if not decoded.encoded:
        return value
    return f"{value} ({decoded.value if decoded.value is not None else 'undecodable'})"


def _http_summary(event: AnyEvent) -> tuple[str, str] | None:
    if event["kind"] == "connection":
        if event.get("state") == "open":
            return "connection", f"open from {event.get('peer')}"
        return "connection", "closed" + (f": {event['error']}" if "error" in event else "")
    if event["kind"] == "http_request":
        query = f"?{event['query']}" if event.get("query") else ""
        return (
            "http",
            f"{event.get('method')} {event.get('path')}{query} {_headers(event, _SHOWN_REQUEST_HEADERS)}",
        )
    if event["kind"] == "http_response":
        made = " (made by wiretap)" if event.get("generated") else ""
        shown = _headers(event, _SHOWN_RESPONSE_HEADERS)
        return "http", f"{event.get('status')} {event.get('reason', '')}{made} {shown}"
    if event["kind"] == "http_end":
        return (
            "http end",
            f"{event.get('outcome')} ({event.get('bytes_in')} bytes in, {event.get('bytes_out')} out)",
        )
    if event["kind"] == "sse":
        sse: dict[str, Any] = dict(event)
        fields = " ".join(f"{k}={sse[k]}" for k in ("event", "id", "retry") if k in sse)
        return "sse", f"event without data {fields}".rstrip()
    if event["kind"] == "websocket":
        return "websocket", _websocket_summary(event)
    if event["kind"] == "rewrite":
        moved = "; ".join(f"{c['field']} → {c['to']}" for c in event.get("changed", []))
        alone = "; ".join(f"{c['field']} left alone ({c['url']})" for c in event.get("left_alone", []))
        return "rewrite", f"{event.get('what')}: " + "; ".join(p for p in (moved, alone) if p)
    if event["kind"] == "listen":
        return "listen", f"{event.get('url')} → {event.get('upstream')}"
    return None


def _websocket_summary(event: WebSocketEvent) -> str:
    who = "client" if event.get("dir") == Direction.C2S else "server"
    text = f"{event.get('opcode')} from the {who}, {event.get('size')} bytes"
    if "code" in event:
        text += f", code {event['code']}" + (f" ({event['reason']})" if event.get("reason") else "")
    if event.get("fragments"):
        text += f", {event['fragments']} fragments"
    if event.get("unread"):
        text += ", compressed (not read)"
    elif event.get("compressed"):
        text += ", compressed"
    if event.get("truncated"):
        text += ", truncated"
    if event.get("incomplete"):
        text += ", cut off by the end of the connection"
    return text


def _known_summary(event: AnyEvent) -> tuple[str, str] | None:
    """The title and summary of a lifecycle event of a kind this version writes (but ``observed``)."""
    http = _http_summary(event)
    if http is not None:
        return http
    if event["kind"] == "spawn":
        return "spawn", f"{shlex.join(map(str, event.get('argv', [])))} (pid {event.get('pid')})"
    if event["kind"] == "spawn_failed":
        return "spawn failed", str(event.get("error", ""))
    if event["kind"] == "eof":
        who = "client closed stdin" if event.get("dir") == Direction.C2S else "server closed stdout"
        return "eof", who
    if event["kind"] == "signal":
        if "forwarded" not in event:
            return "signal", f"{event.get('signal')} received, stopping"
        how = "forwarded to the server" if event.get("forwarded") else "server already gone"
        return "signal", f"{event.get('signal')} received, {how}"
    if event["kind"] == "exit":
        how = f"killed by {event['signal']}" if "signal" in event else f"code {event.get('code')}"
        return "exit", f"server {how} (status {event.get('status')})"
    if event["kind"] == "error":
        return "error", f"{event.get('error', '')}: {event.get('message', '')}"
    if event["kind"] == "end" and event.get("ended") == "imported":
        return "end", f"imported ({event.get('written', '?')} events; what the logs did not say is not in it)"
    if event["kind"] == "end":
        return (
            "end",
            f"recording closed ({event.get('written', '?')} events written, {event.get('lost', 0)} lost)",
        )
    return None


def _lifecycle_summary(event: Event) -> tuple[str, str]:
    kind = event.get("kind")
    known = _known_summary(typed(event)) if kind is not None else None
    if known is not None:
        return known
    if kind == Kind.OBSERVED:
        return observed_summary(event)
    return str(kind), clip(json.dumps({k: v for k, v in event.items() if k not in ("t", "kind")}))


def row_for(event: Event, pairing: Pairing) -> Row:
    kind = event.get("kind")
    if kind == Kind.MESSAGE:
        return _message_row(event, pairing)
    if kind == Kind.HTTP_RESPONSE and event.get("ex") is not None:
        pairing.status[event["ex"]] = int(event.get("status", 0))
    elif kind == Kind.HTTP_END:
        pairing.status.pop(event.get("ex"), None)
    if kind == Kind.STDERR:
        return Row(float(event["t"]), ERR, "stderr", str(event.get("text", "")), event)
    title, summary = _lifecycle_summary(event)
    failed = kind == Kind.ERROR or (kind == Kind.HTTP_RESPONSE and int(event.get("status", 0)) >= 500)
    failed = failed or (kind == Kind.OBSERVED and "error" in (event.get("outcome"), event.get("level")))
    return Row(float(event["t"]), LIFE, title, summary.rstrip(), event, error=failed)


def rows(events: Iterable[Event]) -> Iterator[Row]:
    pairing = Pairing()
    for event in events:
        yield row_for(event, pairing)
