"""When the client went away, and what became of the server."""

from __future__ import annotations

from typing import Any

from wiretap.analysis.model import ClientExit, ServerExit
from wiretap.recording.event_types import typed
from wiretap.recording.events import Direction, Event


class ExitWatch:
    """Streams over lifecycle events; the first sign of the client leaving counts."""

    def __init__(self) -> None:
        self.client: ClientExit | None = None
        self.server: ServerExit | None = None
        self.signals: list[tuple[float, str]] = []
        self._last_request_t: float | None = None
        self._open_connections = 0
        self._last_close: float | None = None
        self.end_t = 0.0
        self._signals_noted = False
        self.capped: dict[str, Any] | None = None
        """The recording's cap: the ``recording_cap`` error's fields, then the end event's counts."""

    def message(self, t: float) -> None:
        """A message event: all ``feed`` reads of one is its time."""
        if t > self.end_t:
            self.end_t = t

    def feed(self, recorded: Event) -> None:
        event, t = typed(recorded), float(recorded.get("t", 0.0))
        self.end_t = max(self.end_t, t)
        if event["kind"] == "eof" and event.get("dir") == Direction.C2S and self.client is None:
            self.client = ClientExit(t, "stdin closed", [f"{t:.2f} s: the client closed the server's stdin"])
        elif event["kind"] == "signal" and "forwarded" in event:
            self.signals.append((t, str(event.get("signal"))))
            if self.client is None:
                self.client = ClientExit(t, str(event.get("signal")), [f"{t:.2f} s: {event.get('signal')} received"])
        elif event["kind"] == "exit":
            how = f"was killed by {event['signal']}" if "signal" in event else f"exited with code {event.get('code')}"
            self.server = ServerExit(t, how, event.get("status"), None)
        elif event["kind"] == "http_request":
            self._last_request_t = t
        elif event["kind"] == "error" and event.get("error") == "recording_cap":
            self.capped = {"since": t, "max_size": event.get("max_size")}
        elif event["kind"] == "end" and isinstance(capped := event.get("capped"), dict):
            self.capped = {"since": t, **(self.capped or {}), **capped}
        elif event["kind"] == "connection":
            state = event.get("state")
            self._open_connections += 1 if state == "open" else -1 if state == "closed" else 0
            if event.get("state") == "closed":
                self._last_close = t

    def manifest_exit(self, t: float, detail: str) -> None:
        """The client's exit as a session manifest records it; the earliest sign of leaving counts."""
        self.finish_traffic()
        if self.client is None or t < self.client.t:
            self.client = ClientExit(t, "client exited", [f"{t:.2f} s: {detail}"])
        else:
            self.client.evidence.append(f"{t:.2f} s: {detail}")

    def finish(self) -> None:
        self.finish_traffic()
        if self.client is not None and self.signals and not self._signals_noted:
            self._signals_noted = True
            self.client.evidence += [f"{t:.2f} s: {name} received" for t, name in self.signals[1:]]

    def finish_traffic(self) -> None:
        """Decide from the traffic alone (the last connection closing) if nothing else said so."""
        closed = self._last_close
        quiet_since = self._last_request_t is None or (closed is not None and closed >= self._last_request_t)
        if self.client is None and closed is not None and self._open_connections <= 0 and quiet_since:
            self.client = ClientExit(closed, "last connection closed", [f"{closed:.2f} s: the last connection closed"])

    def describe_server(self) -> ServerExit | None:
        """The server's end as the report gives it: rounded, and how long after the client left."""
        if self.server is None:
            return None
        after = self.server.t - self.client.t if self.client is not None else None
        return ServerExit(
            round(self.server.t, 3), self.server.how, self.server.status, round(after, 3) if after is not None else None
        )
