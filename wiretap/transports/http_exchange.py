"""One request and its response, as the proxy relays them: what is recorded when, what goes where, and the
answers wiretap gives itself (502, 504, refusals) and the rewrites (agent cards, SSE endpoints). A WebSocket
upgrade the upstream grants stays one exchange: after its 101, a byte pipe both ways until either side ends.

It writes through the connections of ``wiretap.transports.http``, whose writes wait for the recorder; what
it needs of them and of the proxy is stated here as Protocols, so this module does not import that one.

Why one module: an exchange is one state machine. Every handler here reads and changes the same state
(which direction's stream is open, what is held back, whether an upstream is attached, whether it became
a pipe), and the answers and rewrites happen at points of that machine; split, each part would reach into
the others' state.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Callable
from typing import Any, Protocol

from wiretap.recording.event_types import RestCall, StreamBase
from wiretap.recording.events import Direction, Kind
from wiretap.recording.recorder import Recorder
from wiretap.recording.spec import StreamSpec
from wiretap.transports.proxy_config import ProxyConfig
from wiretap.wire.http import wire
from wiretap.wire.http.a2a_rest import rest_operation
from wiretap.wire.http.encoding import decoded
from wiretap.wire.http.guard import Refusal, gateway_timeout
from wiretap.wire.http.headers import HeaderRecorder
from wiretap.wire.http.rewrite import CARD_PATHS, rewrite_card, rewrite_endpoint
from wiretap.wire.redact import redact_url
from wiretap.wire.sse import SSEDecoder

_FIRST_EVENT_END = (b"\n\n", b"\r\n\r\n", b"\r\r")
_FIRST_EVENT_LIMIT = 1 << 16
_HELD_LIMIT = 1 << 20
"""Bytes of a request body held while the upstream connection opens, before the client is paused."""
CARD_LIMIT = 1 << 20
"""Bytes of an agent card held to rewrite it; a larger one passes unrewritten, as it arrives."""
_METADATA_LIMIT = 1 << 16
"""Bytes of protected resource metadata kept for a forward proxy to read, at most."""
PROTECTED_RESOURCE = "/.well-known/oauth-protected-resource"
_RESEND_LIMIT = 1 << 16
"""Bytes of a request kept to send again on a fresh connection if a reused one turns out closed."""

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


def _protected(path: str, head: wire.Head) -> bool:
    """An OAuth-protected resource: a 401 naming its metadata, or the metadata itself."""
    if head.status == 401:
        return any(b"resource_metadata" in value for value in head.values(b"www-authenticate"))
    return head.status == 200 and path.startswith(PROTECTED_RESOURCE)


def _event_stream(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() == "text/event-stream"


class UpstreamSide(Protocol):
    """The connection to the upstream an exchange is attached to."""

    transport: asyncio.Transport | None
    parser: wire.ResponseParser
    exchange: Exchange | None
    reused: bool

    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...

    def half_close(self) -> bool: ...


class ClientSide(Protocol):
    """The client connection an exchange answers on."""

    conn: int
    ending: bool
    eof: bool

    @property
    def gone(self) -> bool: ...

    def half_closable(self) -> bool: ...

    def write(self, data: bytes) -> None: ...

    def hold(self, why: str) -> None: ...

    def release(self, why: str) -> None: ...

    def exchange_done(self, exchange: Exchange, *, close: bool) -> None: ...

    def pump(self) -> None: ...

    def half_close(self) -> bool: ...


class ProxySide(Protocol):
    """The proxy an exchange belongs to: its settings, recorder, upstream connections and warnings."""

    config: ProxyConfig
    recorder: Recorder
    proxy_url: str
    active: int
    oauth_warned: bool
    watch_metadata: Callable[[bytes], None] | None
    recorded_headers: HeaderRecorder
    host_header: bytes

    def next_exchange(self) -> int: ...

    def upstream_target(self, target: str) -> str: ...

    def split_target(self, target: str) -> tuple[str, str, str, str | None]: ...

    def check(self, method: str, target: str, host: str | None, origin: str | None) -> Refusal | None: ...

    def idle_upstream(self) -> UpstreamSide | None: ...

    def give_back(self, upstream: UpstreamSide) -> None: ...

    async def connect(self) -> UpstreamSide: ...

    def flush(self) -> None: ...

    def warn(self, text: str) -> None: ...


class Exchange:
    """One request and its response."""

    def __init__(self, proxy: ProxySide, client: ClientSide, head: wire.Head) -> None:
        self.proxy = proxy
        self.recorder = proxy.recorder
        self.client = client
        head.target = proxy.upstream_target(head.target)
        self.head = head
        self.ex = proxy.next_exchange()
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
        self._c2s_spec: str | None = None
        self._s2c_spec: str | None = None
        """A body stream's StreamSpec (JSON) until its first bytes: a body that comes whole in one read
        goes to the recorder in one record (``whole_json``), not three."""
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
        self.upstream: UpstreamSide | None = None
        self._sent: list[bytes] | None = None
        """What went to a reused upstream connection, to send again if it turns out closed."""
        self._sent_size = 0
        self._retried = False
        self._connecting: asyncio.Task[None] | None = None
        self.head_due: float | None = None
        """When the upstream's response head is due (loop time); the proxy's sweep answers 504 after it."""
        self._metadata: list[bytes] | None = None
        """A protected resource metadata body, kept for the proxy's ``watch_metadata`` (a copy: it passes)."""
        self.websocket = wire.wants_websocket(head)
        """The request asks for a WebSocket: it goes on with its Upgrade, and a 101 turns this exchange into
        a byte pipe (``tunnel``) until either side closes."""
        self.tunnel = False
        self._shut: set[Direction] = set()
        """Directions of the tunnel whose sender shut down its side."""
        if self.websocket:
            self._close = True  # any other answer ends the connection: its parser has left HTTP

    def _spec(self, direction: Direction, framing: str, encoding: str | None) -> str:
        """The stream's StreamSpec as JSON (what ``StreamSpec.to_dict()`` gives as JSON)."""
        if self.rest is not None:
            return _JSON.encode(StreamSpec(framing, self._base(direction), encoding).to_dict())
        return (
            f'{{"framing":"{framing}","base":{{"dir":"{direction.value}","ex":{self.ex}}},'
            f'"encoding":{_text(encoding)}}}'
        )

    def _open(self, direction: Direction, framing: str, encoding: str | None) -> None:
        self.recorder.open_json((self.ex, direction), self._spec(direction, framing, encoding))

    def _body_data(self, direction: Direction, spec: str | None, data: bytes, whole: bool) -> None:
        """Bytes of a body stream whose spec is ``spec`` if not opened yet: all of it (``whole``) in one
        record, else opened first."""
        if spec is None:
            self.recorder.data((self.ex, direction), data)
        elif whole:
            self.recorder.whole_json(spec, data)
        else:
            self.recorder.open_json((self.ex, direction), spec)
            self.recorder.data((self.ex, direction), data)

    def _base(self, direction: Direction) -> StreamBase:
        base: StreamBase = {"dir": direction.value, "ex": self.ex}
        if self.rest is not None:
            operation, task_id = self.rest
            rest: RestCall = {"operation": operation, "method": self.head.method, "path": self.path}
            if task_id is not None:
                rest["taskId"] = task_id
            base["rest"] = rest
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
        self._c2s_spec = self._spec(Direction.C2S, "body", head.text(b"content-encoding"))
        self._c2s_open = True
        own_host = head.get(b"host") if proxy.config.forward else None
        request_head, _ = wire.request_head(head, own_host or self.proxy.host_header, upgrade=self.websocket)
        loop = asyncio.get_running_loop()
        self.head_due = loop.time() + self.proxy.config.limits.upstream_head  # (no timer per request)
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

    def _attach(self, upstream: UpstreamSide, request_head: bytes) -> None:
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
        spec, self._c2s_spec = self._c2s_spec, None
        whole = not self.bytes_in and len(data) == self.head.content_length
        self.bytes_in += len(data)
        if self._c2s_open:
            self._body_data(Direction.C2S, spec, data, whole)
            if whole:
                self._c2s_open = False
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

    def body_timeout(self, seconds: float) -> None:
        """The request body stopped arriving mid-way (a slow-body slowloris): 408 if nothing was answered,
        and the connection closed."""
        self.proxy.recorder.hold()
        try:
            why = f"the request body stopped arriving: no byte for {seconds:g} s"
            self.recorder.event(Kind.ERROR, ex=self.ex, error="client_timeout", message=why)
            self.proxy.warn(f"connection {self.conn}: {why}; closed")
            if not self._answered:
                text = f"wiretap: request timeout: {why}\n"
                self._answer_generated(408, "Request Timeout", wire.generated(408, "Request Timeout", text, close=True))
            self._abandon("client_timeout")
        finally:
            self.proxy.flush()

    def _close_c2s(self) -> None:
        if self._c2s_open:
            self._c2s_open = False
            self._close_stream(Direction.C2S, self._c2s_spec)
            self._c2s_spec = None

    def _close_stream(self, direction: Direction, spec: str | None) -> None:
        if spec is None:
            self.recorder.closed((self.ex, direction))
        elif self.rest is not None:  # no bytes, yet a message (an A2A REST call without a body)
            self.recorder.whole_json(spec, b"")
        # else: a body stream without bytes records nothing, and is not opened

    # The response.

    def response_head(self, head: wire.Head) -> None:
        if head.status == 101 and self.websocket:
            self._switch(head)
            return
        if 100 <= head.status < 200:
            if head.status != 101 and self.head.version == "1.1":
                self.client.write(wire.informational(head))
            return
        self._record_response_head(head)
        content_type = head.text(b"content-type") or ""
        sse = _event_stream(content_type)
        encoding = head.text(b"content-encoding")
        forward = self.proxy.config.forward
        if not forward and not self.proxy.oauth_warned and _protected(self.path, head):
            self.proxy.oauth_warned = True
            self.proxy.warn(
                "the upstream is protected by OAuth: clients check the protected resource against the URL they "
                "use, and refuse wiretap's; use `wiretap proxy --forward` (the client keeps the real URL)"
            )
        if not forward and self.path in CARD_PATHS and head.status == 200 and "json" in content_type:
            if head.content_length is None or head.content_length <= CARD_LIMIT:
                self._mode = "card"  # its recording opens once it is known how the card goes out
                return
            self._card_too_large()
        if sse:
            self._open(Direction.S2C, "sse", encoding)
        else:
            self._s2c_spec = self._spec(Direction.S2C, "body", encoding)
        self._s2c_open = True
        self._send_head(head)
        if sse and self.head.method == "GET" and not forward:
            self._mode = "first"
        if (
            self.proxy.watch_metadata is not None
            and head.status == 200
            and self.path.startswith(PROTECTED_RESOURCE)
            and (head.content_length or 0) <= _METADATA_LIMIT
        ):
            self._metadata = []

    def _record_response_head(self, head: wire.Head) -> None:
        self.head_due = None
        self.recorder.event_json(
            f'{{"kind":"http_response","ex":{self.ex},"status":{head.status},"reason":{_text(head.reason)},'
            f'"headers":{self.proxy.recorded_headers.json(head.headers)}}}'
        )
        self._answered = True
        self._response_head = head

    # A WebSocket: after the 101, bytes both ways, recorded as they pass and forwarded unchanged.

    def _switch(self, head: wire.Head) -> None:
        """The upstream granted the upgrade: its 101 goes on as it came, and the connection becomes a pipe."""
        self._record_response_head(head)
        self.tunnel = True
        extensions = b",".join(head.values(b"sec-websocket-extensions")).lower()
        encoding = "permessage-deflate" if b"permessage-deflate" in extensions else None
        for direction in (Direction.C2S, Direction.S2C):
            spec = StreamSpec("websocket", {"dir": direction.value, "ex": self.ex}, encoding)
            self.recorder.open((self.ex, "ws", direction), spec)
        self.client.write(wire.switching(head))
        self.client.pump()  # what the client sent after its request, held until now
        if self.client.eof:  # (and its end, if it came too)
            self.tunnel_shut(Direction.C2S, stays=self.client.half_closable())

    def tunnel_c2s(self, data: bytes) -> None:
        if not data or self.upstream is None:
            return
        self.bytes_in += len(data)
        self.recorder.data((self.ex, "ws", Direction.C2S), data)
        self.upstream.write(data)

    def tunnel_s2c(self, data: bytes) -> None:
        if not data or self.client.gone:
            return
        self.bytes_out += len(data)
        self.recorder.data((self.ex, "ws", Direction.S2C), data)
        self.client.write(data)

    def tunnel_shut(self, direction: Direction, *, stays: bool) -> bool:
        """The sender of ``direction`` shut down its side: passed on as a half-close where both connections
        can go on one way (plain TCP: the sender's ``stays``), else the pipe ends. Returns whether the
        sender's connection stays open."""
        self._shut.add(direction)
        self.recorder.closed((self.ex, "ws", direction))
        receiver = self.upstream if direction == Direction.C2S else self.client
        if len(self._shut) == 2 or not stays or receiver is None or not receiver.half_close():
            self.tunnel_end("complete")
            return False
        return True

    def tunnel_end(self, outcome: str) -> None:
        if self.finished:
            return
        if self.outcome == "complete":
            self.outcome = outcome
        self._response_done = True
        self._detach(keep=False)
        self._finish()

    def _close_tunnel(self) -> None:
        if self.tunnel:
            for direction in (Direction.C2S, Direction.S2C):
                self.recorder.closed((self.ex, "ws", direction))

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
        if self._mode == "card" and self._held_size > CARD_LIMIT:
            held, self._held, self._held_size, self._mode = b"".join(self._held), [], 0, "stream"
            head = self._response_head
            assert head is not None
            self._card_too_large()
            self._open(Direction.S2C, "body", head.text(b"content-encoding"))
            self._s2c_open = True
            self._send_head(head)
            self._send_body(held)
        elif self._mode == "first":
            held = b"".join(self._held)
            if any(end in held for end in _FIRST_EVENT_END) or len(held) > _FIRST_EVENT_LIMIT:
                self._held, self._held_size, self._mode = [], 0, "stream"
                self._send_body(self._rewrite_endpoint(held))

    def _send_body(self, data: bytes) -> None:
        if not data or self.client.gone:  # (a client connection closing takes nothing more: nothing passes)
            return
        if self._metadata is not None:
            self._metadata.append(data)
            if sum(map(len, self._metadata)) > _METADATA_LIMIT:
                self._metadata = None
        spec, self._s2c_spec = self._s2c_spec, None
        head = self._response_head
        whole = not self.bytes_out and head is not None and len(data) == head.content_length
        self.bytes_out += len(data)
        if self._s2c_open:
            self._body_data(Direction.S2C, spec, data, whole)
            if whole:
                self._s2c_open = False
        self.client.write(wire.chunk(data) if self._chunked_out else data)

    def response_end(self, upstream: UpstreamSide) -> None:
        if self._mode == "card":
            self._send_card(b"".join(self._held))
        elif self._mode == "first" and self._held:
            self._send_body(self._rewrite_endpoint(b"".join(self._held)))
        self._held = []
        if self._metadata is not None and self.proxy.watch_metadata is not None:
            head = self._response_head
            body = decoded(b"".join(self._metadata), head.text(b"content-encoding") if head else None)
            self._metadata = None
            if body is not None:
                self.proxy.watch_metadata(body)
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
            self._close_stream(Direction.S2C, self._s2c_spec)
            self._s2c_spec = None

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
        if self.tunnel:
            self.recorder.event(Kind.ERROR, ex=self.ex, error="upstream_closed", message=why)
            self.tunnel_end("upstream_closed")
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
        self.head_due = None
        self._detach(keep=False)
        # A body still coming is read and recorded, not forwarded; then the connection closes.
        self._close = self._close or not self.request_complete
        self._answer_generated(status, reason, wire.generated(status, reason, text, close=self._close))
        self._maybe_finish()

    def head_timeout(self) -> None:
        self.head_due = None
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
        self.head_due = None
        if self._connecting is not None:
            self._connecting.cancel()
        self._close_c2s()
        self._close_tunnel()
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

    def _card_too_large(self) -> None:
        why = f"the agent card is over {CARD_LIMIT >> 20} MiB: passed on unrewritten, so clients may bypass the proxy"
        self.recorder.event(Kind.ERROR, ex=self.ex, error="card_too_large", message=why)
        self.proxy.warn(f"{self.path}: {why}")

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
