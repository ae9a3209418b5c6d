"""Sans-IO Server-Sent Events decoding (WHATWG rules), for recording what an SSE stream carries.

The decoder never sits on the forwarding path: bytes are forwarded as they arrive and a copy is
fed here. Lines may end in CRLF, LF or CR, split anywhere across chunks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_LINE_END = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"


@dataclass
class SSEEvent:
    data: bytes | None = None
    """The data lines joined with LF; None when the event had no data field."""
    event: str | None = None
    id: str | None = None
    retry: int | None = None
    comments: list[str] = field(default_factory=list)
    complete: bool = True
    """False for an event cut off by the end of the stream (a browser would drop it)."""


class SSEDecoder:
    def __init__(self) -> None:
        self._buf = bytearray()
        self._scan_from = 0
        self._started = False
        self._event = SSEEvent()
        self._data: list[bytes] = []
        self._seen_field = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        self._buf += chunk
        if not self._started:
            if len(self._buf) < len(_BOM) and _BOM.startswith(bytes(self._buf)):
                return []
            if self._buf.startswith(_BOM):
                del self._buf[: len(_BOM)]
            self._started = True
        events: list[SSEEvent] = []
        pos = 0
        while (match := _LINE_END.search(self._buf, max(pos, self._scan_from))) is not None:
            if match.group() == b"\r" and match.end() == len(self._buf):
                break  # maybe the first half of a CRLF split across chunks
            event = self._line(bytes(self._buf[pos : match.start()]))
            pos = self._scan_from = match.end()
            if event is not None:
                events.append(event)
        del self._buf[:pos]
        self._scan_from = max(0, len(self._buf) - 1)
        return events

    def close(self) -> list[SSEEvent]:
        """End of stream: a last line without its end, and an event without its blank line."""
        events = self.feed(b"\n") if self._buf.endswith(b"\r") else []
        if self._buf:
            self._line(bytes(self._buf))
            self._buf.clear()
        if self._seen_field:
            event = self._dispatch()
            event.complete = False
            events.append(event)
        return events

    def _line(self, line: bytes) -> SSEEvent | None:
        if not line:
            return self._dispatch() if self._seen_field else None
        name, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if not name:
            self._event.comments.append(value.decode("utf-8", errors="replace"))
            return None
        self._seen_field = True
        if name == b"data":
            self._data.append(value)
        elif name == b"event":
            self._event.event = value.decode("utf-8", errors="replace")
        elif name == b"id" and b"\0" not in value:
            self._event.id = value.decode("utf-8", errors="replace")
        elif name == b"retry" and value.isdigit():
            self._event.retry = int(value)
        return None

    def _dispatch(self) -> SSEEvent:
        event, self._event = self._event, SSEEvent()
        event.data = b"\n".join(self._data) if self._data else None
        self._data = []
        self._seen_field = False
        return event
