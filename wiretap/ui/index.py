"""One recording followed as it grows: byte offsets and a few columns per event, never the events.

Enough to filter and to pair requests with responses; a row's text is rebuilt from its line on demand.
"""

from __future__ import annotations

import json
from array import array
from pathlib import Path
from typing import IO, Any

from wiretap.analysis.timeline import ERR, IN, LIFE, OUT, Pairing, Row, row_for
from wiretap.recording.event_types import MessageEvent, typed
from wiretap.recording.events import Direction, Event
from wiretap.recording.follow import open_if_started
from wiretap.recording.migrate import migrate
from wiretap.wire import jsonrpc

LANES = (IN, OUT, LIFE, ERR)
CHUNK = 1 << 18
"""Bytes read per step, so that a large recording is indexed without holding the loop."""
_LANE_OF = {Direction.C2S.value: 0, Direction.S2C.value: 1}
_DECODE = json.JSONDecoder().decode


class RecordingIndex:
    """Row ``n`` of a recording: where its line starts, its time, lane, error flag, method and partner."""

    def __init__(self, path: Path, server: int, name: str) -> None:
        self.path = path
        self.server = server
        self.name = name
        self.header: Event | None = None
        self.version = 1
        self.offsets = array("q")
        self.times = array("d")
        self.lanes = array("b")
        self.errors = array("b")
        self.methods = array("i")
        self.pairs = array("q")
        """The partner row (request ↔ response) in this recording, or -1."""
        self.positions = array("q")
        """Where each row sits in the view's merged order (set by the source)."""
        self.method_names: list[str] = []
        self._method_ids: dict[str, int] = {}
        self._open: jsonrpc.Pairing[int] = jsonrpc.Pairing()
        self._file: IO[bytes] | None = None
        self._lookup: IO[bytes] | None = None
        self._base = 0
        """Where the unfinished line in ``_partial`` starts."""
        self._partial = b""
        self.skipped = 0

    def __len__(self) -> int:
        return len(self.offsets)

    @property
    def origin(self) -> float | None:
        origin = (self.header or {}).get("monotonic_origin")
        return float(origin) if isinstance(origin, int | float) else None

    def close(self) -> None:
        for file in (self._file, self._lookup):
            if file is not None:
                file.close()

    def poll(self, budget: int = CHUNK) -> int:
        """Index what was appended since the last call (at most ``budget`` bytes); return the rows added."""
        if self._file is None and not self._open_file():
            return 0
        assert self._file is not None
        data = self._file.read(budget)
        if not data:
            return 0
        before, start = len(self), self._base
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            self._add(line, start)
            start += len(line) + 1
        self._base = start
        return len(self) - before

    def _open_file(self) -> bool:
        reader = open_if_started(self.path)
        if reader is None:
            return False
        self.header, self.version = reader.header, reader.version
        self._file, self._base = reader.file, reader.file.tell()
        return True

    def _method_id(self, method: str) -> int:
        found = self._method_ids.get(method)
        if found is None:
            found = self._method_ids[method] = len(self.method_names)
            self.method_names.append(method)
        return found

    def _add(self, line: bytes, offset: int) -> None:
        try:
            event = _DECODE(line.decode())
        except (ValueError, RecursionError):
            self.skipped += int(bool(line.strip()))
            return
        if not isinstance(event, dict) or not isinstance(event.get("t"), int | float) or "kind" not in event:
            self.skipped += 1
            return
        row = len(self)
        lane, error, method, pair = self._classify(event, row)
        self.offsets.append(offset)
        self.times.append(float(event["t"]))
        self.lanes.append(lane)
        self.errors.append(error)
        self.methods.append(self._method_id(method) if method is not None else -1)
        self.pairs.append(pair)
        if pair >= 0:
            self.pairs[pair] = row

    def _classify(self, recorded: Event, row: int) -> tuple[int, int, str | None, int]:
        event = typed(recorded)
        if event["kind"] == "message":
            return self._message(event, row)
        if event["kind"] == "stderr":
            return 3, 0, None, -1
        failed = event["kind"] == "error" or (event["kind"] == "http_response" and _int(event.get("status")) >= 500)
        return 2, int(failed), None, -1

    def _message(self, event: MessageEvent, row: int) -> tuple[int, int, str | None, int]:
        direction = str(event.get("dir", ""))
        lane = _LANE_OF.get(direction, 0)
        msg, ex = event.get("msg"), event.get("ex")
        if "rest" in event and isinstance(event["rest"], dict):
            operation = str(event["rest"].get("operation", "REST"))
            if direction == Direction.C2S.value:
                self._request(direction, ("rest", ex), row, ex)
                return lane, 0, operation, -1
            error = isinstance(msg, dict) and "error" in msg
            return lane, int(error), operation, self._response(direction, ("rest", ex), ex)
        if not isinstance(msg, dict):
            return lane, 0, None, -1
        method = msg.get("method")
        if isinstance(method, str):
            if msg.get("id") is not None:
                self._request(direction, msg["id"], row, ex)
            return lane, 0, method, -1
        pair = self._response(direction, msg.get("id"), ex)
        paired = self.method_names[self.methods[pair]] if pair >= 0 and self.methods[pair] >= 0 else None
        return lane, int("error" in msg), paired, pair

    def _request(self, direction: str, key: Any, row: int, ex: Any) -> None:
        self._open.open(direction, key, row, ex)

    def _response(self, direction: str, key: Any, ex: Any) -> int:
        row = self._open.take(direction, key, ex)
        return -1 if row is None else row

    def event(self, row: int) -> Event:
        """The event of row ``row``, read back from the file."""
        if self._lookup is None:
            self._lookup = self.path.open("rb")
        self._lookup.seek(self.offsets[row])
        event: Event = migrate(json.loads(self._lookup.readline()), self.version)
        return event

    def line(self, row: int) -> bytes:
        if self._lookup is None:
            self._lookup = self.path.open("rb")
        self._lookup.seek(self.offsets[row])
        return self._lookup.readline()

    def row(self, n: int) -> Row:
        """The timeline row of ``n``, as ``wiretap show`` words it (its response paired with its request)."""
        event = self.event(n)
        pairing = Pairing()
        pair = self.pairs[n]
        if pair >= 0 and pair < n and self.methods[pair] >= 0:
            direction = jsonrpc.requester_of(str(event.get("dir", "")))
            msg = event.get("msg")
            key = ("rest", event.get("ex")) if "rest" in event else msg.get("id") if isinstance(msg, dict) else None
            pairing.request(direction, key, self.method_names[self.methods[pair]], self.times[pair], event.get("ex"))
        return row_for(event, pairing)

    @property
    def transport(self) -> str:
        return str((self.header or {}).get("transport", "?"))


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0
