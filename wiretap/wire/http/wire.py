"""Sans-IO HTTP/1.1 for the proxy: message boundaries and heads from bytes, and heads back to bytes.

``httptools`` (llhttp, strict) finds where each message starts and ends; nothing here touches a
socket. A parser turns whatever bytes arrived into a list of events: a head, the body bytes that
arrived (chunked framing undone), the end of a message, or why the stream cannot be read on. Ambiguous
framing (Content-Length with Transfer-Encoding, two Content-Lengths, a Transfer-Encoding that does
not end in chunked) is an error, never forwarded: a proxy that reads a message's end differently
from its upstream lets one request hide inside another (request smuggling).

Why one module: a head is read and written again by the same framing rules (hop-by-hop headers,
chunked, Content-Length), and a proxy whose reader and writer disagree on them can be smuggled
through; they are kept side by side.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import httptools

from wiretap.wire.http.headers import HOP_BY_HOP

MAX_HEAD = 64 << 10
"""The largest request or response head (request line or status line and headers) read, in bytes."""

HEAD, BODY, END, ERROR, CLOSE, UPGRADE = range(6)
Event = tuple[int, object]
"""``(HEAD, Head)``, ``(BODY, bytes)``, ``(END, None)``, ``(ERROR, BadMessage)``: the stream cannot be read
on, ``(CLOSE, None)``: what follows the message before is not HTTP (an upgrade), or ``(UPGRADE, bytes)``:
bytes after a WebSocket upgrade request or a ``101 Switching Protocols`` response, no longer HTTP (every
later ``feed`` gives its bytes as one such event)."""

Headers = list[tuple[bytes, bytes]]


@dataclass(frozen=True)
class BadMessage:
    status: int
    reason: str
    why: str


@dataclass(slots=True)
class Head:
    version: str
    """``"1.1"`` or ``"1.0"``."""
    headers: Headers
    names: list[bytes]
    """The headers' names in lower case, in order."""
    keep_alive: bool
    method: str = ""
    target: str = ""
    status: int = 0
    reason: str = ""
    content_length: int | None = None
    chunked: bool = False
    upgrade: bool = False

    def get(self, name: bytes) -> bytes | None:
        """The first value of header ``name`` (lower case), or None."""
        if name in self.names:
            return self.headers[self.names.index(name)][1]
        return None

    def values(self, name: bytes) -> list[bytes]:
        if name not in self.names:
            return []
        return [pair[1] for key, pair in zip(self.names, self.headers, strict=True) if key == name]

    def text(self, name: bytes) -> str | None:
        value = self.get(name)
        return None if value is None else value.decode("latin-1")


def _tokens(head: Head, name: bytes) -> set[bytes]:
    return {token.strip().lower() for value in head.values(name) for token in value.split(b",")}


def wants_websocket(head: Head) -> bool:
    """A request asking to switch to WebSocket (RFC 6455 §4.1): a GET with ``Upgrade: websocket`` and
    ``Connection: upgrade``. Other upgrades (h2c…) are not passed on."""
    return (
        head.method == "GET"
        and b"websocket" in _tokens(head, b"upgrade")
        and b"upgrade" in _tokens(head, b"connection")
    )


def _framing(headers: Headers, names: list[bytes]) -> tuple[int | None, bool] | str:
    """``(content length, chunked)``, or why the framing is ambiguous."""
    if b"transfer-encoding" not in names:
        count = names.count(b"content-length")
        if count == 0:
            return None, False
        if count == 1:
            length = headers[names.index(b"content-length")][1]
            return (int(length), False) if length.isdigit() else "a Content-Length that is not a number"
    lengths = [v for k, (_, v) in zip(names, headers, strict=True) if k == b"content-length"]
    codings = [v for k, (_, v) in zip(names, headers, strict=True) if k == b"transfer-encoding"]
    if codings:
        if lengths:
            return "both Content-Length and Transfer-Encoding"
        last = b",".join(codings).split(b",")[-1].strip().lower()
        if last != b"chunked":
            return "a Transfer-Encoding that does not end in chunked"
        return None, True
    if len(lengths) > 1:
        return "more than one Content-Length"
    if lengths:
        if not lengths[0].isdigit():
            return "a Content-Length that is not a number"
        return int(lengths[0]), False
    return None, False


