"""Events to timeline rows: direction, method, pairing of responses with requests, and a summary."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from wiretap.model import Direction, Event, Kind
from wiretap.render.summarize import clip, summarize_error, summarize_request, summarize_result

IN, OUT, LIFE, ERR = "IN", "OUT", "---", "ERR"
_LANES = {Direction.C2S.value: IN, Direction.S2C.value: OUT}


@dataclass
class Row:
    t: float
    lane: str
    """IN (to the server), OUT (from it), --- (lifecycle), ERR (server stderr)."""
    title: str
    summary: str
    event: Event
    method: str | None = None
    """The JSON-RPC method; for a response, the method of its request."""
    id: Any = None
    latency: float | None = None
    error: bool = False


def format_latency(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


class Pairing:
    """Remembers open requests per direction, so that responses can name their method and latency."""

    def __init__(self) -> None:
        self._open: dict[tuple[str, str], tuple[str, float]] = {}

    def request(self, direction: str, msg_id: Any, method: str, t: float) -> None:
        self._open[(direction, json.dumps(msg_id))] = (method, t)

    def response(self, direction: str, msg_id: Any) -> tuple[str, float] | None:
        requester = Direction.S2C.value if direction == Direction.C2S.value else Direction.C2S.value
        return self._open.pop((requester, json.dumps(msg_id)), None)


def _message_row(event: Event, pairing: Pairing) -> Row:
    lane = _LANES.get(event.get("dir", ""), "?")
    t = float(event["t"])
    if "msg" not in event:
        return _raw_row(event, lane)
    msg = event["msg"]
    if isinstance(msg, list):
        return Row(t, lane, "batch", f"{len(msg)} messages", event)
    if not isinstance(msg, dict):
        return Row(t, lane, "json", clip(json.dumps(msg)), event)
    method = msg.get("method")
    msg_id = msg.get("id")
    if isinstance(method, str):
        if msg_id is not None:
            pairing.request(event["dir"], msg_id, method, t)
        tag = f"#{msg_id} " if msg_id is not None else ""
        return Row(t, lane, method, tag + summarize_request(method, msg.get("params")), event, method, msg_id)
    return _response_row(event, msg, lane, t, pairing)


def _response_row(event: Event, msg: dict[str, Any], lane: str, t: float, pairing: Pairing) -> Row:
    msg_id = msg.get("id")
    paired = pairing.response(event["dir"], msg_id)
    method, latency = (paired[0], t - paired[1]) if paired else (None, None)
    is_error = "error" in msg
    took = format_latency(latency) if latency is not None else None
    if is_error:
        outcome = summarize_error(msg["error"]) + (f" after {took}" if took else "")
    else:
        outcome = (f"ok {took} " if took else "") + summarize_result(method, msg.get("result"))
    title = method or "response"
    return Row(t, lane, title, f"#{msg_id} {outcome}".rstrip(), event, method, msg_id, latency, is_error)


def _raw_row(event: Event, lane: str) -> Row:
    note = " (not UTF-8)" if "raw_base64" in event else ""
    text = str(event.get("raw", ""))
    summary = f"{clip(repr(text)[1:-1], 60)}{note} [{event.get('size', len(text))} bytes]"
    return Row(float(event["t"]), lane, "raw", summary, event)


def _lifecycle_summary(event: Event) -> tuple[str, str]:
    kind = event.get("kind")
    if kind == Kind.SPAWN:
        return "spawn", f"{shlex.join(map(str, event.get('argv', [])))} (pid {event.get('pid')})"
    if kind == Kind.SPAWN_FAILED:
        return "spawn failed", str(event.get("error", ""))
    if kind == Kind.EOF:
        who = "client closed stdin" if event.get("dir") == Direction.C2S else "server closed stdout"
        return "eof", who
    if kind == Kind.SIGNAL:
        how = "forwarded to the server" if event.get("forwarded") else "server already gone"
        return "signal", f"{event.get('signal')} received, {how}"
    if kind == Kind.EXIT:
        how = f"killed by {event['signal']}" if "signal" in event else f"code {event.get('code')}"
        return "exit", f"server {how} (status {event.get('status')})"
    if kind == Kind.ERROR:
        return "error", f"{event.get('error', '')}: {event.get('message', '')}"
    if kind == Kind.END:
        return (
            "end",
            f"recording closed ({event.get('written', '?')} events written, {event.get('lost', 0)} lost)",
        )
    return str(kind), clip(json.dumps({k: v for k, v in event.items() if k not in ("t", "kind")}))


def row_for(event: Event, pairing: Pairing) -> Row:
    kind = event.get("kind")
    if kind == Kind.MESSAGE:
        return _message_row(event, pairing)
    if kind == Kind.STDERR:
        return Row(float(event["t"]), ERR, "stderr", str(event.get("text", "")), event)
    title, summary = _lifecycle_summary(event)
    return Row(float(event["t"]), LIFE, title, summary, event, error=kind == Kind.ERROR)


def rows(events: Iterable[Event]) -> Iterator[Row]:
    pairing = Pairing()
    for event in events:
        yield row_for(event, pairing)
