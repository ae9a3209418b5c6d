"""The lab agent on aiohttp: each request to the sans-IO agent, each answer written at its time, and the
process ended at a crash's. Every request and answer goes to the agent's own log (JSONL) with wall and
monotonic nanoseconds."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from aiohttp import web

from wiretap.errors import Unavailable
from wiretap.lab.a2a.agent import A2AAgent, Exit, Request
from wiretap.lab.log import LabLog as AgentLog


class AgentApp:
    def __init__(self, log: AgentLog) -> None:
        self.agent: A2AAgent | None = None
        self.log = log
        self._exits: list[asyncio.TimerHandle] = []

    async def handle(self, http: web.Request) -> web.StreamResponse:
        assert self.agent is not None
        self.log.requests += 1
        n = self.log.requests
        arrived = (time.time_ns(), time.monotonic_ns())
        body = await http.read()
        handled = self.agent.handle(Request(http.method, http.path_qs, body), time.monotonic())
        entry = {"method": http.method, "path": http.path_qs, "rpc": handled.rpc, "task": handled.task}
        self.log.write(arrived, n=n, event="request", **entry)
        if handled.exit is not None:
            self._schedule(handled.exit)
        answer = handled.answer
        assert answer is not None
        delay = answer.at - time.monotonic()
        if delay > 0:
            try:
                await asyncio.sleep(delay)
            except asyncio.CancelledError:
                self.log.write(n=n, event="abandoned")
                raise
        self.log.write(n=n, event="answer", status=answer.status)
        return web.Response(status=answer.status, body=answer.body, content_type=answer.content_type)

    def _schedule(self, leave: Exit) -> None:
        loop = asyncio.get_running_loop()
        delay = max(0.0, leave.at - time.monotonic())
        self._exits.append(loop.call_later(delay, self._crash, leave.status))

    def _crash(self, status: int) -> None:
        self.log.write(event="exit", status=status)
        sys.stdout.flush()
        os._exit(status)


async def serve(host: str, port: int, log_path: Path | None, ready: asyncio.Future[str] | None = None) -> None:
    """Serve until cancelled; print the agent's URL (and set ``ready`` to it) once it listens."""
    log = AgentLog(log_path)
    app_state = AgentApp(log)
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", app_state.handle)
    runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.5)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        try:
            await site.start()
        except OSError as exc:
            raise Unavailable(f"--http {host}:{port}: cannot listen there ({exc.strerror or exc})") from None
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        bound = sockets[0].getsockname()[1] if sockets else port
        url = f"http://{host if ':' not in host else f'[{host}]'}:{bound}"
        app_state.agent = A2AAgent(url)
        log.write(event="listening", url=url)
        print(url, flush=True)
        if ready is not None:
            ready.set_result(url)
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
        log.close()
