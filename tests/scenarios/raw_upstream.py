"""An HTTP upstream that sees bodies exactly as they arrive (no decoding), for byte-for-byte proxy tests.

``POST /raw`` keeps the raw body (``up.bodies``) and answers a small JSON-RPC result;
``GET /bomb`` answers a gzip body that inflates to ``BOMB_INFLATED`` bytes;
``GET /flood?n=N`` streams N numbered SSE events (``data: {... "n": i ...}``) as fast as it can.
"""

from __future__ import annotations

import json
import zlib
from functools import cache
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from scenarios.threaded_http import Served, ThreadedHTTP

BOMB_INFLATED = 160 << 20


@cache
def bomb() -> bytes:
    """A gzip stream of a JSON string of BOMB_INFLATED zeros' worth, built without holding it inflated."""
    gz = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"0" * (1 << 20)
    parts = [gz.compress(b'{"jsonrpc":"2.0","id":1,"result":"')]
    parts += [gz.compress(block) for _ in range(BOMB_INFLATED >> 20)]
    parts += [gz.compress(b'"}'), gz.flush()]
    return b"".join(parts)


def sse_event(n: int) -> bytes:
    return b'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"n":%d}}\n\n' % n


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Served

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.seen.append(body)
        reply = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"received": len(body)}}).encode()
        self._send(200, reply, {"Content-Type": "application/json"})

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/bomb":
            self._send(200, bomb(), {"Content-Type": "application/json", "Content-Encoding": "gzip"})
        elif parts.path == "/flood":
            self._flood(int(parse_qs(parts.query)["n"][0]))
        else:
            self._send(404, b"", {})

    def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _flood(self, count: int) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            for start in range(0, count, 64):
                self.wfile.write(b"".join(sse_event(n) for n in range(start, min(count, start + 64))))
        except OSError:
            pass
        self.close_connection = True


class RawUpstream(ThreadedHTTP):
    def __init__(self) -> None:
        super().__init__(_Handler)

    @property
    def bodies(self) -> list[Any]:
        return self.seen
