"""The live follower: a process of its own that tails the recording(s) wiretap is writing and sends each
call's span as its response lands. The relays never wait for it: it only reads files.

``python -m wiretap.otel.follow recording DIR PID [STARTED]`` follows the recording in DIR whose header
names wiretap's PID; ``... session DIR PID [STARTED]`` follows every recording of a session folder.
STARTED is when wiretap started it (Unix seconds): a follower slow to start must not take the recording it
was started for as an earlier one. It stops when its
stdin ends (wiretap closes it when the traffic is over, or dies) and the files are read to the end.
Settings come in ``WIRETAP_OTLP`` (JSON), so headers holding API keys stay out of the process list.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from wiretap.analysis.model import Report
from wiretap.analysis.report import build_report
from wiretap.otel.endpoint import ENV, Target
from wiretap.otel.mapping import RecordingMapper
from wiretap.otel.metrics import Durations
from wiretap.otel.sender import FLUSH_SECONDS, QUEUE_SPANS, BatchSender
from wiretap.otel.spans import Span, span_id_for
from wiretap.recording.events import Event
from wiretap.recording.folders import SessionFolder, open_session
from wiretap.recording.follow import complete_lines, open_if_started
from wiretap.recording.reader import RecordingReader

POLL_SECONDS = 0.1
SCAN_SECONDS = 0.5
SETTLE_SECONDS = 5.0
"""How long the follower waits, once the traffic is over, for the recorder to write each recording's end."""
STALE_SECONDS = 5.0
LINES_PER_STEP = 2000
"""Lines read from a file at a time: a backlog (a flood, a slow endpoint) is worked through in bounded memory."""


@dataclass
class Tailed:
    path: Path
    file: IO[bytes]
    reader: RecordingReader
    mapper: RecordingMapper
    done: bool = False


class Follower:
    def __init__(
        self,
        folder: Path,
        sender: BatchSender,
        *,
        wanted: Callable[[Event], bool],
        session: bool,
        started: float | None = None,
    ) -> None:
        self.started = time.time() if started is None else started
        self.folder = folder
        self.sender = sender
        self.wanted = wanted
        self.session = session
        self.tailed: dict[Path, Tailed] = {}
        self.ignored: set[Path] = set()
        self.announced: set[Path] = set()
        """Recordings wiretap said it writes (on our stdin): done only once each has been read to its end."""
        self._next_scan = 0.0
        self.durations: Durations | None = None
        """Fed every span offered, when metrics are wanted: sent once the recordings are done."""

    def offer(self, span: Span, *, essential: bool = False) -> None:
        if self.durations is not None:
            self.durations.add_span(span)
        self.sender.offer(span, essential=essential)

    def step(self) -> bool:
        """Read what has landed; True if anything did."""
        if time.monotonic() >= self._next_scan:
            self._scan()
            self._next_scan = time.monotonic() + SCAN_SECONDS
        progressed = False
        for tailed in list(self.tailed.values()):
            progressed |= self._read(tailed)
        return progressed

    def all_done(self) -> bool:
        if any(path not in self.tailed and path not in self.ignored for path in list(self.announced)):
            return False
        return all(tailed.done for tailed in self.tailed.values())

    def finish(self) -> None:
        self._scan()
        for tailed in self.tailed.values():
            while self._read(tailed):
                pass
            if not tailed.done:
                self._end(tailed)
        if self.session and self.tailed:
            self._session_root()

    def _scan(self) -> None:
        if not self.folder.is_dir():
            return
        for path in sorted(self.folder.glob("*.jsonl")):
            if path in self.tailed or path in self.ignored:
                continue
            if not self.session and _older_than(path, self.started - STALE_SECONDS):
                self.ignored.add(path)  # an earlier recording whose writer had the same pid
                continue
            opened = self._open(path)
            if opened is not None:
                self.tailed[path] = opened

    def _open(self, path: Path) -> Tailed | None:
        try:
            reader = open_if_started(path)
        except OSError:
            return None
        except ValueError:
            self.ignored.add(path)
            return None
        if reader is None:
            return None
        if not self.wanted(reader.header):
            reader.close()
            self.ignored.add(path)
            return None
        return Tailed(path, reader.file, reader, self._mapper(reader.header, path))

    def _mapper(self, header: Event, path: Path) -> RecordingMapper:
        if not self.session:
            return RecordingMapper(header)
        trace_id = _session_trace_id(self.folder)
        return RecordingMapper(header, name=path.name, trace_id=trace_id, parent_id=span_id_for(trace_id, "session"))

    def _read(self, tailed: Tailed) -> bool:
        if tailed.done:
            return False
        lines = complete_lines(tailed.file, LINES_PER_STEP)
        for event in tailed.reader.events(lines):
            for span in tailed.mapper.feed(event):
                self.offer(span)
            if event.get("kind") == "end":
                self._end(tailed)
                break
        return bool(lines)

    def _end(self, tailed: Tailed) -> None:
        tailed.done = True
        tailed.file.close()
        try:
            report: Report | None = build_report(tailed.path, client_exited_monotonic=self._client_exit())
        except (OSError, ValueError):
            report = None
        *spans, root = tailed.mapper.finish(report)
        for span in spans:
            self.offer(span)
        root.attributes["wiretap.otlp.dropped_spans"] = self.sender.dropped
        self.offer(root, essential=True)

    def _client_exit(self) -> float | None:
        if not self.session:
            return None
        try:
            return open_session(self.folder).client_exited_monotonic
        except ValueError:
            return None

    def _session_root(self) -> None:
        from wiretap.otel.sources import session_root_span

        try:
            folder = open_session(self.folder)
        except ValueError:
            return
        mappers = [t.mapper for t in self.tailed.values()]
        root = session_root_span(folder, mappers)
        root.attributes["wiretap.otlp.dropped_spans"] = self.sender.dropped
        self.offer(root, essential=True)


