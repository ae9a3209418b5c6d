"""Traffic per connection (or the stdio pipe) over time, gathered in the report's one pass for the timeline."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

from wiretap.recording.events import Direction, Event, Kind
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

    def feed(self, event: Event) -> None:
        kind, t = event.get("kind"), float(event.get("t", 0.0))
        if self.transport != "http":
            self._stdio(event, kind, t)
            return
        if kind == Kind.CONNECTION:
            channel = self._channel(event.get("conn"))
            if channel.start is None:
                channel.start = t
            if event.get("state") == "closed":
                channel.stop = t
        elif kind == Kind.HTTP_REQUEST and isinstance(event.get("ex"), int):
            self._conn_of[event["ex"]] = event.get("conn")
            self.exchanges += 1
        elif kind == Kind.HTTP_END and isinstance(event.get("ex"), int):
            self._conn_of.pop(event["ex"], None)
        elif kind == Kind.HTTP_RESPONSE and int(event.get("status", 0)) >= 400:
            self._channel(self._conn_of.get(event.get("ex", -1))).errors.append(t)
        elif kind == Kind.MESSAGE and _counted(event):
            channel = self._channel(self._conn_of.get(event.get("ex", -1)))
            (channel.c2s if event.get("dir") == Direction.C2S.value else channel.s2c).append(t)
            if _is_error(event):
                channel.errors.append(t)

    def _stdio(self, event: Event, kind: Any, t: float) -> None:
        channel = self._channel("stdio")
        if kind == Kind.MESSAGE and _counted(event):
            (channel.c2s if event.get("dir") == Direction.C2S.value else channel.s2c).append(t)
            if _is_error(event):
                channel.errors.append(t)
        elif kind == Kind.SPAWN:
            channel.start = t
        elif kind == Kind.EXIT:
            channel.stop = t


def _counted(event: Event) -> bool:
    """A JSON-RPC (or A2A REST) message: other bodies are not drawn as messages."""
    if "rest" in event:
        return True
    body = event.get("msg")
    return any(is_message(item) for item in (body if isinstance(body, list) else [body]))


def _is_error(event: Event) -> bool:
    msg = event.get("msg")
    return isinstance(msg, dict) and "error" in msg
