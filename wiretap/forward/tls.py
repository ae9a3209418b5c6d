"""TLS over a connection that is already open (a CONNECT tunnel), with memory BIOs.

asyncio's ``start_tls`` cannot be given bytes already read, and the proxy must read the tunnel's first
byte to tell a TLS ClientHello from plain HTTP: so the layer is ours. It sits between the socket's
transport and the HTTP connection, which sees an ordinary transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from typing import Any

_READ = 1 << 16


class TlsLayer(asyncio.Protocol):
    """The server side of TLS on ``raw``; ``inner`` gets the plaintext once the handshake is done."""

    def __init__(self, context: ssl.SSLContext, inner: asyncio.Protocol, server_hostname: str | None = None) -> None:
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._ssl = context.wrap_bio(self._incoming, self._outgoing, server_side=True)
        self.inner = inner
        self.raw: asyncio.Transport | None = None
        self.plain = PlainTransport(self)
        self.handshaken = False
        self.failed: str | None = None
        self._inner_lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.raw = transport  # type: ignore[assignment]  # (uvloop's transports are not asyncio.Transport subclasses)

    def data_received(self, data: bytes) -> None:
        self._incoming.write(data)
        if not self.handshaken:
            try:
                self._ssl.do_handshake()
            except ssl.SSLWantReadError:
                self._send()
                return
            except (ssl.SSLError, OSError) as exc:
                self.failed = str(exc) or type(exc).__name__
                self._send()
                if self.raw is not None:
                    self.raw.close()
                return
            self.handshaken = True
            self._send()
            self.inner.connection_made(self.plain)
        self._deliver()

    def _deliver(self) -> None:
        while True:
            try:
                chunk = self._ssl.read(_READ)
            except ssl.SSLWantReadError:
                break
            except ssl.SSLZeroReturnError:
                self._send()
                keep = self.inner.eof_received()
                if not keep and self.raw is not None:
                    self.raw.close()
                return
            except ssl.SSLError as exc:
                self.failed = str(exc) or type(exc).__name__
                if self.raw is not None:
                    self.raw.abort()
                return
            if not chunk:
                break
            self.inner.data_received(chunk)
            if self.raw is None or self.raw.is_closing():
                break
        self._send()

    def _send(self) -> None:
        pending = self._outgoing.read()
        if pending and self.raw is not None and not self.raw.is_closing():
            self.raw.write(pending)

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                written = self._ssl.write(view)
            except ssl.SSLError:
                break
            view = view[written:]
        self._send()

    def eof_received(self) -> bool:
        if self.handshaken:
            return bool(self.inner.eof_received())
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.raw = None
        if self.handshaken and not self._inner_lost:
            self._inner_lost = True
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.handshaken:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.handshaken:
            self.inner.resume_writing()

    def close(self) -> None:
        if self.raw is None or self.raw.is_closing():
            return
        with contextlib.suppress(ssl.SSLError):
            self._ssl.unwrap()
        self._send()
        self.raw.close()


class PlainTransport(asyncio.Transport):
    """What the HTTP connection inside the tunnel writes to and pauses: the layer, then the socket."""

    def __init__(self, layer: TlsLayer) -> None:
        super().__init__()
        self._layer = layer

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self._layer.write(bytes(data))

    def close(self) -> None:
        self._layer.close()

    def abort(self) -> None:
        if self._layer.raw is not None:
            self._layer.raw.abort()

    def can_write_eof(self) -> bool:
        return False  # (a TLS close_notify ends both directions: there is no half-close inside the tunnel)

    def is_closing(self) -> bool:
        raw = self._layer.raw
        return raw is None or raw.is_closing()

    def pause_reading(self) -> None:
        if self._layer.raw is not None:
            self._layer.raw.pause_reading()

    def resume_reading(self) -> None:
        if self._layer.raw is not None:
            self._layer.raw.resume_reading()

    def is_reading(self) -> bool:
        raw = self._layer.raw
        return raw is not None and raw.is_reading()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        if name == "ssl_object":
            return self._layer._ssl
        raw = self._layer.raw
        return default if raw is None else raw.get_extra_info(name, default)

    def get_write_buffer_size(self) -> int:
        raw = self._layer.raw
        return 0 if raw is None else raw.get_write_buffer_size()
