"""The forward proxy's front door: the proxy credential, CONNECT tunnels (intercepted with the run's CA, or
blind), and absolute-form plain HTTP. Each intercepted origin gets an ``HttpProxy`` of its own (its own
recording) that the client's connection is handed to; from there on it is the reverse proxy's code.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hmac
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, cast
from urllib.parse import urlsplit

from wiretap.forward.answers import NEED_CREDENTIAL, plain_answer
from wiretap.forward.ca import RunCA
from wiretap.forward.chain import parent_for
from wiretap.forward.tls import TlsLayer
from wiretap.forward.tunnel import Tunnel
from wiretap.recording.events import Header
from wiretap.recording.recorder import Recorder
from wiretap.recording.writer import RecordingWriter
from wiretap.transports.http import ClientConnection, HttpProxy
from wiretap.transports.proxy_config import ProxyConfig
from wiretap.wire.http import wire
from wiretap.wire.http.guard import Limits

MAX_FRONT_HEAD = 1 << 16
"""Bytes of a first request head read before it is answered 431."""


@dataclass(frozen=True)
class Origin:
    scheme: str
    host: str
    port: int

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = (self.scheme, self.port) in (("http", 80), ("https", 443))
        return f"{self.scheme}://{host}" + ("" if default else f":{self.port}")


@dataclass
class ForwardConfig:
    ca: RunCA
    token: str
    """The credential in the proxy URL (user ``wiretap``)."""
    intercept: Callable[[str, int], bool]
    """Whether a host (lower case) and port are intercepted; every other one passes blind."""
    recorder_for: Callable[[Origin], Recorder]
    upstream_tls: object = None
    limits: Limits = field(default_factory=Limits)
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    """Where the proxy this one chains to is named (HTTPS_PROXY, HTTP_PROXY, NO_PROXY)."""


def split_authority(authority: str, default_port: int) -> tuple[str, int] | None:
    """``host:port`` (``[v6]:port``) as (host, port), or None if it cannot be one."""
    if authority.startswith("["):
        host, closed, rest = authority[1:].partition("]")
        if not closed or (rest and not rest.startswith(":")):
            return None
        port = rest[1:]
    else:
        host, _, port = authority.rpartition(":") if ":" in authority else (authority, "", "")
    if not host or any(c in host for c in "/@?# "):
        return None
    if port and (not port.isdigit() or not 0 < int(port) < 65536):
        return None
    return host.lower(), int(port) if port else default_port


def absolute_origin(target: str) -> tuple[Origin, str] | None:
    """``http://host:port/path?q`` as its origin and origin-form target (``ws://`` and ``wss://``, which some
    WebSocket clients send a proxy, name the origins ``http://`` and ``https://``)."""
    scheme, sep, rest = target.partition("://")
    scheme = {"ws": "http", "wss": "https"}.get(scheme.lower(), scheme.lower())
    if not sep or scheme not in ("http", "https"):
        return None
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i != -1), default=len(rest))
    authority, path = rest[:cut], rest[cut:]
    split = split_authority(authority, 443 if scheme == "https" else 80)
    if split is None:
        return None
    path = path if path.startswith("/") else "/" + path
    return Origin(scheme, *split), path


