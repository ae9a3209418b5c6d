"""Serving a replay on stdio, where a client's config named the server command.

Newline-delimited JSON both ways. A thread reads stdin (blocking reads work on pipes, files and
terminals alike) and hands lines to the event loop; one writer at a time puts whole lines on stdout.
End of input ends the replay, as it ends a stdio server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading

from wiretap.replay.player import Player, dumps
from wiretap.replay.script import Json, Step, is_request, is_response
from wiretap.wire import jsonrpc


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
        if message is None and step.raw is None:
            return  # an event-stream field with no data (an id, a retry): nothing on stdio
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


async def serve_stdio(player: Player, stdin: int = 0, stdout: int = 1) -> None:
    """Answer the client on ``stdin``/``stdout``. When the client closes its end, what it asked is still
    answered (a one-shot client writes its requests and closes at once); SIGINT/SIGTERM stop at once, and
    so does a recording that changed under the replay (``RecordingChanged`` is raised then)."""
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[bytes | None] = asyncio.Queue()
    threading.Thread(target=_read_lines, args=(stdin, loop, lines), name="wiretap-replay-stdin", daemon=True).start()
    stopped = asyncio.Event()

    def stop() -> None:
        stopped.set()
        lines.put_nowait(None)

    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop)
    player.when_failed(stop)
    outlet = StdoutOutlet(stdout)
    unprompted = asyncio.create_task(player.play_unprompted(outlet))
    running: set[asyncio.Task[None]] = set()
    try:
        while (line := await lines.get()) is not None:
            _take(player, outlet, line, running)
        player.client_gone()
        if running and not stopped.is_set():
            stopping = asyncio.create_task(stopped.wait())
            await asyncio.wait([*running, stopping], return_when=asyncio.FIRST_COMPLETED)
            while running and not stopped.is_set():
                await asyncio.wait([*running, stopping], return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
    finally:
        for task in [*running, unprompted]:
            task.cancel()
        await asyncio.gather(*running, unprompted, return_exceptions=True)
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)
    if player.failure is not None:
        raise player.failure


def _take(player: Player, outlet: StdoutOutlet, line: bytes, running: set[asyncio.Task[None]]) -> None:
    """One line from the client: requests are answered concurrently; what cannot be read as JSON-RPC
    gets an error when it names an id to answer (a line that is not JSON at all is passed over)."""
    if not line.strip():
        return
    parsed = jsonrpc.parse(line)
    for message in parsed.messages:
        if is_request(message):
            task = asyncio.create_task(player.perform(player.plan(message), outlet))
            running.add(task)
            task.add_done_callback(running.discard)
        elif is_response(message):
            player.client_response(message)
        else:
            player.notification(message)
    for error in parsed.errors:
        if error["id"] is not None:
            task = asyncio.create_task(outlet.send(Step(0.0), error))
            running.add(task)
            task.add_done_callback(running.discard)
