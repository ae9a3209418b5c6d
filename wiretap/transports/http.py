"""The HTTP reverse proxy: asyncio Protocols that relay bytes, and report every exchange to a recorder.

The sockets are here; what each exchange does is in ``http_exchange``. ``wiretap.wire.http.wire``
(sans-IO, llhttp) finds where messages start and end; bodies pass as they arrived (a chunked body is
passed on chunked, its payload untouched). Whatever one read produces is handed to the recorder in
one write, and only then forwarded: nothing reaches a peer before it is on its way to the recording.
There is no task per request: each read is handled in the callback that delivered it. The only
bodies held back are an agent card (rewritten so that clients stay on the proxy) and the first event
of a GET event stream (a 2024-11-05 ``endpoint`` event may need the same).

After a WebSocket's ``101`` the parsers hand every byte on as it came (``wire.UPGRADE``), and the same
write-after-record path carries them both ways; a half-close passes where both connections are plain TCP.

Why one module: the proxy and its two kinds of connection share one life cycle. The proxy hands an idle
upstream connection from one client's exchange to the next, both kinds pause and resume each other's
reading, and every write of either waits for the one recorder the proxy owns.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import ssl
import sys
from collections import deque
from collections.abc import Callable
from typing import IO, Any, Protocol, cast

from yarl import URL

from wiretap.forward.chain import open_via
from wiretap.recording.event_types import ConnectionFields
from wiretap.recording.events import Direction, Kind
from wiretap.recording.recorder import Recorder
from wiretap.transports.http_exchange import Exchange, UpstreamSide
from wiretap.transports.proxy_config import ProxyConfig
from wiretap.wire.http import wire
from wiretap.wire.http.guard import ConnectionWatch, Guard, Refusal, check_request
from wiretap.wire.http.headers import HeaderRecorder
from wiretap.wire.redact import redact_query, redact_url


class Router(Protocol):
    def route(self, client: ClientConnection, head: wire.Head) -> HttpProxy | None: ...


STOP_GRACE = 0.1
"""Seconds open exchanges get to finish once the proxy is told to stop."""
_DRAIN = 0.03
"""Of those, the last seconds go to clients still reading what was passed to them."""
_IDLE_UPSTREAMS = 64
"""Keep-alive upstream connections kept for reuse, at most."""
_TARGETS = 256
"""Request targets whose (path, query) split is remembered."""


def _tls(setting: ssl.SSLContext | bool | None) -> ssl.SSLContext:
    if isinstance(setting, ssl.SSLContext):
        return setting
    context = ssl.create_default_context()
    if setting is False:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


class _Peer(asyncio.Protocol):
    """One socket. Writes are held until the proxy flushes, after the recorder got what they carry."""

    transport: asyncio.Transport | None = None

    def __init__(self, proxy: HttpProxy) -> None:
        self.proxy = proxy
        self._out: list[bytes] = []
        self._dirty = False
        self.closing = False
        self._shutting = False

    def write(self, data: bytes) -> None:
        if not self._dirty:
            self._dirty = True
            self.proxy._dirty.append(self)
        self._out.append(data)

    def close(self) -> None:
        """Close at the next flush, after what was written before."""
        self.closing = True
        if not self._dirty:
            self._dirty = True
            self.proxy._dirty.append(self)

    def half_closable(self) -> bool:
        """Whether this connection can go on one way once the other is shut (plain TCP can; TLS cannot)."""
        transport = self.transport
        return transport is not None and not transport.is_closing() and transport.can_write_eof()

    def half_close(self) -> bool:
        """Shut down the sending side at the next flush, after what was written before; False if this
        connection cannot (TLS): then it is to be closed instead."""
        if not self.half_closable():
            return False
        self._shutting = True
        if not self._dirty:
            self._dirty = True
            self.proxy._dirty.append(self)
        return True

    def _flush(self) -> None:
        self._dirty = False
        out, self._out = self._out, []
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        if out:
            transport.write(out[0] if len(out) == 1 else b"".join(out))
        if self.closing:
            transport.close()
        elif self._shutting:
            self._shutting = False
            transport.write_eof()

    @property
    def gone(self) -> bool:
        return self.closing or self.transport is None or self.transport.is_closing()


class HttpProxy:
    def __init__(self, config: ProxyConfig, recorder: Recorder, *, stderr: IO[str] | None = None) -> None:
        self.config = config
        self.recorder = recorder
        self.proxy_url = ""
        self._stderr = stderr or sys.stderr
        upstream = URL(config.upstream)
        self._connect_to = (upstream.raw_host or "", upstream.port or 80)
        self._tls = _tls(config.ssl_context) if upstream.scheme == "https" else None
        host_header = (upstream.raw_host or "") + ("" if upstream.is_default_port() else f":{upstream.port}")
        if ":" in (upstream.raw_host or ""):
            host_header = f"[{upstream.raw_host}]" + ("" if upstream.is_default_port() else f":{upstream.port}")
        self.host_header = host_header.encode("latin-1")
        self._exchanges = itertools.count(1)
        self._connection_ids = itertools.count(1)
        self._clients: set[ClientConnection] = set()
        self._idle: list[UpstreamConnection] = []
        self._dirty: list[_Peer] = []
        self._flush_due = False
        self.active = 0
        """Exchanges under way."""
        self._targets: dict[str, tuple[str, str, str, str | None]] = {}
        self._checked: dict[tuple[str, str | None, str | None], Refusal | None] = {}
        self.recorded_headers = HeaderRecorder(redact=recorder.redact)
        self._server: asyncio.Server | None = None
        self._guard = Guard("127.0.0.1", 0)
        self._watch = ConnectionWatch(config.limits)
        self._sweeper: asyncio.Task[None] | None = None
        self.ending: dict[str, Any] = {"ended": "normal"}
        """How the recording ended, for its end event."""
        self.oauth_warned = False
        """Said once: the upstream is OAuth-protected, which a reverse proxy cannot serve."""
        self.watch_metadata: Callable[[bytes], None] | None = None
        """Given each protected resource metadata body that passes (a forward proxy learns the
        authorization servers to intercept from it)."""
        self._upstream_path = upstream.raw_path
        self._upstream_query = upstream.raw_query_string
        """Added to a request on the upstream's path, so that the URL clients are given needs none."""

    async def start(self, host: str, port: int) -> str:
        """Listen, and return the URL clients should use."""
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: ClientConnection(self), host, port, reuse_address=True)
        bound_host, bound_port = self._server.sockets[0].getsockname()[:2]
        shown_host = f"[{bound_host}]" if ":" in bound_host else bound_host
        lower = frozenset(h.lower() for h in self.config.allow_hosts)
        origins = frozenset(o.lower().rstrip("/") for o in self.config.allow_origins)
        self._guard = Guard(bound_host, bound_port, lower, origins, self.config.limits)
        self._sweeper = loop.create_task(self._sweep())
        path = self._upstream_path if self._upstream_path != "/" else ""
        self.proxy_url = f"http://{shown_host}:{bound_port}{path}"
        return self.proxy_url

    def attach(self) -> None:
        """Serve connections handed over by a forward proxy, without listening (``start``'s other half)."""
        loop = asyncio.get_running_loop()
        self._guard = Guard("127.0.0.1", 0, frozenset({"*"}), frozenset({"*"}), self.config.limits)
        self._sweeper = loop.create_task(self._sweep())
        self.proxy_url = self.config.upstream

    def close_clients(self, clients: list[object]) -> None:
        """Close these client connections (idle ones the guard let go), at once."""
        for client in clients:
            assert isinstance(client, ClientConnection)
            client.close()
        if clients:
            self.flush()

    async def _sweep(self) -> None:
        """Close client connections that sent no request head in time, or too many idle ones."""
        loop = asyncio.get_running_loop()
        while True:
            limits = self.config.limits
            await asyncio.sleep(min(1.0, limits.client_head / 4, limits.upstream_head / 4))
            now = loop.time()
            self.close_clients(self._watch.expired(now))
            for client in list(self._clients):
                exchange = client.exchange
                if exchange is None:
                    continue
                if exchange.head_due is not None and now >= exchange.head_due:
                    exchange.head_timeout()
                elif client.body_stalled(now, limits.client_head):
                    exchange.body_timeout(limits.client_head)
            self.flush()

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self._server is not None:
            self._server.close()
        loop = asyncio.get_running_loop()
        until = loop.time() + STOP_GRACE
        while any(client.exchange is not None for client in self._clients) and loop.time() < until - _DRAIN:
            await asyncio.sleep(0.01)
        # Closed, not aborted: what was recorded as passed is still delivered to a client that reads.
        for client in list(self._clients):
            client.close()
        self.flush_now()
        while self._clients and loop.time() < until:
            await asyncio.sleep(0.005)
        # A client still not reading is left to the kernel (an abort would make it drop what it has
        # received but not yet read); its exchange and connection are recorded as ended.
        for client in list(self._clients):
            client.connection_lost(None)
        for upstream in self._idle:
            if upstream.transport is not None:
                upstream.transport.abort()
        self._idle.clear()
        for _ in range(3):  # the connections' connection_lost callbacks record how they ended
            await asyncio.sleep(0)
        self.flush_now()

    def flush(self) -> None:
        """Hand the recorder what was collected, then forward what it describes. With several exchanges
        under way, once this turn of the loop's callbacks are done: one write to the recorder then serves
        many reads. With one, at once: nothing else could join the write, and its latency is the point."""
        if self.active <= 1 and not self._flush_due:
            self.flush_now()
        elif not self._flush_due:
            self._flush_due = True
            asyncio.get_running_loop().call_soon(self.flush_now)

    def flush_now(self) -> None:
        self._flush_due = False
        self.recorder.flush()
        dirty, self._dirty = self._dirty, []
        for peer in dirty:
            peer._flush()

    def warn(self, text: str) -> None:
        print(f"wiretap: {text}", file=self._stderr, flush=True)

    def upstream_target(self, target: str) -> str:
        """The target as the client would have sent it to the upstream's URL: on the upstream's path, the
        upstream's query first, then the client's own parameters (a query that already starts with the
        upstream's passes as it is)."""
        query = self._upstream_query
        if not query:
            return target
        path, _, own = target.partition("?")
        if path != self._upstream_path or own == query or own.startswith(query + "&"):
            return target
        return f"{path}?{query}&{own}" if own else f"{path}?{query}"

    def split_target(self, target: str) -> tuple[str, str, str, str | None]:
        """``(path, raw query, path as recorded, query as recorded)``: the path decoded, as the recording has
        always shown it, and both redacted when the recording is."""
        known = self._targets.get(target)
        if known is None:
            path, _, fragment = target.partition("#")
            path, _, query = path.partition("?")
            url = URL.build(path=path, query_string=query, fragment=fragment, encoded=True)
            path, query = url.path, url.raw_query_string
            if self.recorder.redact:
                known = (path, query, redact_url(path), redact_query(query) if query else None)
            else:
                known = (path, query, path, query or None)
            if len(self._targets) >= _TARGETS:
                self._targets.clear()
            self._targets[target] = known
        return known

    def check(self, method: str, target: str, host: str | None, origin: str | None) -> Refusal | None:
        """``check_request``, remembered for the few (method, Host, Origin) a proxy sees over and over."""
        if not target.startswith("/"):
            return check_request(self._guard, method, target, host, origin)
        key = (method, host, origin)
        if key not in self._checked:
            if len(self._checked) >= _TARGETS:
                self._checked.clear()
            self._checked[key] = check_request(self._guard, method, target, host, origin)
        return self._checked[key]

    def idle_upstream(self) -> UpstreamConnection | None:
        while self._idle:
            upstream = self._idle.pop()
            if not upstream.gone:
                return upstream
        return None

    def next_exchange(self) -> int:
        return next(self._exchanges)

    def give_back(self, upstream: UpstreamSide) -> None:
        assert isinstance(upstream, UpstreamConnection)
        if len(self._idle) < _IDLE_UPSTREAMS and not upstream.gone:
            assert upstream.transport is not None
            upstream.reused, upstream.heard = True, False
            upstream.transport.resume_reading()  # (paused for a client that was slow to read)
            self._idle.append(upstream)
        else:
            upstream.close()

    async def connect(self) -> UpstreamConnection:
        host, port = self._connect_to
        if self.config.via is not None:
            _, chained = await open_via(self.config.via, host, port, lambda: UpstreamConnection(self), self._tls)
            assert isinstance(chained, UpstreamConnection)
            return chained
        _, upstream = await asyncio.get_running_loop().create_connection(
            lambda: UpstreamConnection(self), host, port, ssl=self._tls, server_hostname=host if self._tls else None
        )
        return upstream