class ForwardProxy:
    """Listens on loopback; every connection starts at a ``Front``."""

    def __init__(self, config: ForwardConfig, *, stderr: IO[str]) -> None:
        self.config = config
        self.stderr = stderr
        self.origins: dict[Origin, HttpProxy] = {}
        self._server: asyncio.Server | None = None
        self._expected = b"Basic " + base64.b64encode(f"wiretap:{config.token}".encode())
        self.tunnels: set[Tunnel] = set()
        self.fronts: dict[Front, float] = {}
        """Connections waiting for their first request head (or a tunnel's first byte), since when; in
        that order, so that the longest waiting go first when there are too many."""
        self._sweeper: asyncio.Task[None] | None = None
        self.blind = 0
        """Blind tunnels opened."""
        self.learned: set[tuple[str, int]] = set()
        """Authorization servers, named by protected resource metadata that passed: intercepted too."""
        self.unrecorded: dict[Origin, HttpProxy] = {}
        """Plain HTTP origins not intercepted: their requests are still read (to drop the proxy's credential),
        but nothing is recorded."""

    def tunnel_opened(self) -> None:
        self.blind += 1

    async def start(self, host: str, port: int) -> tuple[str, int]:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: Front(self), host, port, reuse_address=True)
        self._sweeper = loop.create_task(self._sweep())
        bound = self._server.sockets[0].getsockname()
        return bound[0], bound[1]

    def waiting(self, front: Front) -> None:
        """A connection that has said nothing yet: closed after ``--client-timeout``, and the longest
        waiting closed at once beyond ``--max-idle`` (each may hold a head's worth of bytes)."""
        self.fronts[front] = asyncio.get_running_loop().time()
        while len(self.fronts) > self.config.limits.max_idle:
            oldest = next(iter(self.fronts))
            self.fronts.pop(oldest)
            oldest.close()

    async def _sweep(self) -> None:
        loop = asyncio.get_running_loop()
        limit = self.config.limits.client_head
        while True:
            await asyncio.sleep(min(1.0, limit / 4))
            now = loop.time()
            for front, since in list(self.fronts.items()):
                if now - since >= limit:
                    self.fronts.pop(front, None)
                    front.close()

    def intercepts(self, host: str, port: int) -> bool:
        return (host, port) in self.learned or self.config.intercept(host, port)

    def learn(self, metadata: bytes) -> None:
        """Intercept the authorization servers a resource names, so that its login is recorded too."""
        try:
            servers = json.loads(metadata).get("authorization_servers") or []
        except (ValueError, AttributeError):
            return
        for server in servers if isinstance(servers, list) else []:
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                parts = urlsplit(server)
                host = (parts.hostname or "").lower()
                port = parts.port or (443 if parts.scheme == "https" else 80)
                if host and not self.intercepts(host, port):
                    self.learned.add((host, port))
                    self.warn(f"intercepting {host}:{port} too: an authorization server of a recorded resource")

    def authorized(self, head: wire.Head) -> bool:
        given = head.values(b"proxy-authorization")
        return len(given) == 1 and hmac.compare_digest(given[0].strip(), self._expected)

    def origin(self, origin: Origin) -> HttpProxy:
        """The proxy that serves an origin: recording it if intercepted."""
        if not self.intercepts(origin.host, origin.port):
            return self._unrecorded(origin)
        known = self.origins.get(origin)
        if known is None:
            config = ProxyConfig(
                origin.url,
                self.config.upstream_tls,  # type: ignore[arg-type]
                limits=self.config.limits,
                forward=True,
                via=parent_for(self.config.env, origin.scheme, origin.host),
            )
            known = HttpProxy(config, self.config.recorder_for(origin), stderr=self.stderr)
            known.watch_metadata = self.learn
            known.attach()
            self.origins[origin] = known
        return known

    def _unrecorded(self, origin: Origin) -> HttpProxy:
        known = self.unrecorded.get(origin)
        if known is None:
            via = parent_for(self.config.env, origin.scheme, origin.host)
            config = ProxyConfig(origin.url, self.config.upstream_tls, limits=self.config.limits, forward=True, via=via)  # type: ignore[arg-type]
            nowhere = RecordingWriter(-1, Path(os.devnull), stderr=self.stderr)  # (a writer that never opened)
            recorder = Recorder(nowhere, Header(transport="http", name=origin.host, argv=[]), stderr=self.stderr)
            known = HttpProxy(config, recorder, stderr=self.stderr)
            known.attach()
            self.unrecorded[origin] = known
        return known

    def warn(self, text: str) -> None:
        print(f"wiretap: {text}", file=self.stderr, flush=True)

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self._server is not None:
            self._server.close()
        for front in list(self.fronts):
            front.close()
        for tunnel in list(self.tunnels):
            tunnel.close()
        proxies = [*self.origins.values(), *self.unrecorded.values()]
        await asyncio.gather(*(proxy.stop() for proxy in proxies))


