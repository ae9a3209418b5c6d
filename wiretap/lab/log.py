"""The own log of a lab server or agent: one JSON line per event, with wall and monotonic nanoseconds,
in a file created 0600."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import IO, Any


class LabLog:
    def __init__(self, path: Path | None) -> None:
        self._file: IO[str] | None = None
        if path is not None:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            self._file = os.fdopen(descriptor, "w")
        self.requests = 0

    def write(self, stamps: tuple[int, int] | None = None, **entry: Any) -> None:
        """One line; ``stamps`` (wall, monotonic ns) when the moment it records came earlier than now."""
        if self._file is not None:
            wall, mono = stamps or (time.time_ns(), time.monotonic_ns())
            stamped = {"wall_ns": wall, "mono_ns": mono, **entry}
            self._file.write(json.dumps(stamped, separators=(",", ":")) + "\n")
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
