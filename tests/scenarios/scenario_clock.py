"""The schedule of a scenario client, kept on the recording's own clock.

A scenario's known truth is written in recording time ("tasks/get at 3.32 s"). The client learns where
the recording's zero lies on the machine-wide monotonic clock (CLOCK_MONOTONIC is shared by every
process, and wiretap stamps ``t`` with it): it notes when it sent its opening messages, finds them in
the recording as wiretap is writing it, and takes the differences (the latest is the best estimate).
Every later message is sent at ``zero + shift + T``, computed from that one origin, so nothing drifts.

``shift`` is 0 when the client is ready in time for its first scheduled message. On a loaded machine
(many scenarios starting at once) it is the whole number of seconds that makes the schedule feasible,
and every time of the truth moves by exactly that much; the client reports it.

The client also reports what it actually did (``actual``): for each time of its truth, the window of
recording time in which that event certainly happened, measured on its own side of the wire. A send's
window opens just before the client wrote the bytes and closes when it saw their effect (the answer
arrived, or the event appeared in the recording); wiretap stamps bytes between the two. The recording's
zero is itself only known to lie between the latest "sent - t" and the earliest "answered - t" of the
anchors, so a window is widened by that too. On a quiet machine a window is a millisecond or two wide;
on a loaded one it is as wide as the machine made it, and a test of the report checks against it.
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
        """The monotonic time of the recording's t = 0 (the latest estimate: never later than it)."""
        self.zero_late: float | None = None
        """A monotonic time never earlier than the recording's t = 0 (from the anchors' answers)."""
        self.actual: dict[str, list[float]] = {}
        """Recording time windows of what happened, by the (unshifted) time of the truth; see ``mark``."""
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

    def anchor(
        self, sent_at: float, match: Callable[[dict[str, Any]], bool], nth: int = 1, answered_at: float | None = None
    ) -> None:
        """``sent_at`` (monotonic) is when the client sent the bytes that the ``nth`` event ``match``
        accepts records, ``answered_at`` when their answer came back. Call it for several sends: each
        estimate of the zero from ``sent_at`` can only be early (wiretap stamps bytes when it gets to them,
        never before they were sent), so the latest one is kept; each from ``answered_at`` can only be
        late (wiretap stamps them before it passes them on), so the earliest one is kept."""
        t = float(self.find(match, nth)["t"])
        zero = sent_at - t
        self.zero = zero if self.zero is None else max(self.zero, zero)
        if answered_at is not None:
            late = answered_at - t
            self.zero_late = late if self.zero_late is None else min(self.zero_late, late)

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

    def mark(self, t: float, first: float, last: float) -> None:
        """The event the truth places at ``t`` (unshifted) certainly happened between the monotonic times
        ``first`` and ``last``: keep that as a window of recording time."""
        assert self.zero is not None, "anchor first"
        late = self.zero if self.zero_late is None else self.zero_late
        self.actual[f"{t:.3f}"] = [round(first - late, 6), round(last - self.zero, 6)]

    def seen(self, match: Callable[[dict[str, Any]], bool], nth: int = 1) -> float:
        """Wait for an event to be in the recording; return the monotonic time it certainly was stamped by."""
        self.find(match, nth)
        return time.monotonic()

    def summary(self, scenario: str, **more: Any) -> dict[str, Any]:
        return {
            "scenario": scenario,
            "shift": self.shift,
            "late_max_ms": round(max(self.lateness, default=0.0) * 1000, 2),
            "scheduled": self.scheduled,
            "actual": self.actual,
            **more,
        }
