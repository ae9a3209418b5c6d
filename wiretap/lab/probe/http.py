"""The probe over Streamable HTTP (aiohttp), one endpoint at ``/mcp``. A request is answered with JSON
when its answer is all there is, or with an SSE stream carrying what belongs with it (progress, the
2025-11-25 questions of a held ``tasks/result``) and then its answer. Notifications and responses get
202. There is no standalone GET stream (405), so a message tied to no request is logged as unsent. A client
that closes a request's connection cancels it (handlers are cancelled on disconnect)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Hashable
from pathlib import Path

from aiohttp import web

from wiretap.errors import Unavailable
from wiretap.lab.probe.core import Send
from wiretap.lab.probe.loop import ProbeLoop
from wiretap.wire.jsonrpc import id_key

PATH = "/mcp"
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class HttpProbe(ProbeLoop):
    def __init__(self, log_path: Path | None) -> None:
        super().__init__(log_path)
        self.streams: dict[Hashable, asyncio.Queue[Send]] = {}

    def deliver(self, send: Send) -> bool:
        stream = self.streams.get(id_key(send.related)) if send.related is not None else None
        if stream is None:
            return False
        stream.put_nowait(send)
        return True

    async def handle(self, http: web.Request) -> web.StreamResponse:
        if http.path != PATH:
            return web.json_response({"error": f"nothing at {http.path}; the probe is at {PATH}"}, status=404)
        if http.method != "POST":
            return web.Response(status=405, headers={"Allow": "POST"})
        stamps = (time.time_ns(), time.monotonic_ns())
        body = await http.read()
        try:
            message = json.loads(body)
        except ValueError:
            message = None
        is_request = isinstance(message, dict) and "method" in message and message.get("id") is not None
        if not is_request:
            out = self.feed(body, stamps)
            if any(s.related is None and s.ends for s in out.sends):
                # An error about a body that was no request (a parse error) goes back on its own POST.
                error = next(s for s in out.sends if s.ends)
                return web.Response(body=error.line, status=400, content_type="application/json")
            return web.Response(status=202)
        assert isinstance(message, dict)
        key = id_key(message["id"])
        queue: asyncio.Queue[Send] = asyncio.Queue()
        self.streams[key] = queue
        try:
            self.feed(body, stamps)
            first = await queue.get()
            if first.ends:
                return web.Response(body=first.line, content_type="application/json")
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream", **SSE_HEADERS})
            await response.prepare(http)
            send = first
            while True:
                await response.write(b"event: message\ndata: " + send.line.rstrip(b"\n") + b"\n\n")
                if send.ends:
                    break
                send = await queue.get()
            await response.write_eof()
            return response
        except (asyncio.CancelledError, ConnectionResetError):
            self.emit(self.probe.closed(message["id"]))
            raise
        finally:
            self.streams.pop(key, None)


async def serve(host: str, port: int, log_path: Path | None, ready: asyncio.Future[str] | None = None) -> None:
    """Serve until cancelled; print the endpoint's URL (and set ``ready`` to it) once it listens."""
    probe = HttpProbe(log_path)
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", probe.handle)
    runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.5, handler_cancellation=True)
    await runner.setup()
    how = "cancelled"
    try:
        site = web.TCPSite(runner, host, port)
        try:
            await site.start()
        except OSError as exc:
            raise Unavailable(f"--http {host}:{port}: cannot listen there ({exc.strerror or exc})") from None
        sockets = getattr(site._server, "sockets", None) or []
        bound = sockets[0].getsockname()[1] if sockets else port
        url = f"http://{host if ':' not in host else f'[{host}]'}:{bound}{PATH}"
        probe.log.write(event="listening", transport="http", url=url)
        print(url, flush=True)
        if ready is not None:
            ready.set_result(url)
        how = await _signalled()
    finally:
        probe.finish(how)
        await runner.cleanup()


async def _signalled() -> str:
    import signal

    loop = asyncio.get_running_loop()
    ended: asyncio.Future[str] = loop.create_future()

    def end(name: str) -> None:
        if not ended.done():
            ended.set_result(name)

    try:
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(number, end, signal.Signals(number).name)
    except (RuntimeError, NotImplementedError, ValueError):
        pass  # not the main thread (a test serving in-process): serve until cancelled
    return await ended
