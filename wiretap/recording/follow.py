"""Following a recording that is still being written: the header once its line is whole, then complete
lines only, as they land. The one tail of a growing recording; ``show --follow`` and session views use it."""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from wiretap.recording.reader import RecordingReader

POLL_SECONDS = 0.1


def complete_lines(file: IO[bytes], limit: int | None = None) -> list[bytes]:
    """The complete lines written so far from where ``file`` stands (``limit`` at most); a partial last
    line stays unread."""
    lines: list[bytes] = []
    while limit is None or len(lines) < limit:
        at = file.tell()
        line = file.readline()
        if not line.endswith(b"\n"):
            file.seek(at)
            return lines
        lines.append(line)
    return lines


def tail_lines(file: IO[bytes], *, stop: Callable[[], bool], poll: float = POLL_SECONDS) -> Iterator[bytes]:
    """Yield each complete line, waiting for more at the end of the file until ``stop()`` is true; then
    the partial last line, if the writer left one."""
    while True:
        lines = complete_lines(file)
        yield from lines
        if lines:
            continue
        if stop():
            if rest := file.read():
                yield rest
            return
        time.sleep(poll)


def open_if_started(path: Path) -> RecordingReader | None:
    """The recording once its header line is complete; None while it is not (or the file is not there yet)."""
    try:
        file = path.open("rb")
    except FileNotFoundError:
        return None
    first = file.readline()
    if not first.endswith(b"\n"):
        file.close()
        return None
    try:
        return RecordingReader(file, path, first)
    except BaseException:
        file.close()
        raise


def wait_for_header(path: Path, *, poll: float = POLL_SECONDS) -> RecordingReader:
    """A recording that is about to be written: wait until its header line is complete."""
    if not path.exists():
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path))
    while (reader := open_if_started(path)) is None:
        time.sleep(poll)
    return reader
