"""The stdio tap: relays a client's pipes to a server process byte for byte, and reports to a recorder.

One thread relays the conversation both ways (``PumpLoop``), another the server's stderr: each
chunk is ``read`` → ``recorder.data`` (a clock read and one write to the recorder's pipe) →
``write``. Framing, parsing and disk work happen in the recorder process, and nothing ever waits
for a line to be complete.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from wiretap.recording.events import Direction, Kind
from wiretap.recording.recorder import Recorder
from wiretap.recording.spec import StreamSpec
from wiretap.transports.process import shell_status, signal_name, spawn
from wiretap.transports.pumps import LoopedPump, Pump, PumpLoop
from wiretap.transports.signals import FORWARDED_SIGNALS, SignalPipe, forwarded_signals_blocked

STDERR = "stderr"
# A grandchild may hold the server's stdout open after the server exits: once the pumps have waited
# this long for bytes that do not come, the tap goes. A pump still passing bytes on is waited for.
DRAIN_AFTER_EXIT = 0.03


@dataclass(frozen=True)
class StdioFds:
    stdin: int = 0
    stdout: int = 1
    stderr: int = 2


class SpawnFailed(Exception):
    def __init__(self, argv: Sequence[str], error: OSError) -> None:
        super().__init__(f"cannot start {argv[0]!r}: {error.strerror or error}")
        self.status = 127 if isinstance(error, FileNotFoundError) else 126


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
        signals = SignalPipe(FORWARDED_SIGNALS, self._forward)
        signals.install()
        try:
            threads = self._start_pumps(proc, signals)
            returncode = proc.wait()
            self._record_exit(returncode)
            self._drain(threads[1:])
            return returncode
        finally:
            signals.restore()

    def _drain(self, threads: list[tuple[threading.Thread, Pump]]) -> None:
        """Wait for the server's output pumps until they end. Only a pump with nothing to read (no bytes,
        no end of file: a grandchild holds the pipe open) for DRAIN_AFTER_EXIT after the exit is left."""
        exited = time.monotonic()
        for thread, pump in threads:
            while thread.is_alive() and not pump.done:
                quiet = pump.idle_for() > 0 and not _readable(pump.src)
                if quiet and time.monotonic() - exited >= DRAIN_AFTER_EXIT:
                    break
                thread.join(0.005)

    def _start_pumps(self, proc: subprocess.Popen[bytes], signals: SignalPipe) -> list[tuple[threading.Thread, Pump]]:
        """The conversation both ways (and the signals caught) on one thread, the server's stderr on
        another: client, server, then stderr."""
        assert proc.stdin and proc.stdout and proc.stderr
        recorder = self.recorder
        to_server = Pump(self.fds.stdin, proc.stdin.fileno(), Direction.C2S, recorder)
        to_client = Pump(proc.stdout.fileno(), self.fds.stdout, Direction.S2C, recorder)
        conversation = [
            LoopedPump(to_server, lambda: self._lost(Direction.C2S), self._stdin_closed),
            LoopedPump(to_client, lambda: self._lost(Direction.S2C), self._stdout_closed),
        ]
        stderr = Pump(proc.stderr.fileno(), self.fds.stderr, STDERR, recorder)
        relay = threading.Thread(
            target=self._relay,
            args=(PumpLoop(conversation, {signals.fd: signals.take}), signals),
            name="wiretap-relay",
            daemon=True,
        )
        signals.watch()
        errors = threading.Thread(target=stderr.run, args=(lambda: None,), name="wiretap-stderr", daemon=True)
        relay.start()
        with forwarded_signals_blocked():  # (the kernel then gives them to the main thread or the relay)
            errors.start()
        return [(relay, to_server), (relay, to_client), (errors, stderr)]

    @staticmethod
    def _relay(loop: PumpLoop, signals: SignalPipe) -> None:
        try:
            loop.run()
        finally:
            signals.unwatched()

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

    def _forward(self, signum: int) -> None:
        self.signals.append(signal_name(signum))
        forwarded = False
        with self.recorder.in_order():
            if self._proc is not None and self._proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self._proc.pid, signum)
                    forwarded = True
            self.recorder.event(Kind.SIGNAL, signal=signal_name(signum), signum=signum, forwarded=forwarded)

    def _record_exit(self, returncode: int) -> None:
        status = shell_status(returncode)
        if returncode < 0:
            self.recorder.event(Kind.EXIT, status=status, signal=signal_name(-returncode), signum=-returncode)
        else:
            self.recorder.event(Kind.EXIT, status=status, code=returncode)
