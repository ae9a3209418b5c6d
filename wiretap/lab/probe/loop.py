"""What both transports share: the probe's timers on the event loop, and its own log."""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from pathlib import Path

from wiretap.lab.log import LabLog
from wiretap.lab.probe.core import Output, Probe, Send


class ProbeLoop(ABC):
    def __init__(self, log_path: Path | None) -> None:
        self.log = LabLog(log_path)
        self.probe = Probe(wall_offset=time.time() - time.monotonic())
        self._timer: asyncio.TimerHandle | None = None

    def feed(self, raw: bytes, stamps: tuple[int, int]) -> Output:
        """A message from the client, received at ``stamps`` (wall, monotonic ns)."""
        out = self.probe.receive(raw, stamps[1] / 1e9)
        self.emit(out, stamps)
        return out

    def emit(self, out: Output, stamps: tuple[int, int] | None = None) -> None:
        for entry in out.log:
            self.log.write(stamps, **entry)
        for send in out.sends:
            if self.deliver(send):
                self.log.write(**send.note)
            else:
                self.log.write(**{**send.note, "event": "unsent", "why": "no stream to send it on"})
        self._schedule()

    @abstractmethod
    def deliver(self, send: Send) -> bool:
        """Write one message where it belongs; False when there is nowhere to write it."""

    def _schedule(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        due = self.probe.next_due()
        if due is not None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(max(0.0, due - time.monotonic()), self._fire)

    def _fire(self) -> None:
        self._timer = None
        self.emit(self.probe.tick(time.monotonic()))

    def finish(self, how: str) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self.log.write(**self.probe.end(how))
        self.log.close()
