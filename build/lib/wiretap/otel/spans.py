"""The spans wiretap makes from a recording: a small typed model, and ids derived from the recording.

Ids are hashes of what identifies the recording (its header) and of each span's place in it, so that
pushing the same recording twice sends the same trace and span ids, and a backend that keys spans by
id keeps one copy.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

AttributeValue = str | bool | int | float | list[str]
Attributes = dict[str, AttributeValue]


class SpanKind(IntEnum):
    """OTLP's numbering."""

    INTERNAL = 1
    SERVER = 2
    CLIENT = 3


class StatusCode(IntEnum):
    UNSET = 0
    OK = 1
    ERROR = 2


@dataclass
class SpanEvent:
    name: str
    time_ns: int
    attributes: Attributes = field(default_factory=dict)


@dataclass
class Link:
    trace_id: bytes
    span_id: bytes


@dataclass
class Span:
    trace_id: bytes
    span_id: bytes
    parent_id: bytes | None
    name: str
    kind: SpanKind
    start_ns: int
    end_ns: int
    attributes: Attributes = field(default_factory=dict)
    events: list[SpanEvent] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    status: StatusCode = StatusCode.UNSET
    status_message: str = ""

    def error(self, error_type: str, message: str = "") -> None:
        self.attributes["error.type"] = error_type
        self.status = StatusCode.ERROR
        self.status_message = message


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _digest(*parts: bytes, size: int) -> bytes:
    digest = hashlib.sha256(b"\0".join(parts)).digest()[:size]
    # All-zero ids are invalid in OTLP; a hash gives one with probability 2^-64 at worst.
    return digest if any(digest) else b"\x01" + digest[1:]


def trace_id_for(identity: Any) -> bytes:
    """The trace id of a recording (identity: its header) or of a session (its manifest's identity)."""
    return _digest(b"wiretap/trace", canonical(identity), size=16)


def span_id_for(trace_id: bytes, key: str) -> bytes:
    return _digest(b"wiretap/span", trace_id, key.encode(), size=8)


def parse_traceparent(value: object) -> tuple[bytes, bytes] | None:
    """W3C ``traceparent`` (version 00 and later) as (trace id, parent span id), or None if malformed."""
    if not isinstance(value, str):
        return None
    parts = value.strip().split("-")
    if len(parts) < 4 or len(parts[0]) != 2 or parts[0] == "ff" or len(parts[1]) != 32 or len(parts[2]) != 16:
        return None
    try:
        trace_id, span_id = bytes.fromhex(parts[1]), bytes.fromhex(parts[2])
    except ValueError:
        return None
    if not any(trace_id) or not any(span_id):
        return None
    return trace_id, span_id
