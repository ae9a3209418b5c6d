"""Sans-IO Server-Sent Events decoding (WHATWG rules), for recording what an SSE stream carries.

The decoder never sits on the forwarding path: bytes are forwarded as they arrive and a copy is
fed here. Lines may end in CRLF, LF or CR, split anywhere across chunks. An event that grows past the
decoder's ``limit`` (one that never ends) is not held whole: it comes out ``truncated``, with its
first data bytes and its size, once it ends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from wiretap.wire.framing import PREVIEW, UNLIMITED

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
    size: int | None = None
    """For an event over the decoder's limit (``data`` is then its first bytes only): its bytes, lines
    and their ends included."""


class SSEDecoder:
    def __init__(self, limit: int = UNLIMITED) -> None:
        self._limit = limit
        self._size = 0
        """Bytes of the event under way, up to the line being read."""
        self._over = False
        """The event under way is over the limit: its lines are counted, not kept."""
        self._dropped = False
        """(While over) the line being read had bytes that were counted and let go."""
        self._buf = bytearray()
        self._final = False
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
            if match.group() == b"\r" and match.end() == len(self._buf) and not self._final:
                break  # maybe the first half of a CRLF split across chunks
            if self._over:  # (only whether the line is empty matters now)
                line, self._dropped = b"-" if self._dropped or match.start() > pos else b"", False
            else:
                line = bytes(self._buf[pos : match.start()])
            self._size += match.end() - pos
            event = self._line(line)
            pos = self._scan_from = match.end()
            if event is not None:
                events.append(event)
        del self._buf[:pos]
        if self._size + len(self._buf) > self._limit:
            self._overflow()
        self._scan_from = max(0, len(self._buf) - 1)
        return events

    def _overflow(self) -> None:
        """The event under way is over the limit: keep the first of its data, count the rest."""
        if not self._over:
            self._over = self._seen_field = True
            name, _, value = bytes(self._buf[: PREVIEW + 6]).partition(b":")
            if name == b"data":  # (the line being read may be most of the event)
                self._data.append(value[1:] if value.startswith(b" ") else value)
            self._data = [b"\n".join(self._data)[:PREVIEW]]
            self._event.comments = []
        # (a last CR stays: the LF that may follow ends the same line)
        dropped = len(self._buf) - (1 if self._buf.endswith(b"\r") else 0)
        if dropped > 0:
            self._size += dropped
            self._dropped = True
            del self._buf[:dropped]

    def close(self) -> list[SSEEvent]:
        """End of stream: a last line without its end, and an event without its blank line."""
        self._final = True  # (a last CR is a whole line end now)
        events = self.feed(b"") if self._buf.endswith(b"\r") else []
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
            if self._seen_field:
                return self._dispatch()
            if not self._event.comments:  # nothing held: the next event starts from nothing
                self._size = 0
            return None
        if self._over:
            return None
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
        if self._over or self._size > self._limit:  # (over it, though it came whole within one read)
            event.data, event.size = (event.data or b"")[:PREVIEW], self._size
        self._data = []
        self._seen_field = self._over = False
        self._size = 0
        return event
