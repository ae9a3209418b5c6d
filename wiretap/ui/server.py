"""The HTTP side of ``wiretap ui``: one page, a few JSON endpoints and a push stream, on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import socket
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from aiohttp import web

from wiretap.recording.folders import is_session
from wiretap.ui.guard import TOKEN_PREFIX, allowed_hosts, guard
from wiretap.ui.reports import Reports
from wiretap.ui.source import Source
from wiretap.ui.views import Query, Views

MAX_WINDOW = 500
"""Rows per request: the page asks for what it shows, never for everything."""
MAX_JSON = 200_000
"""Characters of one event's JSON sent to the page."""
MAX_SOURCES = 4
PUSH_SECONDS = 0.1
"""At most this often a page hears that rows or the report changed."""
HEARTBEAT_SECONDS = 15.0
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
STATIC = {
    "/": ("index.html", "text/html"),
    "/app.js": ("app.js", "text/javascript"),
    "/app.css": ("app.css", "text/css"),
}


@dataclass
class Watched:
    source: Source
    views: Views
    reports: Reports


class Hub:
    """The sources pages look at: the one named on the command line, or any session of a sessions folder."""

    def __init__(self, path: Path, *, root: bool) -> None:
        self.path = path
        self.root = root
        self._watched: dict[str, Watched] = {}

    def sessions(self) -> list[str]:
        if not self.root:
            return []
        return sorted((p.name for p in self.path.iterdir() if is_session(p)), reverse=True)

    def default(self) -> str:
        found = self.sessions()
        return found[0] if found else ""

    def get(self, name: str) -> Watched:
        if not self.root:
            name = ""
        elif name not in self._watched and name not in self.sessions():
            name = self.default()
        watched = self._watched.pop(name, None)
        if watched is None:
            folder = self.path / name if self.root else self.path
            source = Source(folder, session=self.root or folder.is_dir())
            watched = Watched(source, Views(source), Reports(source))
            source.start()
            watched.reports.start()
        self._watched[name] = watched
        while len(self._watched) > MAX_SOURCES:
            old = self._watched.pop(next(iter(self._watched)))
            asyncio.get_running_loop().create_task(_stop(old))
        return watched

    async def close(self) -> None:
        for watched in self._watched.values():
            await _stop(watched)


async def _stop(watched: Watched) -> None:
    await watched.reports.stop()
    await watched.source.stop()


async def _no_content(_: web.Request) -> web.Response:
    return web.Response(status=204)


def _json(data: Any) -> web.Response:
    return web.json_response(data, dumps=lambda d: json.dumps(d, ensure_ascii=False))


def _int(request: web.Request, name: str, default: int) -> int:
    try:
        return int(request.query.get(name, default))
    except ValueError:
        raise web.HTTPBadRequest(text=f"{name} must be an integer\n") from None


