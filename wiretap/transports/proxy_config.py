"""What one HTTP proxy relays to, and how: the upstream, its TLS, the guard's allow lists and limits."""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field

from wiretap.forward.chain import Parent
from wiretap.wire.http.guard import Limits


@dataclass(frozen=True)
class ProxyConfig:
    upstream: str
    """The upstream's base URL (scheme, host, port and the path clients start from)."""
    ssl_context: ssl.SSLContext | bool | None = None
    """For an https upstream: a context with extra CAs, False to skip verification, None for defaults."""
    allow_hosts: frozenset[str] = frozenset()
    allow_origins: frozenset[str] = frozenset()
    limits: Limits = field(default_factory=Limits)
    forward: bool = False
    """Serving as a client's forward proxy: the client uses the upstream's own URLs, so its Host is kept
    and nothing is rewritten."""
    via: Parent | None = None
    """A proxy the upstream is reached through (CONNECT): a forward proxy's own parent."""