def _older_than(path: Path, moment: float) -> bool:
    try:
        return path.stat().st_mtime < moment
    except OSError:
        return True


def _session_trace_id(folder: Path) -> bytes:
    """The session's trace: from its manifest, which wiretap writes before any server starts recording."""
    from wiretap.otel.sources import session_trace_id

    session: SessionFolder | None = None
    for _ in range(50):
        try:
            session = open_session(folder)
            break
        except ValueError:
            time.sleep(POLL_SECONDS)
    return session_trace_id(session.manifest if session else {"folder": folder.name})


def run(
    mode: str,
    folder: Path,
    parent: int,
    settings: dict[str, Any],
    stderr: IO[str] = sys.stderr,
    started: float | None = None,
) -> int:
    target = Target(str(settings["url"]), dict(settings.get("headers") or {}), float(settings.get("timeout") or 10.0))
    capacity = int(settings.get("queue") or QUEUE_SPANS)
    resource = dict(settings.get("resource") or {})
    sender = BatchSender(target, resource, capacity=capacity, stderr=stderr, defer=mode == "session")
    pid = str(parent)
    follower = Follower(
        folder,
        sender,
        wanted=lambda h: mode == "session" or str(h.get("pid")) == pid,
        session=mode == "session",
        started=started,
    )
    if settings.get("metrics"):
        follower.durations = Durations()
    over = threading.Event()
    threading.Thread(target=_until_end_of_input, args=(over, follower.announced), daemon=True).start()
    while not over.is_set() and os.getppid() == parent:
        if not follower.step():
            time.sleep(POLL_SECONDS)
    # The recorder process finishes each recording on its own, even after wiretap was killed: wait for its end.
    settle_by = time.monotonic() + SETTLE_SECONDS
    over.wait(SETTLE_SECONDS)  # (wiretap gone: what it wrote on our stdin is read to its end first)
    while not follower.all_done() and time.monotonic() < settle_by:
        if not follower.step():
            time.sleep(POLL_SECONDS)
    follower.finish()
    unsent = sender.close(float(settings.get("flush") or FLUSH_SECONDS))
    if follower.durations is not None:
        metrics = Target(str(settings["metrics"]), target.headers, target.timeout)
        _send_metrics(metrics, follower.durations, resource, sender)
    for line in sender.deferred:
        print(line, file=stderr, flush=True)
    if sender.dropped or sender.failed or unsent or sender.refused:
        print(
            f"wiretap: otlp: sent {sender.sent} span(s); dropped {sender.dropped} (queue full), "
            f"{sender.failed + unsent} not delivered, {sender.refused} refused by the endpoint",
            file=stderr, flush=True,
        )  # fmt: skip
    return 0


def _send_metrics(target: Target, durations: Durations, resource: dict[str, Any], sender: BatchSender) -> None:
    """Once, at the end: the histograms of everything the follower saw. A problem is said like a span's."""
    from wiretap.otel.push import Unreachable, send_metrics

    try:
        points = send_metrics(target, durations, resource)
    except Unreachable as exc:
        sender.deferred.append(f"wiretap: otlp metrics: {exc}")
        return
    if points.rejected:
        sender.deferred.append(f"wiretap: otlp metrics: the endpoint refused {points.rejected} data point(s)")


def _until_end_of_input(over: threading.Event, announced: set[Path]) -> None:
    """wiretap writes the path of each recording it writes on our stdin, a line each (``live.expect_recording``),
    and closes it when its traffic is over; so does its death."""
    with contextlib.suppress(OSError):
        for line in sys.stdin.buffer:
            if line.endswith(b"\n"):
                announced.add(Path(os.fsdecode(line[:-1])))
    over.set()


def main(argv: list[str]) -> int:
    mode, folder, parent = argv[0], Path(argv[1]), int(argv[2])
    started = float(argv[3]) if len(argv) > 3 else None
    with contextlib.suppress(OSError):
        os.nice(10)  # the relays come first when the CPU is short
    return run(mode, folder, parent, json.loads(os.environ.get(ENV, "{}")), started=started)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