class Routes:
    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    def watched(self, request: web.Request) -> Watched:
        return self.hub.get(request.query.get("session", ""))

    async def static(self, request: web.Request) -> web.Response:
        path = request.path
        if "token" in request.match_info:  # /t/TOKEN/app.js is /app.js
            path = "/" + path.split("/", 3)[3] if path.count("/") >= 3 else "/"
        name, content_type = STATIC[path]
        body = resources.files("wiretap.ui").joinpath("static", name).read_bytes()
        return web.Response(body=body, content_type=content_type, charset="utf-8")

    async def state(self, request: web.Request) -> web.Response:
        watched = self.watched(request)
        source = watched.source
        return _json(
            {
                "title": source.title,
                "session": source.session,
                "running": source.manifest.get("running"),
                "servers": source.servers(),
                "sessions": self.hub.sessions(),
                "current": source.path.name if self.hub.root else None,
                "rows": len(source.order),
                "report": watched.reports.version,
            }
        )

    async def rows(self, request: web.Request) -> web.Response:
        watched = self.watched(request)
        view = watched.views.get(Query.of(request.query))
        while view.catch_up():
            await asyncio.sleep(0)
        start = _int(request, "from", 0)
        count = max(0, min(MAX_WINDOW, _int(request, "count", 100)))
        rows = watched.source.rows(iter(view.window(start, count)))
        return _json({"total": len(view), "all": len(watched.source.order), "from": start, "rows": rows})

    async def position(self, request: web.Request) -> web.Response:
        watched = self.watched(request)
        view = watched.views.get(Query.of(request.query))
        while view.catch_up():
            await asyncio.sleep(0)
        return _json({"at": view.index_of(_int(request, "id", -1))})

    async def event(self, request: web.Request) -> web.Response:
        source = self.watched(request).source
        position = _int(request, "id", -1)
        if not 0 <= position < len(source.order):
            raise web.HTTPNotFound(text="no such row\n")
        recording, n = source.at(position)
        try:
            text = json.dumps(recording.event(n), indent=2, ensure_ascii=False)
        except (ValueError, RecursionError, OSError) as exc:
            text = f"cannot show this event: {exc!r}"[:500]
        if len(text) > MAX_JSON:
            text = text[:MAX_JSON] + f"\n… {len(text) - MAX_JSON} more characters (see wiretap show --json)"
        pair = recording.pairs[n]
        return _json(
            {
                "id": position,
                "server": recording.name,
                "json": text,
                "pair": recording.positions[pair] if 0 <= pair < len(recording.positions) else None,
                "pair_is_response": pair > n,
            }
        )

    async def report(self, request: web.Request) -> web.Response:
        reports = self.watched(request).reports
        return _json({"version": reports.version, "servers": reports.servers})

    async def stream(self, request: web.Request) -> web.StreamResponse:
        watched = self.watched(request)
        source, reports = watched.source, watched.reports
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store"})
        response.force_close()  # a stream is never followed by another request on its connection
        await response.prepare(request)
        sent: tuple[int, int, int] | None = None
        while not source.stopped:
            now = (len(source.order), reports.version, len(source.recordings))
            if now != sent:
                data = {"rows": now[0], "report": now[1], "servers": now[2], "running": source.manifest.get("running")}
                await response.write(f"data: {json.dumps(data)}\n\n".encode())
                sent = now
            async with source.changed:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(source.changed.wait(), HEARTBEAT_SECONDS)
            if (len(source.order), reports.version, len(source.recordings)) == sent and not source.stopped:
                await response.write(b": still here\n\n")
            await asyncio.sleep(PUSH_SECONDS)
        return response


@web.middleware
async def _headers(request: web.Request, handler: Any) -> web.StreamResponse:
    response: web.StreamResponse = await handler(request)
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Cross-Origin-Resource-Policy"] = "same-origin"
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(64)
    return sock


def app_for(hub: Hub, host: str, port: int, token: str) -> web.Application:
    routes = Routes(hub)
    app = web.Application(middlewares=[guard(allowed_hosts(host, port), token, port), _headers])
    handlers = dict.fromkeys(STATIC, routes.static) | {
        "/favicon.ico": _no_content,
        "/api/state": routes.state,
        "/api/rows": routes.rows,
        "/api/position": routes.position,
        "/api/event": routes.event,
        "/api/report": routes.report,
        "/api/stream": routes.stream,
    }
    for path, handler in handlers.items():
        app.router.add_get(path, handler)
        app.router.add_get(TOKEN_PREFIX + path, handler)
    return app


def new_token() -> str:
    return secrets.token_urlsafe(24)


def url_of(host: str, port: int, token: str) -> str:
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/t/{token}/"


async def serve(hub: Hub, sock: socket.socket, stop: asyncio.Event, token: str) -> None:
    host, port = sock.getsockname()[:2]
    runner = web.AppRunner(app_for(hub, host, port, token), handle_signals=False, access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    hub.get("")  # start indexing before the first page asks
    try:
        await stop.wait()
    finally:
        await hub.close()  # ends the push streams, so that nothing holds the shutdown up
        await runner.cleanup()
