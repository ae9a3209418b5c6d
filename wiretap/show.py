"""``wiretap show``: a recording as a timeline, filtered, optionally followed while it is written."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from wiretap.model import Event, Kind
from wiretap.recording.follow import POLL_SECONDS, tail_lines
from wiretap.recording.reader import RecordingReader, open_recording
from wiretap.render.console import RowPrinter
from wiretap.render.filters import RowFilter, select
from wiretap.render.timeline import rows


def _wait_for_header(path: Path) -> RecordingReader:
    """A recording that is about to be written: wait until its header line is complete."""
    while True:
        if path.exists():
            file = path.open("rb")
            first = file.readline()
            if first.endswith(b"\n"):
                return RecordingReader(file, path, first)
            file.close()
        time.sleep(POLL_SECONDS)


def _until_end(events: Iterator[Event]) -> Iterator[Event]:
    for event in events:
        yield event
        if event.get("kind") == Kind.END:
            return


def show(
    path: Path,
    printer: RowPrinter,
    out: IO[str],
    keep: RowFilter,
    *,
    follow: bool = False,
    notes: IO[str],
) -> int:
    """Print the timeline; return how many events were shown. Raises NotARecording/OSError."""
    reader = _wait_for_header(path) if follow else open_recording(path)
    with reader:
        printer.where_column = reader.header.get("transport") != "stdio"
        # Following ends with the recording's end event, or with Ctrl-C if the tap never wrote one.
        lines = tail_lines(reader.file, stop=lambda: False) if follow else None
        shown = 0
        for row in select(rows(_until_end(reader.events(lines))), keep):
            printer.print_row(row)
            shown += 1
            if follow:
                out.flush()
        if reader.skipped:
            notes.write(f"wiretap: {path}: {reader.skipped.describe()}\n")
        return shown
