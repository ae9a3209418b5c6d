"""Sans-IO WebSocket (RFC 6455) frame decoding, for recording what an upgraded connection carries.

The decoder never sits on the forwarding path: bytes are forwarded as they arrive and a copy is
fed here, one decoder per direction. A frame's payload is kept up to ``limit`` bytes; past that only
its length is known and the frame says how many bytes were let go. Text and binary messages split
into fragments are reassembled (up to ``limit``) for parsing only. Frames compressed with
permessage-deflate (RSV1 set) are reported as compressed and their payload kept opaque. A frame
that breaks the protocol makes the decoder stop parsing that direction: what follows is counted
as unparsed bytes, since no frame boundary can be trusted after it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from wiretap.wire.framing import UNLIMITED

CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
OPCODE_NAMES = {0x0: "continuation", 0x1: "text", 0x2: "binary", 0x8: "close", 0x9: "ping", 0xA: "pong"}
_MAX_LENGTH = (1 << 63) - 1


@dataclass
class Frame:
    opcode: int
    fin: bool
    masked: bool
    length: int
    """The payload length the header declares."""
    payload: bytes = b""
    """The unmasked payload, or its first ``limit`` bytes."""
    rsv1: bool = False
    """Set by permessage-deflate on a message's first frame: the payload is compressed."""
    dropped: int = 0
    """Payload bytes over the limit, counted and not kept."""
    complete: bool = True
    """False for a frame cut off by the end of the stream."""

    @property
    def kind(self) -> str:
        return OPCODE_NAMES.get(self.opcode, f"reserved-{self.opcode:x}")

    def close_status(self) -> tuple[int | None, str]:
        """A close frame's code and reason (RFC 6455 §5.5.1)."""
        if len(self.payload) < 2:
            return None, ""
        (code,) = struct.unpack("!H", self.payload[:2])
        return code, self.payload[2:].decode("utf-8", "replace")


@dataclass
class Message:
    """A whole text or binary message, its fragments joined."""

    opcode: int
    data: bytes
    compressed: bool = False
    fragments: int = 1
    size: int = 0
    """Its bytes; larger than ``len(data)`` when the message went over the limit."""

    @property
    def truncated(self) -> bool:
        return self.size > len(self.data)


@dataclass
class BadFrame:
    why: str
    offset: int
    """Bytes into this direction's stream where the bad header starts."""


Event = Frame | Message | BadFrame


@dataclass
class _Head:
    opcode: int
    fin: bool
    rsv1: bool
    mask: bytes | None
    length: int


@dataclass
class _Assembly:
    opcode: int
    compressed: bool
    parts: list[bytes] = field(default_factory=list)
    kept: int = 0
    size: int = 0
    fragments: int = 0


