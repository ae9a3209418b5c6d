"""A scenario aiohttp application on loopback, on an event loop and thread of its own for the length of a
``with`` block (the aiohttp sibling of ``threaded_http``)."""

from __future__ import annotations

import asyncio
import ssl
import threading
from typing import Self

from aiohttp import web


class ThreadedApp:
    """``with Scenario() as up: up.url``. A scenario builds its routes in ``app()``; ``url`` is the origin
    plus ``PATH``."""

    PATH = ""
    SHUTDOWN_TIMEOUT = 60.0
    """aiohttp's default: how long open handlers get when the block ends."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        self.ssl_context = ssl_context
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        raise NotImplementedError

    def closing(self) -> None:
        """Called on the test's thread before the server stops: end what would hold the shutdown up."""

    def __enter__(self) -> Self:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self.closing()
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _start(self) -> None:
        self._runner = web.AppRunner(self.app(), handle_signals=False, shutdown_timeout=self.SHUTDOWN_TIMEOUT)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self.ssl_context)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"{'https' if self.ssl_context else 'http'}://127.0.0.1:{port}{self.PATH}"
