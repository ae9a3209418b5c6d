"""Reads recordings back as a stream of events, tolerating what a crash or a disk can leave behind."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from wiretap.errors import BadInput
from wiretap.recording.complete import WAIT_FOR_END, Completion, State, await_end, say_if_incomplete
from wiretap.recording.events import FORMAT_VERSION, Event, Kind
from wiretap.recording.jsonload import loads
from wiretap.recording.migrate import UnsupportedFormat, check_format, migrate


class NotARecording(BadInput):
    pass


MAX_LINE = 256 << 20
"""A longer line is skipped (and counted) without being held: a reader's memory stays bounded."""
MAX_DEPTH = 200
"""Events nested deeper are skipped: every analysis may then walk messages recursively."""
_EXAMPLES = 100
_NUMBER = (int, float)


class _Examples(list[tuple[int, str]]):
    """The first few skipped lines; ``len()`` is how many there were in all (millions are not kept)."""

    total = 0

    def __len__(self) -> int:
        return self.total


@dataclass
class Skipped:
    """Lines a reader could not use, so that a renderer can say what it left out."""

    lines: _Examples = field(default_factory=_Examples)
    truncated_tail: bool = False

    def note(self, line_no: int, why: str) -> None:
        if self.lines.total < _EXAMPLES:
            self.lines.append((line_no, why))
        self.lines.total += 1

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
        self.position = len(first) if first_line is None else None
        """Where in the file the next line starts (None when the first line came from elsewhere)."""
        self.line_at: int | None = None
        """Where the line of the event ``events()`` gave last starts in the file, when known."""
        self.line = b""
        """That line, as read."""
        self.completion = Completion(path, State.COMPLETE)
        """Whether the recording was complete when it was opened (``open_recording`` asks)."""

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> RecordingReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def events(self, lines: Iterable[bytes] | None = None) -> Iterator[Event]:
        """The events after the header, from the file or from ``lines`` (see follow.tail_lines)."""
        current = self.version >= FORMAT_VERSION
        for raw in self._lines() if lines is None else lines:
            self.line_no += 1
            event = self._parse(raw)
            if event is not None:
                self.line = raw
                yield event if current else migrate(event, self.version)

    def _lines(self) -> Iterator[bytes]:
        """The file's lines; one over MAX_LINE is read past in pieces and given as empty (noted)."""
        readline = self.file.readline
        while line := readline(MAX_LINE):
            if len(line) == MAX_LINE and not line.endswith(b"\n"):
                del line
                skipped = MAX_LINE
                while (rest := readline(1 << 20)) and not rest.endswith(b"\n"):
                    skipped += len(rest)
                self.skipped.note(self.line_no + 1, f"longer than {MAX_LINE >> 20} MiB")
                if self.position is not None:
                    self.line_at, self.position = self.position, self.position + skipped + len(rest)
                yield b""
                continue
            if self.position is not None:
                self.line_at = self.position
                self.position += len(line)
            yield line

    def _parse(self, raw: bytes) -> Event | None:
        complete = raw.endswith(b"\n")
        if not raw or raw.isspace():
            return None
        try:
            event = loads(raw)
        except RecursionError:
            self.skipped.note(self.line_no, f"nested deeper than {MAX_DEPTH} levels")
            return None
        except ValueError:
            if complete:
                self.skipped.note(self.line_no, "not JSON")
            else:
                self.skipped.note(self.line_no, "truncated last line")
                self.skipped.truncated_tail = True
            return None
        if not isinstance(event, dict) or not isinstance(event.get("t"), _NUMBER) or "kind" not in event:
            self.skipped.note(self.line_no, "not an event")
            return None
        if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and _deeper_than(event, MAX_DEPTH):
            self.skipped.note(self.line_no, f"nested deeper than {MAX_DEPTH} levels")
            return None
        return event


def _deeper_than(value: object, limit: int) -> bool:
    """Without recursion: does ``value`` nest containers more than ``limit`` levels deep?"""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, dict | list))
    return False


def open_recording(path: Path, *, wait: float | None = WAIT_FOR_END) -> RecordingReader:
    """Open a recording once it is complete (``complete.await_end``: ``wait`` seconds at most; None for a
    reader that follows it as it grows); raise NotARecording (or OSError) with a one-line reason. One that
    is not complete is read all the same, and said so on stderr."""
    completion = Completion(path, State.COMPLETE) if wait is None else await_end(path, wait)
    file = path.open("rb")
    try:
        reader = RecordingReader(file, path)
    except BaseException:
        file.close()
        raise
    reader.completion = completion
    say_if_incomplete(completion)
    return reader


def read_all(path: Path) -> tuple[Event, list[Event], Skipped]:
    with open_recording(path) as reader:
        events = list(reader.events())
    return reader.header, events, reader.skipped