class _Parser:
    """What the request and response parsers share: the callbacks llhttp calls, turned into events."""

    _make: type[httptools.HttpRequestParser] | type[httptools.HttpResponseParser]

    def __init__(self, max_head: int = MAX_HEAD) -> None:
        self._max_head = max_head
        self._parser = self._make(self)
        self._out: list[Event] = []
        self._body: list[bytes] = []
        self._headers: Headers = []
        self._first = bytearray()
        self._unread_head = 0
        self._feeding = 0
        self._in_head = False
        self._in_body = False
        self.broken: BadMessage | None = None
        self.upgraded = False
        """Past a WebSocket upgrade (a request that asks for it, or the 101 that grants it)."""
        self.head: Head | None = None
        """The head of the message being read, from its head to its end."""

    # llhttp's callbacks (httptools calls them during feed_data).

    def on_message_begin(self) -> None:
        self._headers = []
        self._first.clear()
        self._in_head = True
        self._in_body = False

    def on_url(self, url: bytes) -> None:
        self._first += url

    def on_status(self, status: bytes) -> None:
        self._first += status

    def on_header(self, name: bytes, value: bytes) -> None:
        # (called once per header: kept as short as can be. After the head, these are a chunked body's
        # trailers, collected into a list nobody reads: the proxy does not announce trailers.)
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        headers, self._headers = self._headers, []
        self._in_head = False
        names = [name.lower() for name, _ in headers]
        framing = _framing(headers, names)
        # (the bytes fed since the head began bound its size: counted only when they could be too many)
        fed, self._unread_head = self._unread_head + self._feeding, 0
        limit = self._max_head
        if fed > limit and len(self._first) + sum(len(n) + len(v) + 4 for n, v in headers) > limit:
            raise _Refuse(BadMessage(431, "Request Header Fields Too Large", f"a head over {self._max_head} bytes"))
        if isinstance(framing, str):
            raise _Refuse(BadMessage(400, "Bad Request", f"ambiguous framing: {framing}"))
        parser = self._parser
        head = self.head = self._head(bytes(self._first).decode("latin-1"), headers, names)
        head.content_length, head.chunked = framing
        head.keep_alive = parser.should_keep_alive()
        self._emit()
        self._out.append((HEAD, head))
        self._in_body = True

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        self._emit()
        self._out.append((END, None))
        self._in_body = False

    def _head(self, first: str, headers: Headers, names: list[bytes]) -> Head:
        raise NotImplementedError

    def _emit(self) -> None:
        if self._body:
            self._out.append((BODY, self._body[0] if len(self._body) == 1 else b"".join(self._body)))
            self._body = []

    # The interface.

    def release(self) -> None:
        """The connection is gone: let go of what a half-read message holds (a head of up to ``max_head``
        bytes) now. llhttp's parser and this object refer to each other, so without this it waits for
        the cycle collector, which may not run for thousands of connections."""
        self._parser = self._make(self)
        self._first, self._headers, self._body, self._out = bytearray(), [], [], []

    def feed(self, data: bytes) -> list[Event]:
        """The events these bytes complete, in order; after an ERROR event, nothing more."""
        if self.upgraded:
            return [(UPGRADE, data)]
        if self.broken is not None:
            return []
        self._out = out = list[Event]()
        self._feeding = len(data)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade as exc:
            self._upgraded(data[exc.args[0] :] if exc.args and isinstance(exc.args[0], int) else b"")
        except httptools.HttpParserCallbackError as exc:
            cause = exc.__context__
            self._fail(cause.bad if isinstance(cause, _Refuse) else BadMessage(400, "Bad Request", str(exc)))
        except httptools.HttpParserError as exc:
            self._fail(BadMessage(400, "Bad Request", str(exc) or type(exc).__name__))
        else:
            self._emit()
            if self._in_head:  # (counting every byte fed: llhttp holds a header it is still reading)
                self._unread_head += len(data)
                if self._unread_head > self._max_head:
                    bad = BadMessage(431, "Request Header Fields Too Large", f"a head over {self._max_head} bytes")
                    self._fail(bad)
        return out

    def _upgraded(self, rest: bytes) -> None:
        self._emit()
        self._fail(BadMessage(400, "Bad Request", "a protocol upgrade (wiretap proxies HTTP/1.1 only)"))

    def _switch(self, rest: bytes) -> None:
        """From here on the stream is not HTTP: ``rest`` and every later byte pass as UPGRADE events."""
        self._emit()
        self.upgraded = True
        self._out.append((UPGRADE, rest))

    def _fail(self, bad: BadMessage) -> None:
        self._emit()
        self.broken = bad
        self._out.append((ERROR, bad))

    @property
    def idle(self) -> bool:
        """Between messages: nothing of the next one has arrived."""
        return not self._in_head and not self._in_body


