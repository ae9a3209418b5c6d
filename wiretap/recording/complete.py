"""Whether a recording is complete, and waiting until it is: what every reader that copies or judges one
asks before it reads.

A recording is complete once its last line is the ``end`` event. Until then its writers (the relay and
its recorder process) hold a lock on it (``writer.create_private``): a recording that is locked is still
being written, and one that has no ``end`` and no writer left never will be.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import sys
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

WAIT_FOR_END = 10.0
"""Seconds a reader waits for a recorder that is finishing a recording whose relay has exited."""
_POLL = 0.01
_TAIL = 64 << 10


class State(StrEnum):
    COMPLETE = "complete"
    WRITING = "writing"
    """Still being written: its relay is running, or its recorder did not finish within the wait."""
    INCOMPLETE = "incomplete"
    """No ``end`` event, and nothing is writing it any more."""


@dataclass(frozen=True)
class Completion:
    path: Path
    state: State
    why: str = ""

    @property
    def complete(self) -> bool:
        return self.state is State.COMPLETE

    @property
    def summary(self) -> str:
        """``is still being written (why)`` or ``is incomplete: why``."""
        if self.state is State.WRITING:
            return f"is still being written ({self.why})"
        return f"is incomplete: {self.why}"

    def describe(self) -> str:
        """One line for a reader to print when the recording is not complete."""
        if self.state is State.WRITING:
            return f"{self.path} {self.summary}; reading what it holds so far"
        return f"{self.path} {self.summary}"


def is_complete(path: Path) -> bool:
    """True once the recording ends with its ``end`` event: its recorder is done with it."""
    return _is_end(_last_line(path))


def writers_gone(path: Path) -> bool:
    """True once no process holds the recording open for writing (see ``writer.create_private``)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)  # (never waits on a FIFO)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:  # (a file system without locks: nobody can tell)
        return True
    finally:
        os.close(fd)
    return True


def wait_released(path: Path, timeout: float) -> bool:
    """Wait until the processes that wrote the recording (the relay, its recorder) have let go of it."""
    deadline = time.monotonic() + timeout
    while not writers_gone(path):
        if time.monotonic() > deadline:
            return False
        time.sleep(_POLL)
    return True


def await_end(path: Path, timeout: float = WAIT_FOR_END, *, patient: bool = False) -> Completion:
    """Wait until the recording at ``path`` is complete, for ``timeout`` seconds at most.

    A recording whose relay (the header's ``pid``) is still running is being recorded, not finished:
    it is returned as WRITING at once, unless ``patient`` (a caller that has just stopped the relay
    itself, and may see it before its parent has reaped it)."""
    if not _is_file(path):  # a pipe or a device is read as it comes, to its end
        return Completion(path, State.COMPLETE)
    deadline = time.monotonic() + timeout
    while True:
        tail = _last_line(path)
        if _is_end(tail):
            return Completion(path, State.COMPLETE)
        if writers_gone(path):
            tail = _last_line(path)  # (the end may have landed between the two looks)
            if _is_end(tail):
                return Completion(path, State.COMPLETE)
            return Completion(path, State.INCOMPLETE, _why_incomplete(path, tail))
        relay = None if patient else _running_relay(path)
        if relay is not None:
            return Completion(path, State.WRITING, f"its relay, process {relay}, is still running")
        if time.monotonic() >= deadline:
            return Completion(path, State.WRITING, f"its recorder is still finishing it after {timeout:g} s")
        time.sleep(_POLL)


def _is_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def _last_line(path: Path) -> bytes | None:
    """The recording's last line, with its newline if it has one; None when it cannot be read."""
    try:
        with path.open("rb") as file:
            size = file.seek(0, os.SEEK_END)
            file.seek(max(0, size - _TAIL))
            tail = file.read()
    except OSError:
        return None
    body, newline = (tail[:-1], b"\n") if tail.endswith(b"\n") else (tail, b"")
    return body.rsplit(b"\n", 1)[-1] + newline


def _event(line: bytes | None) -> dict[str, object] | None:
    if not line or not line.endswith(b"\n"):
        return None
    with contextlib.suppress(ValueError):
        event = json.loads(line)
        if isinstance(event, dict):
            return event
    return None


def _is_end(line: bytes | None) -> bool:
    event = _event(line)
    return event is not None and event.get("kind") == "end"


def _why_incomplete(path: Path, tail: bytes | None) -> str:
    nobody = "and nothing is writing it any more (its recorder was killed, or the disk filled)"
    if tail is None:
        return "it cannot be read"
    if not tail:
        return f"it is empty {nobody}"
    event = _event(tail)
    if event is None:
        return f"its last line is cut short, {nobody}"
    return f"it has no end event (the last is a {event.get('kind')} event at t={event.get('t')} s), {nobody}"


def _running_relay(path: Path) -> int | None:
    """The pid of the process that relays the traffic this recording holds, if it is still running."""
    try:
        with path.open("rb") as file:
            header = json.loads(file.readline(1 << 20))
    except (OSError, ValueError):
        return None
    pid = header.get("pid") if isinstance(header, dict) else None
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except OSError:  # (it exists, and belongs to another user)
        return pid
    return pid


_said: set[tuple[Path, State]] = set()


def say_if_incomplete(completion: Completion) -> None:
    """A line on stderr when the recording is not complete, for a reader that goes on with what it holds;
    once per recording and state (a command may open one recording several times)."""
    key = (completion.path.resolve(), completion.state)
    if not completion.complete and key not in _said:
        _said.add(key)
        print(f"wiretap: {completion.describe()}", file=sys.stderr, flush=True)
