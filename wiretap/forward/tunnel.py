"""A blind CONNECT tunnel: bytes both ways between the client and the host it named (directly, or through
the proxy the environment names), nothing read and nothing recorded."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from typing import cast

from wiretap.forward.answers import plain_answer
from wiretap.forward.chain import open_via, parent_for


class Tunnel:
    """A blind tunnel: bytes both ways, nothing read, nothing recorded."""

    def __init__(
        self,
        client: asyncio.Transport,
        first: bytes,
        env: Mapping[str, str],
        connect_timeout: float,
        opened: Callable[[], None],
        closed: Callable[[Tunnel], None],
    ) -> None:
        self.client = client
        self.first = first
        self.env = env
        self.connect_timeout = connect_timeout
        self.opened = opened
        self.closed = closed
        """Told once, when the tunnel is over."""
        self.upstream: asyncio.Transport | None = None
        self._over = False
        self.ended: set[bool] = set()
        """The directions whose sender has ended (True: towards the client)."""

    async def open(self, host: str, port: int) -> None:
        loop = asyncio.get_running_loop()
        parent = parent_for(self.env, "https", host)

        def pipe() -> _Pipe:
            return _Pipe(self, to_client=True)

        try:
            if parent is not None:
                opened, _ = await asyncio.wait_for(open_via(parent, host, port, pipe), self.connect_timeout)
            else:
                opened, _ = await asyncio.wait_for(loop.create_connection(pipe, host, port), self.connect_timeout)
        except (OSError, TimeoutError) as exc:
            reason = os.strerror(exc.errno) if isinstance(exc, OSError) and exc.errno else str(exc) or "timed out"
            self.client.write(plain_answer(502, "Bad Gateway", f"wiretap: cannot reach {host}:{port}: {reason}\n"))
            self.client.close()
            self._finish()
            return
        upstream = cast("asyncio.Transport", opened)
        self.upstream = upstream
        self.opened()
        if self.client.is_closing():
            self.close()
            return
        self.client.set_protocol(_Pipe(self, to_client=False))
        self.client.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        if self.first:
            upstream.write(self.first)
        self.client.resume_reading()

    def close(self) -> None:
        for transport in (self.client, self.upstream):
            if transport is not None and not transport.is_closing():
                transport.close()
        self._finish()

    def _finish(self) -> None:
        if not self._over:
            self._over = True
            self.closed(self)


class _Pipe(asyncio.Protocol):
    def __init__(self, tunnel: Tunnel, *, to_client: bool) -> None:
        self.tunnel = tunnel
        self.to_client = to_client

    def _other(self) -> asyncio.Transport | None:
        return self.tunnel.client if self.to_client else self.tunnel.upstream

    def _own(self) -> asyncio.Transport | None:
        return self.tunnel.upstream if self.to_client else self.tunnel.client

    def data_received(self, data: bytes) -> None:
        other = self._other()
        if other is not None and not other.is_closing():
            other.write(data)

    def eof_received(self) -> bool:
        self.tunnel.ended.add(self.to_client)
        other = self._other()
        if len(self.tunnel.ended) == 2 or other is None or other.is_closing() or not other.can_write_eof():
            self.tunnel.close()  # both ways ended: nothing more can pass, so the sockets go
            return False
        other.write_eof()
        return True

    def connection_lost(self, exc: BaseException | None) -> None:
        self.tunnel.close()

    def pause_writing(self) -> None:
        other = self._other()
        if other is not None:
            other.pause_reading()

    def resume_writing(self) -> None:
        other = self._other()
        if other is not None and not other.is_closing():
            other.resume_reading()
