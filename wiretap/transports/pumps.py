"""Byte pumps: copy a source fd to a destination fd until end of file, telling the recorder about every chunk.

``PumpLoop`` runs the conversation's two directions in one thread, waiting on both, as socat does:
one thread that is woken in turn by the client and by the server stays on a warm core and never waits
for the other thread's GIL; two threads each pay a wake-up on a cold one (``bench/`` has the figures).

Writes that would block must not stop the other direction (a client that writes a large request
before it reads may need the server's answer to flow meanwhile, as it would without wiretap): a
destination that is a pipe or a socket is made non-blocking, what it cannot take yet waits in the
loop, and only its own source stops being read until it is taken. Others (a terminal, a file) are
written as they are.
"""

from __future__ import annotations

import contextlib
import os
import select
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from wiretap.recording.recorder import Recorder, portable

CHUNK = 1 << 16
_IN = select.POLLIN | select.POLLPRI
_OUT = select.POLLOUT


def write_all(fd: int, data: bytes) -> None:
    """Write every byte, waiting for room if ``fd`` is non-blocking (stderr, when it is the same pipe as
    a stdout that ``PumpLoop`` made non-blocking)."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            select.select([], [fd], [])


class Pump:
    """Copies ``src`` to ``dst`` until end of file, telling the recorder about every chunk."""

    def __init__(self, src: int, dst: int | None, stream: str, recorder: Recorder) -> None:
        self.src, self.dst, self.stream, self.recorder = src, dst, stream, recorder
        self.waiting_since: float | None = None
        """When the pump started waiting for bytes that have not come (None: it is busy)."""
        self.done = False
        """The source ended and everything read from it was handed on."""

    def run(self, on_dst_lost: Callable[[], None]) -> None:
        """This pump alone, on the calling thread, with blocking reads and writes."""
        read, received, clock, src = os.read, self.received, time.monotonic, self.src
        while True:
            self.waiting_since = clock()
            try:
                data = read(src, CHUNK)
            except OSError:
                data = b""
            self.waiting_since = None
            if not data:
                break
            received(data)
            if self.dst is not None:
                try:
                    write_all(self.dst, data)
                except OSError:
                    self.dst = None
                    on_dst_lost()
        self.end()

    def received(self, data: bytes) -> None:
        """Hand ``data`` to the recorder, before it is written on: the peer's answer to these bytes can
        never be recorded before them, and if wiretap dies now the recorder still has them."""
        self.recorder.data(self.stream, data)

    def end(self) -> None:
        self.recorder.closed(self.stream)
        self.done = True

    def idle_for(self) -> float:
        since = self.waiting_since
        return 0.0 if since is None else time.monotonic() - since


@dataclass
class LoopedPump:
    """A pump in a ``PumpLoop``, with what it could not write yet and what to do when it ends."""

    pump: Pump
    on_dst_lost: Callable[[], None]
    after: Callable[[], None] | None
    pending: memoryview | None = None


def _may_block(fd: int) -> bool:
    """Pipes and sockets can be full; a terminal or a file is written as it is."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _waiter(readers: list[int], writers: list[int]) -> Callable[[], Iterable[int]]:
    """What waits until one of ``readers`` can be read or one of ``writers`` written: ``poll()``, or
    ``select()`` where poll cannot wait on a terminal (macOS; ``WIRETAP_PORTABLE=1`` forces it)."""
    if portable():
        return lambda: set().union(*select.select(readers, writers, [])[:2])
    poller = select.poll()
    for fd in {*readers, *writers}:
        poller.register(fd, (_IN if fd in readers else 0) | (_OUT if fd in writers else 0))
    return lambda: [fd for fd, _ in poller.poll()]


class PumpLoop:
    """Several pumps on one thread, waiting on all of them at once, and on the descriptors in ``watch``
    (each one's function is called when it can be read) for as long as a pump runs."""

    def __init__(self, pumps: list[LoopedPump], watch: dict[int, Callable[[], None]] | None = None) -> None:
        self.pumps = pumps
        self.watch = dict(watch or {})
        self._restore: dict[int, bool] = {}
        for looped in pumps:
            dst = looped.pump.dst
            if dst is not None and dst not in self._restore and _may_block(dst):
                with contextlib.suppress(OSError):
                    self._restore[dst] = os.get_blocking(dst)
                    os.set_blocking(dst, False)

    def run(self) -> None:
        try:
            self._run()
        finally:
            for fd in list(self._restore):
                self._unblock(fd)

    def _unblock(self, fd: int) -> None:
        """Leave ``fd`` blocking or not as we found it (before it is closed: a closed number is reused)."""
        blocking = self._restore.pop(fd, None)
        if blocking is not None:
            with contextlib.suppress(OSError):
                os.set_blocking(fd, blocking)

    def _run(self) -> None:
        live, clock, watch = list(self.pumps), time.monotonic, self.watch
        changed = True
        while live:
            if changed:
                readers = {lp.pump.src: lp for lp in live if lp.pending is None}
                writers = {lp.pump.dst: lp for lp in live if lp.pending is not None and lp.pump.dst is not None}
                for waiting in readers.values():
                    if waiting.pump.waiting_since is None:
                        waiting.pump.waiting_since = clock()
                wait, changed = _waiter([*readers, *watch], list(writers)), False
            for fd in wait():
                writer = writers.get(fd)
                if writer is not None:
                    self._write(writer)
                    changed = changed or writer.pending is None
                looped = readers.get(fd)
                if looped is None or looped.pending is not None:
                    if looped is None and (watcher := watch.get(fd)) is not None:  # (off the traffic's path)
                        watcher()
                    continue
                pump = looped.pump
                pump.waiting_since = None
                if self._read(looped):
                    if looped.pending is None:
                        pump.waiting_since = clock()
                    else:  # busy until the destination has taken it all
                        changed = True
                    continue
                pump.end()
                live.remove(looped)
                changed = True
                if looped.after is not None:
                    if pump.dst is not None:
                        self._unblock(pump.dst)
                    looped.after()

    def _read(self, looped: LoopedPump) -> bool:
        """Read what the source has and pass it on; False at its end."""
        pump = looped.pump
        try:
            data = os.read(pump.src, CHUNK)
        except BlockingIOError:  # (a source that shares its descriptor with a non-blocking destination)
            return True
        except OSError:
            data = b""
        if not data:
            return False
        pump.received(data)
        if pump.dst is not None:
            looped.pending = memoryview(data)
            self._write(looped)
        return True

    def _write(self, looped: LoopedPump) -> None:
        pump, view = looped.pump, looped.pending
        assert pump.dst is not None and view is not None
        try:
            while view:
                view = view[os.write(pump.dst, view) :]
        except BlockingIOError:
            looped.pending = view
            return
        except OSError:
            # Its blocking mode goes back now, while the number is still this destination's: the loop's
            # own end may come after another thread closed it and a new descriptor took the number.
            self._unblock(pump.dst)
            pump.dst = None
            looped.on_dst_lost()
        looped.pending = None
