"""Rewriting the two things that would let a client bypass the proxy: agent cards and SSE endpoints.

An A2A client talks to the URLs inside the agent card, and a 2024-11-05 MCP client posts to the
URL in the SSE ``endpoint`` event. URLs on the upstream's origin are pointed at the proxy; URLs on
any other origin are left alone, and the recording says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")


@dataclass
class Rewrites:
    changed: list[dict[str, str]] = field(default_factory=list)
    left_alone: list[dict[str, str]] = field(default_factory=list)


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    port = parts.port or default
    return parts.scheme, f"{(parts.hostname or '').lower()}:{port}"


def rebase(url: str, upstream: str, proxy: str) -> str | None:
    """``url`` moved from the upstream's origin to the proxy's, or None if it is on another origin."""
    if _origin(url) != _origin(upstream):
        return None
    parts, target = urlsplit(url), urlsplit(proxy)
    return urlunsplit((target.scheme, target.netloc, parts.path, parts.query, parts.fragment))


def _rewrite(where: str, url: Any, upstream: str, proxy: str, log: Rewrites) -> Any:
    if not isinstance(url, str):
        return url
    moved = rebase(url, upstream, proxy)
    if moved is None:
        log.left_alone.append({"field": where, "url": url})
        return url
    log.changed.append({"field": where, "from": url, "to": moved})
    return moved


def rewrite_card(card: dict[str, Any], upstream: str, proxy: str) -> Rewrites:
    """Point a 1.0 card's ``supportedInterfaces[].url`` and a 0.3 card's ``url`` and
    ``additionalInterfaces[].url`` at the proxy, in place."""
    log = Rewrites()
    if "url" in card:
        card["url"] = _rewrite("url", card["url"], upstream, proxy, log)
    for key in ("supportedInterfaces", "additionalInterfaces"):
        interfaces = card.get(key)
        if isinstance(interfaces, list):
            for n, interface in enumerate(interfaces):
                if isinstance(interface, dict) and "url" in interface:
                    interface["url"] = _rewrite(f"{key}[{n}].url", interface["url"], upstream, proxy, log)
    return log


def rewrite_endpoint(data: str, upstream: str, proxy: str) -> str | None:
    """The new data of an ``endpoint`` event, or None when it needs no change (relative or foreign)."""
    if not urlsplit(data).scheme:
        return None
    return rebase(data, upstream, proxy)