class ClientConnection(_Peer):
    """One client connection: requests in, in order, one exchange at a time."""

    def __init__(self, proxy: HttpProxy) -> None:
        super().__init__(proxy)
        self.conn = next(proxy._connection_ids)
        self.parser = wire.RequestParser()
        self.events: deque[wire.Event] = deque()
        self.exchange: Exchange | None = None
        self.ending = False
        """No more requests are read: close once the current exchange is done."""
        self.eof = False
        self._paused: set[str] = set()
        self.reads = 0
        self._quiet: tuple[int, float] | None = None
        """(reads, since when) while a request body is awaited: the sweep's view of a body that stalls."""
        self.router: Router | None = None
        """For a forward proxy's plain HTTP: checks each request head, makes its target origin-form, and
        names the proxy (the origin) it goes to."""
        self._routed: wire.Head | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast("asyncio.Transport", transport)  # (uvloop's are not asyncio.Transport subclasses)
        proxy = self.proxy
        proxy._clients.add(self)
        peer = transport.get_extra_info("peername")
        proxy.recorder.event(
            Kind.CONNECTION, conn=self.conn, state="open", peer=f"{peer[0]}:{peer[1]}" if peer else None
        )
        proxy.close_clients(proxy._watch.opened(self, asyncio.get_running_loop().time()))

    def data_received(self, data: bytes) -> None:
        if self.gone:  # (closing: nothing more is read)
            return
        self.reads += 1
        self.proxy.recorder.hold()
        try:
            self.events.extend(self.parser.feed(data))
            self.pump()
        finally:
            self.proxy.flush()

    def eof_received(self) -> bool:
        self.eof = True
        exchange = self.exchange
        if exchange is not None and exchange.tunnel:
            self.proxy.recorder.hold()
            try:
                return exchange.tunnel_shut(Direction.C2S, stays=self.half_closable())
            finally:
                self.proxy.flush()
        if exchange is not None and not exchange.request_complete:
            return False  # the request can never be complete: the client is gone (connection_lost follows)
        if exchange is not None and self.transport is not None:
            # Still answered (a client may shut down its sending side), but recorded: a client that times out
            # closes its connection, and this is all the proxy sees of it until the answer comes.
            self.proxy.recorder.event(Kind.CONNECTION, conn=self.conn, state="half_closed")
            self.proxy.flush()
        # The requests already read are still answered (a client may shut down its sending side).
        return exchange is not None or bool(self.events)

    def connection_lost(self, exc: BaseException | None) -> None:
        proxy = self.proxy
        if self not in proxy._clients:  # (recorded as ended when the proxy stopped)
            return
        proxy.recorder.hold()
        try:
            self.events.clear()
            if self.exchange is not None:
                self.exchange.client_gone()
            proxy._clients.discard(self)
            proxy._watch.closed(self)
            fields: ConnectionFields = {"conn": self.conn, "state": "closed"}
            if exc is not None:
                fields["error"] = str(exc) or type(exc).__name__
            proxy.recorder.event(Kind.CONNECTION, **fields)
            self.transport = None
            self.parser.release()
        finally:
            proxy.flush()

    def body_stalled(self, now: float, limit: float) -> bool:
        """Whether the current request's body has sent no byte for ``limit`` seconds (the proxy did not
        stop reading it). Asked by the sweep: nothing is timed per request."""
        exchange = self.exchange
        if exchange is None or exchange.request_complete or self._paused or self.gone:
            self._quiet = None
            return False
        if self._quiet is None or self._quiet[0] != self.reads:
            self._quiet = (self.reads, now)
            return False
        return now - self._quiet[1] >= limit

    def pause_writing(self) -> None:
        if self.exchange is not None:
            self.exchange.client_full(True)

    def resume_writing(self) -> None:
        if self.exchange is not None:
            self.exchange.client_full(False)

    def hold(self, why: str) -> None:
        if not self._paused and self.transport is not None:
            self.transport.pause_reading()
        self._paused.add(why)

    def release(self, why: str) -> None:
        if why in self._paused:
            self._paused.discard(why)
            if not self._paused and self.transport is not None and not self.transport.is_closing():
                self.transport.resume_reading()

    def pump(self) -> None:
        """Act on what the parser found, up to the next request while an exchange is under way."""
        events = self.events
        while events and not self.gone:
            kind, value = events[0]
            exchange = self.exchange
            if kind == wire.HEAD:
                if exchange is not None or self.ending:
                    break
                assert isinstance(value, wire.Head)
                if self.router is not None and value is not self._routed:
                    self._routed = value
                    goes_to = self.router.route(self, value)
                    if goes_to is None:  # refused: answered and closing
                        events.clear()
                        break
                    if goes_to is not self.proxy:
                        self._move_to(goes_to)
                        return
                events.popleft()
                self.proxy._watch.request_started(self)
                self.exchange = Exchange(self.proxy, self, value)
                self.exchange.start()
            elif kind == wire.BODY:
                events.popleft()
                if exchange is not None:
                    assert isinstance(value, bytes)
                    exchange.request_body(value)
            elif kind == wire.END:
                events.popleft()
                if exchange is not None:
                    exchange.request_end()
            elif kind == wire.UPGRADE:
                if exchange is None or not exchange.tunnel:
                    break  # (held until the upstream grants the upgrade; if it does not, the connection closes)
                events.popleft()
                assert isinstance(value, bytes)
                exchange.tunnel_c2s(value)
            elif kind == wire.CLOSE:
                events.clear()
                self.ending = True
                if exchange is None:
                    self.close()
            else:
                assert isinstance(value, wire.BadMessage)
                if exchange is not None and exchange.request_complete:
                    break  # a broken next request: answered once this exchange is done
                events.clear()
                self._bad_request(value, exchange)
        if events and not self.gone:
            self.hold("backlog")
        else:
            self.release("backlog")
            if self.eof and self.exchange is None:
                self.close()

    def _move_to(self, proxy: HttpProxy) -> None:
        """Hand this connection, with what was read and not yet acted on, to another origin's proxy."""
        transport, self.transport = self.transport, None
        assert transport is not None
        old = self.proxy
        old._clients.discard(self)
        old._watch.closed(self)
        old.recorder.event(Kind.CONNECTION, conn=self.conn, state="closed", moved=True)
        old.flush()
        moved = ClientConnection(proxy)
        moved.parser, moved.events, moved.router, moved.eof = self.parser, self.events, self.router, self.eof
        moved._routed = self._routed
        transport.set_protocol(moved)
        moved.connection_made(transport)
        proxy.recorder.hold()
        try:
            moved.pump()
        finally:
            proxy.flush()

    def _bad_request(self, bad: wire.BadMessage, exchange: Exchange | None) -> None:
        """A request that cannot be read on: answered (if nothing was answered yet) and the connection closed."""
        self.ending = True
        proxy = self.proxy
        if exchange is not None:
            exchange.request_broke(bad.why)
        else:
            proxy.recorder.event(Kind.ERROR, conn=self.conn, error="bad_request", message=bad.why)
            text = f"wiretap: {bad.reason.lower()}: {bad.why}\n"
            self.write(wire.generated(bad.status, bad.reason, text, close=True))
        proxy.warn(f"bad request on connection {self.conn}: {bad.why}")
        self.close()

    def exchange_done(self, exchange: Exchange, *, close: bool) -> None:
        if self.exchange is not exchange:
            return
        self.exchange = None
        if close or self.ending or self.gone:
            self.ending = True
            self.events.clear()
            self.close()
            return
        self.proxy.close_clients(self.proxy._watch.request_done(self, asyncio.get_running_loop().time()))
        self.pump()


