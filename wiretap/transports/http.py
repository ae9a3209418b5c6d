"""The HTTP reverse proxy: asyncio Protocols that relay bytes, and report every exchange to a recorder.

Only this module touches sockets for HTTP. ``wiretap.http.wire`` (sans-IO, llhttp) finds where
messages start and end; bodies pass as they arrived (a chunked body is passed on chunked, its payload
untouched). Whatever one read produces is handed to the recorder in one write, and only then
forwarded: nothing reaches a peer before it is on its way to the recording. There is no task per
request: each read is handled in the callback that delivered it. The only bodies held back are an
agent card (rewritten so that clients stay on the proxy) and the first event of a GET event stream
(a 2024-11-05 ``endpoint`` event may need the same).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import ssl
import sys
from collections import deque
from dataclasses import dataclass, field
from typing import IO, Any, cast

from yarl import URL

from wiretap.http import wire
from wiretap.http.a2a_rest import rest_operation
from wiretap.http.encoding import decoded
from wiretap.http.guard import ConnectionWatch, Guard, Limits, Refusal, check_request, gateway_timeout
from wiretap.http.headers import HeaderRecorder
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
_DRAIN = 0.03
"""Of those, the last seconds go to clients still reading what was passed to them."""
_IDLE_UPSTREAMS = 64
"""Keep-alive upstream connections kept for reuse, at most."""
_HELD_LIMIT = 1 << 20
"""Bytes of a request body held while the upstream connection opens, before the client is paused."""
_RESEND_LIMIT = 1 << 16
"""Bytes of a request kept to send again on a fresh connection if a reused one turns out closed."""
_TARGETS = 256
"""Request targets whose (path, query) split is remembered."""


@dataclass(frozen=True)
class ProxyConfig:
    upstream: str
    """The upstream's base URL (scheme, host, port and the path clients start from)."""
    ssl_context: ssl.SSLContext | bool | None = None
    """For an https upstream: a context with extra CAs, False to skip verification, None for defaults."""
    allow_hosts: frozenset[str] = frozenset()
    allow_origins: frozenset[str] = frozenset()
    limits: Limits = field(default_factory=Limits)


_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_TEXTS: dict[str | None, str] = {None: "null"}


def _text(value: str | None) -> str:
    """A string (or None) as JSON, remembered: methods, versions, reasons and paths repeat."""
    known = _TEXTS.get(value)
    if known is None:
        known = _JSON.encode(value)
        if len(_TEXTS) >= 1024:
            _TEXTS.clear()
            _TEXTS[None] = "null"
        _TEXTS[value] = known
    return known


