"""What the recorder makes of one direction of a WebSocket connection (the bytes after a ``101``).

Frames are decoded by ``wiretap.wire.websocket`` (masks removed, fragments joined) on the recorder's
copy; the traffic passed unchanged. A text message holding JSON becomes a ``message`` event like any
other transport's, with ``ws`` saying how it came (fragments, compression). Everything else (binary
messages, text that is not JSON, ping, pong, close) is a compact ``websocket`` event: its opcode, its
size, a close frame's code and reason. Memory is bounded as for other streams: at most
``MESSAGE_LIMIT`` of a message is kept; a bigger one is recorded as truncated, with its size.

permessage-deflate (RFC 7692), when the 101 agreed to it, is undone with one raw inflate stream per
direction, its window carried from message to message as the sender's may be. Inflating stops for good,
and later compressed messages are recorded as ``compressed`` and unread, once a message could not be
followed whole (over the limit, or damaged): without it the window the next ones refer to is unknown.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from typing import cast

from wiretap.recording.event_types import StreamBase, WebSocketEvent, WebSocketMessage
from wiretap.recording.events import Kind
from wiretap.recording.streams import MESSAGE_LIMIT, Recorded, message, stream_error, truncated_message
from wiretap.wire.framing import PREVIEW
from wiretap.wire.messages import is_verbatim_json
from wiretap.wire.redact import redact_text
from wiretap.wire.websocket import CLOSE, OPCODE_NAMES, TEXT, BadFrame, Frame, FrameDecoder, Message

DEFLATE = "permessage-deflate"
_TAIL = b"\x00\x00\xff\xff"
"""What a sender strips from the end of each compressed message (RFC 7692 §7.2.1), given back to inflate."""


def _holds_json(data: bytes) -> bool:
    """A JSON object or array (what JSON-RPC is), in UTF-8."""
    if data.lstrip()[:1] not in (b"{", b"["):
        return False
    try:
        if is_verbatim_json(data):
            return True
    except Exception:  # then the stdlib decides
        pass
    try:
        json.loads(data)
    except (ValueError, RecursionError):
        return False
    return True


class _Brief(WebSocketMessage, total=False):
    """How a message recorded in brief (a ``websocket`` event) came, and why it is not a ``message``."""

    unread: bool
    truncated: bool


class WebSocketStream:
    def __init__(self, base: StreamBase, *, redact: bool, encoding: str | None = None) -> None:
        self._base = base
        self._redact = redact
        self._decoder: FrameDecoder | None = FrameDecoder(MESSAGE_LIMIT)
        self._inflate = zlib.decompressobj(-zlib.MAX_WBITS) if encoding == DEFLATE else None
        self._inflating = self._inflate is not None
        self.lost = 0

    def feed(self, t: float, chunk: bytes) -> Iterator[Recorded]:
        if self._decoder is None:
            return
        for event in self._decoder.feed(chunk):
            yield from self._recorded(t, event)

    def gap(self, t: float, *, ends_mid_frame: bool) -> None:
        # Bytes missing: no frame boundary after them can be trusted, nor the inflate window.
        self._decoder = None
        self.lost += 1

    def close(self, t: float) -> Iterator[Recorded]:
        if self._decoder is None:
            return
        for event in self._decoder.close():
            yield from self._recorded(t, event)

    def _recorded(self, t: float, event: Frame | Message | BadFrame) -> Iterator[Recorded]:
        if isinstance(event, BadFrame):
            why = f"{event.why}, at byte {event.offset}: what follows passed on unchanged and is not read"
            yield stream_error(t, self._base, "websocket_protocol", why), None
        elif isinstance(event, Message):
            yield from self._message(t, event)
        elif event.opcode >= CLOSE or not event.complete:
            yield self._frame(t, event), None
        # (a data frame otherwise: its message is recorded once whole)

    def _event(self, t: float, opcode: str) -> WebSocketEvent:
        """The event's first fields, in their recorded order (``size`` comes next)."""
        return cast(WebSocketEvent, {"t": t, "kind": Kind.WEBSOCKET.value, **self._base, "opcode": opcode})

    def _frame(self, t: float, frame: Frame) -> WebSocketEvent:
        recorded = self._event(t, frame.kind)
        recorded["size"] = frame.length
        if frame.opcode == CLOSE:
            code, reason = frame.close_status()
            if code is not None:
                recorded["code"] = code
            if reason:
                recorded["reason"] = redact_text(reason)[0] if self._redact else reason
        if not frame.complete:
            recorded["incomplete"] = True
        return recorded

    def _message(self, t: float, whole: Message) -> Iterator[Recorded]:
        data, size = whole.data, whole.size
        ws: _Brief = {"fragments": whole.fragments}
        truncated = whole.truncated
        if whole.compressed:
            plain = self._inflated(whole)
            if plain is None:
                ws["compressed"], ws["unread"] = True, True
                yield self._summary(t, whole, size, ws), None
                return
            ws["compressed"] = True
            ws["compressed_size"] = size
            data, size, truncated = plain
        if whole.opcode == TEXT and not truncated and _holds_json(data):
            yield from message(t, self._base, data, redact=self._redact, ws=ws)
        elif whole.opcode == TEXT and truncated and data.lstrip()[:1] in (b"{", b"["):
            yield from truncated_message(t, self._base, data[:PREVIEW], size=size, redact=self._redact, ws=ws)
        else:
            if truncated:
                ws["truncated"] = True
            yield self._summary(t, whole, size, ws), None

    def _summary(self, t: float, whole: Message, size: int, ws: _Brief) -> WebSocketEvent:
        event = self._event(t, OPCODE_NAMES[whole.opcode])
        event["size"] = size
        shown = {k: v for k, v in ws.items() if k != "fragments" or ws["fragments"] > 1}
        return cast(WebSocketEvent, event | shown)

    def _inflated(self, whole: Message) -> tuple[bytes, int, bool] | None:
        """``(data, size, truncated)`` inflated, or None if it cannot be (not agreed, or no longer followed)."""
        inflate = self._inflate
        if inflate is None or not self._inflating:
            return None
        if whole.truncated:  # the compressed message itself was cut: the window is lost from here on
            self._inflating = False
            return None
        try:
            plain = inflate.decompress(whole.data + _TAIL, MESSAGE_LIMIT + 1)
        except zlib.error:
            self._inflating = False
            return None
        if len(plain) > MESSAGE_LIMIT or inflate.unconsumed_tail:
            self._inflating = False
            return plain[:PREVIEW], len(plain), True
        if inflate.eof:  # (a sender without context takeover may end each message's stream)
            self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
        return plain, len(plain), False
