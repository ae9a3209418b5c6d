"""Tailing a recording that is still being written: complete lines only, as they land."""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
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


def is_complete(path: Path) -> bool:
    """True once the recording ends with its ``end`` event: its recorder is done with it."""
    try:
        with path.open("rb") as file:
            size = file.seek(0, os.SEEK_END)
            file.seek(max(0, size - 4096))
            tail = file.read()
    except OSError:
        return False
    if not tail.endswith(b"\n"):
        return False
    last = tail[:-1].rsplit(b"\n", 1)[-1]
    try:
        event = json.loads(last)
    except ValueError:
        return False
    return isinstance(event, dict) and event.get("kind") == "end"


def _wait_until(done: Callable[[], bool], timeout: float, poll: float) -> bool:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(poll)
    return True


def wait_complete(path: Path, timeout: float = 30.0, *, poll: float = 0.01) -> bool:
    """Wait until the recording is complete (see ``is_complete``); False if it is not within ``timeout``."""
    return _wait_until(lambda: is_complete(path), timeout, poll)


def writers_gone(path: Path) -> bool:
    """True once no process holds the recording open for writing (see ``writer.create_private``)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        os.close(fd)
    return True


def wait_released(path: Path, timeout: float = 30.0, *, poll: float = 0.01) -> bool:
    """Wait until the processes that wrote the recording (the relay, its recorder) have let go of it."""
    return _wait_until(lambda: writers_gone(path), timeout, poll)