class Front(asyncio.Protocol):
    """A client connection until its first request head says where it goes."""

    def __init__(self, proxy: ForwardProxy) -> None:
        self.proxy = proxy
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.parser = wire.RequestParser()
        self.tunnel_to: Origin | None = None
        """CONNECT answered for an intercepted origin: the tunnel's first byte says TLS or plain."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast("asyncio.Transport", transport)
        self.proxy.waiting(self)

    def connection_lost(self, exc: BaseException | None) -> None:
        self.proxy.fronts.pop(self, None)
        self.transport = None
        self.parser.release()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def _refuse(self, status: int, reason: str, text: str, extra: bytes = b"") -> None:
        assert self.transport is not None
        self.transport.write(plain_answer(status, reason, f"wiretap: {text}\n", extra))
        self.transport.close()
        if status != 407:
            self.proxy.warn(f"forward proxy: {text}")

    def data_received(self, data: bytes) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        if self.tunnel_to is not None:
            self._tunnel_opened(bytes(data))
            return
        self.buffer += data
        events = self.parser.feed(data)
        head = next((value for kind, value in events if kind == wire.HEAD), None)
        if head is None:
            bad = next((value for kind, value in events if isinstance(value, wire.BadMessage)), None)
            if bad is not None:
                self._refuse(bad.status, bad.reason, bad.why)
            elif len(self.buffer) > MAX_FRONT_HEAD:
                self._refuse(431, "Request Header Fields Too Large", "the request head is too large")
            return
        assert isinstance(head, wire.Head)
        if not self.proxy.authorized(head):
            self._refuse(407, "Proxy Authentication Required", "this proxy needs its credential", NEED_CREDENTIAL)
            return
        if head.method == "CONNECT":
            self._connect(head)
        else:
            self._absolute(head)

    def _connect(self, head: wire.Head) -> None:
        assert self.transport is not None
        split = split_authority(head.target, 0)
        if split is None or not split[1]:
            self._refuse(400, "Bad Request", f"CONNECT to {head.target[:80]!r}: not host:port")
            return
        host, port = split
        end = self.buffer.find(b"\r\n\r\n")
        rest = bytes(self.buffer[end + 4 :])
        self.buffer.clear()
        self.parser.release()
        if not self.proxy.intercepts(host, port):
            self.transport.pause_reading()
            tunnel = Tunnel(
                self.transport,
                rest,
                self.proxy.config.env,
                self.proxy.config.limits.upstream_connect,
                self.proxy.tunnel_opened,
                self.proxy.tunnels.discard,
            )
            self.proxy.tunnels.add(tunnel)
            self.proxy.fronts.pop(self, None)
            asyncio.get_running_loop().create_task(tunnel.open(host, port))
            return
        self.tunnel_to = Origin("https", host, port)
        self.transport.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        if rest:
            self._tunnel_opened(rest)

    def _tunnel_opened(self, first: bytes) -> None:
        """The first bytes inside an intercepted tunnel: a TLS ClientHello, or plain HTTP."""
        transport, origin = self.transport, self.tunnel_to
        assert transport is not None and origin is not None
        self.proxy.fronts.pop(self, None)
        if first[:1] == b"\x16":
            client = ClientConnection(self.proxy.origin(origin))
            layer = TlsLayer(self.proxy.config.ca.server_context(origin.host), client)
            transport.set_protocol(layer)
            layer.connection_made(transport)
            layer.data_received(first)
            return
        client = ClientConnection(self.proxy.origin(Origin("http", origin.host, origin.port)))
        transport.set_protocol(client)
        client.connection_made(transport)
        client.data_received(first)

    def _absolute(self, head: wire.Head) -> None:
        assert self.transport is not None
        found = absolute_origin(head.target)
        if found is None:
            self._refuse(400, "Bad Request", f"{head.method} {head.target[:80]!r}: a forward proxy takes absolute URLs")
            return
        origin, _ = found
        if origin.scheme != "http":
            self._refuse(400, "Bad Request", f"{origin.url}: an https URL goes through CONNECT")
            return
        self.parser.release()
        client = ClientConnection(self.proxy.origin(origin))
        client.router = Route(self.proxy)
        transport, data = self.transport, bytes(self.buffer)
        self.buffer.clear()
        self.proxy.fronts.pop(self, None)
        transport.set_protocol(client)
        client.connection_made(transport)
        client.data_received(data)


class Route:
    """Plain HTTP through the proxy: every request carries the credential and an absolute URL."""

    def __init__(self, proxy: ForwardProxy) -> None:
        self.proxy = proxy

    def route(self, client: ClientConnection, head: wire.Head) -> HttpProxy | None:
        found = absolute_origin(head.target)
        why = None
        if not self.proxy.authorized(head):
            why = (407, "Proxy Authentication Required", "this proxy needs its credential")
        elif found is None or found[0].scheme != "http":
            why = (400, "Bad Request", f"{head.method} {head.target[:80]!r}: not an absolute http URL")
        if why is not None or found is None:
            status, reason, text = why or (400, "Bad Request", "")
            client.write(plain_answer(status, reason, f"wiretap: {text}\n", NEED_CREDENTIAL if status == 407 else b""))
            client.close()
            client.proxy.flush()
            return None
        origin, target = found
        head.target = target
        return self.proxy.origin(origin)
