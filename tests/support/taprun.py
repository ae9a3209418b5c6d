"""Running ``wiretap tap`` as a client would: a separate process on real pipes."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from support import paths
from support.eventually import eventually
from wiretap.recording.complete import await_end
from wiretap.recording.events import Event
from wiretap.recording.reader import Skipped, read_all

SCENARIO_SERVER = [sys.executable, str(paths.SCENARIOS / "stdio_server.py")]
TAP = [sys.executable, "-m", "wiretap", "tap"]


@dataclass
class TapRun:
    returncode: int
    stdout: bytes
    stderr: bytes
    header: Event
    events: list[Event]

    def of_kind(self, kind: str) -> list[Event]:
        return [e for e in self.events if e["kind"] == kind]

    def messages(self, direction: str | None = None) -> list[Event]:
        return [e for e in self.of_kind("message") if direction is None or e["dir"] == direction]


def settled_read_all(recording: Path) -> tuple[Event, list[Event], Skipped]:
    """The recording once its recorder process has finished it (wiretap exits before that)."""
    assert await_end(recording, 60, patient=True).complete, f"{recording} has no end event"
    return read_all(recording)


def start_tap(recording: Path, server: list[str], *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*TAP, "--out", str(recording), *extra, "--", *server],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _drain(stream: IO[bytes], into: list[bytes]) -> threading.Thread:
    thread = threading.Thread(target=lambda: into.append(stream.read()), daemon=True)
    thread.start()
    return thread


def run_tap(recording: Path, server: list[str], chunks: list[bytes], *extra: str, timeout: float = 60) -> TapRun:
    """Write ``chunks`` one write at a time, close stdin, and collect everything."""
    proc = start_tap(recording, server, *extra)
    assert proc.stdin and proc.stdout and proc.stderr
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [_drain(proc.stdout, out), _drain(proc.stderr, err)]
    with proc:
        for chunk in chunks:
            proc.stdin.write(chunk)
            proc.stdin.flush()
        proc.stdin.close()
        proc.wait(timeout)
        for reader in readers:
            reader.join(timeout)
    header, events, skipped = settled_read_all(recording)
    assert not skipped, skipped.describe()
    return TapRun(proc.returncode, out[0], err[0], header, events)


def blocked_signals(pid: int, tid: int) -> set[int]:
    """The signals thread ``tid`` of process ``pid`` blocks (Linux: its ``SigBlk`` in /proc)."""
    status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
    mask = int(next(line for line in status.splitlines() if line.startswith("SigBlk:")).split()[1], 16)
    return {n for n in range(1, 64) if mask >> (n - 1) & 1}


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/status") as f:
            status = dict(line.split(":\t", 1) for line in f.read().splitlines() if ":\t" in line)
    except FileNotFoundError:  # reaped just now, or no /proc (macOS: a zombie counts as alive there)
        return not Path("/proc/self").exists()
    # A zombie is gone for every purpose but its exit status, once its last thread is: a killed
    # leader shows "Z" while its other threads, which still hold its descriptors, wind down.
    return not (status["State"].startswith("Z") and status["Threads"].strip() == "1")


def wait_until_gone(pid: int, what: str = "the process to go") -> None:
    eventually(lambda: not pid_alive(pid), f"{what} (pid {pid})", 10)


def read_pid_line(proc: subprocess.Popen[bytes]) -> int:
    assert proc.stderr is not None
    line = proc.stderr.readline().decode()
    assert line.startswith("pid "), line
    return int(line.split()[1])
