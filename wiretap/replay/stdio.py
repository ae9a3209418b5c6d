"""Serving a replay on stdio, where a client's config named the server command.

Newline-delimited JSON both ways. A thread reads stdin (blocking reads work on pipes, files and
terminals alike) and hands lines to the event loop; one writer at a time puts whole lines on stdout.
End of input ends the replay, as it ends a stdio server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import threading
from typing import Any

from wiretap.replay.player import Player, dumps
from wiretap.replay.script import Json, Step, is_request, is_response


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class StdoutOutlet:
    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._lock = asyncio.Lock()
        self.broken = False

    async def send(self, step: Step, message: Json | None) -> None:
        line = dumps(message) if message is not None else step.raw or ""
        async with self._lock:
            if self.broken:
                return
            try:
                await asyncio.to_thread(_write_all, self.fd, line.encode() + b"\n")
            except OSError:
                self.broken = True


def _read_lines(fd: int, loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[bytes | None]) -> None:
    with contextlib.suppress(OSError, ValueError, RuntimeError), os.fdopen(fd, "rb", closefd=False) as stream:
        for line in stream:
            loop.call_soon_threadsafe(lines.put_nowait, line)
    with contextlib.suppress(RuntimeError):  # the loop may be gone already
        loop.call_soon_threadsafe(lines.put_nowait, None)


def parse(line: bytes) -> list[Json]:
    """The JSON-RPC messages in one line (a batch is several); nothing for a line that is not JSON."""
    try:
        body: Any = json.loads(line)
    except ValueError:
        return []
    return [m for m in (body if isinstance(body, list) else [body]) if isinstance(m, dict)]


async def serve_stdio(player: Player, stdin: int = 0, stdout: int = 1) -> None:
    """Answer the client on ``stdin``/``stdout`` until it closes its end (or SIGINT/SIGTERM)."""
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[bytes | None] = asyncio.Queue()
    threading.Thread(target=_read_lines, args=(stdin, loop, lines), name="wiretap-replay-stdin", daemon=True).start()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, lines.put_nowait, None)
    outlet = StdoutOutlet(stdout)
    running = {asyncio.create_task(player.play_unprompted(outlet))}
    try:
        while (line := await lines.get()) is not None:
            for message in parse(line):
                if is_request(message):
                    task = asyncio.create_task(player.perform(player.plan(message), outlet))
                    running.add(task)
                    task.add_done_callback(running.discard)
                elif is_response(message):
                    player.client_response(message)
                else:
                    player.notification(message)
    finally:
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)
