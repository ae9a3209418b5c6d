"""A small aiohttp upstream for the HTTP proxy benchmark (an MCP Streamable HTTP look-alike, not MCP).

    python bench/http_upstream.py [--port 0]      # prints its base URL (http://127.0.0.1:PORT) first

``POST /mcp`` with a JSON-RPC request:

* ``"method": "bench/stream"``, ``"params": {"count": N, "interval_ms": MS}``: a ``text/event-stream``
  response of N ``notifications/progress`` events (about 200 B each, one write per event), each
  stamped with ``"sent_ns"``: ``time.monotonic_ns()`` just before its write (the client, on the same
  machine, subtracts it from its own ``time.monotonic_ns()`` on arrival), then the JSON-RPC response as
  a last event. ``interval_ms`` 0 sends back to back (a flood); otherwise it sleeps that long between
  events (paced: what one event's forwarding delay is measured on).
* anything else: a ~200 B JSON-RPC ``tools/call``-style result echoing the request's id, with
  Content-Length (what an MCP server's JSON response mode sends).

It serves until killed. The request and event shapes live here so that every client (the aiohttp load
client, wrk's script) sends the same bytes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import signal
import ssl
import sys
import time

from aiohttp import web

SESSION_ID = "5f0c1a2b3d4e4f60a1b2c3d4e5f60718"
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "Mcp-Protocol-Version": "2025-06-18",
    "Mcp-Session-Id": SESSION_ID,
}
PATH = "/mcp"
FILLER = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore"


def call_body(request_id: int = 1) -> bytes:
    """The benchmark's request: a ~200 B ``tools/call``."""
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": FILLER[:100]}, "_meta": {"progressToken": 7}},
        },
        separators=(",", ":"),
    ).encode()


def stream_body(count: int, interval_ms: float, request_id: int = 1) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "bench/stream",
            "params": {"count": count, "interval_ms": interval_ms},
        },
        separators=(",", ":"),
    ).encode()


_ID = re.compile(rb'"id":(\d+)')


def _result(request_id: int) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "result": {"content": [{"type": "text", "text": FILLER[:110]}], "isError": False},
        },
        separators=(",", ":"),
    ).encode()


def _event(i: int, count: int) -> bytes:
    # sent_ns last, so the stamp is taken as late as possible and the client finds it cheaply.
    return (
        b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":'
        b'{"progressToken":7,"progress":%d,"total":%d,"message":"%s","sent_ns":%d}}\n\n'
        % (i, count, FILLER[:60].encode(), time.monotonic_ns())
    )


async def _stream(request: web.BaseRequest, request_id: int, count: int, interval_ms: float) -> web.StreamResponse:
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "Mcp-Session-Id": SESSION_ID}
    )
    await response.prepare(request)
    interval = interval_ms / 1000
    for i in range(count):
        if interval:
            await asyncio.sleep(interval)
        await response.write(_event(i, count))
    await response.write(b"event: message\ndata: " + _result(request_id) + b"\n\n")
    await response.write_eof()
    return response


async def handle(request: web.BaseRequest) -> web.StreamResponse:
    body = await request.read()
    if b'"bench/stream"' in body:
        message = json.loads(body)
        params = message["params"]
        return await _stream(request, message["id"], int(params["count"]), float(params["interval_ms"]))
    match = _ID.search(body)
    return web.Response(
        body=_result(int(match.group(1)) if match else 0),
        headers={"Content-Type": "application/json", "Mcp-Session-Id": SESSION_ID},
    )


async def serve(host: str, port: int, certfile: str | None = None) -> None:
    server = web.Server(handle, access_log=None)
    runner = web.ServerRunner(server, handle_signals=False, access_log=None)
    await runner.setup()
    context = None
    if certfile is not None:  # (a PEM holding the key and the certificate)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(certfile)
    site = web.TCPSite(runner, host, port, reuse_address=True, backlog=1024, ssl_context=context)
    await site.start()
    bound = site._server.sockets[0].getsockname()  # type: ignore[union-attr]
    print(f"{'https' if context else 'http'}://{bound[0]}:{bound[1]}", flush=True)
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):  # also when started with SIGINT ignored (a shell's `&`)
        asyncio.get_running_loop().add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--certfile", help="serve HTTPS with this PEM (key and certificate)")
    args = parser.parse_args()
    try:
        asyncio.run(serve(args.host, args.port, args.certfile))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
