"""A scenario HTTP upstream with known behaviour, for proxy tests: MCP-ish JSON and SSE, A2A cards and
REST, a legacy HTTP+SSE endpoint, and ways to break. Runs on its own thread and loop, on loopback."""

from __future__ import annotations

import asyncio
import gzip
import json
import ssl
import threading
import time
from typing import Any

from aiohttp import web
from scenarios.threaded_app import ThreadedApp


class Upstream(ThreadedApp):
    """``with Upstream() as up: up.url``; ``up.seen`` holds what each request looked like on arrival."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        super().__init__(ssl_context)
        self.seen: list[dict[str, Any]] = []
        self.sent_at: dict[str, float] = {}
        self.disconnected = threading.Event()

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._remember], client_max_size=64 << 20)
        app.router.add_route("*", "/mcp", self.mcp)
        app.router.add_get("/sse-two-events", self.two_events)
        app.router.add_get("/sse-forever", self.forever)
        app.router.add_get("/cut-short", self.cut_short)
        app.router.add_post("/echo-body", self.echo_body)
        app.router.add_get("/.well-known/agent-card.json", self.card)
        app.router.add_get("/.well-known/agent.json", self.old_card)
        app.router.add_get("/legacy/sse", self.legacy_sse)
        app.router.add_get("/legacy/sse-relative", self.legacy_sse_relative)
        app.router.add_post("/a2a/message:send", self.a2a_send)
        app.router.add_get("/a2a/tasks/{id}", self.a2a_get)
        return app

    @web.middleware
    async def _remember(self, request: web.Request, handler: Any) -> web.StreamResponse:
        seen = {"method": request.method, "path": request.path, "target": request.raw_path}
        self.seen.append({**seen, "headers": request.headers.copy()})
        return await handler(request)

    async def mcp(self, request: web.Request) -> web.StreamResponse:
        """Answers with whatever status and headers the request asks for, echoing the request id."""
        if request.method == "GET":
            return web.Response(status=405, headers={"Allow": "POST"})
        if request.method == "DELETE":
            return web.Response(status=204)
        body = await request.json()
        status = int(request.headers.get("X-Want-Status", "200"))
        headers = {"Mcp-Session-Id": "sess-1", "X-Echo-Mcp-Method": request.headers.get("Mcp-Method", "")}
        if status == 202:
            return web.Response(status=202, headers=headers)
        reply = {"jsonrpc": "2.0", "id": body.get("id"), "result": {"method": body.get("method")}}
        if request.headers.get("X-Want-Gzip"):
            headers["Content-Encoding"] = "gzip"
            return web.Response(
                body=gzip.compress(json.dumps(reply).encode()),
                status=status,
                headers=headers,
                content_type="application/json",
            )
        return web.json_response(reply, status=status, headers=headers)

    async def two_events(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        self.sent_at["first"] = time.monotonic()
        await response.write(b'event: message\r\nid: e1\r\ndata: {"jsonrpc":"2.0","method":"first"}\r\n\r\n')
        await asyncio.sleep(1.0)
        self.sent_at["second"] = time.monotonic()
        await response.write(b'event: message\r\nid: e2\r\ndata: {"jsonrpc":"2.0","method":"second"}\r\n\r\n')
        return response

    async def forever(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        try:
            for n in range(600):
                await response.write(b'data: {"jsonrpc":"2.0","method":"tick","params":{"n":%d}}\n\n' % n)
                await asyncio.sleep(0.05)
        except (ConnectionResetError, asyncio.CancelledError):
            self.disconnected.set()
            raise
        return response

    async def cut_short(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Length": "1000", "Content-Type": "application/json"})
        await response.prepare(request)
        await response.write(b'{"jsonrpc":"2.0","id":1,"result":{"te')
        assert request.transport is not None
        request.transport.close()
        return response

    async def echo_body(self, request: web.Request) -> web.Response:
        return web.Response(body=await request.read(), content_type="application/octet-stream")

    async def card(self, request: web.Request) -> web.Response:
        card = {
            "name": "scenario agent",
            "supportedInterfaces": [
                {"url": f"{self.url}/a2a", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
                {"url": "http://other.example:9/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            ],
            "url": f"{self.url}/a2a",
            "additionalInterfaces": [{"url": f"{self.url}/a2a/jsonrpc", "transport": "JSONRPC"}],
        }
        return web.json_response(card)

    async def old_card(self, request: web.Request) -> web.Response:
        return web.json_response({"name": "old agent", "url": f"{self.url}/a2a"})

    async def legacy_sse(self, request: web.Request) -> web.StreamResponse:
        return await self._endpoint_stream(request, f"{self.url}/legacy/messages?sessionId=s1")

    async def legacy_sse_relative(self, request: web.Request) -> web.StreamResponse:
        return await self._endpoint_stream(request, "/legacy/messages?sessionId=s2")

    async def _endpoint_stream(self, request: web.Request, endpoint: str) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(f"event: endpoint\ndata: {endpoint}\n\n".encode())
        await response.write(b'event: message\ndata: {"jsonrpc":"2.0","method":"hello"}\n\n')
        return response

    async def a2a_send(self, request: web.Request) -> web.Response:
        body = await request.json()
        task = {"id": "task-1", "contextId": "ctx-1", "status": {"state": "TASK_STATE_SUBMITTED"}}
        assert "message" in body
        return web.json_response({"task": task}, content_type="application/a2a+json")

    async def a2a_get(self, request: web.Request) -> web.Response:
        task = {"id": request.match_info["id"], "status": {"state": "TASK_STATE_WORKING"}}
        return web.Response(text=json.dumps(task), content_type="application/a2a+json")
