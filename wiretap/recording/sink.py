"""The recorder process: reads a relay's records from a pipe and writes the recording.

It runs apart from the relay, so it outlives it: when the relay is killed, it still drains what
the kernel holds, writes an ``end`` event saying the relay died, and kills the server's process
group (the server must not outlive its tap). Signals meant for the relay's process group do not
reach it; it ends when the pipe does.

A reader thread keeps the pipe empty into a bounded inbox (``INBOX_LIMIT``): only when the inbox is
full does the pipe fill and the relay wait (``--on-overload block``) or drop (``drop``).

The recorder records in the traffic's pauses. Its CPU competes with the relay and the peers for the
machine's cores, and a burst of work in the middle of a request/response exchange is a latency tail
for the traffic (``bench/`` measures the round trip's tail).
So what arrives is held until the traffic has paused for ``QUIET`` seconds, and never longer than
``HOLD_AT_MOST`` seconds or past ``HOLD_AT_MOST_BYTES``: a relay that stops (or is killed) is
recorded at once, and a flood is recorded while it flows.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

import msgspec

from wiretap.recording import memory
from wiretap.recording.channel import Op, Record, RecordDecoder, decode_body
from wiretap.recording.event_types import AnyEvent, EndEvent, ErrorEvent
from wiretap.recording.events import Kind
from wiretap.recording.framings import make_stream
from wiretap.recording.precheck_build import build_precheck_apart
from wiretap.recording.spec import StreamSpec
from wiretap.recording.streams import Lines, Output, RecordStream, body_message
from wiretap.recording.writer import RecordingWriter, encode_event
from wiretap.wire.http.encoding import Decompressor

READ_SIZE = 64 << 10
"""Small enough that the relay waits at most one read's worth of recording when the inbox is full."""
FLUSH_AT = 1 << 20
STDERR_GRACE = 1.0
"""Seconds after the relay's goodbye that a recording failure can still be reported on its stderr."""
LITTLE = 64 << 10
POOL_FOR = 0.002
INBOX_LIMIT = 64 << 20
"""Bytes read from the pipe but not yet recorded, at most: the recorder's share of the memory bound."""
QUIET = 0.005
"""A pause in the traffic this long (longer than ``POOL_FOR``: the reader's own rhythm) is the
recorder's moment to record what it holds."""
HOLD_AT_MOST = 0.25
"""Seconds a chunk waits for a pause at most: what ``show --follow`` can lag behind a busy stream."""
HOLD_AT_MOST_BYTES = 8 << 20
"""Bytes held at most: beyond them a burst is recorded while it lasts (the memory bound stays ``INBOX_LIMIT``)."""


def hold_for(now: float, *, oldest: float, last: float, size: int, eof: bool) -> float:
    """How much longer the chunks read so far wait for a pause in the traffic (0: record them now).

    ``oldest`` and ``last`` are when the oldest and the latest of them arrived, ``size`` their bytes,
    ``eof`` whether the pipe has ended (the relay is gone: nothing is held any more)."""
    if eof or size >= HOLD_AT_MOST_BYTES:
        return 0.0
    return max(0.0, min(last + QUIET, oldest + HOLD_AT_MOST) - now)


class Inbox:
    """The pipe, read on a thread of its own into a bounded queue of chunks, handed out in the pauses."""

    def __init__(self, fd: int, limit: int = INBOX_LIMIT) -> None:
        self._fd = fd
        self._limit = limit
        self._chunks: deque[tuple[float, bytes]] = deque()
        self._size = 0
        self._eof = False
        self._last_arrival = 0.0
        self._cond = threading.Condition()
        threading.Thread(target=self._read, name="wiretap-inbox", daemon=True).start()

    def _read(self) -> None:
        while True:
            with self._cond:
                while self._size >= self._limit:
                    self._cond.wait()
            try:
                data = os.read(self._fd, READ_SIZE)
            except OSError:
                data = b""
            arrived = time.monotonic()
            if 0 < len(data) < LITTLE:
                # A trickle: let it pool in the pipe for a moment. A reader blocked in read() is woken by
                # every write, which costs the relay a wake-up (and a core switch) per record.
                time.sleep(POOL_FOR)
            with self._cond:
                if not data:
                    self._eof = True
                    self._cond.notify_all()
                    return
                # A chunk that only prolongs a hold wakes nobody: the taker looks again when its wait ends.
                wake = not self._chunks or self._size < HOLD_AT_MOST_BYTES <= self._size + len(data)
                self._chunks.append((arrived, data))
                self._size += len(data)
                self._last_arrival = arrived
                if wake:
                    self._cond.notify_all()

    def _hold_for(self, now: float) -> float:
        """Called with the lock held, with chunks in the inbox."""
        return hold_for(now, oldest=self._chunks[0][0], last=self._last_arrival, size=self._size, eof=self._eof)

    def take(self) -> bytes | None:
        """The next chunk read, once it is time to record it; None at the end of the pipe."""
        with self._cond:
            while True:
                if not self._chunks:
                    if self._eof:
                        return None
                    self._cond.wait()
                    continue
                hold = self._hold_for(time.monotonic())
                if hold <= 0:
                    break
                self._cond.wait(hold)
            _, data = self._chunks.popleft()
            self._size -= len(data)
            self._cond.notify_all()
            return data

    def ready(self) -> bool:
        """Whether ``take()`` would return at once with a chunk."""
        with self._cond:
            return bool(self._chunks) and self._hold_for(time.monotonic()) <= 0


