"""What one page looks at: a recording or a session's recordings, merged on one clock as they grow."""

from __future__ import annotations

import asyncio
import json
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wiretap.analysis.timeline import Row
from wiretap.recording.folders import MANIFEST, recordings_of
from wiretap.ui.index import LANES, RecordingIndex

FOLLOW_SECONDS = 0.1
"""How often the files are checked for growth: a message shows well within a second."""
MANIFEST_SECONDS = 1.0
SERVER_BITS = 40


class Source:
    """Rows of every recording in one order (by time within each batch read), addressed by position."""

    def __init__(self, path: Path, *, session: bool) -> None:
        self.path = path
        self.session = session
        self.recordings: list[RecordingIndex] = []
        self.order = array("q")
        """(server << SERVER_BITS) | row, per position."""
        self.manifest: dict[str, Any] = {}
        self.changed = asyncio.Condition()
        self.generation = 0
        """Bumped on every growth, for the push stream and the report's debounce."""
        self.stopped = False
        """The server is closing: push streams end."""
        self.catching_up = True
        """Still reading what was written before: the report waits rather than compete with it."""
        self._task: asyncio.Task[None] | None = None
        if not session:
            self.recordings.append(RecordingIndex(path, 0, path.stem))

    @property
    def title(self) -> str:
        return self.path.name

    @property
    def base(self) -> float | None:
        """The monotonic time shown as 0: the session's start, or the first recording's own origin."""
        started = self.manifest.get("started_monotonic")
        if isinstance(started, int | float):
            return float(started)
        origins = [r.origin for r in self.recordings if r.origin is not None]
        return min(origins) if origins else None

    @property
    def client_exited_monotonic(self) -> float | None:
        value = self.manifest.get("client_exited_monotonic")
        return float(value) if isinstance(value, int | float) else None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._follow())

    async def stop(self) -> None:
        self.stopped = True
        await self._notify()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        for recording in self.recordings:
            recording.close()

    def shift(self, recording: RecordingIndex) -> float:
        """What to add to a recording's times: a session's rows are on the session's clock."""
        base, origin = self.base, recording.origin
        return origin - base if self.session and base is not None and origin is not None else 0.0

    def at(self, position: int) -> tuple[RecordingIndex, int]:
        code = self.order[position]
        return self.recordings[code >> SERVER_BITS], code & ((1 << SERVER_BITS) - 1)

    def time(self, position: int) -> float:
        recording, row = self.at(position)
        return recording.times[row] + self.shift(recording)

    async def _follow(self) -> None:
        last_manifest = -MANIFEST_SECONDS
        loop = asyncio.get_running_loop()
        while True:
            if self.session and loop.time() - last_manifest >= MANIFEST_SECONDS:
                self._read_manifest()
                last_manifest = loop.time()
            while self._step():
                self.catching_up = True
                await asyncio.sleep(0)
            self.catching_up = False
            await asyncio.sleep(FOLLOW_SECONDS)

    def _step(self) -> bool:
        """Index one chunk of every recording that grew; append the new rows in time order."""
        batch: list[tuple[float, int]] = []
        for recording in self.recordings:
            first = len(recording)
            try:
                added = recording.poll()
            except (OSError, ValueError):
                continue  # not (yet) a recording, or gone: the others are still followed
            shift = self.shift(recording)
            batch += [
                (recording.times[n] + shift, (recording.server << SERVER_BITS) | n) for n in range(first, first + added)
            ]
        if not batch:
            return False
        batch.sort()
        for _, code in batch:
            recording = self.recordings[code >> SERVER_BITS]
            recording.positions.append(len(self.order))
            self.order.append(code)
        self.generation += 1
        asyncio.get_running_loop().create_task(self._notify())
        return True

    async def _notify(self) -> None:
        async with self.changed:
            self.changed.notify_all()

    def _read_manifest(self) -> None:
        try:
            manifest = json.loads((self.path / MANIFEST).read_text())
        except (OSError, ValueError):
            return
        if not isinstance(manifest, dict):
            return
        self.manifest = manifest
        known = {r.path for r in self.recordings}
        for server in manifest.get("servers", []):
            if not isinstance(server, dict) or not isinstance(server.get("recording"), str):
                continue
            name = str(server.get("name", server["recording"]))
            for file in recordings_of(self.path / Path(server["recording"]).name):
                if file not in known:
                    self.recordings.append(RecordingIndex(file, len(self.recordings), name))
                    known.add(file)

    def servers(self) -> list[dict[str, Any]]:
        return [
            {"server": r.server, "name": r.name, "file": r.path.name, "transport": r.transport, "rows": len(r)}
            for r in self.recordings
        ]

    def rows(self, positions: Iterator[int]) -> list[dict[str, Any]]:
        out = []
        for position in positions:
            recording, n = self.at(position)
            try:
                row = recording.row(n)
            except Exception as exc:  # one row that cannot be worded must not take its window with it
                row = Row(recording.times[n], LANES[recording.lanes[n]], "unreadable", f"{type(exc).__name__}", {})
            pair = recording.pairs[n]
            out.append(
                {
                    "id": position,
                    "t": round(recording.times[n] + self.shift(recording), 6),
                    "server": recording.server,
                    "lane": LANES[recording.lanes[n]],
                    "title": row.title,
                    "summary": row.summary[:400],
                    "where": row.where,
                    "error": bool(recording.errors[n]),
                    "pair": recording.positions[pair] if 0 <= pair < len(recording.positions) else None,
                }
            )
        return out
