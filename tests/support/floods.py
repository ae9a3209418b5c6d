"""Floods of numbered messages through a tapped server, the numbers a recording holds, and a process's peak memory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from support import paths
from support.taprun import TAP
from wiretap.recording.events import Event

FLOOD = [sys.executable, str(paths.SCENARIOS / "flood_server.py")]


def start_flood(recording: Path, count: int, size: int, *extra: str, forever: bool = True, **kw: Any) -> Any:
    server = [*FLOOD, str(count), str(size), *(["forever"] if forever else [])]
    return subprocess.Popen(
        [*TAP, "--out", str(recording), *extra, "--", *server],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **kw,
    )


def recorded_numbers(events: list[Event]) -> list[int]:
    return [e["msg"]["params"]["n"] for e in events if e["kind"] == "message" and e["dir"] == "s2c" and "msg" in e]


def peak_rss(pid: int) -> int:
    """The process's peak resident memory so far, in bytes (Linux: VmHWM, which exec starts afresh)."""
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
