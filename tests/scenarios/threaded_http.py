"""A scenario HTTP server on loopback, served on a thread of its own for the length of a ``with`` block."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Served(ThreadingHTTPServer):
    daemon_threads = True
    seen: list[Any]
    """What the handler noted (bodies, refused ids…): the scenario's own truth."""


class ThreadedHTTP:
    """``with Scenario() as up: up.url``: the server answers on ``url`` until the block ends."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], path: str = "") -> None:
        self._server = Served(("127.0.0.1", 0), handler)
        self._server.seen = []
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}{path}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def seen(self) -> list[Any]:
        return self._server.seen

    def __enter__(self) -> ThreadedHTTP:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
