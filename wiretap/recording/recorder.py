"""The recorder: transports hand it stamped bytes, and a thread of its own turns them into events.

Transports call ``data()`` after they have forwarded the bytes, so the forwarding path pays for
one clock read and one queue put; framing, parsing, redaction and disk writes happen here.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from typing import IO, Any

from wiretap.framing import LineFramer
from wiretap.messages import record_frame
from wiretap.model import Direction, Event, Header, Kind
from wiretap.recording.writer import RecordingWriter, encode_event
from wiretap.redact import redact_text

STDERR = "stderr"
_STOP = object()
_BATCH = 256


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
        self._framers = {Direction.C2S: LineFramer(), Direction.S2C: LineFramer(), STDERR: LineFramer()}
        self.counts: dict[str, int] = {Direction.C2S: 0, Direction.S2C: 0, STDERR: 0}
        self._last_t = 0.0
        writer.add(0.0, encode_event(header.to_dict()))
        writer.flush()
        self._thread = threading.Thread(target=self._run, name="wiretap-recorder", daemon=True)
        self._thread.start()

    def now(self) -> float:
        return time.monotonic() - self._start

    def data(self, stream: str, chunk: bytes) -> None:
        """Bytes that were just forwarded on ``stream`` (``c2s``, ``s2c`` or ``stderr``)."""
        with self._lock:
            self._queue.put((time.monotonic() - self._start, stream, chunk))

    def closed(self, stream: str) -> None:
        """End of file on ``stream``: flush a last frame that had no newline."""
        with self._lock:
            self._queue.put((time.monotonic() - self._start, stream, None))

    def event(self, kind: Kind, **fields: Any) -> None:
        with self._lock:
            self._queue.put((self.now(), kind, fields))

    def close(self, **summary: Any) -> None:
        """Record everything still queued, then the end event, and close the file."""
        self._queue.put(_STOP)
        self._thread.join()
        self.writer.close({"t": round(self.now(), 6), "kind": Kind.END.value, **summary})

    def _run(self) -> None:
        get, get_nowait = self._queue.get, self._queue.get_nowait
        while True:
            batch = [get()]
            try:
                while len(batch) < _BATCH:
                    batch.append(get_nowait())
            except queue.Empty:
                pass
            for item in batch:
                if item is _STOP:
                    self.writer.flush()
                    return
                try:
                    self._handle(*item)
                except Exception as exc:  # a recorder bug must not end the recording
                    self._internal_error(exc)
            self.writer.flush()

    def _handle(self, t: float, what: Any, payload: Any) -> None:
        t = round(t, 6)
        self._last_t = t
        if what in self._framers:
            framer = self._framers[what]
            if payload is None:
                last = framer.close()
                if last is not None:
                    self._frame(t, what, last, eol=False)
                if what != STDERR:
                    self._write({"t": t, "kind": Kind.EOF.value, "dir": what})
                return
            for frame in framer.feed(payload):
                self._frame(t, what, frame, eol=True)
            return
        self._write({"t": t, "kind": Kind(what).value, **payload})

    def _frame(self, t: float, stream: str, frame: bytes | bytearray, *, eol: bool) -> None:
        self.counts[stream] += 1
        if stream == STDERR:
            text = bytes(frame).decode("utf-8", errors="replace").rstrip("\r")
            self._write(
                {"t": t, "kind": Kind.STDERR.value, "text": redact_text(text)[0] if self.redact else text}
            )
            return
        recorded = record_frame(frame, redact=self.redact)
        fields: Event = {"t": t, "kind": Kind.MESSAGE.value, "dir": stream, **recorded.fields}
        if not eol:
            fields["eol"] = ""
        self._write(fields, recorded.msg_bytes)

    def _write(self, fields: Event, msg_bytes: bytes | bytearray | None = None) -> None:
        self.writer.add(fields["t"], encode_event(fields, msg_bytes))

    def _internal_error(self, exc: Exception) -> None:
        print(f"wiretap: internal recorder error: {exc!r}", file=self._stderr, flush=True)
        self._write({"t": self._last_t, "kind": Kind.ERROR.value, "error": "recorder", "message": repr(exc)})