class Sink:
    """Turns records into events in the file."""

    _decode_spec = staticmethod(msgspec.json.Decoder(dict[str, Any]).decode)

    def __init__(self, writer: RecordingWriter) -> None:
        self.writer = writer
        self.redact = True
        self._streams: dict[int, RecordStream] = {}
        self._guard: int | None = None
        self._last_t = 0.0
        self.dropped: dict[str, int] = {"events": 0, "messages": 0, "bytes": 0}
        self.summary: dict[str, Any] | None = None

    def handle(self, record: Record) -> None:
        op, key, t = record.op, record.key, round(record.t, 6)
        if op is Op.DATA:
            stream = self._streams.get(key)
            if stream is not None:
                self._write_all(stream.feed(t, record.payload))
        elif op is Op.EVENT:
            payload = record.payload
            if payload.startswith(b'{"kind":') and payload.endswith(b"}"):
                # The relay's JSON (compact, ensure_ascii=False: what encode_event writes) with the stamp in
                # front: the line encode_event({"t": t, **fields}) gives, without parsing and encoding it again.
                self.writer.add(t, [b'{"t":' + float.__repr__(t).encode() + b"," + payload[1:] + b"\n"])
            else:
                self._write_all([(cast(AnyEvent, {"t": t, **record.json()}), None)])  # (the relay's fields)
        elif op is Op.OPEN:
            spec = StreamSpec(**record.json())
            self._streams[key] = make_stream(spec, redact=self.redact)
        elif op is Op.BODY:
            spec_json, body = decode_body(record.payload)
            spec = StreamSpec(**self._decode_spec(spec_json))
            if spec.framing == "body" and Decompressor(spec.encoding).identity:  # (what its BodyStream would do)
                self._write_all(body_message(t, spec.stream_base, body, redact=self.redact))
            else:
                stream = make_stream(spec, redact=self.redact)
                self._write_all(stream.feed(t, body))
                self._write_all(stream.close(t))
                self.dropped["messages"] += stream.lost
        elif op is Op.CLOSED:
            stream = self._streams.pop(key, None)
            if stream is not None:
                self._write_all(stream.close(t))
                self.dropped["messages"] += stream.lost
        elif op is Op.GAP:
            self._gap(t, record.json())
        elif op is Op.HEADER:
            header = record.json()
            self.redact = bool(header.get("redacted", True))
            self.writer.add(0.0, encode_event(header))
            self.writer.cap(int(header.get("max_size") or 0))  # (the header itself is always stored)
        elif op is Op.GUARD:
            self._guard = key
        elif op is Op.CLOSE:
            self.summary = record.json()
            if "gap" in self.summary:
                self._gap(t, self.summary.pop("gap"))
        self._last_t = max(self._last_t, t)

    def _gap(self, t: float, gap: dict[str, Any]) -> None:
        for key_text, counts in gap["streams"].items():
            stream = self._streams.get(int(key_text))
            if stream is not None:
                stream.gap(t, ends_mid_frame=counts["ends_mid_frame"])
            self.dropped["messages"] += counts["lines"]
            self.dropped["bytes"] += counts["bytes"]
        self.dropped["events"] += gap["events"]
        fields: ErrorEvent = {
            "t": t,
            "kind": Kind.ERROR.value,
            "error": "recording_gap",
            "message": "the recorder could not keep up (--on-overload drop): "
            f"{gap['bytes']} byte(s) in {gap['chunks']} chunk(s) and {gap['events']} event(s) were not recorded",
            "since": gap["since"],
            "bytes": gap["bytes"],
            "chunks": gap["chunks"],
            "lines": gap["lines"],
            "events": gap["events"],
        }
        self.writer.add(t, encode_event(fields))

    def _write_all(self, recorded: Iterable[Output]) -> None:
        for item in recorded:
            if type(item) is Lines:
                self.writer.add(item.t, item.pieces, events=item.count)
            else:
                fields, msg_bytes = item
                self.writer.add(fields["t"], encode_event(fields, msg_bytes))

    def record_safely(self, record: Record) -> None:
        try:
            self.handle(record)
        except Exception as exc:
            self.internal_error(exc)

    def internal_error(self, exc: BaseException) -> None:
        fields: ErrorEvent = {"t": self._last_t, "kind": Kind.ERROR.value, "error": "recorder", "message": repr(exc)}
        self.writer.add(self._last_t, encode_event(fields))

    def finish(self) -> None:
        """The pipe ended: write the end event (and, if the relay died, what its open streams held)."""
        summary = self.summary
        if summary is None:
            summary = {"ended": "relay_died", "message": "the relay ended without closing the recording (killed?)"}
            self._kill_guarded_group()
            for stream in self._streams.values():  # half a line that passed is still recorded
                with contextlib.suppress(Exception):
                    self._write_all(r for r in stream.close(self._last_t) if r[0]["kind"] != Kind.EOF.value)
        self.dropped["messages"] += sum(stream.lost for stream in self._streams.values())
        lost_events = self.dropped["events"] + self.dropped["messages"]
        # (the summary is the relay's: ``ended``, and ``signals`` or ``message``)
        end = cast(EndEvent, {"t": round(self._last_t, 6), "kind": Kind.END.value, **summary})
        end["recorder_max_rss"] = _max_rss()
        if self.dropped["bytes"] or lost_events:
            end["dropped"] = dict(self.dropped)
        self.writer.close(end, lost_elsewhere=lost_events)

    def _kill_guarded_group(self) -> None:
        if self._guard:
            with contextlib.suppress(OSError):
                os.killpg(self._guard, signal.SIGKILL)


