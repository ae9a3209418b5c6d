"""The stdio tap: relays a client's pipes to a server process byte for byte, and reports to a recorder.

One thread per stream does blocking ``read`` → ``recorder.data`` (a clock read and a queue put) →
``write``: all framing, parsing and disk work happens on the recorder's thread, and nothing ever
waits for a line to be complete.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType

from wiretap.recording.events import Direction, Kind
from wiretap.recording.recorder import Recorder
from wiretap.recording.streams import StreamSpec
from wiretap.transports.process import shell_status, signal_name, spawn

STDERR = "stderr"
CHUNK = 1 << 16
FORWARDED_SIGNALS = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)
# A grandchild may hold the server's stdout open after the server exits: once the pumps have waited
# this long for bytes that do not come, the tap goes. A pump still passing bytes on is waited for.
DRAIN_AFTER_EXIT = 0.03


_Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None


@dataclass(frozen=True)
class StdioFds:
    stdin: int = 0
    stdout: int = 1
    stderr: int = 2


class SpawnFailed(Exception):
    def __init__(self, argv: Sequence[str], error: OSError) -> None:
        super().__init__(f"cannot start {argv[0]!r}: {error.strerror or error}")
        self.status = 127 if isinstance(error, FileNotFoundError) else 126


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def open_stdio_streams(recorder: Recorder) -> None:
    """Newline-delimited messages both ways, and the server's stderr as lines."""
    for direction in Direction:
        recorder.open(direction, StreamSpec("line", {"dir": direction.value}))
    recorder.open(STDERR, StreamSpec("stderr"))


def _readable(fd: int) -> bool:
    """Bytes or an end of file wait on ``fd``: its pump has work to do, however late it is scheduled."""
    try:
        return bool(select.select([fd], [], [], 0)[0])
    except (OSError, ValueError):
        return False


class Pump:
    """Copies ``src`` to ``dst`` until end of file, telling the recorder about every chunk."""

    def __init__(self, src: int, dst: int | None, stream: str, recorder: Recorder) -> None:
        self.src, self.dst, self.stream, self.recorder = src, dst, stream, recorder
        self.waiting_since: float | None = None
        """When the pump started waiting for bytes that have not come (None: it is busy)."""

    def run(self, on_dst_lost: Callable[[], None]) -> None:
        read, data_seen, clock, src = os.read, self.recorder.data, time.monotonic, self.src
        while True:
            self.waiting_since = clock()
            try:
                data = read(src, CHUNK)
            except OSError:
                data = b""
            self.waiting_since = None
            if not data:
                break
            # Handed to the recorder before it is written on: the peer's answer to these bytes can
            # never be recorded before them, and if wiretap dies now the recorder still has them.
            data_seen(self.stream, data)
            if self.dst is not None:
                try:
                    _write_all(self.dst, data)
                except OSError:
                    self.dst = None
                    on_dst_lost()
        self.recorder.closed(self.stream)

    def idle_for(self) -> float:
        since = self.waiting_since
        return 0.0 if since is None else time.monotonic() - since


