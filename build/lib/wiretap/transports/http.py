"""The HTTP reverse proxy: streams requests and responses through, chunk by chunk, and reports to a recorder.

Only this module touches sockets for HTTP. Every chunk is stamped and queued for the recorder as
it passes (the recorder's thread does all parsing) and written on at once. The only bodies held back
are an agent card (rewritten so that clients stay on the proxy) and the first event of a GET
event stream (a 2024-11-05 ``endpoint`` event may need the same).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import ssl
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import IO, Any

import aiohttp
from aiohttp import hdrs, web
from aiohttp.web_protocol import RequestHandler
from yarl import URL

from wiretap.http.a2a_rest import rest_operation
from wiretap.http.encoding import decoded
from wiretap.http.guard import ConnectionWatch, Guard, Limits, Refusal, check_request, gateway_timeout
from wiretap.http.headers import end_to_end, recorded_headers
from wiretap.http.rewrite import CARD_PATHS, rewrite_card, rewrite_endpoint
from wiretap.recording.events import Direction, Event, Kind
from wiretap.recording.recorder import Recorder
from wiretap.recording.streams import StreamSpec
from wiretap.wire.redact import redact_query, redact_url
from wiretap.wire.sse import SSEDecoder

_FIRST_EVENT_END = (b"\n\n", b"\r\n\r\n", b"\r\r")
_FIRST_EVENT_LIMIT = 1 << 16
STOP_GRACE = 0.1
"""Seconds open exchanges get to finish once the proxy is told to stop."""


@dataclass(frozen=True)
class ProxyConfig:
    upstream: str
    """The upstream's base URL (scheme, host, port and the path clients start from)."""
    ssl_context: ssl.SSLContext | bool | None = None
    """For an https upstream: a context with extra CAs, False to skip verification, None for defaults."""
    allow_hosts: frozenset[str] = frozenset()
    allow_origins: frozenset[str] = frozenset()
    limits: Limits = field(default_factory=Limits)


class _ClientBody:
    """Reads a request body as it arrives (stamping each chunk then, not when the upstream connection is
    ready to take it) and hands it on through a small queue, so backpressure holds."""

    _END = b""

    def __init__(self, exchange: _Exchange) -> None:
        self._exchange = exchange
        self._queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=4)
        self._error: BaseException | None = None
        self._task = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        try:
            async for chunk in self._exchange.request.content.iter_any():
                self._exchange._request_chunk(chunk)
                await self._queue.put(chunk)
            self._exchange._request_done()
        except Exception as exc:  # the client broke off: the upstream request fails the same way
            self._error = exc
        await self._queue.put(self._END)

    async def chunks(self) -> AsyncIterator[bytes]:
        while (chunk := await self._queue.get()) is not self._END:
            yield chunk
        if self._error is not None:
            raise self._error

    async def drain(self) -> None:
        with contextlib.suppress(Exception):
            async for _ in self.chunks():
                pass

    def stop(self) -> None:
        """The exchange is over: a read still waiting (on the client, or on an upstream that stopped
        taking the body) ends too."""
        if not self._task.done():
            self._task.cancel()


class _ForwardedRequest(aiohttp.ClientRequest):
    """Adds no Content-Length of its own to a request the client sent without a body (aiohttp would)."""

    def update_body_from_data(self, body: Any, *args: Any, **kwargs: Any) -> None:
        had_length = hdrs.CONTENT_LENGTH in self.headers
        super().update_body_from_data(body, *args, **kwargs)
        if body is None and not had_length:
            self.headers.pop(hdrs.CONTENT_LENGTH, None)


class _TrackedServer(web.Server):
    """aiohttp's low-level server, told about connections opening and closing."""

    def __init__(self, proxy: HttpProxy, **kwargs: Any) -> None:
        # auto_decompress=False: a compressed request body reaches the upstream as the client sent it.
        super().__init__(proxy.handle, handler_cancellation=True, auto_decompress=False, **kwargs)
        self._proxy = proxy

    def connection_made(self, handler: RequestHandler, transport: asyncio.Transport) -> None:
        super().connection_made(handler, transport)
        self._proxy.connection_opened(handler, transport)

    def connection_lost(self, handler: RequestHandler, exc: BaseException | None = None) -> None:
        super().connection_lost(handler, exc)
        self._proxy.connection_closed(handler, exc)


