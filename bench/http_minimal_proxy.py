"""The smallest honest aiohttp streaming reverse proxy: the floor for any aiohttp-based proxy.

    python bench/http_minimal_proxy.py --upstream http://127.0.0.1:PORT [--listen 127.0.0.1:0]

Prints its base URL first, then serves until killed. No recording, no parsing: hop-by-hop headers
dropped both ways (as any correct proxy must), the request body streamed up and the response body
streamed down with ``iter_any()``, keep-alive on both sides. Same server/client setup as wiretap's
(aiohttp low-level server, one ClientSession, no connection limit, no decompression).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import AsyncIterator

import aiohttp
from aiohttp import web
from multidict import CIMultiDict
from yarl import URL

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)


def _end_to_end(raw: tuple[tuple[bytes, bytes], ...]) -> CIMultiDict[str]:
    out: CIMultiDict[str] = CIMultiDict()
    for name, value in raw:
        text = name.decode("latin-1")
        if text.lower() not in HOP_BY_HOP:
            out.add(text, value.decode("latin-1"))
    return out


class MinimalProxy:
    def __init__(self, upstream: str) -> None:
        url = URL(upstream)
        self.origin = url.origin()
        self.host = f"{url.raw_host}:{url.port}"
        self.session: aiohttp.ClientSession | None = None

    async def handle(self, request: web.BaseRequest) -> web.StreamResponse:
        try:
            return await self._forward(request)
        except (ConnectionResetError, aiohttp.ClientError):  # a client or the upstream left mid-exchange
            if request.transport is not None:
                request.transport.close()
            return web.Response(status=502)

    async def _forward(self, request: web.BaseRequest) -> web.StreamResponse:
        assert self.session is not None
        headers = _end_to_end(request.raw_headers)
        headers["Host"] = self.host

        async def body() -> AsyncIterator[bytes]:
            async for chunk in request.content.iter_any():
                yield chunk

        async with self.session.request(
            request.method,
            self.origin.join(request.rel_url),
            headers=headers,
            data=body() if request.body_exists else None,
            allow_redirects=False,
            compress=False,
        ) as upstream:
            response = web.StreamResponse(
                status=upstream.status, reason=upstream.reason, headers=_end_to_end(upstream.raw_headers)
            )
            await response.prepare(request)
            async for chunk in upstream.content.iter_any():
                await response.write(chunk)
            await response.write_eof()
            return response


async def serve(upstream: str, host: str, port: int) -> None:
    proxy = MinimalProxy(upstream)
    proxy.session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0),
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=30),
        auto_decompress=False,
        skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
        cookie_jar=aiohttp.DummyCookieJar(),
    )
    runner = web.ServerRunner(web.Server(proxy.handle), handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_address=True, backlog=1024)
    await site.start()
    bound = site._server.sockets[0].getsockname()  # type: ignore[union-attr]
    print(f"http://{bound[0]}:{bound[1]}", flush=True)
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):  # also when started with SIGINT ignored (a shell's `&`)
        asyncio.get_running_loop().add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()
        await proxy.session.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--upstream", required=True, help="the upstream's origin, e.g. http://127.0.0.1:8000")
    parser.add_argument("--listen", default="127.0.0.1:0", help="HOST:PORT (PORT 0: a free one)")
    args = parser.parse_args()
    host, _, port = args.listen.rpartition(":")
    try:
        asyncio.run(serve(args.upstream, host or "127.0.0.1", int(port)))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
