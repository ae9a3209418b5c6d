"""Timeline rows of recordings and sessions, each with the recording line it came from.

Rows are ``analysis.timeline`` rows (its pairing and summaries), filtered by ``render.filters``. A
recording made with ``--no-redact`` (its header says ``"redacted": false``) is redacted here, event by
event, before anything is matched or returned.
"""

from __future__ import annotations

import contextlib
import heapq
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from wiretap.analysis.timeline import Pairing, Row, row_for
from wiretap.mcp.protocol import ToolError
from wiretap.recording.events import Event
from wiretap.recording.folders import SessionFolder, is_session, open_session
from wiretap.recording.reader import RecordingReader, open_recording
from wiretap.wire.redact import redact_json

Json = dict[str, Any]


@dataclass
class Located:
    row: Row
    recording: Path
    line: int
    """The event's line in its recording (the header is line 1)."""
    index: int
    """The event's place among the recording's events (0-based, the header not counted)."""


@dataclass
class Reading:
    """What was read, for the result to say: recordings redacted here, lines skipped, missing files."""

    redacted_here: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def note_reader(self, reader: RecordingReader) -> None:
        if reader.skipped:
            self.notes.append(f"{reader.path.name}: {reader.skipped.describe()}")
        if not reader.completion.complete:
            self.notes.append(reader.completion.describe())


def unredacted(header: Event) -> bool:
    return header.get("redacted") is False


def located_rows(reader: RecordingReader, reading: Reading, server: str, offset: float = 0.0) -> Iterator[Located]:
    redacting = unredacted(reader.header)
    if redacting:
        reading.redacted_here.append(reader.path)
    pairing = Pairing()
    for index, event in enumerate(reader.events()):
        if redacting:
            event = redact_json(event)[0]
        row = row_for(event, pairing)
        yield Located(replace(row, t=round(row.t + offset, 6), server=server), reader.path, reader.line_no, index)
    reading.note_reader(reader)


@contextlib.contextmanager
def rows_of(path: Path, server: str | None, reading: Reading) -> Iterator[Iterator[Located]]:
    """The rows of a recording, or of a session's recordings (one server's with ``server``) on its clock."""
    with contextlib.ExitStack() as stack:
        if path.is_dir():
            yield _session_rows(stack, _session(path), server, reading)
            return
        reader = stack.enter_context(open_recording(path, wait=0))
        name = str(reader.header.get("name", ""))
        if server is not None and server != name:
            raise ToolError(f"{path.name}: a recording of {name!r}, not of {server!r}")
        yield located_rows(reader, reading, name)


def _session(path: Path) -> SessionFolder:
    if not is_session(path):
        raise ToolError(f"{path.name}: a folder, but not a wiretap session (no manifest.json)")
    return open_session(path)


def _session_rows(
    stack: contextlib.ExitStack, session: SessionFolder, server: str | None, reading: Reading
) -> Iterator[Located]:
    streams = []
    for info, file in session.recordings_of(server):
        if not file.exists():
            reading.notes.append(f"{info.get('name')}: no recording ({file.name} was never started)")
            continue
        reader = stack.enter_context(open_recording(file, wait=0))
        offset = session.clock_offset(reader.header)
        streams.append(located_rows(reader, reading, str(info.get("name")), offset))
    return heapq.merge(*streams, key=lambda located: located.row.t)


def row_json(located: Located, shown: str) -> Json:
    row = located.row
    item: Json = {
        "t": row.t,
        "server": row.server,
        "lane": row.lane,
        "title": row.title,
        "summary": row.summary,
        "recording": shown,
        "line": located.line,
    }
    if row.method is not None:
        item["method"] = row.method
    if row.id is not None:
        item["id"] = row.id
    if row.latency is not None:
        item["latency"] = round(row.latency, 6)
    if row.error:
        item["error"] = True
    if row.where:
        item["where"] = row.where
    return item
