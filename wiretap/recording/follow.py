"""Tailing a recording that is still being written: complete lines only, as they land."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import IO

POLL_SECONDS = 0.1


def tail_lines(file: IO[bytes], *, stop: Callable[[], bool], poll: float = POLL_SECONDS) -> Iterator[bytes]:
    """Yield each complete line, waiting for more at the end of the file until ``stop()`` is true."""
    partial = b""
    while True:
        line = file.readline()
        if line:
            partial += line
            if partial.endswith(b"\n"):
                yield partial
                partial = b""
            continue
        if stop():
            if partial:
                yield partial
            return
        time.sleep(poll)
