"""Loopback only: a request must name this server as its Host, and an Origin, if sent, must be this server;
and it must carry the view's token, in its path (``/t/TOKEN/…``, the URL the view prints) or in the
cookie the first such request sets, so that no other local user can read the recordings.

This defeats DNS rebinding (a hostile name resolving to 127.0.0.1 still sends its own Host) and other
sites' pages calling in (they send their Origin). Stricter than the proxy's guard (wiretap/wire/http/guard.py),
which lets any loopback Origin through to the server it fronts: the view serves recordings, so only its
own page may read them.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class NotLoopback(ValueError):
    pass


def loopback_host(host: str) -> str:
    """The address to bind for ``host`` (``localhost`` is 127.0.0.1); refuse anything off the machine."""
    if host in ("", "localhost"):
        return "127.0.0.1"
    try:
        if ipaddress.ip_address(host).is_loopback:
            return host
    except ValueError:
        pass
    raise NotLoopback(f"wiretap ui listens on loopback only (127.0.0.1, ::1 or localhost), not {host!r}")


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    shown = f"[{host}]" if ":" in host else host
    return frozenset({f"{shown}:{port}", f"localhost:{port}"})


TOKEN_PREFIX = "/t/{token}"
"""Every route is served under this prefix too: the printed URL is the page's, token included."""


def cookie_name(port: int) -> str:
    return f"wiretap-ui-{port}"  # (cookies are per host, not per port: one view's must not be another's)


def _same(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def guard(hosts: frozenset[str], token: str, port: int) -> Middleware:
    origins = frozenset(f"http://{h}" for h in hosts)
    cookie = cookie_name(port)

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        host = request.headers.get("Host", "").lower()
        origin = request.headers.get("Origin")
        if host not in hosts:
            return web.Response(status=403, text="wiretap ui: forbidden Host\n")
        if origin is not None and origin.lower() not in origins:
            return web.Response(status=403, text="wiretap ui: forbidden Origin\n")
        in_path = request.match_info.get("token")
        if not _same(in_path, token) and not _same(request.cookies.get(cookie), token):
            return web.Response(status=403, text="wiretap ui: open the URL wiretap ui printed (it holds the token)\n")
        response = await handler(request)
        if in_path is not None and not response.prepared:
            response.set_cookie(cookie, token, httponly=True, samesite="Strict", path="/")
        return response

    return check
