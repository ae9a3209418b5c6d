"""Sans-IO: what the proxy refuses before forwarding, and which client connections it closes.

The MCP transport spec asks servers to check ``Host`` and ``Origin`` against DNS rebinding. A proxy
that rewrites ``Host`` would switch that check off, so the proxy does it itself: ``Host`` must
name the proxy's own loopback address, and ``Origin``, if any, must be a loopback origin.
"""

from __future__ import annotations

import ipaddress
import itertools
from dataclasses import dataclass, field
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "127.0.0.1", "::1"})


@dataclass(frozen=True)
class Limits:
    """Timeouts (seconds) and caps; every one has a command-line flag."""

    upstream_connect: float = 10.0
    upstream_head: float = 300.0
    """From sending a request to the upstream's complete response head (a tool may work a while)."""
    client_head: float = 30.0
    """How long a client connection may sit without a complete request head (idle keep-alive too), and
    how long a request body may go without a byte once it started (a slow-body slowloris)."""
    max_idle: int = 100
    """Client connections waiting for a request head, at most; the longest waiting are closed first."""


@dataclass(frozen=True)
class Guard:
    listen_host: str
    listen_port: int
    allow_hosts: frozenset[str] = frozenset()
    allow_origins: frozenset[str] = frozenset()
    limits: Limits = field(default_factory=Limits)


@dataclass(frozen=True)
class Refusal:
    status: int
    reason: str
    why: str
    """The machine-readable cause, recorded as the error."""

    @property
    def body(self) -> str:
        return f"wiretap: {self.reason.lower()}: {self.why}\n"


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _split_host(value: str) -> tuple[str, int | None] | None:
    try:
        parts = urlsplit(f"//{value}")
        return (parts.hostname or "", parts.port)
    except ValueError:
        return None


def _host_ok(guard: Guard, value: str) -> bool:
    if "*" in guard.allow_hosts or value.lower() in guard.allow_hosts:
        return True
    split = _split_host(value)
    if split is None:
        return False
    host, port = split
    if host in guard.allow_hosts:
        return True
    own = is_loopback(host) or host == guard.listen_host.lower()
    return own and (port or 80) == guard.listen_port


def _origin_ok(guard: Guard, origin: str) -> bool:
    if "*" in guard.allow_origins or origin.rstrip("/").lower() in guard.allow_origins:
        return True
    try:
        parts = urlsplit(origin)
        host = parts.hostname
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and host is not None and is_loopback(host)


def check_request(guard: Guard, method: str, target: str, host: str | None, origin: str | None) -> Refusal | None:
    """None if the request may go on to the upstream; otherwise what to answer instead."""
    if method.upper() == "CONNECT":
        return Refusal(405, "Method Not Allowed", "CONNECT: wiretap is a reverse proxy, not a tunnel")
    if not target.startswith("/"):
        return Refusal(400, "Bad Request", f"request target {target[:80]!r} is not a path")
    if host is None or not _host_ok(guard, host):
        return Refusal(403, "Forbidden", f"Host {host!r} is not this proxy (see --allow-host)")
    if origin is not None and not _origin_ok(guard, origin):
        return Refusal(403, "Forbidden", f"Origin {origin!r} is not a loopback origin (see --allow-origin)")
    return None


def gateway_timeout(what: str, seconds: float) -> str:
    return f"wiretap: the upstream {what} within {seconds:g} s (a 504 from wiretap, not from the upstream)\n"


class ConnectionWatch:
    """Which client connections wait for a request head, since when; which to close now."""

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._waiting: dict[object, float] = {}  # insertion order is waiting order
        self._busy: set[object] = set()

    def opened(self, conn: object, now: float) -> list[object]:
        """``conn`` waits for its first request head; returns the connections to close now to keep the cap."""
        self._waiting[conn] = now
        return self._beyond_cap()

    def request_started(self, conn: object) -> None:
        self._waiting.pop(conn, None)
        self._busy.add(conn)

    def request_done(self, conn: object, now: float) -> list[object]:
        """``conn`` waits for its next request head; returns the connections to close now to keep the cap."""
        if conn in self._busy:
            self._busy.discard(conn)
            self._waiting[conn] = now
        return self._beyond_cap()

    def _beyond_cap(self) -> list[object]:
        # Kept at once, not at the next sweep: between two sweeps a flood of connections, each holding
        # up to a head's worth of bytes, would hold as much memory as it liked.
        excess = len(self._waiting) - self._limits.max_idle
        if excess <= 0:
            return []
        oldest = list(itertools.islice(self._waiting, excess))
        for conn in oldest:
            del self._waiting[conn]
        return oldest

    def closed(self, conn: object) -> None:
        self._waiting.pop(conn, None)
        self._busy.discard(conn)

    def expired(self, now: float) -> list[object]:
        """Connections to close: waited too long, or beyond the cap (longest waiting first)."""
        late = [c for c, since in self._waiting.items() if now - since >= self._limits.client_head]
        excess = len(self._waiting) - len(late) - self._limits.max_idle
        if excess > 0:
            late += [c for c in self._waiting if c not in late][:excess]
        for conn in late:
            del self._waiting[conn]
        return late
