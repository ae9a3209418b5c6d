"""Chaining: the proxy the environment already names (``HTTPS_PROXY``/``HTTP_PROXY``, ``NO_PROXY``) carries
the forward proxy's own upstream connections, through a CONNECT tunnel. Loopback targets never go there."""

from __future__ import annotations

import asyncio
import base64
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from wiretap.wire.http.guard import is_loopback

_HEAD_LIMIT = 1 << 16


@dataclass(frozen=True)
class Parent:
    host: str
    port: int
    authorization: bytes | None = None
    """``Proxy-Authorization`` for the parent, from its URL's userinfo."""


def parent_for(env: Mapping[str, str], scheme: str, host: str) -> Parent | None:
    """The proxy the environment names for a ``scheme`` target on ``host``, if any (and not NO_PROXY's)."""
    if is_loopback(host):
        return None
    names = ("HTTPS_PROXY", "https_proxy") if scheme == "https" else ("HTTP_PROXY", "http_proxy")
    url = next((env[name] for name in names if env.get(name)), None) or env.get("ALL_PROXY") or env.get("all_proxy")
    if not url or _bypassed(env, host):
        return None
    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        port = parts.port or 80
    except ValueError:
        return None
    if parts.scheme != "http" or not parts.hostname:
        return None
    authorization = None
    if parts.username is not None:
        credential = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        authorization = b"Basic " + base64.b64encode(credential)
    return Parent(parts.hostname, port, authorization)


def _bypassed(env: Mapping[str, str], host: str) -> bool:
    entries = (env.get("NO_PROXY") or env.get("no_proxy") or "").split(",")
    for entry in (e.strip().lower() for e in entries):
        name = entry.rsplit(":", 1)[0] if entry.count(":") == 1 else entry.strip("[]")
        if entry == "*" or (name and (host == name.lstrip(".") or host.endswith("." + name.lstrip(".")))):
            return True
    return False


class _Connect(asyncio.Protocol):
    def __init__(self) -> None:
        self.head = bytearray()
        self.done: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.head += data
        if b"\r\n\r\n" in self.head and not self.done.done():
            self.done.set_result(bytes(self.head))
        elif len(self.head) > _HEAD_LIMIT and not self.done.done():
            self.done.set_exception(OSError("the parent proxy's answer to CONNECT is too long"))

    def connection_lost(self, exc: BaseException | None) -> None:
        if not self.done.done():
            self.done.set_exception(OSError("the parent proxy closed the connection"))


async def open_via(
    parent: Parent,
    host: str,
    port: int,
    factory: Callable[[], asyncio.Protocol],
    tls: ssl.SSLContext | None = None,
) -> tuple[asyncio.BaseTransport, asyncio.Protocol]:
    """A connection to ``host:port`` through ``parent`` (CONNECT), TLS on top if ``tls``: like
    ``create_connection``."""
    loop = asyncio.get_running_loop()
    transport, connect = await loop.create_connection(_Connect, parent.host, parent.port)
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    request = f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n".encode()
    if parent.authorization is not None:
        request += b"Proxy-Authorization: " + parent.authorization + b"\r\n"
    transport.write(request + b"\r\n")
    try:
        head = await connect.done
    except BaseException:
        transport.close()
        raise
    line = head.split(b"\r\n", 1)[0]
    status = line.split(b" ")
    end = head.index(b"\r\n\r\n") + 4
    if len(status) < 2 or status[1] != b"200" or head[end:]:
        transport.close()
        raise OSError(f"the parent proxy answered CONNECT {authority} with {line.decode('latin-1')[:200]}")
    protocol = factory()
    if tls is not None:
        transport = await loop.start_tls(transport, protocol, tls, server_hostname=host)  # type: ignore[assignment]
    else:
        transport.set_protocol(protocol)
    protocol.connection_made(transport)
    return transport, protocol
