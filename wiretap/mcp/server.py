"""The stdio loop: a line from the client in, the protocol's answer out, until end of input."""

from __future__ import annotations

from typing import BinaryIO

from wiretap.mcp.protocol import Protocol, encode
from wiretap.wire import jsonrpc

MAX_LINE = 4 << 20
"""A longer request line is read past and answered with an error: the server's memory stays bounded."""


def serve(protocol: Protocol, stdin: BinaryIO, stdout: BinaryIO) -> None:
    while line := stdin.readline(MAX_LINE):
        if len(line) == MAX_LINE and not line.endswith(b"\n"):
            while (rest := stdin.readline(1 << 20)) and not rest.endswith(b"\n"):
                pass
            answer: bytes | None = encode(
                jsonrpc.error(jsonrpc.INVALID_REQUEST, f"Invalid Request: a line over {MAX_LINE >> 20} MiB")
            )
        else:
            answer = protocol.receive(line)
        if answer is not None:
            stdout.write(answer)
            stdout.flush()
