"""Sans-IO: the records a relay sends its recorder process over a pipe, and their decoding.

A record is a fixed 17-byte head (type, stream id, monotonic stamp, payload length) and its payload.
The relay writes a record with one ``writev`` before it forwards the bytes it describes, so what
the kernel holds when the relay dies is already on its way to the recording.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from enum import IntEnum
from typing import Any, NamedTuple

HEAD = struct.Struct("<BIdI")
SPEC_SIZE = struct.Struct("<I")


class Op(IntEnum):
    HEADER = 1
    """The recording's header line (JSON), and the recorder's settings."""
    OPEN = 2
    """Stream ``key`` starts; the payload is its StreamSpec (JSON)."""
    DATA = 3
    """Bytes that passed on stream ``key``."""
    CLOSED = 4
    """End of stream ``key``."""
    EVENT = 5
    """One event's fields (JSON)."""
    GAP = 6
    """What the relay could not hand over since the last record (JSON counts): ``--on-overload drop``."""
    GUARD = 7
    """``key`` is a process group to kill if the relay dies without saying goodbye."""
    CLOSE = 8
    """The relay is done; the payload is the end event's summary (JSON)."""
    BODY = 9
    """A whole stream in one record (a body that arrived in one read): opened, its bytes, closed. The
    payload is ``SPEC_SIZE`` (the length of the StreamSpec's JSON), that JSON, then the bytes."""


_OPS = {op.value: op for op in Op}


class Record(NamedTuple):
    # (a tuple: a recorder decodes several records per HTTP exchange, and a frozen dataclass costs more)
    op: Op
    key: int
    t: float
    payload: bytes

    def json(self) -> Any:
        return json.loads(self.payload)


def head(op: Op, key: int, t: float, size: int) -> bytes:
    return HEAD.pack(op, key, t, size)


def encode(op: Op, key: int, t: float, payload: bytes = b"") -> bytes:
    return HEAD.pack(op, key, t, len(payload)) + payload


def encode_body(t: float, spec: bytes, body: bytes) -> bytes:
    return HEAD.pack(Op.BODY, 0, t, SPEC_SIZE.size + len(spec) + len(body)) + SPEC_SIZE.pack(len(spec)) + spec + body


def decode_body(payload: bytes) -> tuple[bytes, bytes]:
    """A BODY record's payload: (its StreamSpec as JSON, the bytes)."""
    (size,) = SPEC_SIZE.unpack_from(payload)
    end = SPEC_SIZE.size + size
    return payload[SPEC_SIZE.size : end], payload[end:]


# Built once: json.dumps with non-default options builds a new JSONEncoder on every call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)


def encode_json(op: Op, key: int, t: float, value: Any) -> bytes:
    return encode(op, key, t, _ENCODER.encode(value).encode())


class RecordDecoder:
    """Bytes from the pipe in, whole records out, whatever the read sizes."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    @property
    def pending(self) -> int:
        return len(self._buffer)

    def feed(self, data: bytes | bytearray) -> Iterator[Record]:
        buffer = self._buffer
        buffer += data
        at, size = 0, len(buffer)
        view = memoryview(buffer)
        try:
            while size - at >= HEAD.size:
                op, key, t, length = HEAD.unpack_from(view, at)
                end = at + HEAD.size + length
                if end > size:
                    break
                known = _OPS.get(op)
                if known is not None:  # an unknown record is skipped whole: its length still frames it
                    yield Record(known, key, t, bytes(view[at + HEAD.size : end]))
                at = end
        finally:
            view.release()
            del buffer[:at]