def _max_rss() -> int:
    """This process's peak resident memory in bytes (the kernel's figure)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


class Control:
    """The relay's goodbye (a CLOSE record), read on a thread as soon as it comes. Soon after it the
    recorder lets go of the relay's stderr (at once if it is done by then), so that whoever reads that
    stderr sees it end with the relay, not with a backlog being recorded."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self.data = b""
        self.finished = threading.Event()
        self._read_all = threading.Event()
        self._thread = threading.Thread(target=self._read, name="wiretap-control", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        with contextlib.suppress(OSError):
            while chunk := os.read(self._fd, 1 << 16):
                self.data += chunk
        self._read_all.set()
        if not self.finished.wait(STDERR_GRACE):
            _release_stderr()

    def records(self) -> list[Record]:
        self._read_all.wait()
        return list(RecordDecoder().feed(self.data))


def run(in_fd: int, control_fd: int, out_fd: int, path: Path) -> None:
    writer = RecordingWriter(out_fd, path)
    sink, decoder, control, inbox = Sink(writer), RecordDecoder(), Control(control_fd), Inbox(in_fd)
    while (data := inbox.take()) is not None:
        for record in decoder.feed(data):
            sink.record_safely(record)
        del data
        if writer.pending_size > FLUSH_AT or not inbox.ready():
            writer.flush()
    for record in control.records():
        sink.record_safely(record)
    sink.finish()
    control.finished.set()


def _release_stderr() -> None:
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.close(null)


def main() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_IGN)
    memory.keep_buffers()
    build_precheck_apart()  # (before run() starts threads)
    out_fd = int(sys.argv[3])
    # The recording's lock (``writer.create_private``) says when its writers are gone: held on a copy of
    # the descriptor, it is let go by this process's exit itself, not when the file is closed before it.
    os.dup(out_fd)
    run(int(sys.argv[1]), int(sys.argv[2]), out_fd, Path(sys.argv[4]))
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    os._exit(0)  # the file is complete: no interpreter teardown between that and the exit


if __name__ == "__main__":
    main()
