"""``wiretap show``: a recording, or a session's recordings on one clock, as a timeline.

Filtered, and optionally followed while it is written.
"""

from __future__ import annotations

import contextlib
import heapq
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO

from wiretap.analysis.timeline import Pairing, Row, row_for, rows
from wiretap.errors import BadInput
from wiretap.recording.events import Event, Kind
from wiretap.recording.folders import SessionFolder, open_session, recordings_of
from wiretap.recording.follow import POLL_SECONDS, complete_lines, open_if_started, tail_lines, wait_for_header
from wiretap.recording.origin import origin_ns
from wiretap.recording.reader import RecordingReader, open_recording
from wiretap.render.console import RowPrinter
from wiretap.render.filters import RowFilter, select

SERVER_WIDTH = 16


def _until_end(events: Iterable[Event]) -> Iterator[Event]:
    for event in events:
        yield event
        if event.get("kind") == Kind.END:
            return


def _on_clock(rows_: Iterable[Row], server: str, offset: float) -> Iterator[Row]:
    """Each row (built for this pass alone, so set in place) with its server, on the session's clock."""
    for row in rows_:
        row.t, row.server = round(row.t + offset, 6), server
        yield row


def show(
    path: Path,
    printer: RowPrinter,
    out: IO[str],
    keep: RowFilter,
    *,
    server: str | None = None,
    follow: bool = False,
    absolute: bool = False,
    notes: IO[str],
) -> int:
    """Print the timeline of a recording or a session folder; return how many rows were shown. ``absolute``:
    times on the wall clock (UTC), from the recordings' one origin (``origin.origin_ns``).

    Raises BadInput (NotARecording, NotASession…) or OSError."""
    clock = _WallClock(printer) if absolute else None
    if path.is_dir():
        session = open_session(path)
        if follow:
            return _follow_session(session, server, printer, out, keep, notes, clock)
        return _show_session(session, server, printer, out, keep, notes, clock)
    return _show_recording(path, printer, out, keep, server=server, follow=follow, notes=notes, clock=clock)


@dataclass
class _WallClock:
    """Sets the printer's wall clock at t = 0 from the first recording read (the session's t = 0 is the
    same moment for every recording of it)."""

    printer: RowPrinter

    def read(self, header: Event, offset: float = 0.0) -> None:
        if self.printer.clock_zero_ns is None:
            self.printer.clock_zero_ns = origin_ns(header) - round(offset * 1e9)


def _show_recording(
    path: Path,
    printer: RowPrinter,
    out: IO[str],
    keep: RowFilter,
    *,
    server: str | None,
    follow: bool,
    notes: IO[str],
    clock: _WallClock | None,
) -> int:
    reader = wait_for_header(path) if follow else open_recording(path)
    with reader:
        if clock is not None:
            clock.read(reader.header)
        name = str(reader.header.get("name", ""))
        if server is not None and server != name:
            raise BadInput(f"{path}: a recording of {name!r}, not of {server!r}")
        printer.where_column = reader.header.get("transport") != "stdio"
        # Following ends with the recording's end event, or with Ctrl-C if the tap never wrote one.
        lines = tail_lines(reader.file, stop=lambda: False) if follow else None
        shown = 0
        for row in select(_on_clock(rows(_until_end(reader.events(lines))), name, 0.0), keep):
            printer.print_row(row)
            shown += 1
            if follow:
                out.flush()
        _note_skipped(reader, notes)
        return shown


def _note_skipped(reader: RecordingReader, notes: IO[str]) -> None:
    if reader.skipped:
        notes.write(f"wiretap: {reader.path}: {reader.skipped.describe()}\n")


def _show_session(
    session: SessionFolder,
    server: str | None,
    printer: RowPrinter,
    out: IO[str],
    keep: RowFilter,
    notes: IO[str],
    clock: _WallClock | None,
) -> int:
    chosen = session.recordings_of(server)
    with contextlib.ExitStack() as stack:
        streams = []
        readers = []
        for info, file in chosen:
            if not file.exists():
                notes.write(f"wiretap: {info.get('name')}: no recording ({file} was never started)\n")
                continue
            reader = stack.enter_context(open_recording(file))
            readers.append(reader)
            offset = session.clock_offset(reader.header)
            if clock is not None:
                clock.read(reader.header, offset)
            streams.append(_on_clock(rows(_until_end(reader.events())), str(info.get("name")), offset))
        if not readers:
            raise BadInput(f"{session.path}: none of this session's recordings exist")
        _columns(printer, [info for info, _ in chosen])
        shown = 0
        for row in select(heapq.merge(*streams, key=lambda r: r.t), keep):
            printer.print_row(row)
            shown += 1
        for reader in readers:
            _note_skipped(reader, notes)
        return shown


def _columns(printer: RowPrinter, servers: list[dict[str, object]]) -> None:
    printer.where_column = any(info.get("transport") != "stdio" for info in servers)
    printer.server_width = min(SERVER_WIDTH, max(len(str(info.get("name"))) for info in servers))


@dataclass
class _Tail:
    """One recording of a session being followed: complete lines as they land, rows on the session clock."""

    reader: RecordingReader
    server: str
    offset: float
    pairing: Pairing = field(default_factory=Pairing)

    def new_rows(self) -> list[Row]:
        found = []
        for event in self.reader.events(complete_lines(self.reader.file)):
            row = row_for(event, self.pairing)
            found.append(replace(row, t=round(row.t + self.offset, 6), server=self.server))
        return found


def _open_tail(session: SessionFolder, info: dict[str, object], file: Path) -> _Tail | None:
    reader = open_if_started(file)
    if reader is None:
        return None
    return _Tail(reader, str(info.get("name")), session.clock_offset(reader.header))


def _follow_session(
    session: SessionFolder,
    server: str | None,
    printer: RowPrinter,
    out: IO[str],
    keep: RowFilter,
    notes: IO[str],
    clock: _WallClock | None,
) -> int:
    """Rows of every recording as they land, until the session has ended and everything written is shown."""
    tails: dict[Path, _Tail] = {}
    shown = 0
    try:
        while True:
            session = open_session(session.path)
            chosen = session.recordings_of(server)
            _columns(printer, [info for info, _ in chosen])
            if session.manifest.get("running") and session.client_started_monotonic is None:
                time.sleep(POLL_SECONDS)  # t = 0 is not known until the client has started
                continue
            for info, first in chosen:
                for file in recordings_of(first):
                    if file not in tails and (tail := _open_tail(session, info, file)) is not None:
                        tails[file] = tail
                        if clock is not None:
                            clock.read(tail.reader.header, tail.offset)
            landed = sorted((row for tail in tails.values() for row in tail.new_rows()), key=lambda r: r.t)
            for row in select(landed, keep):
                printer.print_row(row)
                shown += 1
            out.flush()
            if not session.manifest.get("running") and not landed:
                return shown
            if not landed:
                time.sleep(POLL_SECONDS)
    finally:
        for tail in tails.values():
            _note_skipped(tail.reader, notes)
            tail.reader.close()
