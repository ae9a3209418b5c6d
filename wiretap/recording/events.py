"""The recording's vocabulary: format version, event kinds, directions and the header.

A recording is JSON Lines. Line 1 is the header, each further line one event. Events are plain
dicts on purpose: that is what ``jq`` sees, and what every analysis streams over. ``event_types``
gives each kind its typed shape (a ``TypedDict``: still a plain dict at run time).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, cast

from wiretap import __version__
from wiretap.recording.event_types import HeaderLine

FORMAT_VERSION = 1
"""Bump on any change a reader of the previous version could misread; add a converter in migrate.py."""

Event = dict[str, Any]


class Direction(StrEnum):
    C2S = "c2s"
    """Client to server: IN, as seen from the server."""
    S2C = "s2c"
    """Server to client: OUT."""


class Kind(StrEnum):
    HEADER = "header"
    MESSAGE = "message"
    STDERR = "stderr"
    SPAWN = "spawn"
    SPAWN_FAILED = "spawn_failed"
    EOF = "eof"
    SIGNAL = "signal"
    EXIT = "exit"
    ERROR = "error"
    END = "end"
    SSE = "sse"
    CONNECTION = "connection"
    HTTP_REQUEST = "http_request"
    HTTP_RESPONSE = "http_response"
    HTTP_END = "http_end"
    REWRITE = "rewrite"
    LISTEN = "listen"
    WEBSOCKET = "websocket"
    """A WebSocket frame or message that is not JSON: its opcode and size, never its payload."""
    OBSERVED = "observed"
    """A fact a client logged, imported from its logs (``wiretap import``): never a message."""


def utc_iso_ms(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Header:
    """Line 1 of every recording."""

    transport: str
    name: str
    argv: list[str]
    started_epoch: float = field(default_factory=time.time)
    redacted: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> HeaderLine:
        line: HeaderLine = {
            "kind": "header",
            "format": FORMAT_VERSION,
            "wiretap": __version__,
            "started": utc_iso_ms(self.started_epoch),
            "clock": "monotonic seconds since started",
            "transport": self.transport,
            "name": self.name,
            "argv": self.argv,
            "cwd": os.getcwd(),
            "pid": os.getpid(),
            "redacted": self.redacted,
        }
        return cast(HeaderLine, line | self.extra)  # (extra: the transport's own fields, such as upstream)
