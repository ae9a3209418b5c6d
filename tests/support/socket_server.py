"""A loopback socket server for upstreams of known behaviour: each connection handled on its own thread by
the subclass's ``handle``, which sees the bytes exactly as they arrive."""

from __future__ import annotations

import socket
import threading
from abc import ABC, abstractmethod


class SocketServer(ABC):
    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()

    @abstractmethod
    def handle(self, conn: socket.socket) -> None:
        """Serve one connection."""

    def close(self) -> None:
        self.server.close()
