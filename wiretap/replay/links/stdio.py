"""The link to a live stdio server: its pipes, its stderr passed on, and how it exited."""

from __future__ import annotations

import asyncio
import contextlib
import os

from wiretap.replay.drive import ClientOptions, Driver, deliver
from wiretap.replay.links.process import WIRETAP, stop
from wiretap.replay.player import dumps
from wiretap.replay.result import ClientResult, Unreachable
from wiretap.replay.script import Json, Script, Sent
from wiretap.transports.process import signal_name
from wiretap.wire.framing import LineFramer


class StdioLink:
    """A server process (through ``wiretap tap`` when recording), spoken to on its pipes."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def send(self, item: Sent, message: Json) -> None:
        assert self.proc.stdin is not None
        with contextlib.suppress(ConnectionError):
            self.proc.stdin.write(dumps(message).encode() + b"\n")
            await self.proc.stdin.drain()

    async def close(self) -> None:
        assert self.proc.stdin is not None
        with contextlib.suppress(ConnectionError, OSError):
            self.proc.stdin.close()
            await self.proc.stdin.wait_closed()

    async def read(self, driver: Driver) -> None:
        assert self.proc.stdout is not None
        framer = LineFramer()
        while chunk := await self.proc.stdout.read(1 << 16):
            for frame in framer.feed(chunk):
                deliver(bytes(frame), driver, None)
        last = framer.close()
        if last is not None:
            deliver(bytes(last), driver, None)


STDERR_FD = 2
STDERR_TAIL = 4096
"""How much of the end of the server's stderr is kept, to say why it exited."""
STDERR_SETTLE = 1.0
"""How long to wait for the rest of a dead server's stderr (a grandchild may hold the pipe open)."""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


async def _pass_stderr(stream: asyncio.StreamReader, tail: bytearray) -> None:
    """The server's stderr, passed on to ours as it comes (as when it was inherited: straight to file
    descriptor 2, in a thread so a slow reader stalls nothing else); its end kept in ``tail``."""
    while chunk := await stream.read(1 << 16):
        with contextlib.suppress(OSError):
            await asyncio.to_thread(_write_all, STDERR_FD, chunk)
        tail += chunk
        del tail[:-STDERR_TAIL]


def how_it_exited(returncode: int) -> str:
    return f"was killed by {signal_name(-returncode)}" if returncode < 0 else f"exited with status {returncode}"


def last_words(stderr_tail: bytes) -> str:
    """The last lines a server wrote on stderr, on one line."""
    lines = [line.strip() for line in stderr_tail.decode("utf-8", errors="replace").splitlines() if line.strip()]
    said = " / ".join(lines[-3:])
    return "…" + said[-299:] if len(said) > 300 else said


async def _watch_exit(
    proc: asyncio.subprocess.Process,
    reader: asyncio.Task[None],
    pump: asyncio.Task[None],
    tail: bytearray,
    driver: Driver,
) -> None:
    """Once the server has closed its stdout and exited, tell the driver how."""
    await asyncio.gather(reader, return_exceptions=True)
    returncode = await proc.wait()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(pump), STDERR_SETTLE)
    driver.server_exited(how_it_exited(returncode), last_words(bytes(tail)))


async def replay_stdio(script: Script, server: list[str], options: ClientOptions) -> ClientResult:
    command = [*WIRETAP, "tap", "--out", str(options.out), "--", *server] if options.out is not None else server
    try:
        proc = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
    except OSError as exc:
        raise Unreachable(f"cannot start {server[0]}: {exc.strerror or exc}") from None
    assert proc.stderr is not None
    link = StdioLink(proc)
    driver = Driver(script, options)
    reader = asyncio.create_task(link.read(driver))
    tail = bytearray()
    pump = asyncio.create_task(_pass_stderr(proc.stderr, tail))
    watch = asyncio.create_task(_watch_exit(proc, reader, pump, tail, driver))
    try:
        result = await driver.run_until_lost(link)
    finally:
        await link.close()
        status = await stop(proc)
        watch.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(pump), STDERR_SETTLE)
        for task in (reader, pump):
            task.cancel()
        await asyncio.gather(reader, pump, watch, return_exceptions=True)
    result.server_status = status
    return result
