"""What the recorder does with the bytes of each stream: one small class per way of framing them.

A stream turns stamped chunks into events (fields, plus the JSON text to splice in as ``msg``).
Streams live on the recorder's thread only.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from wiretap.http.encoding import Decompressor
from wiretap.recording.events import Event, Kind
from wiretap.wire.framing import Frame, LineFramer
from wiretap.wire.messages import record_frame
from wiretap.wire.redact import redact_text
from wiretap.wire.sse import SSEDecoder, SSEEvent

Recorded = tuple[Event, bytes | bytearray | None]


class RecordStream(Protocol):
    def feed(self, t: float, chunk: bytes) -> Iterator[Recorded]: ...

    def close(self, t: float) -> Iterator[Recorded]: ...


def message(t: float, base: Event, frame: Frame, *, redact: bool, **extra: Any) -> Recorded:
    recorded = record_frame(frame, redact=redact)
    return {"t": t, "kind": Kind.MESSAGE.value, **base, **recorded.fields, **extra}, recorded.msg_bytes


class LineStream:
    """Newline-delimited messages (MCP stdio)."""

    def __init__(self, direction: str, *, redact: bool) -> None:
        self._base = {"dir": direction}
        self._framer = LineFramer()
        self._redact = redact

    def feed(self, t: float, chunk: bytes) -> Iterator[Recorded]:
        for frame in self._framer.feed(chunk):
            yield message(t, self._base, frame, redact=self._redact)

    def close(self, t: float) -> Iterator[Recorded]:
        last = self._framer.close()
        if last is not None:
            yield message(t, self._base, last, redact=self._redact, eol="")
        yield {"t": t, "kind": Kind.EOF.value, **self._base}, None


class StderrStream:
    """A process's stderr: one event per line, as text."""

    def __init__(self, *, redact: bool) -> None:
        self._framer = LineFramer()
        self._redact = redact

    def _event(self, t: float, frame: Frame) -> Recorded:
        text = bytes(frame).decode("utf-8", errors="replace").rstrip("\r")
        return {
            "t": t,
            "kind": Kind.STDERR.value,
            "text": redact_text(text)[0] if self._redact else text,
        }, None

    def feed(self, t: float, chunk: bytes) -> Iterator[Recorded]:
        for frame in self._framer.feed(chunk):
            yield self._event(t, frame)

    def close(self, t: float) -> Iterator[Recorded]:
        last = self._framer.close()
        if last is not None:
            yield self._event(t, last)


class BodyStream:
    """An HTTP body that is one message (a JSON-RPC POST, a JSON response, an A2A REST body)."""

    def __init__(self, base: Event, *, redact: bool, encoding: str | None = None) -> None:
        self._base = base
        self._chunks: list[bytes] = []
        self._redact = redact
        self._decompress = Decompressor(encoding)

    def feed(self, t: float, chunk: bytes) -> Iterator[Recorded]:
        self._chunks.append(self._decompress(chunk))
        return iter(())

    def close(self, t: float) -> Iterator[Recorded]:
        body = b"".join(self._chunks)
        self._chunks = []
        if body.strip():
            yield message(t, self._base, body.rstrip(b"\r\n"), redact=self._redact)
        elif "rest" in self._base:  # an A2A REST call is a message even without a body (GET /tasks/{id})
            yield {"t": t, "kind": Kind.MESSAGE.value, **self._base, "size": len(body)}, None


class SSEStream:
    """A ``text/event-stream`` body: each event with data is a message; the rest is kept as ``sse``."""

    def __init__(self, base: Event, *, redact: bool, encoding: str | None = None) -> None:
        self._base = base
        self._decoder = SSEDecoder()
        self._redact = redact
        self._decompress = Decompressor(encoding)

    def _recorded(self, t: float, event: SSEEvent) -> Recorded:
        sse = {k: v for k, v in (("event", event.event), ("id", event.id), ("retry", event.retry)) if v is not None}
        if not event.complete:
            sse["incomplete"] = True
        if event.data:
            return message(t, self._base, event.data, redact=self._redact, sse=sse)
        return {"t": t, "kind": Kind.SSE.value, **self._base, **sse}, None

    def feed(self, t: float, chunk: bytes) -> Iterator[Recorded]:
        for event in self._decoder.feed(self._decompress(chunk)):
            yield self._recorded(t, event)

    def close(self, t: float) -> Iterator[Recorded]:
        for event in self._decoder.close():
            yield self._recorded(t, event)