def _text_pairs(raw: tuple[tuple[bytes, bytes], ...]) -> list[tuple[str, str]]:
    return [(name.decode("latin-1"), value.decode("latin-1")) for name, value in raw]


def _event_stream(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() == "text/event-stream"


class HttpProxy:
    def __init__(self, config: ProxyConfig, recorder: Recorder, *, stderr: IO[str] | None = None) -> None:
        self.config = config
        self.recorder = recorder
        self.proxy_url = ""
        self._stderr = stderr or sys.stderr
        upstream = URL(config.upstream)
        self._origin = upstream.origin()
        self._host_header = (upstream.raw_host or "") + ("" if upstream.is_default_port() else f":{upstream.port}")
        self._exchanges = itertools.count(1)
        self._connection_ids = itertools.count(1)
        self._connections: dict[RequestHandler, int] = {}
        self._session: aiohttp.ClientSession | None = None
        self._runner: web.ServerRunner | None = None
        self._guard = Guard("127.0.0.1", 0)
        self._watch = ConnectionWatch(config.limits)
        self._sweeper: asyncio.Task[None] | None = None
        self.ending: dict[str, Any] = {"ended": "normal"}
        """How the recording ended, for its end event."""

    async def start(self, host: str, port: int) -> str:
        """Listen, and return the URL clients should use."""
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(
                limit=0, ssl=True if self.config.ssl_context is None else self.config.ssl_context
            ),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=self.config.limits.upstream_connect),
            auto_decompress=False,
            skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
            cookie_jar=aiohttp.DummyCookieJar(),
            request_class=_ForwardedRequest,
        )
        self._runner = web.ServerRunner(
            _TrackedServer(self), handle_signals=False, access_log=None, shutdown_timeout=STOP_GRACE
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, reuse_address=True)
        await site.start()
        bound_host, bound_port = self._runner.addresses[0][:2]
        shown_host = f"[{bound_host}]" if ":" in bound_host else bound_host
        lower = frozenset(h.lower() for h in self.config.allow_hosts)
        origins = frozenset(o.lower().rstrip("/") for o in self.config.allow_origins)
        self._guard = Guard(bound_host, bound_port, lower, origins, self.config.limits)
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep())
        upstream = URL(self.config.upstream)
        self.proxy_url = f"http://{shown_host}:{bound_port}{upstream.raw_path_qs if upstream.raw_path != '/' else ''}"
        return self.proxy_url

    async def _sweep(self) -> None:
        """Close client connections that sent no request head in time, or too many idle ones."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(1.0, self.config.limits.client_head / 4))
            for handler in self._watch.expired(loop.time()):
                assert isinstance(handler, RequestHandler)
                handler.force_close()

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    def connection_opened(self, handler: RequestHandler, transport: asyncio.Transport) -> None:
        conn = self._connections[handler] = next(self._connection_ids)
        self._watch.opened(handler, asyncio.get_running_loop().time())
        peer = transport.get_extra_info("peername")
        self.recorder.event(Kind.CONNECTION, conn=conn, state="open", peer=f"{peer[0]}:{peer[1]}" if peer else None)

    def connection_closed(self, handler: RequestHandler, exc: BaseException | None) -> None:
        conn = self._connections.pop(handler, None)
        self._watch.closed(handler)
        if conn is not None:
            fields: Event = {"conn": conn, "state": "closed"}
            if exc is not None:
                fields["error"] = str(exc) or type(exc).__name__
            self.recorder.event(Kind.CONNECTION, **fields)

    async def handle(self, request: web.BaseRequest) -> web.StreamResponse:
        exchange = _Exchange(self, request, next(self._exchanges))
        hosts = request.headers.getall("Host", [])
        host = hosts[0] if len(hosts) == 1 else None
        refusal = check_request(self._guard, request.method, request.raw_path, host, request.headers.get("Origin"))
        if refusal is not None:
            return exchange.refuse(refusal)
        self._watch.request_started(request.protocol)
        try:
            return await exchange.run()
        finally:
            self._watch.request_done(request.protocol, asyncio.get_running_loop().time())

    def warn(self, text: str) -> None:
        print(f"wiretap: {text}", file=self._stderr, flush=True)


class _Exchange:
    """One request and its response."""

    def __init__(self, proxy: HttpProxy, request: web.BaseRequest, ex: int) -> None:
        self.proxy = proxy
        self.recorder = proxy.recorder
        self.request = request
        self.ex = ex
        self.conn = proxy._connections.get(request.protocol)
        self.rest = rest_operation(request.method, request.rel_url.path)
        self.outcome = "complete"
        self.bytes_in = 0
        self.bytes_out = 0
        self._request_recorded = False
        self.response: web.StreamResponse | None = None
        self._body: _ClientBody | None = None

    def _base(self, direction: Direction) -> Event:
        base: Event = {"dir": direction.value, "ex": self.ex}
        if self.rest is not None:
            operation, task_id = self.rest
            base["rest"] = {
                "operation": operation,
                "method": self.request.method,
                "path": self.request.rel_url.path,
            }
            if task_id is not None:
                base["rest"]["taskId"] = task_id
        return base

    async def run(self) -> web.StreamResponse:
        request, redact = self.request, self.recorder.redact
        self.recorder.event(
            Kind.HTTP_REQUEST,
            ex=self.ex,
            conn=self.conn,
            method=request.method,
            path=redact_url(request.rel_url.path) if redact else request.rel_url.path,
            query=(redact_query(query) if redact else query) if (query := request.rel_url.raw_query_string) else None,
            version=f"{request.version.major}.{request.version.minor}",
            headers=recorded_headers(_text_pairs(request.raw_headers), redact=redact),
        )
        encoding = request.headers.get("Content-Encoding")
        self.recorder.open((self.ex, Direction.C2S), StreamSpec("body", self._base(Direction.C2S), encoding))
        try:
            return await self._forward()
        except asyncio.CancelledError:
            self.outcome = "client_disconnected"
            raise
        except ConnectionResetError:  # the client left while we wrote to it
            self.outcome = "client_disconnected"
            return self.response or web.Response(status=499)
        finally:
            if self._body is not None:
                self._body.stop()
            self._request_done()
            self.recorder.event(
                Kind.HTTP_END,
                ex=self.ex,
                outcome=self.outcome,
                bytes_in=self.bytes_in,
                bytes_out=self.bytes_out,
            )

    def _request_chunk(self, chunk: bytes) -> None:
        # Stamped as it arrives, before it is passed on: no part of the answer can be recorded before it.
        self.bytes_in += len(chunk)
        self.recorder.data((self.ex, Direction.C2S), chunk)
        if self.request.content_length is not None and self.bytes_in >= self.request.content_length:
            self._request_done()

    def _request_done(self) -> None:
        if not self._request_recorded:
            self._request_recorded = True
            self.recorder.closed((self.ex, Direction.C2S))

    async def _forward(self) -> web.StreamResponse:
        request, proxy = self.request, self.proxy
        assert proxy._session is not None
        headers = end_to_end(_text_pairs(request.raw_headers), request.headers.get("Connection"))
        headers["Host"] = proxy._host_header
        url = URL(f"{proxy._origin}{request.raw_path}", encoded=True)  # the target byte for byte: no ../ collapsing
        body: _ClientBody | None = None
        data: Any = None
        if not request.body_exists:
            self._request_done()
        elif request.content_length is not None and request.content.is_eof():
            # The whole body came with the headers (a typical JSON-RPC POST): pass it on as bytes, which
            # aiohttp writes with the headers, instead of through a reader task, a queue and a generator.
            data = request.content.read_nowait()
            self._request_chunk(data)
            self._request_done()
        else:
            body = self._body = _ClientBody(self)
            data = body.chunks()
        try:
            upstream = await asyncio.wait_for(
                proxy._session.request(
                    request.method,
                    url,
                    headers=headers,
                    data=data,
                    allow_redirects=False,
                    compress=False,
                ),
                proxy.config.limits.upstream_head,
            )
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            if body is not None:
                await body.drain()  # never sent upstream, but the client did send it: record it
            if isinstance(exc, TimeoutError):
                return self._gateway_timeout(exc)
            return await self._bad_gateway(exc)
        async with upstream:
            return await self._respond(upstream)

    async def _bad_gateway(self, exc: BaseException) -> web.StreamResponse:
        reason = str(exc) or type(exc).__name__
        text = f"wiretap: cannot reach upstream {self.proxy.config.upstream}: {reason}"
        self.outcome = "upstream_error"
        self.proxy.warn(redact_url(f"{self.request.method} {self.request.rel_url}: cannot reach upstream: {reason}"))
        self.recorder.event(Kind.ERROR, ex=self.ex, error="upstream_unreachable", message=reason)
        self.recorder.event(
            Kind.HTTP_RESPONSE, ex=self.ex, status=502, reason="Bad Gateway", generated=True, headers={}
        )
        return web.Response(status=502, text=text + "\n")

    def _gateway_timeout(self, exc: TimeoutError) -> web.StreamResponse:
        limits = self.proxy.config.limits
        if isinstance(exc, aiohttp.ConnectionTimeoutError):
            text = gateway_timeout("accepted no connection", limits.upstream_connect)
        else:
            text = gateway_timeout("sent no response head", limits.upstream_head)
        self.outcome = "upstream_timeout"
        self.proxy.warn(redact_url(f"{self.request.method} {self.request.rel_url}: {text.removeprefix('wiretap: ')}"))
        self.recorder.event(Kind.ERROR, ex=self.ex, error="upstream_timeout", message=text.strip())
        self.recorder.event(
            Kind.HTTP_RESPONSE, ex=self.ex, status=504, reason="Gateway Timeout", generated=True, headers={}
        )
        return web.Response(status=504, text=text)

    def refuse(self, refusal: Refusal) -> web.StreamResponse:
        """Answered by the proxy, never forwarded; recorded as refused."""
        request, redact = self.request, self.recorder.redact
        path = request.raw_path
        self.recorder.event(
            Kind.HTTP_REQUEST,
            ex=self.ex,
            conn=self.conn,
            method=request.method,
            path=redact_url(path) if redact else path,
            version=f"{request.version.major}.{request.version.minor}",
            headers=recorded_headers(_text_pairs(request.raw_headers), redact=redact),
        )
        self.recorder.event(Kind.ERROR, ex=self.ex, error="refused", message=refusal.why)
        self.recorder.event(
            Kind.HTTP_RESPONSE, ex=self.ex, status=refusal.status, reason=refusal.reason, generated=True, headers={}
        )
        self.recorder.event(Kind.HTTP_END, ex=self.ex, outcome="refused", bytes_in=0, bytes_out=0)
        self.proxy.warn(redact_url(f"refused {request.method} {path[:200]}: {refusal.why}"))
        return web.Response(
            status=refusal.status, reason=refusal.reason, text=refusal.body, headers={"Connection": "close"}
        )

    async def _respond(self, upstream: aiohttp.ClientResponse) -> web.StreamResponse:
        request, redact = self.request, self.recorder.redact
        headers = end_to_end(_text_pairs(upstream.raw_headers), upstream.headers.get("Connection"))
        content_type = upstream.headers.get("Content-Type", "")
        self.recorder.event(
            Kind.HTTP_RESPONSE,
            ex=self.ex,
            status=upstream.status,
            reason=upstream.reason,
            headers=recorded_headers(_text_pairs(upstream.raw_headers), redact=redact),
        )
        sse = _event_stream(content_type)
        encoding = upstream.headers.get("Content-Encoding")
        card = request.rel_url.path in CARD_PATHS and upstream.status == 200 and "json" in content_type
        if not card:  # a card's recording opens once it is known how the card goes out
            base = self._base(Direction.S2C)
            self.recorder.open((self.ex, Direction.S2C), StreamSpec("sse" if sse else "body", base, encoding))
        response = self.response = web.StreamResponse(status=upstream.status, reason=upstream.reason, headers=headers)
        try:
            if card:
                await self._send_card(response, upstream, encoding)
            else:
                await self._stream(response, upstream, hold_first_event=sse and request.method == "GET")
        except (
            aiohttp.ClientPayloadError,
            aiohttp.ServerDisconnectedError,
            aiohttp.ClientConnectionError,
        ) as exc:
            self._upstream_broke(exc)
        finally:
            self.recorder.closed((self.ex, Direction.S2C))
        return response

    def _upstream_broke(self, exc: BaseException) -> None:
        self.outcome = "upstream_closed"
        self.recorder.event(Kind.ERROR, ex=self.ex, error="upstream_closed", message=str(exc) or type(exc).__name__)
        # The client must see a broken response too: close its connection instead of ending cleanly.
        if self.request.transport is not None:
            self.request.transport.close()

    async def _write(self, response: web.StreamResponse, chunk: bytes) -> None:
        self.bytes_out += len(chunk)
        self.recorder.data((self.ex, Direction.S2C), chunk)
        await response.write(chunk)

    async def _stream(
        self, response: web.StreamResponse, upstream: aiohttp.ClientResponse, *, hold_first_event: bool
    ) -> None:
        await response.prepare(self.request)
        chunks = upstream.content.iter_any()
        if hold_first_event:
            first = await self._first_event(chunks)
            if first:
                await self._write(response, first)
        async for chunk in chunks:
            await self._write(response, chunk)
        await response.write_eof()

    async def _first_event(self, chunks: AsyncIterator[bytes]) -> bytes:
        held = b""
        async for chunk in chunks:
            held += chunk
            if any(end in held for end in _FIRST_EVENT_END) or len(held) > _FIRST_EVENT_LIMIT:
                break
        return self._rewrite_endpoint(held)

    def _rewrite_endpoint(self, held: bytes) -> bytes:
        decoder = SSEDecoder()
        events = decoder.feed(held)
        if not events or events[0].event != "endpoint" or events[0].data is None:
            return held
        old = events[0].data.decode("utf-8", errors="replace")
        new = rewrite_endpoint(old, self.proxy.config.upstream, self.proxy.proxy_url)
        if new is None:
            if "://" in old:
                self._record_rewrite("sse_endpoint", [], [{"field": "endpoint", "url": old}])
            return held
        self._record_rewrite("sse_endpoint", [{"field": "endpoint", "from": old, "to": new}], [])
        return held.replace(old.encode(), new.encode(), 1)

    async def _send_card(
        self, response: web.StreamResponse, upstream: aiohttp.ClientResponse, encoding: str | None
    ) -> None:
        body = await upstream.read()
        plain = decoded(body, encoding)
        try:
            card = json.loads(plain) if plain is not None else None
        except ValueError:
            card = None
        if isinstance(card, dict):
            log = rewrite_card(card, self.proxy.config.upstream, self.proxy.proxy_url)
            if log.changed:
                body, encoding = json.dumps(card, ensure_ascii=False).encode(), None
                response.headers.popall("Content-Encoding", None)
            self._record_rewrite("agent_card", log.changed, log.left_alone)
        else:
            self.proxy.warn(
                f"{self.request.rel_url.path}: cannot read the agent card; passed on unrewritten, "
                "so clients may bypass the proxy"
            )
        base = self._base(Direction.S2C)
        self.recorder.open((self.ex, Direction.S2C), StreamSpec("body", base, encoding))
        response.content_length = len(body)
        await response.prepare(self.request)
        await self._write(response, body)
        await response.write_eof()

    def _record_rewrite(self, what: str, changed: list[dict[str, str]], left_alone: list[dict[str, str]]) -> None:
        shown_changed, shown_left = (
            [{k: redact_url(v) for k, v in i.items()} for i in x] for x in (changed, left_alone)
        )
        if self.recorder.redact:
            changed, left_alone = shown_changed, shown_left
        self.recorder.event(Kind.REWRITE, ex=self.ex, what=what, changed=changed, left_alone=left_alone)
        for item in shown_left:
            self.proxy.warn(f"{what}: {item['field']} points at another host ({item['url']}); left alone, not proxied")