class _Refuse(Exception):
    def __init__(self, bad: BadMessage) -> None:
        super().__init__(bad.why)
        self.bad = bad


class RequestParser(_Parser):
    _make = httptools.HttpRequestParser

    def _head(self, first: str, headers: Headers, names: list[bytes]) -> Head:
        parser = self._parser
        assert isinstance(parser, httptools.HttpRequestParser)
        return Head(
            version=parser.get_http_version(),
            headers=headers,
            names=names,
            keep_alive=True,
            method=parser.get_method().decode("latin-1"),
            target=first,
            upgrade=parser.should_upgrade(),
        )

    def _upgraded(self, rest: bytes) -> None:
        # CONNECT or an Upgrade: the head was read and is answered (CONNECT is refused); what follows
        # is not HTTP, so the connection closes after that answer. A WebSocket upgrade goes on.
        if self.head is not None and wants_websocket(self.head):
            self._switch(rest)
            return
        self._emit()
        self.broken = BadMessage(400, "Bad Request", "a protocol upgrade (wiretap proxies HTTP/1.1 only)")
        self._out.append((CLOSE, None))


class ResponseParser(_Parser):
    """Responses on one upstream connection. ``head_only`` (set before a HEAD request's response) ends
    the next message after its head, whatever length it announces."""

    _make = httptools.HttpResponseParser

    def __init__(self, max_head: int = MAX_HEAD) -> None:
        super().__init__(max_head)
        self.head_only = False
        self._held = bytearray()

    def _head(self, first: str, headers: Headers, names: list[bytes]) -> Head:
        parser = self._parser
        assert isinstance(parser, httptools.HttpResponseParser)
        return Head(
            version=parser.get_http_version(),
            headers=headers,
            names=names,
            keep_alive=True,
            status=parser.get_status_code(),
            reason=first,
        )

    def _upgraded(self, rest: bytes) -> None:
        if self.head is not None and self.head.status == 101:
            self._switch(rest)
            return
        super()._upgraded(rest)

    def feed(self, data: bytes) -> list[Event]:
        if not self.head_only or self.broken is not None or self.upgraded:
            return super().feed(data)
        # llhttp cannot be told that a response has no body, so a HEAD response's head is cut out
        # and read by a fresh parser on its own.
        self._held += data
        out: list[Event] = []
        while self.head_only:
            end = self._held.find(b"\r\n\r\n")
            if end < 0:
                if len(self._held) > self._max_head:
                    self._fail(BadMessage(502, "Bad Gateway", f"a response head over {self._max_head} bytes"))
                    out += self._out
                break
            head, self._held = bytes(self._held[: end + 4]), self._held[end + 4 :]
            self._parser = self._make(self)
            events = super().feed(head)
            if any(kind == ERROR for kind, _ in events):
                out += events
                break
            informational = self.head is not None and 100 <= self.head.status < 200
            out += events if informational else [e for e in events if e[0] != END]
            if not informational:
                out.append((END, None))
                self.head_only = self._in_body = False
                self._parser = self._make(self)
        if not self.head_only and self._held and self.broken is None:
            rest, self._held = bytes(self._held), bytearray()
            out += super().feed(rest)
        return out

    def feed_eof(self) -> list[Event]:
        """The upstream closed: the end of a response that runs until close, else an ERROR if it was cut."""
        if self.broken is not None or self.upgraded:
            return []
        head = self.head
        if self._in_body and head is not None and head.content_length is None and not head.chunked:
            self._out = [(END, None)]
            self._in_body = False
            return self._out
        if self._in_head or self._in_body:
            self._out = []
            self._fail(BadMessage(502, "Bad Gateway", "the upstream closed the connection mid-response"))
            return self._out
        return []


# Heads back to bytes.


def _head_lines(first: bytes, headers: Iterable[tuple[bytes, bytes]]) -> bytes:
    parts = [first]
    for name, value in headers:
        parts += (name, b": ", value, b"\r\n")
    parts.append(b"\r\n")
    return b"".join(parts)


_HOP = frozenset(name.encode() for name in HOP_BY_HOP)


