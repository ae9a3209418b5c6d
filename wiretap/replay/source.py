"""The recording a script was read from, kept open so that a recorded message is read back and parsed
only when it is served or compared: a replay holds where each message is, not the parsed message (a
parsed message takes ten times its size in memory)."""

from __future__ import annotations

import os
import weakref
import zlib
from pathlib import Path
from typing import IO, Any

from wiretap.errors import BadInput
from wiretap.recording.jsonload import loads
from wiretap.recording.migrate import migrate
from wiretap.replay.volatile import Volatile

LENGTH_BITS = 29
_LENGTH = (1 << LENGTH_BITS) - 1
_CHECK = 0xFFFFFFFF


def place_of(offset: int, line: bytes) -> int:
    """Where a line is, to read it back: ``(offset << LENGTH_BITS | length) << 32 | crc32(line)``. Lines are
    under 256 MiB; the CRC tells a line rewritten in place at the same size from the one that was read."""
    return (offset << LENGTH_BITS | len(line)) << 32 | zlib.crc32(line)


class RecordingChanged(BadInput):
    pass


class Source:
    def __init__(self, file: IO[bytes], path: Path, version: int, volatile: Volatile) -> None:
        self.path = path
        self.version = version
        self.volatile = volatile
        """How the script's recorded requests are normalized for matching."""
        # Its own descriptor of the same file: the recording may be renamed or replaced meanwhile.
        self._fd = os.dup(file.fileno())
        weakref.finalize(self, os.close, self._fd)
        self.reads = 0
        """How many messages were read back (for tests)."""

    def message(self, place: int) -> dict[str, Any]:
        """The message (``msg``) of the event whose line is at ``place``."""
        self.reads += 1
        where = place >> 32
        line = os.pread(self._fd, where & _LENGTH, where >> LENGTH_BITS)
        try:
            event = loads(line) if zlib.crc32(line) == place & _CHECK else None
        except (ValueError, RecursionError):
            event = None
        message = migrate(event, self.version).get("msg") if isinstance(event, dict) else None
        if not isinstance(message, dict):
            raise RecordingChanged(f"{self.path}: the recording changed while it was replayed")
        return message
