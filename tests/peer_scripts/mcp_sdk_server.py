"""An MCP stdio server on the real MCP Python SDK, for tests/e2e/test_real_mcp_sdk.py.

Runs in the peer venv's python, not the test python. Its stdin and stdout pass through byte-exact
tees into ``WIRE_LOG.in`` and ``WIRE_LOG.out``: what the server itself read and wrote, to compare a
recording with. ``--era both`` serves as ``MCPServer.run()`` does (the client's first request picks
the era); ``--era legacy`` serves the initialize handshake only, like the SDK's HTTP session manager.
``--linger`` keeps the process alive after its stdin closes, until a signal ends it;
``--ignore-sigterm`` leaves only SIGKILL (or another signal) to end it.
"""

from __future__ import annotations

import argparse
import io
import os
import signal
import sys
from typing import BinaryIO

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server

server = MCPServer("wiretap-sdk-peer", version="1.0.0")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def big_text(lines: int) -> str:
    """A long, deterministic text."""
    return "\n".join(f"line {i:05d} " + "0123456789abcdef" * 4 for i in range(lines))


@server.tool()
def shout_to_stderr(text: str) -> str:
    """Write a line to the server's stderr."""
    print(f"sdk-peer stderr: {text}", file=sys.stderr, flush=True)
    return f"logged {text!r}"


@server.tool()
async def count(n: int, ctx: Context) -> str:
    """Report progress n times."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i}")
    return f"counted to {n}"


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ToolError("deliberate failure")


class TeeIn(io.RawIOBase):
    def __init__(self, fd: int, log: BinaryIO) -> None:
        self._fd, self._log = fd, log

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = os.read(self._fd, len(buffer))
        buffer[: len(data)] = data
        self._log.write(data)
        self._log.flush()
        return len(data)


class TeeOut(io.RawIOBase):
    def __init__(self, fd: int, log: BinaryIO) -> None:
        self._fd, self._log = fd, log

    def writable(self) -> bool:
        return True

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        written = os.write(self._fd, data)
        self._log.write(bytes(data[:written]))
        self._log.flush()
        return written


async def serve(era: str, log_in: BinaryIO, log_out: BinaryIO) -> None:
    # The same text layer as the SDK's own stdio_server(), over the tees.
    stdin = io.TextIOWrapper(io.BufferedReader(TeeIn(0, log_in)), encoding="utf-8", errors="replace")
    stdout = io.TextIOWrapper(io.BufferedWriter(TeeOut(1, log_out)), encoding="utf-8")
    lowlevel = server._lowlevel_server  # MCPServer.run_stdio_async() drives exactly this
    options = lowlevel.create_initialization_options()
    async with stdio_server(anyio.wrap_file(stdin), anyio.wrap_file(stdout)) as (read_stream, write_stream):
        if era == "legacy":
            async with lowlevel.lifespan(lowlevel) as state:
                await serve_loop(lowlevel, read_stream, write_stream, lifespan_state=state, init_options=options)
        else:
            await lowlevel.run(read_stream, write_stream, options)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--wire-log", required=True)
    parser.add_argument("--era", choices=["both", "legacy"], default="both")
    parser.add_argument("--linger", action="store_true")
    parser.add_argument("--ignore-sigterm", action="store_true")
    args = parser.parse_args()
    if args.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with open(args.wire_log + ".in", "wb") as log_in, open(args.wire_log + ".out", "wb") as log_out:
        anyio.run(serve, args.era, log_in, log_out)
    if args.linger:
        while True:
            signal.pause()


if __name__ == "__main__":
    main()
