"""The recorder: transports hand it stamped bytes, and a thread of its own turns them into events.

Transports call ``data()`` as bytes pass, so the forwarding path pays for one clock read and one
queue put; framing, parsing, redaction and disk writes happen on the recorder's thread.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections.abc import Hashable, Iterable
from typing import IO, Any

from wiretap.recording.events import Header, Kind
from wiretap.recording.streams import Recorded, RecordStream
from wiretap.recording.writer import RecordingWriter, encode_event

_STOP = object()
_OPEN = object()
_BATCH = 256
_POLL_MIN = 0.001
_POLL_MAX = 0.01
"""An idle recorder looks at its queue at least this often: what was seen is on disk within 10 ms."""
_YIELD_AFTER = 0.0005
"""Seconds of recording work between giving the GIL up for a moment: a flood is recorded without starving
the pumps. By time, not by event count: small HTTP events (nine an exchange) made a count-based yield hand
the GIL back and forth one to two times per exchange."""
_WAKE_BACKLOG = 1 << 20
"""Chunk bytes queued since the recorder last drained after which a pump does wake it: bulk transfers
are not left to pile up in memory for a whole poll interval. Bytes, not queue items: every exchange
queues about nine small items, so an item count woke the recorder once or twice per HTTP exchange."""


class Recorder:
    def __init__(
        self,
        writer: RecordingWriter,
        header: Header,
        *,
        redact: bool = True,
        stderr: IO[str] | None = None,
    ) -> None:
        self.writer = writer
        self.redact = redact
        self._stderr = stderr or sys.stderr
        self._start = time.monotonic()
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        # Reentrant: a signal handler on the main thread may record while the main thread records.
        self._lock = threading.RLock()
        self._streams: dict[Hashable, RecordStream] = {}
        self._last_t = 0.0
        # The monotonic origin lets recordings made side by side (a session) share one clock.
        writer.add(
            0.0,
            encode_event(
                {
                    **header.to_dict(),
                    "monotonic_origin": round(self._start, 6),
                    "wall_origin_ns": time.time_ns() - round((time.monotonic() - self._start) * 1e9),
                }
            ),
        )
        writer.flush()
        self._wake = threading.Event()
        self._backlog = 0  # a hint for waking the recorder early, reset (without the lock) as it drains
        self._thread = threading.Thread(target=self._run, name="wiretap-recorder", daemon=True)
        self._thread.start()

    def now(self) -> float:
        return time.monotonic() - self._start

    def open(self, key: Hashable, stream: RecordStream) -> None:
        """Route the bytes of ``key`` to ``stream`` from now on."""
        self._queue.put((0.0, _OPEN, (key, stream)))

    def data(self, key: Hashable, chunk: bytes) -> None:
        """Bytes passing on stream ``key``, stamped now."""
        with self._lock:
            self._queue.put((time.monotonic() - self._start, key, chunk))
            self._backlog += len(chunk)
            if self._backlog > _WAKE_BACKLOG and not self._wake.is_set():
                self._wake.set()

    def closed(self, key: Hashable) -> None:
        """End of stream ``key``."""
        with self._lock:
            self._queue.put((time.monotonic() - self._start, key, None))

    def event(self, kind: Kind, **fields: Any) -> None:
        with self._lock:
            self._queue.put((self.now(), kind, fields))

    def close(self, **summary: Any) -> None:
        """Record everything still queued, then the end event, and close the file."""
        self._queue.put(_STOP)
        self._wake.set()
        self._thread.join()
        self.writer.close({"t": round(self.now(), 6), "kind": Kind.END.value, **summary})

    def _run(self) -> None:
        # Poll on a timer rather than block in get(): a pump's put() then does not wake this thread,
        # which would take the GIL from the pumps between a request and its reply; it works in the
        # gaps, up to _BATCH events per file write. Only a backlog or close() wakes it early. Each
        # item is let go once handled, so queued chunks are not kept alive while a frame is parsed.
        get_nowait, wake = self._queue.get_nowait, self._wake
        idle = _POLL_MIN
        clock = time.perf_counter
        while True:
            handled = 0
            yield_at = clock() + _YIELD_AFTER
            try:
                while handled < _BATCH:
                    item = get_nowait()
                    if item is _STOP:
                        self.writer.flush()
                        return
                    try:
                        self._handle(*item)
                    except Exception as exc:  # a recorder bug must not end the recording
                        self._internal_error(exc)
                    handled += 1
                    del item
                    if clock() > yield_at:
                        time.sleep(0)  # hand the GIL to a pump that is waiting for it
                        yield_at = clock() + _YIELD_AFTER
            except queue.Empty:
                pass
            if handled:
                self._backlog = 0
                self.writer.flush()
                idle = _POLL_MIN
            else:
                wake.wait(idle)
                wake.clear()
                idle = min(idle * 2, _POLL_MAX)

    def _handle(self, t: float, what: Any, payload: Any) -> None:
        if what is _OPEN:
            key, stream = payload
            self._streams[key] = stream
            return
        t = self._last_t = round(t, 6)
        stream = self._streams.get(what)
        if stream is None:
            self._write_all([({"t": t, "kind": Kind(what).value, **payload}, None)])
        elif payload is None:
            self._write_all(stream.close(t))
            del self._streams[what]
        else:
            self._write_all(stream.feed(t, payload))

    def _write_all(self, recorded: Iterable[Recorded]) -> None:
        for fields, msg_bytes in recorded:
            self.writer.add(fields["t"], encode_event(fields, msg_bytes))

    def _internal_error(self, exc: Exception) -> None:
        print(f"wiretap: internal recorder error: {exc!r}", file=self._stderr, flush=True)
        fields = {"t": self._last_t, "kind": Kind.ERROR.value, "error": "recorder", "message": repr(exc)}
        self.writer.add(self._last_t, encode_event(fields))