def _event_stream(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() == "text/event-stream"


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
        self._host_header = host_header.encode("latin-1")
        self._exchanges = itertools.count(1)
        self._connection_ids = itertools.count(1)
        self._clients: set[_Client] = set()
        self._idle: list[_Upstream] = []
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

    async def start(self, host: str, port: int) -> str:
        """Listen, and return the URL clients should use."""
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Client(self), host, port, reuse_address=True)
        bound_host, bound_port = self._server.sockets[0].getsockname()[:2]
        shown_host = f"[{bound_host}]" if ":" in bound_host else bound_host
        lower = frozenset(h.lower() for h in self.config.allow_hosts)
        origins = frozenset(o.lower().rstrip("/") for o in self.config.allow_origins)
        self._guard = Guard(bound_host, bound_port, lower, origins, self.config.limits)
        self._sweeper = loop.create_task(self._sweep())
        upstream = URL(self.config.upstream)
        self.proxy_url = f"http://{shown_host}:{bound_port}{upstream.raw_path_qs if upstream.raw_path != '/' else ''}"
        return self.proxy_url

    async def _sweep(self) -> None:
        """Close client connections that sent no request head in time, or too many idle ones."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(1.0, self.config.limits.client_head / 4))
            for client in self._watch.expired(loop.time()):
                assert isinstance(client, _Client)
                client.close()
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

    def idle_upstream(self) -> _Upstream | None:
        while self._idle:
            upstream = self._idle.pop()
            if not upstream.gone:
                return upstream
        return None

    def give_back(self, upstream: _Upstream) -> None:
        if len(self._idle) < _IDLE_UPSTREAMS and not upstream.gone:
            assert upstream.transport is not None
            upstream.reused, upstream.heard = True, False
            upstream.transport.resume_reading()  # (paused for a client that was slow to read)
            self._idle.append(upstream)
        else:
            upstream.close()

    async def connect(self) -> _Upstream:
        host, port = self._connect_to
        _, upstream = await asyncio.get_running_loop().create_connection(
            lambda: _Upstream(self), host, port, ssl=self._tls, server_hostname=host if self._tls else None
        )
        return upstream


class _Client(_Peer):
    """One client connection: requests in, in order, one exchange at a time."""

    def __init__(self, proxy: HttpProxy) -> None:
        super().__init__(proxy)
        self.conn = next(proxy._connection_ids)
        self.parser = wire.RequestParser()
        self.events: deque[wire.Event] = deque()
        self.exchange: _Exchange | None = None
        self.ending = False
        """No more requests are read: close once the current exchange is done."""
        self.eof = False
        self._paused: set[str] = set()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast("asyncio.Transport", transport)  # (uvloop's are not asyncio.Transport subclasses)
        proxy = self.proxy
        proxy._clients.add(self)
        proxy._watch.opened(self, asyncio.get_running_loop().time())
        peer = transport.get_extra_info("peername")
        proxy.recorder.event(
            Kind.CONNECTION, conn=self.conn, state="open", peer=f"{peer[0]}:{peer[1]}" if peer else None
        )

    def data_received(self, data: bytes) -> None:
        if self.gone:  # (closing: nothing more is read)
            return
        self.proxy.recorder.hold()
        try:
            self.events.extend(self.parser.feed(data))
            self.pump()
        finally:
            self.proxy.flush()

    def eof_received(self) -> bool:
        self.eof = True
        exchange = self.exchange
        if exchange is not None and not exchange.request_complete:
            return False  # the request can never be complete: the client is gone (connection_lost follows)
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
            fields: Event = {"conn": self.conn, "state": "closed"}
            if exc is not None:
                fields["error"] = str(exc) or type(exc).__name__
            proxy.recorder.event(Kind.CONNECTION, **fields)
            self.transport = None
        finally:
            proxy.flush()

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
                events.popleft()
                assert isinstance(value, wire.Head)
                self.proxy._watch.request_started(self)
                self.exchange = _Exchange(self.proxy, self, value)
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

    def _bad_request(self, bad: wire.BadMessage, exchange: _Exchange | None) -> None:
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

    def exchange_done(self, exchange: _Exchange, *, close: bool) -> None:
        if self.exchange is not exchange:
            return
        self.exchange = None
        if close or self.ending or self.gone:
            self.ending = True
            self.events.clear()
            self.close()
            return
        self.proxy._watch.request_done(self, asyncio.get_running_loop().time())
        self.pump()


class _Upstream(_Peer):
    """One connection to the upstream: one exchange at a time, kept alive for the next."""

    def __init__(self, proxy: HttpProxy) -> None:
        super().__init__(proxy)
        self.parser = wire.ResponseParser()
        self.exchange: _Exchange | None = None
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
        if exchange is not None:
            self.proxy.recorder.hold()
            try:
                self._dispatch(exchange, self.parser.feed_eof())
            finally:
                self.proxy.flush()
        return False

    def _dispatch(self, exchange: _Exchange, events: list[wire.Event]) -> None:
        for kind, value in events:
            if self.exchange is not exchange:  # bytes after the response: not a peer to keep
                self.close()
                return
            if kind == wire.BODY:
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
        with contextlib.suppress(ValueError):
            self.proxy._idle.remove(self)
        exchange = self.exchange
        if exchange is not None:
            self.proxy.recorder.hold()
            try:
                why = str(exc) if exc is not None else "Server disconnected"
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


class _Exchange:
    """One request and its response."""

    def __init__(self, proxy: HttpProxy, client: _Client, head: wire.Head) -> None:
        self.proxy = proxy
        self.recorder = proxy.recorder
        self.client = client
        self.head = head
        self.ex = next(proxy._exchanges)
        proxy.active += 1
        self.conn = client.conn
        self.path, _, self._shown_path, self._shown_query = proxy.split_target(head.target)
        self.rest = rest_operation(head.method, self.path)
        self.outcome = "complete"
        self.bytes_in = 0
        self.bytes_out = 0
        self.request_complete = False
        self.finished = False
        self._c2s_open = False
        self._s2c_open = False
        self._answered = False
        """A response head (the upstream's or wiretap's own) has gone to the client."""
        self._response_done = False
        self._chunked_in = head.chunked
        self._chunked_out = False
        self._close = not head.keep_alive
        self._mode = "stream"
        self._response_head: wire.Head | None = None
        self._held: list[bytes] = []
        self._held_size = 0
        self._pending: list[bytes] | None = []
        """Request bytes waiting for the upstream connection; None once they go straight to it."""
        self._pending_size = 0
        self.upstream: _Upstream | None = None
        self._sent: list[bytes] | None = None
        """What went to a reused upstream connection, to send again if it turns out closed."""
        self._sent_size = 0
        self._retried = False
        self._connecting: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    def _open(self, direction: Direction, framing: str, encoding: str | None) -> None:
        key = (self.ex, direction)
        if self.rest is not None:
            self.recorder.open(key, StreamSpec(framing, self._base(direction), encoding))
            return
        self.recorder.open_json(
            key,
            f'{{"framing":"{framing}","base":{{"dir":"{direction.value}","ex":{self.ex}}},'
            f'"encoding":{_text(encoding)}}}',
        )

    def _base(self, direction: Direction) -> Event:
        base: Event = {"dir": direction.value, "ex": self.ex}
        if self.rest is not None:
            operation, task_id = self.rest
            base["rest"] = {"operation": operation, "method": self.head.method, "path": self.path}
            if task_id is not None:
                base["rest"]["taskId"] = task_id
        return base

    # The request.

    def start(self) -> None:
        head, recorder = self.head, self.recorder
        hosts = head.values(b"host")
        host = hosts[0].decode("latin-1") if len(hosts) == 1 else None
        refusal = self.proxy.check(head.method, head.target, host, head.text(b"origin"))
        if refusal is not None:
            self._refuse(refusal)
            return
        # The commonest records, written as JSON text (the same JSON as their dicts would give, faster).
        proxy = self.proxy
        recorder.event_json(
            f'{{"kind":"http_request","ex":{self.ex},"conn":{self.conn},"method":{_text(head.method)},'
            f'"path":{_text(self._shown_path)},"query":{_text(self._shown_query)},'
            f'"version":{_text(head.version)},"headers":{proxy.recorded_headers.json(head.headers)}}}'
        )
        self._open(Direction.C2S, "body", head.text(b"content-encoding"))
        self._c2s_open = True
        request_head, _ = wire.request_head(head, self.proxy._host_header)
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self.proxy.config.limits.upstream_head, self._head_timeout)
        upstream = self.proxy.idle_upstream()
        if upstream is not None:
            self._attach(upstream, request_head)
        else:
            self._connecting = loop.create_task(self._connect(request_head))

    async def _connect(self, request_head: bytes) -> None:
        proxy, limits = self.proxy, self.proxy.config.limits
        try:
            upstream = await asyncio.wait_for(proxy.connect(), limits.upstream_connect)
        except TimeoutError:
            self._when_failed(lambda: self._gateway_timeout("accepted no connection", limits.upstream_connect))
            return
        except (OSError, ssl.SSLError, ValueError) as exc:
            reason = str(exc) or type(exc).__name__
            self._when_failed(lambda: self._bad_gateway(reason))
            return
        finally:
            self._connecting = None
        if self.finished or self._answered:
            proxy.give_back(upstream)
            return
        proxy.recorder.hold()
        try:
            self._attach(upstream, request_head)
        finally:
            proxy.flush()

    def _when_failed(self, answer: Any) -> None:
        if self.finished or self._answered:
            return
        self.proxy.recorder.hold()
        try:
            answer()
        finally:
            self.proxy.flush()

    def _attach(self, upstream: _Upstream, request_head: bytes) -> None:
        self.upstream = upstream
        upstream.exchange = self
        upstream.parser.head_only = self.head.method == "HEAD"
        self._sent = [] if upstream.reused and not self._retried else None
        self._to_upstream(request_head)
        pending, self._pending = self._pending, None
        if pending:
            self._to_upstream(b"".join(pending))
        self.client.release("pending")

    def _to_upstream(self, data: bytes) -> None:
        assert self.upstream is not None
        self.upstream.write(data)
        if self._sent is not None:
            self._sent.append(data)
            self._sent_size += len(data)
            if self._sent_size > _RESEND_LIMIT:
                self._sent = None

    def request_body(self, data: bytes) -> None:
        self.bytes_in += len(data)
        self.recorder.data((self.ex, Direction.C2S), data)
        if self._answered and self.upstream is None:
            return  # answered already (an error, or early): recorded, not forwarded
        out = wire.chunk(data) if self._chunked_in else data
        if self._pending is not None:
            self._pending.append(out)
            self._pending_size += len(out)
            if self._pending_size > _HELD_LIMIT:
                self.client.hold("pending")
        elif self.upstream is not None:
            self._to_upstream(out)

    def request_end(self) -> None:
        self.request_complete = True
        self._close_c2s()
        if self._chunked_in:
            if self._pending is not None:
                self._pending.append(wire.LAST_CHUNK)
            elif self.upstream is not None:
                self._to_upstream(wire.LAST_CHUNK)
        self._maybe_finish()

    def request_broke(self, why: str) -> None:
        """The client's request cannot be read on (bad chunk framing mid-body): nothing more is forwarded."""
        self.recorder.event(Kind.ERROR, ex=self.ex, error="bad_request", message=why)
        if not self._answered:
            bad = wire.generated(400, "Bad Request", f"wiretap: bad request: {why}\n", close=True)
            self._answer_generated(400, "Bad Request", bad)
        self._abandon("client_disconnected")

    def _close_c2s(self) -> None:
        if self._c2s_open:
            self._c2s_open = False
            self.recorder.closed((self.ex, Direction.C2S))

    # The response.

    def response_head(self, head: wire.Head) -> None:
        if 100 <= head.status < 200:
            if head.status != 101 and self.head.version == "1.1":
                self.client.write(wire.informational(head))
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.recorder.event_json(
            f'{{"kind":"http_response","ex":{self.ex},"status":{head.status},"reason":{_text(head.reason)},'
            f'"headers":{self.proxy.recorded_headers.json(head.headers)}}}'
        )
        self._answered = True
        self._response_head = head
        content_type = head.text(b"content-type") or ""
        sse = _event_stream(content_type)
        encoding = head.text(b"content-encoding")
        if self.path in CARD_PATHS and head.status == 200 and "json" in content_type:
            self._mode = "card"  # its recording opens once it is known how the card goes out
            return
        self._open(Direction.S2C, "sse" if sse else "body", encoding)
        self._s2c_open = True
        self._send_head(head)
        if sse and self.head.method == "GET":
            self._mode = "first"

    def _send_head(
        self, head: wire.Head, content_length: int | None = None, drop: frozenset[bytes] = frozenset()
    ) -> None:
        forward = wire.response_head(
            head,
            client_version=self.head.version,
            request_method=self.head.method,
            close=self._close or self.client.ending,
            content_length=content_length,
            drop=drop,
        )
        self._chunked_out = forward.chunked
        self._close = forward.close
        self.client.write(forward.head)

    def response_body(self, data: bytes) -> None:
        if self._mode == "stream":
            self._send_body(data)
            return
        self._held.append(data)
        self._held_size += len(data)
        if self._mode == "first":
            held = b"".join(self._held)
            if any(end in held for end in _FIRST_EVENT_END) or len(held) > _FIRST_EVENT_LIMIT:
                self._held, self._held_size, self._mode = [], 0, "stream"
                self._send_body(self._rewrite_endpoint(held))

    def _send_body(self, data: bytes) -> None:
        if not data or self.client.gone:  # (a client connection closing takes nothing more: nothing passes)
            return
        self.bytes_out += len(data)
        self.recorder.data((self.ex, Direction.S2C), data)
        self.client.write(wire.chunk(data) if self._chunked_out else data)

    def response_end(self, upstream: _Upstream) -> None:
        if self._mode == "card":
            self._send_card(b"".join(self._held))
        elif self._mode == "first" and self._held:
            self._send_body(self._rewrite_endpoint(b"".join(self._held)))
        self._held = []
        if self._chunked_out:
            self.client.write(wire.LAST_CHUNK)
        self._close_s2c()
        self._response_done = True
        head = upstream.parser.head
        reusable = self.request_complete and head is not None and head.keep_alive
        self._detach(keep=reusable)
        self._maybe_finish()

    def _close_s2c(self) -> None:
        if self._s2c_open:
            self._s2c_open = False
            self.recorder.closed((self.ex, Direction.S2C))

    def _detach(self, *, keep: bool) -> None:
        upstream, self.upstream = self.upstream, None
        if upstream is None:
            return
        upstream.exchange = None
        self.client.release("upstream")
        if keep:
            self.proxy.give_back(upstream)
        else:
            upstream.close()

    def upstream_failed(self, why: str, *, retry: bool = False) -> None:
        """The upstream connection broke or sent what cannot be read."""
        if self.finished:
            return
        self._detach(keep=False)
        if retry and self._sent is not None and not self._answered:
            self._retried = True
            again, self._sent, self._pending = b"".join(self._sent), None, []
            self._connecting = asyncio.get_running_loop().create_task(self._connect(again))
            return
        if not self._answered:
            self._bad_gateway(why)
            return
        self.outcome = "upstream_closed"
        self.recorder.event(Kind.ERROR, ex=self.ex, error="upstream_closed", message=why)
        self._close_s2c()
        # The client must see a broken response too: its connection closes instead of the response ending.
        self._response_done = True
        self._close = True
        self._finish()

    def client_full(self, full: bool) -> None:
        upstream = self.upstream
        if upstream is not None and upstream.transport is not None and not upstream.transport.is_closing():
            if full:
                upstream.transport.pause_reading()
            else:
                upstream.transport.resume_reading()

    def client_gone(self) -> None:
        self._abandon("client_disconnected")

    def _abandon(self, outcome: str) -> None:
        if self.finished:
            return
        if self.outcome == "complete":
            self.outcome = outcome
        if self._connecting is not None:
            self._connecting.cancel()
        self._detach(keep=False)
        self._close_s2c()
        self._close = True
        self._finish()

    # Answers of wiretap's own.

    def _answer_generated(self, status: int, reason: str, data: bytes) -> None:
        self.recorder.event(Kind.HTTP_RESPONSE, ex=self.ex, status=status, reason=reason, generated=True, headers={})
        self._answered = True
        self._response_done = True
        self.client.write(data)

    def _bad_gateway(self, reason: str) -> None:
        head = self.head
        text = f"wiretap: cannot reach upstream {self.proxy.config.upstream}: {reason}\n"
        self.outcome = "upstream_error"
        self.proxy.warn(redact_url(f"{head.method} {head.target}: cannot reach upstream: {reason}"))
        self.recorder.event(Kind.ERROR, ex=self.ex, error="upstream_unreachable", message=reason)
        self._generated_answer(502, "Bad Gateway", text)

    def _gateway_timeout(self, what: str, seconds: float) -> None:
        head = self.head
        text = gateway_timeout(what, seconds)
        self.outcome = "upstream_timeout"
        self.proxy.warn(redact_url(f"{head.method} {head.target}: {text.strip().removeprefix('wiretap: ')}"))
        self.recorder.event(Kind.ERROR, ex=self.ex, error="upstream_timeout", message=text.strip())
        self._generated_answer(504, "Gateway Timeout", text)

    def _generated_answer(self, status: int, reason: str, text: str) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._detach(keep=False)
        # A body still coming is read and recorded, not forwarded; then the connection closes.
        self._close = self._close or not self.request_complete
        self._answer_generated(status, reason, wire.generated(status, reason, text, close=self._close))
        self._maybe_finish()

    def _head_timeout(self) -> None:
        self._timer = None
        if self._answered or self.finished:
            return
        if self._connecting is not None:
            self._connecting.cancel()
        limits = self.proxy.config.limits
        self._when_failed(lambda: self._gateway_timeout("sent no response head", limits.upstream_head))

    def _refuse(self, refusal: Refusal) -> None:
        """Answered by the proxy, never forwarded; recorded as refused."""
        head, recorder, redact = self.head, self.recorder, self.recorder.redact
        path = head.target
        recorder.event(
            Kind.HTTP_REQUEST,
            ex=self.ex,
            conn=self.conn,
            method=head.method,
            path=redact_url(path) if redact else path,
            version=head.version,
            headers=self.proxy.recorded_headers(head.headers),
        )
        recorder.event(Kind.ERROR, ex=self.ex, error="refused", message=refusal.why)
        self.outcome = "refused"
        self._close = True
        self._answer_generated(
            refusal.status, refusal.reason, wire.generated(refusal.status, refusal.reason, refusal.body, close=True)
        )
        self.proxy.warn(redact_url(f"refused {head.method} {path[:200]}: {refusal.why}"))
        self._finish()

    # The end.

    def _maybe_finish(self) -> None:
        if self._response_done and self.request_complete:
            self._finish()

    def _finish(self) -> None:
        if self.finished:
            return
        self.finished = True
        self.proxy.active -= 1
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._connecting is not None:
            self._connecting.cancel()
        self._close_c2s()
        refused = self.outcome == "refused"
        self.recorder.event_json(
            f'{{"kind":"http_end","ex":{self.ex},"outcome":{_text(self.outcome)},'
            f'"bytes_in":{0 if refused else self.bytes_in},"bytes_out":{0 if refused else self.bytes_out}}}'
        )
        self.client.exchange_done(self, close=self._close or not self.request_complete)

    # Rewriting what would let a client bypass the proxy.

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

    def _send_card(self, body: bytes) -> None:
        head = self._response_head
        assert head is not None
        encoding = head.text(b"content-encoding")
        plain = decoded(body, encoding)
        drop: frozenset[bytes] = frozenset()
        try:
            card = json.loads(plain) if plain is not None else None
        except ValueError:
            card = None
        if isinstance(card, dict):
            log = rewrite_card(card, self.proxy.config.upstream, self.proxy.proxy_url)
            if log.changed:
                body, encoding = json.dumps(card, ensure_ascii=False).encode(), None
                drop = frozenset({b"content-encoding"})
            self._record_rewrite("agent_card", log.changed, log.left_alone)
        else:
            self.proxy.warn(
                f"{self.path}: cannot read the agent card; passed on unrewritten, so clients may bypass the proxy"
            )
        self.recorder.open((self.ex, Direction.S2C), StreamSpec("body", self._base(Direction.S2C), encoding))
        self._s2c_open = True
        self._send_head(head, content_length=len(body), drop=drop)
        self._send_body(body)

    def _record_rewrite(self, what: str, changed: list[dict[str, str]], left_alone: list[dict[str, str]]) -> None:
        shown_changed, shown_left = (
            [{k: redact_url(v) for k, v in i.items()} for i in x] for x in (changed, left_alone)
        )
        if self.recorder.redact:
            changed, left_alone = shown_changed, shown_left
        self.recorder.event(Kind.REWRITE, ex=self.ex, what=what, changed=changed, left_alone=left_alone)
        for item in shown_left:
            self.proxy.warn(f"{what}: {item['field']} points at another host ({item['url']}); left alone, not proxied")
