"""The processes of a live run: ``wiretap`` itself, to record the run, and stopping a child in steps."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys

WIRETAP = [sys.executable, "-m", "wiretap"]
STOP_GRACE = 5.0


async def stop(proc: asyncio.subprocess.Process, grace: float = STOP_GRACE) -> int:
    for signum in (None, signal.SIGTERM, signal.SIGKILL):
        if signum is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signum)
        try:
            return await asyncio.wait_for(proc.wait(), grace)
        except TimeoutError:
            continue
    return await proc.wait()