class StdioTap:
    def __init__(
        self,
        argv: Sequence[str],
        recorder: Recorder,
        fds: StdioFds | None = None,
        *,
        shown_argv: Sequence[str] | None = None,
    ) -> None:
        self.argv = list(argv)
        self.shown_argv = list(argv if shown_argv is None else shown_argv)
        """The argv as recorded: credentials redacted."""
        self.recorder = recorder
        self.fds = fds or StdioFds()
        self._proc: subprocess.Popen[bytes] | None = None
        self.signals: list[str] = []
        """Signals the tap received (and passed on), for the recording's end event."""

    def run(self) -> int:
        """Run the server to its end and return its raw return code (negative: killed by a signal)."""
        try:
            proc = self._proc = spawn(self.argv)
        except OSError as exc:
            failure = SpawnFailed(self.argv, exc)
            self.recorder.event(Kind.SPAWN_FAILED, argv=self.shown_argv, error=str(failure), status=failure.status)
            raise failure from exc
        self.recorder.event(Kind.SPAWN, argv=self.shown_argv, pid=proc.pid)
        # The server leads its own process group: if the tap is killed, the recorder kills that group.
        self.recorder.guard_process_group(proc.pid)
        open_stdio_streams(self.recorder)
        previous = self._install_signal_forwarding()
        try:
            threads = self._start_pumps(proc)
            returncode = proc.wait()
            self._record_exit(returncode)
            self._drain(threads[1:])
            return returncode
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def _drain(self, threads: list[tuple[threading.Thread, Pump]]) -> None:
        """Wait for the server's output pumps until they end. Only a pump with nothing to read (no bytes,
        no end of file: a grandchild holds the pipe open) for DRAIN_AFTER_EXIT after the exit is left."""
        exited = time.monotonic()
        for thread, pump in threads:
            while thread.is_alive():
                quiet = pump.idle_for() > 0 and not _readable(pump.src)
                if quiet and time.monotonic() - exited >= DRAIN_AFTER_EXIT:
                    break
                thread.join(0.005)

    def _start_pumps(self, proc: subprocess.Popen[bytes]) -> list[tuple[threading.Thread, Pump]]:
        assert proc.stdin and proc.stdout and proc.stderr
        server_in, server_out, server_err = proc.stdin.fileno(), proc.stdout.fileno(), proc.stderr.fileno()
        specs = [
            (self.fds.stdin, server_in, Direction.C2S, lambda: self._lost(Direction.C2S), self._stdin_closed),
            (
                server_out,
                self.fds.stdout,
                Direction.S2C,
                lambda: self._lost(Direction.S2C),
                self._stdout_closed,
            ),
            (server_err, self.fds.stderr, STDERR, lambda: None, None),
        ]
        threads = []
        for src, dst, stream, on_lost, after in specs:
            pump = Pump(src, dst, stream, self.recorder)
            thread = threading.Thread(
                target=self._pump_then, args=(pump, on_lost, after), name=f"wiretap-{stream}", daemon=True
            )
            thread.start()
            threads.append((thread, pump))
        return threads

    @staticmethod
    def _pump_then(pump: Pump, on_lost: Callable[[], None], after: Callable[[], None] | None) -> None:
        pump.run(on_lost)
        if after is not None:
            after()

    def _stdin_closed(self) -> None:
        """The client closed its end: pass the end of file on to the server."""
        proc = self._proc
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()

    def _stdout_closed(self) -> None:
        """The server closed its stdout: the client sees the end of file too."""
        with contextlib.suppress(OSError):
            os.close(self.fds.stdout)

    def _lost(self, direction: Direction) -> None:
        who = "server" if direction == Direction.C2S else "client"
        self.recorder.event(Kind.ERROR, error="peer_gone", dir=direction.value, message=f"the {who} stopped reading")

    def _install_signal_forwarding(self) -> dict[int, _Handler]:
        previous: dict[int, _Handler] = {}
        for signum in FORWARDED_SIGNALS:
            with contextlib.suppress(OSError, ValueError):
                previous[signum] = signal.signal(signum, self._forward)
        return previous

    def _forward(self, signum: int, _frame: FrameType | None) -> None:
        self.signals.append(signal_name(signum))
        forwarded = False
        if self._proc is not None and self._proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._proc.pid, signum)
                forwarded = True
        self.recorder.event(Kind.SIGNAL, signal=signal_name(signum), signum=signum, forwarded=forwarded)

    def _record_exit(self, returncode: int) -> None:
        fields: dict[str, str | int] = {"status": shell_status(returncode)}
        if returncode < 0:
            fields |= {"signal": signal_name(-returncode), "signum": -returncode}
        else:
            fields["code"] = returncode
        self.recorder.event(Kind.EXIT, **fields)
