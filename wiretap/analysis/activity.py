"""Traffic per connection (or the stdio pipe) over time, gathered in the report's one pass for the timeline."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

from wiretap.recording.event_types import AnyEvent, MessageEvent, typed
from wiretap.recording.events import Direction, Event
from wiretap.wire.jsonrpc import is_message


@dataclass
class Channel:
    """One connection (or the stdio pipe): when it lived and when messages crossed it."""

    key: Any
    start: float | None = None
    stop: float | None = None
    c2s: array[float] = field(default_factory=lambda: array("d"))
    s2c: array[float] = field(default_factory=lambda: array("d"))
    errors: array[float] = field(default_factory=lambda: array("d"))


@dataclass
class Activity:
    transport: str
    channels: dict[Any, Channel] = field(default_factory=dict)
    exchanges: int = 0
    _conn_of: dict[int, Any] = field(default_factory=dict)

    def _channel(self, key: Any) -> Channel:
        channel = self.channels.get(key)
        if channel is None:
            channel = self.channels[key] = Channel(key)
        return channel

    def feed(self, recorded: Event) -> None:
        event, t = typed(recorded), float(recorded.get("t", 0.0))
        if self.transport != "http":
            self._stdio(event, t)
            return
        if "kind" not in recorded:  # (not from a reader: it skips such a line)
            return
        if event["kind"] == "connection":
            channel = self._channel(event.get("conn"))
            if channel.start is None:
                channel.start = t
            if event.get("state") == "closed":
                channel.stop = t
        elif event["kind"] == "http_request" and isinstance(event.get("ex"), int):
            self._conn_of[event["ex"]] = event.get("conn")
            self.exchanges += 1
        elif event["kind"] == "http_end" and isinstance(event.get("ex"), int):
            self._conn_of.pop(event["ex"], None)
        elif event["kind"] == "http_response" and int(event.get("status", 0)) >= 400:
            self._channel(self._conn_of.get(event.get("ex", -1))).errors.append(t)
        elif event["kind"] == "message" and _counted(event):
            channel = self._channel(self._conn_of.get(event.get("ex", -1)))
            (channel.c2s if event.get("dir") == Direction.C2S.value else channel.s2c).append(t)
            if _is_error(event):
                channel.errors.append(t)

    def _stdio(self, event: AnyEvent, t: float) -> None:
        channel = self._channel("stdio")
        if "kind" not in event:  # (not from a reader: it skips such a line)
            return
        if event["kind"] == "message" and _counted(event):
            (channel.c2s if event.get("dir") == Direction.C2S.value else channel.s2c).append(t)
            if _is_error(event):
                channel.errors.append(t)
        elif event["kind"] == "spawn":
            channel.start = t
        elif event["kind"] == "exit":
            channel.stop = t


def _counted(event: MessageEvent) -> bool:
    """A JSON-RPC (or A2A REST) message: other bodies are not drawn as messages."""
    if "rest" in event:
        return True
    body = event.get("msg")
    return any(is_message(item) for item in (body if isinstance(body, list) else [body]))


def _is_error(event: MessageEvent) -> bool:
    msg = event.get("msg")
    return isinstance(msg, dict) and "error" in msg
