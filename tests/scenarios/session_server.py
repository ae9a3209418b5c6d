"""A scenario MCP HTTP server with known behaviour, for replay tests: stateful Streamable HTTP sessions,
SEP-1699 stream resumption, and the legacy (2024-11-05) HTTP+SSE transport. Runs on its own thread.

- ``/mcp``: ``initialize`` opens a session (a fresh ``Mcp-Session-Id``); an ``initialize`` that carries a
  session id is refused (400, "already initialized"), as the SDKs do; any other request needs a known
  session (404 otherwise) and is answered with how many requests that session has made, so a client that
  reuses another session's id gets other numbers. ``tools/call resumable`` answers on an event stream
  with a priming event (an ``id`` and a ``retry``, empty data) and closes it; a GET carrying
  ``Last-Event-ID`` gets the response on a new stream. DELETE ends the session.
- ``/sse`` + ``/messages``: the legacy transport. The GET stream starts with ``event: endpoint``; each
  POSTed request gets ``202 Accepted`` and its response on that stream.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from aiohttp import web
from scenarios.threaded_app import ThreadedApp

RETRY_MS = 50


class SessionServer(ThreadedApp):
    """``with SessionServer() as server: server.url``"""

    SHUTDOWN_TIMEOUT = 1.0

    def __init__(self) -> None:
        super().__init__()
        self.sessions: dict[str, int] = {}
        self.pending: dict[str, dict[str, Any]] = {}
        """Event id of a priming event → the response owed on resumption."""
        self.legacy: dict[str, asyncio.Queue[dict[str, Any]]] = {}
        self._ids = itertools.count(1)

    def closing(self) -> None:
        for queue in self.legacy.values():  # ends the legacy streams
            self._loop.call_soon_threadsafe(queue.put_nowait, {})

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/mcp", self.mcp)
        app.router.add_get("/sse", self.legacy_stream)
        app.router.add_post("/messages", self.legacy_post)
        return app

    def _answer(self, session: str, message: dict[str, Any]) -> dict[str, Any]:
        if message.get("method") == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "session-scenario", "version": "1.0.0"},
            }
        else:
            self.sessions[session] += 1
            result = {"method": message.get("method"), "requests_in_this_session": self.sessions[session]}
        return {"jsonrpc": "2.0", "id": message.get("id"), "result": result}

    async def mcp(self, request: web.Request) -> web.StreamResponse:
        session = request.headers.get("mcp-session-id")
        if request.method == "DELETE":
            self.sessions.pop(session or "", None)
            return web.Response(status=200)
        if request.method == "GET":
            return await self._resume(request)
        message = await request.json()
        if message.get("method") == "initialize":
            if session:
                return web.json_response({"error": "already initialized"}, status=400)
            session = f"session-{next(self._ids)}"
            self.sessions[session] = 0
            return web.json_response(self._answer(session, message), headers={"mcp-session-id": session})
        if session not in self.sessions:
            return web.json_response({"error": "session not found"}, status=404)
        if "id" not in message:
            return web.Response(status=202)
        answer = self._answer(session, message)
        if message.get("params", {}).get("name") != "resumable":
            return web.json_response(answer)
        event_id = f"{session}-e{next(self._ids)}"
        self.pending[event_id] = answer
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(f"id: {event_id}\nretry: {RETRY_MS}\ndata: \n\n".encode())
        await response.write_eof()  # closed before the response: the client must resume
        return response

    async def _resume(self, request: web.Request) -> web.StreamResponse:
        answer = self.pending.pop(request.headers.get("last-event-id", ""), None)
        if answer is None:
            return web.Response(status=405)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(f"id: resumed-{next(self._ids)}\ndata: {json.dumps(answer)}\n\n".encode())
        await response.write_eof()
        return response

    async def legacy_stream(self, request: web.Request) -> web.StreamResponse:
        session = f"legacy-{next(self._ids)}"
        self.sessions[session] = 0
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.legacy[session] = queue
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(f"event: endpoint\ndata: /messages?sessionId={session}\n\n".encode())
        while answer := await queue.get():
            await response.write(f"event: message\ndata: {json.dumps(answer)}\n\n".encode())
        return response

    async def legacy_post(self, request: web.Request) -> web.Response:
        session = request.query.get("sessionId", "")
        if session not in self.legacy:
            return web.Response(status=404)
        message = await request.json()
        if "id" in message:
            self.legacy[session].put_nowait(self._answer(session, message))
        return web.Response(status=202, text="Accepted")
