"""The relay's side of the recorder: stamped bytes go down a pipe to a recorder process of its own.

Transports call ``data()`` as bytes pass, before forwarding them: the forwarding path pays for one
clock read and one ``writev``. Framing, parsing, redaction and disk writes happen in the recorder
process (``sink.py``), on the other core, without this process's GIL; it outlives this process,
so what the kernel holds when the relay is killed still reaches the recording.

When the recorder falls behind, its inbox and then the pipe fill up. Then ``on_overload="block"``
(the default) waits for it, slowing the traffic only at that bound; ``"drop"`` keeps the traffic's
pace and counts exactly what it could not hand over, which the recorder writes as a
``recording_gap`` event. If the recorder dies, traffic flows on and the file says so.

Why one module: ``Recorder`` is the one object every transport holds, and its batching, overload
policy, gap accounting and the wait for the recorder at exit share one pipe and one lock.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, replace
from typing import IO, Any, Literal, Unpack, overload

from wiretap.recording import channel
from wiretap.recording.cap import DEFAULT_MAX_SIZE
from wiretap.recording.channel import Op
from wiretap.recording.event_types import (
    ConnectionFields,
    ErrorFields,
    ExitFields,
    HttpRequestFields,
    HttpResponseFields,
    ListenFields,
    RewriteFields,
    SignalFields,
    SpawnFailedFields,
    SpawnFields,
)
from wiretap.recording.events import Header, Kind
from wiretap.recording.spec import StreamSpec
from wiretap.recording.writer import RecordingWriter, encode_event

_DATA_HEAD, _DATA = channel.HEAD.pack, Op.DATA

PIPE_SIZE = 1 << 20
OVERLOAD_POLICIES = ("block", "drop")
SETTLE_TIMEOUT = 60.0


def stall_after() -> float:
    """Seconds a recorder may take nothing before wiretap stops waiting for it (WIRETAP_RECORDER_STALL_S)."""
    try:
        return float(os.environ.get("WIRETAP_RECORDER_STALL_S", "10"))
    except ValueError:
        return 10.0


def portable() -> bool:
    """True when Linux-only primitives are to be left alone (what macOS gets; set to test that path)."""
    return not sys.platform.startswith("linux") or os.environ.get("WIRETAP_PORTABLE") == "1"


def grow_pipe(fd: int) -> int:
    """Ask for a 1 MiB pipe buffer (Linux); elsewhere the system's default stays. Returns the size."""
    import fcntl

    if portable() or not hasattr(fcntl, "F_SETPIPE_SZ"):
        return 0
    try:
        return fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    except OSError:
        return 0


@dataclass
class _Gap:
    since: float
    size: int = 0
    chunks: int = 0
    events: int = 0

    def __post_init__(self) -> None:
        self.streams: dict[int, dict[str, Any]] = {}

    def add_chunk(self, key: int, chunk: bytes) -> None:
        self.size += len(chunk)
        self.chunks += 1
        counts = self.streams.setdefault(key, {"bytes": 0, "lines": 0, "ends_mid_frame": False})
        counts["bytes"] += len(chunk)
        counts["lines"] += chunk.count(b"\n")
        counts["ends_mid_frame"] = not chunk.endswith(b"\n")

    def to_dict(self) -> dict[str, Any]:
        lines = sum(c["lines"] for c in self.streams.values())
        streams = {str(k): v for k, v in self.streams.items()}
        return {"since": round(self.since, 6), "bytes": self.size, "chunks": self.chunks, "lines": lines,
                "events": self.events, "streams": streams}  # fmt: skip