class FrameDecoder:
    def __init__(self, limit: int = UNLIMITED) -> None:
        self._limit = limit
        self._buf = bytearray()
        self._offset = 0
        """Bytes of the stream consumed so far."""
        self._head: _Head | None = None
        self._frame: Frame | None = None
        self._done = 0
        """Payload bytes of the frame under way read so far."""
        self._payload = bytearray()
        """What is kept of the frame under way's payload (grown in place: a frame may come in many reads)."""
        self._message: _Assembly | None = None
        self.broken: BadFrame | None = None
        self.unparsed = 0
        """Bytes after a bad frame, forwarded and not parsed."""
        self.frames = 0
        self.bytes = 0

    def feed(self, chunk: bytes) -> list[Event]:
        self.bytes += len(chunk)
        if self.broken is not None:
            self.unparsed += len(chunk)
            return []
        self._buf += chunk
        events: list[Event] = []
        while self.broken is None:
            if self._head is None and not self._read_head(events):
                break
            if not self._read_payload(events):
                break
        if self.broken is not None:
            self.unparsed += len(self._buf)
            self._buf.clear()
        return events

    def close(self) -> list[Event]:
        """The frame cut off by the end of the stream, if any."""
        if self._frame is None:
            return []
        frame, self._frame, self._head = self._frame, None, None
        frame.payload, self._payload = bytes(self._payload), bytearray()
        frame.complete = False
        frame.dropped = frame.length - len(frame.payload)
        return [frame]

    def _read_head(self, events: list[Event]) -> bool:
        buf = self._buf
        if len(buf) < 2:
            return False
        b0, b1 = buf[0], buf[1]
        need = 2 + {126: 2, 127: 8}.get(b1 & 0x7F, 0) + (4 if b1 & 0x80 else 0)
        if len(buf) < need:
            return False
        length, pos = b1 & 0x7F, 2
        if length == 126:
            (length,) = struct.unpack_from("!H", buf, 2)
            pos = 4
        elif length == 127:
            (length,) = struct.unpack_from("!Q", buf, 2)
            pos = 10
        mask = bytes(buf[pos : pos + 4]) if b1 & 0x80 else None
        head = _Head(b0 & 0x0F, bool(b0 & 0x80), bool(b0 & 0x40), mask, length)
        why = self._violation(head, b0)
        if why:
            self.broken = BadFrame(why, self._offset)
            events.append(self.broken)
            return False
        del buf[:need]
        self._offset += need
        self._head, self._done = head, 0
        self._frame = Frame(head.opcode, head.fin, mask is not None, length, rsv1=head.rsv1)
        return True

    def _violation(self, head: _Head, b0: int) -> str:
        if head.length > _MAX_LENGTH:
            return "a 64-bit length with its high bit set"
        if b0 & 0x30:
            return "RSV2 or RSV3 set without an extension that defines them"
        if head.opcode not in OPCODE_NAMES:
            return f"reserved opcode 0x{head.opcode:x}"
        if head.opcode >= CLOSE and (not head.fin or head.length > 125):
            return "a control frame fragmented or longer than 125 bytes"
        if head.opcode == CONTINUATION and self._message is None:
            return "a continuation frame with no message under way"
        if head.opcode in (TEXT, BINARY) and self._message is not None:
            return "a new message before the previous one ended"
        return ""

    def _read_payload(self, events: list[Event]) -> bool:
        head, frame = self._head, self._frame
        assert head is not None and frame is not None
        take = min(len(self._buf), head.length - self._done)
        if take:
            piece = bytes(self._buf[:take])
            del self._buf[:take]
            self._offset += take
            room = max(0, self._limit - len(self._payload))
            if room:
                self._payload += _unmask(piece[:room], head.mask, self._done)
            self._done += take
        if self._done < head.length:
            return False
        frame.payload, self._payload = bytes(self._payload), bytearray()
        frame.dropped = head.length - len(frame.payload)
        self._head, self._frame = None, None
        self.frames += 1
        events.append(frame)
        message = self._assemble(frame)
        if message is not None:
            events.append(message)
        return True

    def _assemble(self, frame: Frame) -> Message | None:
        if frame.opcode >= CLOSE:
            return None
        if frame.opcode != CONTINUATION:
            self._message = _Assembly(frame.opcode, frame.rsv1)
        assembly = self._message
        assert assembly is not None
        keep = frame.payload[: max(0, self._limit - assembly.kept)]
        assembly.parts.append(keep)
        assembly.kept += len(keep)
        assembly.size += frame.length
        assembly.fragments += 1
        if not frame.fin:
            return None
        self._message = None
        data = b"".join(assembly.parts)
        return Message(assembly.opcode, data, assembly.compressed, assembly.fragments, assembly.size)


def _unmask(data: bytes, mask: bytes | None, start: int) -> bytes:
    if mask is None or not data:
        return data
    rolled = mask[start % 4 :] + mask[: start % 4]
    key = (rolled * (len(data) // 4 + 1))[: len(data)]
    return (int.from_bytes(data, "big") ^ int.from_bytes(key, "big")).to_bytes(len(data), "big")


def encode_frame(opcode: int, payload: bytes, fin: bool = True, mask: bytes | None = None, rsv1: bool = False) -> bytes:
    """One frame's bytes (for tests and scenario peers)."""
    b0 = (0x80 if fin else 0) | (0x40 if rsv1 else 0) | opcode
    n = len(payload)
    bit = 0x80 if mask is not None else 0
    if n < 126:
        head = bytes([b0, bit | n])
    elif n < 1 << 16:
        head = bytes([b0, bit | 126]) + struct.pack("!H", n)
    else:
        head = bytes([b0, bit | 127]) + struct.pack("!Q", n)
    if mask is None:
        return head + payload
    return head + mask + _unmask(payload, mask, 0)
