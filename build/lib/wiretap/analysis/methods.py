"""The method sequence of a recording: what each side asked, in order, without ids."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from wiretap.recording.events import Event, Kind


def method_of(event: Event) -> str | None:
    """The JSON-RPC method or A2A REST operation of a request or notification event, else None."""
    if event.get("kind") != Kind.MESSAGE:
        return None
    rest = event.get("rest")
    if isinstance(rest, dict) and event.get("dir") == "c2s":
        return str(rest.get("operation"))
    msg: Any = event.get("msg")
    if isinstance(msg, dict) and isinstance(msg.get("method"), str):
        return str(msg["method"])
    return None


def sequence(events: Iterable[Event]) -> list[tuple[str, str]]:
    """(direction, method) for every request and notification, in order."""
    return [(str(e.get("dir")), m) for e in events if (m := method_of(e)) is not None]