class Recorder:
    def __init__(
        self,
        writer: RecordingWriter,
        header: Header,
        *,
        redact: bool = True,
        stderr: IO[str] | None = None,
        on_overload: str = "block",
        max_size: int = DEFAULT_MAX_SIZE,
    ) -> None:
        self.writer = writer
        self.redact = redact
        self.drop = on_overload == "drop"
        self._stderr = stderr or sys.stderr
        self._start = time.monotonic()
        origin_ns = time.time_ns()
        # Reentrant: a signal handler on the main thread may record while the main thread records.
        self._lock = threading.RLock()
        self._ids: dict[Hashable, int] = {}
        self._next_id = 1
        self._gap: _Gap | None = None
        self._header: dict[str, Any] = {}
        self._dead = writer._fd < 0
        self._lost_after_death = 0
        self._fd = -1
        self._control = -1
        self._deadline: float | None = None
        self._stalled = False
        self._proc: subprocess.Popen[bytes] | None = None
        self._held: list[tuple[bytes, int, bytes | None]] | None = None
        if not self._dead:
            self._start_sink()
        # t = 0 is the header's start, on the wall clock (``started``, ``wall_origin_ns``) and on the
        # monotonic clock, which lets recordings made side by side (a session) share one clock.
        self._header = {
            **replace(header, started_epoch=origin_ns / 1e9).to_dict(),
            "max_size": max_size or None,  # (a setting of the recorder's: the sink reads it here)
            "monotonic_origin": round(self._start, 6),
            "wall_origin_ns": origin_ns,
        }
        self._send_json(Op.HEADER, 0, 0.0, self._header)

    def _start_sink(self) -> None:
        read_end, self._fd = os.pipe()
        # The goodbye goes down a pipe of its own, always empty until then: it never waits behind a backlog.
        control_read, self._control = os.pipe()
        grow_pipe(self._fd)
        argv = [sys.executable, "-m", "wiretap.recording.sink", str(read_end), str(control_read)]
        argv += [str(self.writer._fd), str(self.writer.path)]
        try:
            # Its own session: a signal for the relay's process group does not stop the recording.
            self._proc = subprocess.Popen(
                argv,
                pass_fds=(read_end, control_read, self.writer._fd),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,  # (never written: its end says the recorder has exited)
                start_new_session=True,
            )
        except OSError as exc:
            self._recorder_died(f"cannot start the recorder: {exc}")
        finally:
            os.close(read_end)
            os.close(control_read)
        # Never a blocking write: a recorder that stops taking records must not hold traffic forever.
        os.set_blocking(self._fd, False)

    def stop_by(self, deadline: float) -> None:
        """The relay is stopping: from now on wait for the recorder only until ``deadline`` (monotonic),
        then count what it could not take (a ``recording_gap``) instead of holding the exit up."""
        with self._lock:
            self._deadline = deadline

    @contextlib.contextmanager
    def in_order(self) -> Iterator[None]:
        """What this thread records inside comes before any other thread's next record: an act and its
        record (a signal passed on) are not overtaken by what the act causes on another thread (the
        server's exit)."""
        with self._lock:
            yield

    def hold(self) -> None:
        """From now until ``flush()``, collect records to hand them over in one write (what one read of
        the traffic produced). Call ``flush()`` before forwarding the bytes they describe."""
        with self._lock:
            if self._held is None:
                self._held = []

    def flush(self) -> None:
        """Hand over what ``hold()`` collected, in one write."""
        with self._lock:
            held, self._held = self._held, None
            if not held:
                return
            t = self.now()
            if self._send([record for record, _, _ in held], t, batch=True):
                return
            gap = self._dropped(t)
            for _, key_id, chunk in held:
                if chunk is None:
                    gap.events += 1
                else:
                    gap.add_chunk(key_id, chunk)

    def now(self) -> float:
        return time.monotonic() - self._start

    def open(self, key: Hashable, spec: StreamSpec) -> None:
        """Route the bytes of ``key`` to a stream read as ``spec`` says, from now on."""
        with self._lock:
            key_id = self._ids[key] = self._next_id
            self._next_id += 1
            self._send_json(Op.OPEN, key_id, self.now(), spec.to_dict())

    def data(self, key: Hashable, chunk: bytes) -> None:
        """Bytes passing on stream ``key``, stamped now."""
        key_id = self._ids.get(key)
        if key_id is None:
            return
        with self._lock:
            t = time.monotonic() - self._start
            head = _DATA_HEAD(_DATA, key_id, t, len(chunk))
            if self._held is not None and not self._dead:
                self._held.append((head + chunk, key_id, chunk))
                return
            if self._gap is None and not self._dead and self._fd >= 0:
                # Every chunk of the traffic comes this way: _send's one writev, without its general cases.
                try:
                    done = os.writev(self._fd, (head, chunk))
                    self._stalled = False
                    if done < len(head) + len(chunk):
                        self._finish(head + chunk, done)
                    return
                except BlockingIOError:
                    pass  # nothing went: _send decides whether to wait or to count it dropped
                except (BrokenPipeError, ConnectionResetError):
                    self._recorder_died("the recorder process is gone")
                    return
            if not self._send([head, chunk], t):
                self._dropped(t).add_chunk(key_id, chunk)

    def closed(self, key: Hashable) -> None:
        """End of stream ``key``."""
        with self._lock:
            key_id = self._ids.pop(key, None)
            if key_id is not None:
                self._send_or_count([channel.encode(Op.CLOSED, key_id, self.now())])

    # What a relay records of each kind: mypy checks the fields against the kind's shape (``event_types``).
    @overload
    def event(self, kind: Literal[Kind.SPAWN], **fields: Unpack[SpawnFields]) -> None: ...
    @overload
    def event(self, kind: Literal[Kind.SPAWN_FAILED], **fields: Unpack[SpawnFailedFields]) -> None: ...
    @overload
    def event(self, kind: Literal[Kind.SIGNAL], **fields: Unpack[SignalFields]) -> None: ...
    @overload
    def event(self, kind: Literal[Kind.EXIT], **fields: Unpack[ExitFields]) -> None: ...
    @overload
    def event(self, kind: Literal[Kind.ERROR], **fields: Unpack[ErrorFields]) -> None: ...
    @overload
    def event(self, kind: Literal[Kind.CONNECTION], **fields: Unpack[ConnectionFields]) -> None: ...
    @overload
    def event(self, kind: Literal[Kind.HTTP_REQUEST], **fields: Unpack[HttpRequestFields]) -> None: ...
    @overload
    def event(self, kind: Literal[Kind.HTTP_RESPONSE], **fields: Unpack[HttpResponseFields]) -> None: ...
    @overload
    def event(self, kind: Literal[Kind.REWRITE], **fields: Unpack[RewriteFields]) -> None: ...
    @overload
    def event(self, kind: Literal[Kind.LISTEN], **fields: Unpack[ListenFields]) -> None: ...

    def event(self, kind: Kind, **fields: Any) -> None:
        with self._lock:
            self._send_json(Op.EVENT, 0, self.now(), {"kind": kind.value, **fields})

    def event_json(self, text: str) -> None:
        """``event()`` for fields already in JSON: an object whose first field is ``kind``."""
        with self._lock:
            self._send_or_count([channel.encode(Op.EVENT, 0, self.now(), text.encode())])

    def open_json(self, key: Hashable, spec: str) -> None:
        """``open()`` for a StreamSpec already in JSON (``StreamSpec.to_dict()`` as JSON)."""
        with self._lock:
            key_id = self._ids[key] = self._next_id
            self._next_id += 1
            self._send_or_count([channel.encode(Op.OPEN, key_id, self.now(), spec.encode())])

    def whole_json(self, spec: str, chunk: bytes) -> None:
        """``open_json()``, ``data()`` and ``closed()`` at once, in one record: a stream whose bytes are all
        here (an HTTP body that arrived in one read)."""
        with self._lock:
            self._send_or_count([channel.encode_body(self.now(), spec.encode(), chunk)])

    def guard_process_group(self, pgid: int) -> None:
        """If this process dies without ``close()``, the recorder kills process group ``pgid``."""
        with self._lock:
            self._send_or_count([channel.encode(Op.GUARD, pgid, self.now())])

    def close(self, *, wait: float = SETTLE_TIMEOUT, unless: int | None = None, **summary: Any) -> bool:
        """Hand over the end event's summary; the recorder finishes the recording on its own.

        Then wait until it has (its end event written, its process gone), ``wait`` seconds at most, or
        until descriptor ``unless`` is readable. True when the recording is known to be complete."""
        self.flush()
        with self._lock:
            summary.setdefault("ended", "normal")
            if self._gap is not None:  # what could not be handed over since the last record
                summary["gap"] = self._gap.to_dict()
                self._gap = None
            if self._control >= 0:
                with contextlib.suppress(OSError):
                    os.write(self._control, channel.encode_json(Op.CLOSE, 0, self.now(), summary))
                os.close(self._control)
                self._control = -1
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
            if self._dead and self.writer._fd >= 0:
                self._append({"kind": Kind.END.value, **summary, "lost": self._lost_after_death, "lost_unknown": True})
        proc = self._proc
        if proc is None or proc.stdout is None:  # (no recorder: what there was to write is written)
            return True
        try:
            return self._wait_for(proc, proc.stdout.fileno(), wait, unless)
        finally:
            proc.stdout.close()

    @staticmethod
    def _wait_for(proc: subprocess.Popen[bytes], exited: int, wait: float, unless: int | None) -> bool:
        watched = [exited] if unless is None else [exited, unless]
        deadline = time.monotonic() + wait
        while proc.poll() is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            ready = select.select(watched, [], [], left)[0]
            if exited in ready:
                proc.wait()
            elif ready:
                return False
        return True

    def _send_json(self, op: Op, key: int, t: float, value: Any) -> None:
        self._send_or_count([channel.encode_json(op, key, t, value)])

    def _send_or_count(self, parts: list[bytes]) -> None:
        if self._held is not None and not self._dead:
            self._held.append((b"".join(parts), 0, None))
            return
        t = self.now()
        if not self._send(parts, t):
            self._dropped(t).events += 1

    def _dropped(self, t: float) -> _Gap:
        if self._gap is None:
            self._gap = _Gap(t)
        return self._gap

    def _send(self, parts: list[bytes], t: float, *, batch: bool = False) -> bool:
        """Write one record (after any gap that came before it), or a ``batch`` of whole records;
        False if it was not handed over."""
        if self._dead or self._fd < 0:  # (after close: a late event from a thread still winding down)
            self._lost_after_death += 1
            return True  # counted here, not as a gap: nobody is left to write one
        try:
            if self._gap is not None:
                gap = channel.encode_json(Op.GAP, 0, t, self._gap.to_dict())
                if not self._write(gap):
                    return False
                self._gap = None
            if batch:  # (writev takes at most IOV_MAX pieces)
                return self._write(parts if len(parts) <= 64 else b"".join(parts))
            return self._write(b"".join(parts) if len(parts) > 2 else parts)
        except (BrokenPipeError, ConnectionResetError):
            self._recorder_died("the recorder process is gone")
            return True

    def _write(self, data: bytes | list[bytes]) -> bool:
        pieces = [data] if isinstance(data, bytes) else data
        total = sum(map(len, pieces))
        while True:
            try:
                done = os.writev(self._fd, pieces)
                break
            except BlockingIOError:  # drop mode, or stopping: nothing went
                if not self._may_wait():
                    return False  # the record is dropped whole, and counted
        self._stalled = False
        if done < total:
            self._finish(b"".join(pieces), done)
        return True

    def _finish(self, record: bytes, done: int) -> None:
        """A partial write: finish the record, or the channel would be corrupt."""
        rest = memoryview(record)[done:]
        while rest:
            if not select.select([], [self._fd], [], stall_after())[1]:
                # Half a record in the pipe: there is no resuming that channel. A recorder that
                # takes nothing for this long is broken; end it, so that the file has one author.
                if self._proc is not None:
                    self._proc.kill()
                self._recorder_died("the recorder stopped taking records in the middle of one")
                return
            with contextlib.suppress(BlockingIOError):
                rest = rest[os.write(self._fd, rest) :]

    def _may_wait(self) -> bool:
        """Whether to wait for room in the pipe (True: it has some now, or the deadline is not yet).

        Stopping: until the deadline. Drop mode: never. Block mode: as long as the recorder takes
        something every ``stall_after()`` seconds; a recorder that takes nothing for that long is
        stalled, and records are counted as not recorded until it takes one again."""
        if self._deadline is not None:
            left = self._deadline - time.monotonic()
            if left <= 0:
                return False
            select.select([], [self._fd], [], left)
            return True
        if self.drop or self._stalled:
            return False
        if select.select([], [self._fd], [], stall_after())[1]:
            return True
        self._stalled = True
        self._say(f"the recorder has taken nothing for {stall_after():g} s; traffic goes on, and "
                  "the recording counts what it misses until the recorder takes records again.")  # fmt: skip
        return False

    def _say(self, text: str) -> None:
        """A warning on stderr, never at the traffic's expense: called on the relay's path, where a full
        stderr pipe (non-blocking when it is stdout's too: ``transports/pumps.py``) must not stop it."""
        with contextlib.suppress(OSError, ValueError):
            print(f"wiretap: {text}", file=self._stderr, flush=True)

    def _recorder_died(self, why: str) -> None:
        if self._dead:
            return
        self._dead = True
        with contextlib.suppress(OSError):
            if os.fstat(self.writer._fd).st_size == 0:  # it died before it wrote anything
                os.write(self.writer._fd, encode_event(self._header)[0])
        self._say(f"RECORDING FAILED for {self.writer.path}: {why}. Traffic keeps flowing.")
        self._append({"kind": Kind.ERROR.value, "error": "recorder_died", "message": why})

    def _append(self, fields: dict[str, Any]) -> None:
        """Write straight to the file: only once the recorder process is gone."""
        line = encode_event({"t": round(self.now(), 6), **fields})[0]
        with contextlib.suppress(OSError):
            os.write(self.writer._fd, b"\n" + line)
