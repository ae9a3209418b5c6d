"""How a client is pointed at wiretap's forward proxy: which variables it reads, and where it keeps trust."""

from __future__ import annotations

from dataclasses import dataclass

THROUGH = ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")


@dataclass(frozen=True)
class ProxyUse:
    """How one client is pointed at the forward proxy and made to trust the run's CA."""

    variables: tuple[str, ...]
    """The proxy's exports the client gets (a stdio server it starts may inherit them, so no more)."""
    own_ca: tuple[str, ...] = ()
    """The client's variables that may name a CA file of the user's: the first set, wiretap trusts
    upstream too, as the client would."""
    whole_store: str | None = None
    """A variable of the client's own that names its whole trust store in place of the system's: it gets
    the user's file (if set), the system's roots and the run's CA."""


NODE = ProxyUse((*THROUGH, "NODE_EXTRA_CA_CERTS", "NODE_USE_ENV_PROXY"), own_ca=("NODE_EXTRA_CA_CERTS",))
"""A client on Node (Claude Code, Gemini CLI): proxy variables with ``NODE_USE_ENV_PROXY``, extra CAs."""
