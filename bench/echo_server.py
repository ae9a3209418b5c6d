"""A tiny newline-delimited JSON-RPC server for the stdio benchmarks (not an MCP implementation).

Requests (one JSON object per line on stdin), each answered on stdout:

* ``{"id": N, "method": "tools/call", "params": {"arguments": {"size": S, ...}}}``: a response line
  of exactly S bytes (newline not counted), shaped like an MCP ``tools/call`` text result.
* ``{"id": N, "method": "bench/flood", "params": {"count": C, "size": S}}``: C notifications of
  S bytes each, one ``write`` per message as a server that flushes every message does, then a
  small response.
* ``{"id": N, "method": "bench/big", "params": {"size": S}}``: one response line of exactly S
  bytes, streamed in 1 MiB writes, so that this process never holds the line (its own RSS stays
  small, and cannot be mistaken for the relay's peak).

Padding is plain lorem-ipsum text: realistic for tool results, and free of anything a recorder's
credential redaction could match. It exits at end of input.
"""

from __future__ import annotations

import json
import os
import sys

LOREM = (
    "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut "
    "labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris "
    "nisi aliquip ex ea commodo consequat duis aute irure in reprehenderit voluptate velit esse "
    "cillum fugiat nulla pariatur excepteur sint occaecat cupidatat non proident sunt culpa qui "
    "officia deserunt mollit anim id est laborum"
)
WORDS = LOREM.split()


def _make_block(n: int) -> bytes:
    out: list[str] = []
    total, i = 0, 0
    while total < n:
        word = WORDS[(i * 7 + i // len(WORDS)) % len(WORDS)]
        out.append(word)
        total += len(word) + 1
        i += 1
    return " ".join(out).encode()[:n]


BLOCK = _make_block(1 << 20)
"""1 MiB of padding text (ASCII, no quotes or backslashes): sliced for any message size."""


def pad(n: int) -> bytes:
    if n <= len(BLOCK):
        return BLOCK[:n]
    whole, rest = divmod(n, len(BLOCK))
    return BLOCK * whole + BLOCK[:rest]


def fit(prefix: bytes, suffix: bytes, size: int) -> bytes:
    """``prefix + padding + suffix`` of exactly ``size`` bytes (at least the frame itself)."""
    return prefix + pad(max(0, size - len(prefix) - len(suffix))) + suffix


def write_all(data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


RESULT_PREFIX = b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"'
RESULT_SUFFIX = b'"}],"isError":false}}'
NOTE_PREFIX = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"'
NOTE_SUFFIX = b'"}}'


def result(req_id: int, size: int) -> bytes:
    return fit(RESULT_PREFIX % req_id, RESULT_SUFFIX, size) + b"\n"


def flood(req_id: int, count: int, size: int) -> None:
    note = fit(NOTE_PREFIX, NOTE_SUFFIX, size) + b"\n"
    for _ in range(count):
        write_all(note)
    write_all(b'{"jsonrpc":"2.0","id":%d,"result":{"sent":%d}}\n' % (req_id, count))


def big(req_id: int, size: int) -> None:
    prefix, suffix = RESULT_PREFIX % req_id, RESULT_SUFFIX + b"\n"
    left = size - len(prefix) - len(RESULT_SUFFIX)
    write_all(prefix)
    while left > 0:
        n = min(left, len(BLOCK))
        write_all(memoryview(BLOCK)[:n])
        left -= n
    write_all(suffix)


def main() -> int:
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        request = json.loads(line)
        req_id, method, params = request.get("id"), request.get("method"), request.get("params") or {}
        if method == "tools/call":
            write_all(result(req_id, int(params["arguments"]["size"])))
        elif method == "bench/flood":
            flood(req_id, int(params["count"]), int(params["size"]))
        elif method == "bench/big":
            big(req_id, int(params["size"]))
        elif req_id is not None:
            write_all(b'{"jsonrpc":"2.0","id":%d,"error":{"code":-32601,"message":"no such method"}}\n' % req_id)
    return 0


if __name__ == "__main__":
    sys.exit(main())
