"""The floor a logging stdio relay should beat: asyncio, one ``readline`` per message, one log write per line.

    python bench/minimal_relay.py LOGFILE -- SERVER [ARGS...]

Spawns SERVER with piped stdin/stdout (stderr is inherited), relays whole lines client→server and
server→client, and appends each line to LOGFILE as ``{"t":…,"dir":"c2s"|"s2c","msg":<line>}`` with
one unbuffered write per line (the line is spliced in unparsed). It forwards a line only once it is
complete, so unlike a byte relay it holds a whole message in memory: readline's limit is 1 GiB.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time

LIMIT = 1 << 30


async def relay(argv: list[str], log_fd: int) -> int:
    loop = asyncio.get_running_loop()
    start = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=LIMIT
    )
    assert proc.stdin is not None and proc.stdout is not None

    client_in = asyncio.StreamReader(limit=LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(client_in), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout)
    client_out = asyncio.StreamWriter(transport, protocol, None, loop)

    def log(direction: bytes, line: bytes) -> None:
        body = line[:-1] if line.endswith(b"\n") else line
        head = b'{"t":%.6f,"dir":"%s","msg":' % (time.monotonic() - start, direction)
        os.writev(log_fd, [head, body, b"}\n"])

    async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, direction: bytes) -> None:
        while True:
            line = await reader.readline()
            if not line:
                break
            writer.write(line)
            await writer.drain()
            log(direction, line)

    async def client_to_server() -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            await pump(client_in, proc.stdin, b"c2s")
        proc.stdin.close()

    async def server_to_client() -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            await pump(proc.stdout, client_out, b"s2c")

    up = asyncio.create_task(client_to_server())
    await server_to_client()
    returncode = await proc.wait()
    up.cancel()
    return returncode


def main() -> int:
    args = sys.argv[1:]
    if len(args) < 3 or args[1] != "--":
        print("usage: minimal_relay.py LOGFILE -- SERVER [ARGS...]", file=sys.stderr)
        return 2
    log_fd = os.open(args[0], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        returncode = asyncio.run(relay(args[2:], log_fd))
    finally:
        os.close(log_fd)
    return returncode if returncode >= 0 else 128 - returncode


if __name__ == "__main__":
    sys.exit(main())
