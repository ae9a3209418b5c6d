"""An HTTP recording as HAR 1.2, which browser devtools open: one entry per exchange.

wiretap records messages, not body bytes, so bodies are rebuilt from the recorded messages (a JSON
body as JSON, an event stream as its events); header values are as recorded, credentials redacted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from wiretap import __version__
from wiretap.errors import BadInput
from wiretap.recording.event_types import (
    HttpEndEvent,
    HttpRequestEvent,
    HttpResponseEvent,
    ListenEvent,
    MessageEvent,
    SseEvent,
    WebSocketEvent,
    typed,
)
from wiretap.recording.events import Direction, Event, utc_iso_ms
from wiretap.recording.origin import origin_ns
from wiretap.recording.reader import open_recording

REBUILT = "rebuilt by wiretap from the recorded messages; headers as recorded (credentials redacted)"


class NotHttp(BadInput):
    """A stdio recording: there are no HTTP exchanges to put in a HAR file."""


def _headers(recorded: Any) -> list[dict[str, str]]:
    out = []
    for name, value in (recorded or {}).items():
        for one in value if isinstance(value, list) else [value]:
            out.append({"name": str(name), "value": str(one)})
    return out


def _header(recorded: Any, name: str) -> str | None:
    value = (recorded or {}).get(name)
    if isinstance(value, list):
        return str(value[0]) if value else None
    return str(value) if value is not None else None


def _body_text(event: MessageEvent | SseEvent) -> str:
    if event["kind"] == "message" and "msg" in event:  # (an sse event holds no data)
        return json.dumps(event["msg"], ensure_ascii=False)
    return str(event.get("raw", ""))


def _sse_text(event: MessageEvent | SseEvent) -> str:
    fields: object = event.get("sse") if event["kind"] == "message" else event
    lines = [f"{key}: {fields[key]}" for key in ("event", "id", "retry") if isinstance(fields, dict) and key in fields]
    if event["kind"] == "message":
        lines += [f"data: {line}" for line in _body_text(event).splitlines() or [""]]
    return "\n".join(lines) + "\n\n"


_OPCODES = {"text": 1, "binary": 2, "close": 8, "ping": 9, "pong": 10}


def _ws_message(event: MessageEvent | WebSocketEvent, started: float) -> dict[str, Any]:
    """One WebSocket frame as devtools' ``_webSocketMessages`` hold it; a payload wiretap did not record
    says so in ``data``."""
    sent = "send" if event.get("dir") == Direction.C2S.value else "receive"
    if event["kind"] == "message":
        opcode, data = 1, _body_text(event)
    else:
        opcode = _OPCODES.get(str(event.get("opcode")), 0)
        data = f"[{event.get('opcode')}, {event.get('size')} bytes: payload not recorded]"
        if "code" in event:
            data = f"[close, code {event['code']}{': ' + str(event['reason']) if event.get('reason') else ''}]"
    return {"type": sent, "time": round(started + float(event["t"]), 6), "opcode": opcode, "data": data}


def _ms(seconds: float) -> float:
    return round(max(0.0, seconds) * 1000, 3)


@dataclass
class _Exchange:
    ex: int
    request: HttpRequestEvent
    response: HttpResponseEvent | None = None
    end: HttpEndEvent | None = None
    last_t: float = 0.0
    sent: list[MessageEvent] = field(default_factory=list)
    received: list[MessageEvent | SseEvent] = field(default_factory=list)
    frames: list[MessageEvent | WebSocketEvent] = field(default_factory=list)
    """After a 101: the WebSocket's messages and frames, both ways, in order."""
    error: str | None = None

    def entry(self, started: float, origin: str) -> dict[str, Any]:
        request, response, end = self.request, self.response, self.end
        t0 = float(request["t"])
        t_head = float(response["t"]) if response is not None else None
        t_end = float(end["t"]) if end is not None else self.last_t
        version = f"HTTP/{request.get('version') or '1.1'}"
        query = request.get("query") or ""
        url = f"{origin}{request.get('path', '/')}{'?' + query if query else ''}"
        entry: dict[str, Any] = {
            "startedDateTime": utc_iso_ms(started + t0),
            "time": 0.0,
            "request": {
                "method": str(request.get("method", "GET")),
                "url": url,
                "httpVersion": version,
                "cookies": [],
                "headers": _headers(request.get("headers")),
                "queryString": [{"name": k, "value": v} for k, v in parse_qsl(query, keep_blank_values=True)],
                "headersSize": -1,
                "bodySize": int(end.get("bytes_in", -1)) if end is not None else -1,
            },
            "response": self._response(version),
            "cache": {},
            "timings": {"blocked": -1, "dns": -1, "connect": -1, "send": 0.0, "wait": 0.0, "receive": 0.0},
            "_exchange": self.ex,
            "_resourceType": "fetch",
        }
        if self.sent:
            entry["request"]["postData"] = {
                "mimeType": _header(request.get("headers"), "content-type") or "application/json",
                "text": "\n".join(_body_text(e) for e in self.sent),
                "comment": REBUILT,
            }
        timings = entry["timings"]
        timings["wait"] = _ms((t_head if t_head is not None else t_end) - t0)
        timings["receive"] = _ms(t_end - t_head) if t_head is not None else 0.0
        entry["time"] = round(timings["send"] + timings["wait"] + timings["receive"], 3)
        if request.get("conn") is not None:
            entry["connection"] = str(request["conn"])
        if "event-stream" in entry["response"]["content"]["mimeType"]:
            entry["_resourceType"] = "eventsource"
        if self.frames:  # (as Chrome's devtools write a WebSocket into HAR)
            entry["_resourceType"] = "websocket"
            entry["_webSocketMessages"] = [_ws_message(e, started) for e in self.frames]
        outcome = end.get("outcome") if end is not None else "not finished when the recording ended"
        if outcome != "complete":
            entry["comment"] = f"exchange {self.ex}: {outcome}"
        return entry

    def _response(self, version: str) -> dict[str, Any]:
        response: HttpResponseEvent | dict[str, Any] = self.response or {}
        headers = response.get("headers")
        mime = _header(headers, "content-type") or ("text/plain" if self.error else "x-unknown")
        if "event-stream" in mime:
            text = "".join(_sse_text(e) for e in self.received)
        elif self.received:
            text = "\n".join(_body_text(e) for e in self.received)
        else:
            text = self.error or ""
        content: dict[str, Any] = {"size": len(text.encode()), "mimeType": mime}
        if text:
            content |= {"text": text, "comment": REBUILT}
        location = _header(headers, "location") or ""
        return {
            "status": int(response.get("status", 0)),
            "statusText": str(response.get("reason") or ""),
            "httpVersion": version,
            "cookies": [],
            "headers": _headers(headers),
            "content": content,
            "redirectURL": location,
            "headersSize": -1,
            "bodySize": int(self.end.get("bytes_out", -1)) if self.end is not None else -1,
        }


