"""Reads recordings back as a stream of events, tolerating what a crash or a disk can leave behind."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from wiretap.errors import BadInput
from wiretap.recording.events import Event, Kind
from wiretap.recording.migrate import UnsupportedFormat, check_format, migrate


class NotARecording(BadInput):
    pass


@dataclass
class Skipped:
    """Lines a reader could not use, so that a renderer can say what it left out."""

    lines: list[tuple[int, str]] = field(default_factory=list)
    truncated_tail: bool = False

    def note(self, line_no: int, why: str) -> None:
        self.lines.append((line_no, why))

    def __bool__(self) -> bool:
        return bool(self.lines)

    def describe(self) -> str:
        parts = [f"line {n}: {why}" for n, why in self.lines[:5]]
        more = f" (and {len(self.lines) - 5} more)" if len(self.lines) > 5 else ""
        return f"skipped {len(self.lines)} unreadable line(s): " + "; ".join(parts) + more


def _parse_header(line: bytes, path: Path) -> Event:
    try:
        header = json.loads(line)
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("kind") != Kind.HEADER.value:
        raise NotARecording(f"{path}: not a wiretap recording (line 1 is not a wiretap header)")
    try:
        check_format(header.get("format"))
    except UnsupportedFormat as exc:
        raise UnsupportedFormat(f"{path}: {exc}") from None
    return header


class RecordingReader:
    """``header`` on open; ``events()`` streams the rest. Unreadable lines are noted in ``skipped``."""

    def __init__(self, file: IO[bytes], path: Path, first_line: bytes | None = None) -> None:
        self.path = path
        self.file = file
        first = file.readline() if first_line is None else first_line
        if not first:
            raise NotARecording(f"{path}: empty file, not a wiretap recording")
        self.header = _parse_header(first, path)
        self.version: int = self.header["format"]
        self.skipped = Skipped()
        self.line_no = 1

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> RecordingReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def events(self, lines: Iterable[bytes] | None = None) -> Iterator[Event]:
        """The events after the header, from the file or from ``lines`` (see follow.tail_lines)."""
        for raw in self.file if lines is None else lines:
            self.line_no += 1
            event = self._parse(raw)
            if event is not None:
                yield migrate(event, self.version)

    def _parse(self, raw: bytes) -> Event | None:
        complete = raw.endswith(b"\n")
        if not raw.strip():
            return None
        try:
            event = json.loads(raw)
        except ValueError:
            if complete:
                self.skipped.note(self.line_no, "not JSON")
            else:
                self.skipped.note(self.line_no, "truncated last line")
                self.skipped.truncated_tail = True
            return None
        if not isinstance(event, dict) or not isinstance(event.get("t"), int | float) or "kind" not in event:
            self.skipped.note(self.line_no, "not an event")
            return None
        return event


def open_recording(path: Path) -> RecordingReader:
    """Open a recording; raise NotARecording (or OSError) with a one-line reason."""
    file = path.open("rb")
    try:
        return RecordingReader(file, path)
    except BaseException:
        file.close()
        raise


def read_all(path: Path) -> tuple[Event, list[Event], Skipped]:
    with open_recording(path) as reader:
        events = list(reader.events())
    return reader.header, events, reader.skipped
