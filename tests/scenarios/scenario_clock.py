"""The schedule of a scenario client, kept on the recording's own clock.

A scenario's known truth is written in recording time ("tasks/get at 3.32 s"). The client learns where
the recording's zero lies on the machine-wide monotonic clock (CLOCK_MONOTONIC is shared by every
process, and wiretap stamps ``t`` with it): it notes when it sent its opening messages, finds them in
the recording as wiretap is writing it, and takes the differences (the latest is the best estimate).
Every later message is sent at ``zero + shift + T``, computed from that one origin, so nothing drifts.

``shift`` is 0 when the client is ready in time for its first scheduled message. On a loaded machine
(many scenarios starting at once) it is the whole number of seconds that makes the schedule feasible,
and every time of the truth moves by exactly that much; the client reports it.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

LEAD = 0.10
"""How long before its first scheduled message the client wants to be ready."""
SPIN = 0.002


class RecordingClock:
    def __init__(self, recording: Path) -> None:
        self.recording = recording
        self.zero: float | None = None
        """The monotonic time of the recording's t = 0."""
        self.shift = 0.0
        self.lateness: list[float] = []
        self.scheduled: list[float] = []
        """Every recording time the client sent something at (shift included)."""

    def find(self, match: Callable[[dict[str, Any]], bool], nth: int = 1, timeout: float = 30.0) -> dict[str, Any]:
        """The ``nth`` event of the recording (as far as written) that ``match`` accepts; waits for it."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                data = self.recording.read_bytes()
            except FileNotFoundError:
                data = b""
            seen = 0
            for line in data.split(b"\n")[1:-1]:  # skip the header and a line still being written
                event = json.loads(line)
                if match(event):
                    seen += 1
                    if seen == nth:
                        return event
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.recording}: no matching event within {timeout} s")
            time.sleep(0.005)

    def anchor(self, sent_at: float, match: Callable[[dict[str, Any]], bool], nth: int = 1) -> None:
        """``sent_at`` (monotonic) is when the client sent the bytes that the ``nth`` event ``match``
        accepts records. Call it for several sends: each estimate of the zero can only be early (wiretap
        stamps bytes when it gets to them, never before they were sent), so the latest one is kept."""
        zero = sent_at - float(self.find(match, nth)["t"])
        self.zero = zero if self.zero is None else max(self.zero, zero)

    def now(self) -> float:
        assert self.zero is not None, "anchor first"
        return time.monotonic() - self.zero

    def begin(self, first: float) -> float:
        """Fix the shift so that the first scheduled time, ``first``, is still ahead; return it."""
        ahead = self.now() + LEAD - first
        self.shift = 0.0 if ahead <= 0 else float(math.ceil(ahead))
        return self.shift

    def at(self, t: float) -> float:
        """Sleep until recording time ``t`` (+ shift); return the monotonic time it is now."""
        assert self.zero is not None, "anchor first"
        deadline = self.zero + self.shift + t
        self.scheduled.append(round(self.shift + t, 6))
        delay = deadline - time.monotonic()
        if delay > SPIN:
            time.sleep(delay - SPIN)
        while (now := time.monotonic()) < deadline:  # the last moments spinning: a sleep may overshoot
            pass
        self.lateness.append(now - deadline)
        return now

    def summary(self, scenario: str, **more: Any) -> dict[str, Any]:
        return {
            "scenario": scenario,
            "shift": self.shift,
            "late_max_ms": round(max(self.lateness, default=0.0) * 1000, 2),
            "scheduled": self.scheduled,
            **more,
        }
