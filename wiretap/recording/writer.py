"""Appends events to a recording file, a batch per flush, and survives its own failures.

A failed write never reaches the traffic: the writer reports it once, loudly, counts what it could
not write, and marks the gap in the file as soon as the file takes writes again.

It also keeps the file within its cap (``cap.py``): the first event that would take the file past it
is replaced by a ``recording_cap`` error, and what comes after is counted instead of stored.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from wiretap import files
from wiretap.recording.cap import LASTING, TAIL, format_size, kind_of
from wiretap.recording.event_types import Capped, EndEvent, ErrorEvent
from wiretap.recording.events import Kind

Piece = bytes | bytearray


# Built once: json.dumps with non-default options builds a new JSONEncoder on every call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def dumps(fields: Mapping[str, Any]) -> str:
    return _ENCODER.encode(fields)


def encode_event(fields: Mapping[str, Any], msg_bytes: Piece | None = None) -> list[Piece]:
    """The pieces of one JSON line; ``msg_bytes`` (JSON text) is spliced in as ``msg`` unchanged."""
    line = dumps(fields)
    if msg_bytes is None:
        return [(line + "\n").encode()]
    return [(line[:-1] + ',"msg":').encode(), msg_bytes, b"}\n"]


def create_private(path: Path) -> int:
    """Create a new file readable by its owner only and return its descriptor; never clobbers.

    The descriptor holds an exclusive ``flock`` on the file, shared by every process it is passed
    to (the recorder): a reader can tell when the last of them is gone (``complete.writers_gone``)."""
    fd = files.create_private(path, append=True)
    with contextlib.suppress(OSError):  # (a file system without locks: nobody can wait for the writers)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def create_unique(path: Path) -> tuple[int, Path]:
    """Create ``path``, or ``stem.1.jsonl``, ``stem.2.jsonl``… if it exists: never overwrite a recording."""
    candidate = path
    for n in range(1, 10_000):
        try:
            return create_private(candidate), candidate
        except FileExistsError:
            candidate = path.with_name(f"{path.stem}.{n}{path.suffix or '.jsonl'}")
    raise FileExistsError(f"{path}: too many recordings with this name")


def _write_all(fd: int, data: Piece) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


JOIN_UP_TO = 4 << 20
BIG = 1 << 20
UNCAPPED = 1 << 62


def _write_runs(fd: int, pieces: list[Piece]) -> None:
    """Each big piece written by itself, the small ones between them joined."""
    run: list[Piece] = []
    for piece in pieces:
        if len(piece) < BIG:
            run.append(piece)
            continue
        if run:
            _write_all(fd, b"".join(run))
            run = []
        _write_all(fd, piece)
    if run:
        _write_all(fd, b"".join(run))


class RecordingWriter:
    def __init__(self, fd: int, path: Path, *, stderr: IO[str] | None = None) -> None:
        self.path = path
        self._fd = fd
        self._stderr = stderr or sys.stderr
        self._pending: list[Piece] = []
        self._pending_events = 0
        self.pending_size = 0
        """Bytes added since the last flush."""
        self._batch_t = 0.0
        self.written = 0
        self.lost = 0
        self._gap_since: float | None = None
        self.size = 0
        """Bytes written to the file."""
        self.max_size = 0
        self._room = UNCAPPED
        """Bytes the events added from the last flush on may take, all together."""
        self.capped: Capped | None = None
        """What the cap kept out of the file, once it was reached: ``since``, ``messages``, ``events``, ``bytes``."""
        self._tail = 0

    @property
    def opened(self) -> bool:
        """Whether the file was created (``unopenable``: it was not, and nothing is recorded)."""
        return self._fd >= 0

    @classmethod
    def unopenable(cls, path: Path, error: OSError, *, stderr: IO[str] | None = None) -> RecordingWriter:
        """A writer for a file that could not be created: it reports that once and records nothing."""
        writer = cls(-1, path, stderr=stderr)
        writer._batch_t = 0.0
        writer._failed(0, error)
        return writer

    def cap(self, max_size: int) -> None:
        """Store at most ``max_size`` bytes (0: no cap), counting what is already added."""
        self.max_size = max_size
        self._room = max_size - self.size if max_size else UNCAPPED

    def add(self, t: float, pieces: list[Piece], *, events: int = 1) -> None:
        """Queue one event (or ``events`` of them, already encoded); they reach the file at the next flush."""
        size = sum(map(len, pieces))
        if self.pending_size + size > self._room:
            self._over_cap(t, pieces, size, events)
            return
        self._pending.extend(pieces)
        self._pending_events += events
        self.pending_size += size
        self._batch_t = t

    def _queue(self, t: float, pieces: list[Piece], events: int = 1) -> None:
        """``add()`` without the cap."""
        self._pending.extend(pieces)
        self._pending_events += events
        self.pending_size += sum(map(len, pieces))
        self._batch_t = t

    def _over_cap(self, t: float, pieces: list[Piece], size: int, events: int) -> None:
        """Events that do not fit under the cap: a lasting one is stored within ``TAIL``; the rest are counted
        (the ``events`` of one call are all messages or one other event)."""
        if self.capped is None:
            if events > 1:  # a run of messages: those that fit are stored
                pieces, size, events = self._fit(t, pieces, events)
            self._room = -1  # every later event comes here
            reached = self.size + self.pending_size
            self.capped = {"since": t, "messages": 0, "events": 0, "bytes": 0}
            note: ErrorEvent = {
                "t": t,
                "kind": Kind.ERROR.value,
                "error": "recording_cap",
                "message": f"the recording reached its cap (--max-size {format_size(self.max_size)}): the traffic "
                "passes whole and unchanged, but from here on it is counted (in the end event), not stored",
                "since": t,
                "max_size": self.max_size,
                "size": reached,
            }
            line = encode_event(note)
            self._tail += len(line[0])
            self._queue(t, line)
        kind = kind_of(pieces[0])
        if kind in LASTING and self._tail + size <= TAIL:
            self._tail += size
            self._queue(t, pieces, events)
            return
        self.capped["messages" if kind == Kind.MESSAGE.value else "events"] += events
        self.capped["bytes"] += size

    def _fit(self, t: float, pieces: list[Piece], events: int) -> tuple[list[Piece], int, int]:
        """Queue the first of ``events`` encoded events that fit under the cap; return the rest (pieces,
        bytes, events). A piece that ends a line ends an event (a message's own bytes never hold a newline)."""
        room, used, fitted, count = self._room - self.pending_size, 0, 0, 0
        for at, piece in enumerate(pieces):
            used += len(piece)
            if used > room:
                break
            if piece.endswith(b"\n"):
                fitted, count = at + 1, count + 1
        if fitted:
            self._queue(t, pieces[:fitted], count)
        rest = pieces[fitted:]
        return rest, sum(map(len, rest)), events - count

    def flush(self) -> None:
        pending, count, size = self._pending, self._pending_events, self.pending_size
        self._pending, self._pending_events, self.pending_size = [], 0, 0
        if not count:
            return
        try:
            if self._gap_since is not None:
                self._write_gap_marker(self._gap_since)
            if size <= JOIN_UP_TO:
                _write_all(self._fd, b"".join(pending))
            else:  # a big message is written from where it is, not copied into a join
                _write_runs(self._fd, pending)
            self.written += count
            self.size += size
            if self.capped is None and self.max_size:
                self._room = self.max_size - self.size
        except OSError as exc:
            self._failed(count, exc)

    def close(self, summary: EndEvent, *, lost_elsewhere: int = 0) -> None:
        """Write the end event: ``written`` counts the events in the file, ``lost`` all that are not (and
        ``capped`` those of them that the cap kept out)."""
        self.flush()
        lost = self.lost + lost_elsewhere
        if self.capped is not None:
            summary = summary | {"capped": self.capped}
            lost += self.capped["messages"] + self.capped["events"]
        end: EndEvent = {**summary, "written": self.written + 1, "lost": lost}
        self._queue(summary.get("t", 0.0), encode_event(end))
        self.flush()
        if self._fd >= 0:
            try:
                os.close(self._fd)
            except OSError as exc:
                self._failed(0, exc)

    def _failed(self, count: int, exc: OSError) -> None:
        self.lost += count
        if self._gap_since is None:
            self._gap_since = self._batch_t
            print(
                f"wiretap: RECORDING FAILED for {self.path}: {exc.strerror or exc}. "
                "Traffic keeps flowing, but events are not being recorded.",
                file=self._stderr,
                flush=True,
            )

    def _write_gap_marker(self, since: float) -> None:
        marker: ErrorEvent = {
            "t": self._batch_t,
            "kind": Kind.ERROR.value,
            "error": "recording_gap",
            "message": f"{self.lost} event(s) since t={since} could not be written",
            "since": since,
            "lost": self.lost,
        }
        # The leading newline ends any line that a failed write left half-written.
        line = b"\n" + encode_event(marker)[0]
        _write_all(self._fd, line)
        self.size += len(line)
        self._gap_since = None
