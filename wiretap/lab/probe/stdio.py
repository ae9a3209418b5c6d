"""The probe over stdio: one JSON-RPC message per line in and out. stdin is read on a thread with
``os.read`` (a pipe, a file or a terminal alike); the loop ends at end of input, SIGINT or SIGTERM, and
the log says which."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from pathlib import Path

from wiretap.lab.probe.core import Send
from wiretap.lab.probe.loop import ProbeLoop

CHUNK = 65536


class StdioProbe(ProbeLoop):
    def deliver(self, send: Send) -> bool:
        sys.stdout.buffer.write(send.line)
        sys.stdout.buffer.flush()
        return True


def _read_lines(loop: asyncio.AbstractEventLoop, probe: StdioProbe, ended: asyncio.Future[str]) -> None:
    pending = b""
    while True:
        try:
            chunk = os.read(0, CHUNK)
        except OSError:
            chunk = b""
        if not chunk:
            break
        stamps = (time.time_ns(), time.monotonic_ns())
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            if line.strip():
                loop.call_soon_threadsafe(probe.feed, line.rstrip(b"\r"), stamps)
    loop.call_soon_threadsafe(_end, ended, "eof")


def _end(ended: asyncio.Future[str], how: str) -> None:
    if not ended.done():
        ended.set_result(how)


async def serve(log_path: Path | None) -> str:
    """Serve stdin/stdout until end of input or a signal; return how it ended."""
    loop = asyncio.get_running_loop()
    probe = StdioProbe(log_path)
    ended: asyncio.Future[str] = loop.create_future()
    for number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(number, _end, ended, signal.Signals(number).name)
    probe.log.write(event="listening", transport="stdio")
    threading.Thread(target=_read_lines, args=(loop, probe, ended), daemon=True).start()
    how = await ended
    probe.finish(how)
    return how