def _dropped(head: Head) -> frozenset[bytes]:
    """The names of the headers that do not travel end to end: hop-by-hop ones and those Connection names."""
    if b"connection" in head.names:
        return _HOP | {token.strip().lower() for value in head.values(b"connection") for token in value.split(b",")}
    return _HOP


def end_to_end(head: Head) -> Headers:
    """All headers but hop-by-hop ones and those the Connection header names."""
    drop = _dropped(head)
    return [pair for name, pair in zip(head.names, head.headers, strict=True) if name not in drop]


@dataclass
class Forward:
    """How a message goes on: its new head, and whether its body is sent chunked."""

    head: bytes
    chunked: bool = False
    close: bool = False
    body: bool = True


_UPGRADE_HEADERS = frozenset({b"connection", b"upgrade"})


def request_head(head: Head, host: bytes, *, upgrade: bool = False) -> tuple[bytes, bool]:
    """The head sent upstream (HTTP/1.1, end-to-end headers, Host rewritten) and whether the body goes
    chunked (the client sent it chunked: the chunks are sent on as they arrive). ``upgrade``: a WebSocket
    upgrade, whose ``Connection`` and ``Upgrade`` headers go on as they are."""
    drop = _dropped(head) - _UPGRADE_HEADERS if upgrade else _dropped(head)
    parts = [f"{head.method} {head.target} HTTP/1.1\r\n".encode("latin-1")]
    for name, (key, value) in zip(head.names, head.headers, strict=True):  # (one pass: every request)
        if name not in drop:
            parts += (key, b": ", host if name == b"host" else value, b"\r\n")
    if head.chunked:
        parts.append(b"Transfer-Encoding: chunked\r\n")
    parts.append(b"\r\n")
    return b"".join(parts), head.chunked


def response_head(
    head: Head,
    *,
    client_version: str,
    request_method: str,
    close: bool,
    content_length: int | None = None,
    drop: frozenset[bytes] = frozenset(),
) -> Forward:
    """The head sent to the client. A response that runs until close, or comes chunked, goes chunked to an
    HTTP/1.1 client and until close to an HTTP/1.0 one. ``content_length`` replaces the upstream's
    (a rewritten body); ``drop`` names more headers to leave out."""
    has_body = request_method != "HEAD" and head.status not in (204, 304) and not 100 <= head.status < 200
    headers = end_to_end(head)
    if drop or content_length is not None:
        gone = drop | {b"content-length"} if content_length is not None else drop
        headers = [(k, v) for k, v in headers if k.lower() not in gone]
        if content_length is not None:
            headers.append((b"Content-Length", str(content_length).encode()))
    framed = content_length is not None or (head.content_length is not None and not head.chunked)
    chunked = False
    if has_body and not framed:
        if client_version == "1.1":
            chunked = True
            headers.append((b"Transfer-Encoding", b"chunked"))
        else:
            close = True
    if close:
        headers.append((b"Connection", b"close"))
    elif client_version == "1.0":
        headers.append((b"Connection", b"keep-alive"))
    first = f"HTTP/{client_version} {head.status} {head.reason}\r\n".encode("latin-1")
    return Forward(_head_lines(first, headers), chunked=chunked, close=close, body=has_body)


def switching(head: Head) -> bytes:
    """A ``101 Switching Protocols`` as passed on: every header as the upstream sent it."""
    first = f"HTTP/1.1 {head.status} {head.reason}\r\n".encode("latin-1")
    return _head_lines(first, head.headers)


def informational(head: Head) -> bytes:
    """A 1xx response (100 Continue, 103 Early Hints) as passed on to an HTTP/1.1 client."""
    first = f"HTTP/1.1 {head.status} {head.reason}\r\n".encode("latin-1")
    return _head_lines(first, end_to_end(head))


def generated(status: int, reason: str, text: str, *, close: bool) -> bytes:
    """A response wiretap writes itself (refusals, 502, 504)."""
    body = text.encode()
    headers: Headers = [
        (b"Content-Type", b"text/plain; charset=utf-8"),
        (b"Content-Length", str(len(body)).encode()),
    ]
    if close:
        headers.append((b"Connection", b"close"))
    return _head_lines(f"HTTP/1.1 {status} {reason}\r\n".encode("latin-1"), headers) + body


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%b\r\n" % (len(data), data)


LAST_CHUNK = b"0\r\n\r\n"
