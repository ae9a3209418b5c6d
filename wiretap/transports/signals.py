"""Signals handled on the relay thread, whichever thread the kernel delivered them to.

Python runs a signal's handler on the main thread, and only once that thread runs Python again. The
tap's main thread waits in ``waitpid()`` for the server, which a signal interrupts only if the kernel
delivered it to that very thread: a signal delivered to the relay or stderr thread (macOS may pick any
thread; Linux does when the main thread already has one pending) would wait for the server to end on
its own, not be passed on to it. So each signal's number is also written on a pipe
(``signal.set_wakeup_fd``) that the relay's ``poll()`` watches: the relay thread passes it on and
stamps it, as it stamps the end of stdin, which a client's shutdown often sends with it.

Threads that only read (the server's stderr; in the ``wiretap -- CLIENT`` session, where the main
thread passes signals on and no thread watches such a pipe, the view's stderr) are started with those
signals blocked (``forwarded_signals_blocked``): the kernel then delivers them to a thread that acts
on them. (Once the relay thread has ended, only the main thread can.)
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from types import FrameType

FORWARDED_SIGNALS = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)
"""What wiretap passes on to the process it runs (a client or a server)."""

_Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None


class SignalPipe:
    """Catches ``signums`` and hands each one caught to ``on_signal``, once, on whichever thread takes it:
    the relay thread while it watches ``fd``, the main thread's handler once it no longer does."""

    def __init__(self, signums: Iterable[int], on_signal: Callable[[int], None]) -> None:
        self._signums = tuple(signums)
        self._on_signal = on_signal
        self._previous: dict[int, _Handler] = {}
        self._previous_wakeup: int | None = None
        self._read_fd, self._write_fd = os.pipe()
        for fd in (self._read_fd, self._write_fd):
            os.set_blocking(fd, False)
        self.watched = False
        """Whether the relay thread is watching ``fd`` (then the main thread's handler leaves it alone)."""
        self._lock = threading.Lock()
        self._relay = False
        self._restored = False

    @property
    def fd(self) -> int:
        return self._read_fd

    def install(self) -> None:
        """Catch the signals (from the main thread only: elsewhere Python cannot, and nothing is caught)."""
        try:
            self._previous_wakeup = signal.set_wakeup_fd(self._write_fd, warn_on_full_buffer=False)
        except ValueError:
            return
        for signum in self._signums:
            with contextlib.suppress(OSError, ValueError):
                self._previous[signum] = signal.signal(signum, self._caught)

    def _caught(self, _signum: int, _frame: FrameType | None) -> None:
        if not self.watched:
            self.take()

    def take(self) -> None:
        """Hand on every signal the pipe holds (a byte each). Two threads may call this at once: each
        byte is read by one of them."""
        while True:
            try:
                caught = os.read(self._read_fd, 256)
            except (BlockingIOError, OSError):
                return
            if not caught:
                return
            for signum in caught:
                self._on_signal(signum)

    def watch(self) -> None:
        """A relay thread watches ``fd`` from now until it calls ``unwatched``."""
        self._relay = True
        self.watched = True

    def unwatched(self) -> None:
        """The relay thread stops watching: what it has not taken yet is taken now, the rest by the handler."""
        with self._lock:
            self.watched = False
            self._relay = False
            self.take()
            if self._restored:
                self._close()

    def restore(self) -> None:
        """Put back the handlers found, hand on what was caught meanwhile, and close the pipe — once no
        relay thread watches it: a descriptor closed under a relay still polling it could be reused by the
        next pipe opened (the finish's own), and the relay would take that pipe's signals."""
        if self._previous_wakeup is not None:
            for signum, handler in self._previous.items():
                signal.signal(signum, handler)
            signal.set_wakeup_fd(self._previous_wakeup)
        with self._lock:
            self._restored = True
            self.take()
            if not self._relay:
                self.watched = False
                self._close()

    def _close(self) -> None:
        for fd in (self._read_fd, self._write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._read_fd = self._write_fd = -1


@contextlib.contextmanager
def forwarded_signals_blocked() -> Iterator[None]:
    """Threads started in this block never take the signals wiretap passes on: the kernel delivers those
    to the main thread, where Python runs the handler (a thread that only reads a pipe needs none)."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
