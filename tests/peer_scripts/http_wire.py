"""Wire logs for the HTTP peer scripts: what a real client sent and read, and what a real server saw.

Imported by the peer scripts (it sits beside them, so it is on their ``sys.path``) and runs in the
peer venvs, which all have httpx2 (the MCP SDK 2.3.0's HTTP client), starlette and uvicorn.

- ``TeeTransport``: an httpx2 transport that writes each exchange as one JSON line when its
  response is closed: ``n`` (the order the requests were sent), method, url, path (with the
  query), the request headers and body as sent, the response status and headers, and the response
  body as received.
- ``ExchangeLog``: ASGI middleware that writes what the server saw, part by part as it happens:
  ``request`` (method, path, headers), ``body``, ``response`` (status, headers) and
  ``response_body`` (everything written, once the response ends).
- ``loopback_socket``: a listening socket on 127.0.0.1 and a free port, for uvicorn.
"""

from __future__ import annotations

import itertools
import json
import socket
from collections.abc import AsyncIterator
from typing import IO, Any

import httpx2
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def _pairs(raw: Any) -> list[list[str]]:
    return [[k.decode("latin-1"), v.decode("latin-1")] for k, v in raw]


def _write(log: IO[str], entry: dict[str, Any]) -> None:
    log.write(json.dumps(entry, ensure_ascii=False) + "\n")
    log.flush()


class _TeeStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, entry: dict[str, Any], log: IO[str]) -> None:
        self.inner, self.entry, self.log = inner, entry, log
        self.received = bytearray()
        self.logged = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.received.extend(chunk)
            yield chunk

    async def aclose(self) -> None:
        if not self.logged:  # before awaiting anything, so that a cancelled close still logs
            self.logged = True
            self.entry["response_body"] = self.received.decode("utf-8", "replace")
            _write(self.log, self.entry)
        await self.inner.aclose()


class TeeTransport(httpx2.AsyncBaseTransport):
    def __init__(self, log: IO[str]) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.log = log
        self.numbers = itertools.count(1)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        entry: dict[str, Any] = {
            "n": next(self.numbers),
            "method": request.method,
            "url": str(request.url),
            "path": request.url.raw_path.decode("ascii"),
            "headers": _pairs(request.headers.raw),
            "body": body.decode("utf-8", "replace"),
        }
        response = await self.inner.handle_async_request(request)
        entry["status"] = response.status_code
        entry["response_headers"] = _pairs(response.headers.raw)
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        return httpx2.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_TeeStream(response.stream, entry, self.log),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


class ExchangeLog:
    """ASGI middleware: every HTTP exchange the server saw, as JSON lines."""

    def __init__(self, app: ASGIApp, log: IO[str]) -> None:
        self.app, self.log, self.numbers = app, log, itertools.count(1)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        n = next(self.numbers)
        _write(
            self.log,
            {
                "n": n,
                "part": "request",
                "method": scope["method"],
                "path": scope["path"],
                "query": scope["query_string"].decode("latin-1"),
                "headers": _pairs(scope["headers"]),
            },
        )
        body, sent, body_logged = bytearray(), bytearray(), False

        async def logged_receive() -> Message:
            nonlocal body_logged
            message = await receive()
            if message["type"] == "http.request" and not body_logged:
                body.extend(message.get("body", b""))
                if not message.get("more_body", False):
                    body_logged = True
                    _write(self.log, {"n": n, "part": "body", "body": body.decode("utf-8", "replace")})
            return message

        async def logged_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = _pairs(message.get("headers", []))
                _write(self.log, {"n": n, "part": "response", "status": message["status"], "headers": headers})
            elif message["type"] == "http.response.body":
                sent.extend(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, logged_receive, logged_send)
        finally:
            _write(self.log, {"n": n, "part": "response_body", "body": sent.decode("utf-8", "replace")})


def loopback_socket() -> socket.socket:
    """A socket bound to 127.0.0.1 on a free port, for ``uvicorn.Server.serve(sockets=[...])``.

    Made with IPPROTO_TCP so that asyncio sets TCP_NODELAY on the connections it accepts, as it does
    for servers it binds itself (it skips sockets whose proto is 0). Without it, Nagle holds a
    response body back behind its headers until the peer's delayed ACK: 40 ms a response on a
    kept-alive connection, such as a proxy's pooled one.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    return sock