def _origin(header: Event, events_seen: list[ListenEvent]) -> str:
    upstream = header.get("upstream") or next((e.get("upstream") for e in events_seen if "upstream" in e), None)
    parts = urlsplit(str(upstream or "http://upstream"))
    return f"{parts.scheme}://{parts.netloc}"


def build_har(header: Event, events: Iterable[Event]) -> dict[str, Any]:
    """HAR 1.2 (``{"log": …}``) of an HTTP recording's exchanges, in the order they started."""
    if header.get("transport") != "http":
        name = header.get("name", "this recording")
        raise NotHttp(
            f"nothing to export as HAR: {name} is a {header.get('transport', 'stdio')} recording, and HAR holds "
            "HTTP exchanges (record with 'wiretap proxy'; try --format mermaid or svg)"
        )
    exchanges: dict[int, _Exchange] = {}
    listens: list[ListenEvent] = []
    for recorded in events:
        event, ex = typed(recorded), recorded.get("ex")
        if event["kind"] == "listen":
            listens.append(event)
        if not isinstance(ex, int):
            continue
        if event["kind"] == "http_request":
            exchanges[ex] = _Exchange(ex, event, last_t=float(event["t"]))
            continue
        exchange = exchanges.get(ex)
        if exchange is None:
            continue
        exchange.last_t = float(event["t"])
        if event["kind"] == "http_response":
            exchange.response = event
        elif event["kind"] == "http_end":
            exchange.end = event
        elif event["kind"] == "websocket" or (event["kind"] == "message" and "ws" in event):
            exchange.frames.append(event)
        elif event["kind"] == "message":
            if event.get("dir") == Direction.C2S.value:
                exchange.sent.append(event)
            else:
                exchange.received.append(event)
        elif event["kind"] == "sse":
            exchange.received.append(event)
        elif event["kind"] == "error":
            exchange.error = f"wiretap: {event.get('error')}: {event.get('message', '')}"
    started, origin = origin_ns(header) / 1e9, _origin(header, listens)
    entries = [exchange.entry(started, origin) for exchange in sorted(exchanges.values(), key=lambda x: x.request["t"])]
    return {
        "log": {
            "version": "1.2",
            "creator": {"name": "wiretap", "version": __version__},
            "pages": [],
            "entries": entries,
            "comment": f"wiretap proxy recording {header.get('name')} of {header.get('upstream')}: {REBUILT}",
        }
    }


def har_of_recording(path: Path) -> dict[str, Any]:
    with open_recording(path) as reader:
        return build_har(reader.header, reader.events())