class UpstreamConnection(_Peer):
    """One connection to the upstream: one exchange at a time, kept alive for the next."""

    def __init__(self, proxy: HttpProxy) -> None:
        super().__init__(proxy)
        self.parser = wire.ResponseParser()
        self.exchange: Exchange | None = None
        self._informational = False
        self.reused = False
        self.heard = False
        """Whether the upstream said anything about the current request."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast("asyncio.Transport", transport)  # (uvloop's are not asyncio.Transport subclasses)

    def data_received(self, data: bytes) -> None:
        exchange = self.exchange
        if exchange is None:  # an idle connection has nothing to say: it is not to be trusted again
            self.close()
            self.proxy.flush()
            return
        self.heard = True
        self.proxy.recorder.hold()
        try:
            self._dispatch(exchange, self.parser.feed(data))
        finally:
            self.proxy.flush()

    def eof_received(self) -> bool:
        exchange = self.exchange
        if exchange is not None and exchange.tunnel:
            self.proxy.recorder.hold()
            try:
                return exchange.tunnel_shut(Direction.S2C, stays=self.half_closable())
            finally:
                self.proxy.flush()
        if exchange is not None:
            self.proxy.recorder.hold()
            try:
                self._dispatch(exchange, self.parser.feed_eof())
            finally:
                self.proxy.flush()
        return False

    def _dispatch(self, exchange: Exchange, events: list[wire.Event]) -> None:
        for kind, value in events:
            if self.exchange is not exchange:  # bytes after the response: not a peer to keep
                self.close()
                return
            if kind == wire.UPGRADE:
                assert isinstance(value, bytes)
                exchange.tunnel_s2c(value)
            elif kind == wire.BODY:
                assert isinstance(value, bytes)
                exchange.response_body(value)
            elif kind == wire.HEAD:
                assert isinstance(value, wire.Head)
                self._informational = 100 <= value.status < 200
                exchange.response_head(value)
            elif kind == wire.END:
                if self._informational:  # (the end of a 100 Continue: the response is still to come)
                    self._informational = False
                else:
                    exchange.response_end(self)
            else:
                why = value.why if isinstance(value, wire.BadMessage) else "an upgrade"
                exchange.upstream_failed(why)

    def connection_lost(self, exc: BaseException | None) -> None:
        self.transport = None
        self.parser.release()
        with contextlib.suppress(ValueError):
            self.proxy._idle.remove(self)
        exchange = self.exchange
        if exchange is not None:
            self.proxy.recorder.hold()
            try:
                why = (str(exc) or repr(exc)) if exc is not None else "Server disconnected"
                # A kept-alive connection the upstream closed as it was reused: the request goes again, once.
                exchange.upstream_failed(why, retry=self.reused and not self.heard)
            finally:
                self.proxy.flush()

    def pause_writing(self) -> None:
        if self.exchange is not None:
            self.exchange.client.hold("upstream")

    def resume_writing(self) -> None:
        if self.exchange is not None:
            self.exchange.client.release("upstream")
