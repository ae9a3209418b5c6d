"""An MCP Streamable HTTP server on the real MCP Python SDK 2.3.0, for tests/e2e/test_real_mcp_http.py.

Runs in the peer venv's python: ``mcp_sdk_http_server.py --log FILE [--sse]``. It binds 127.0.0.1 on a free
port, prints its endpoint URL (``http://127.0.0.1:PORT/mcp``) as the first line of stdout, and serves
until SIGINT or SIGTERM. One endpoint serves both eras, as ``MCPServer.streamable_http_app()`` does:
a request with ``MCP-Protocol-Version: 2026-07-28`` is a stateless 2026 request; anything else is
the 2025 stateful session (``initialize``, ``Mcp-Session-Id``, GET stream, DELETE).

With ``--sse`` it serves the legacy HTTP+SSE transport (2024-11-05, ``MCPServer.sse_app()``) instead:
``GET /sse`` hands out the endpoint to POST to, and the answers come on that stream; it prints
``http://127.0.0.1:PORT/sse``.

Every HTTP exchange the server saw goes to ``--log`` (``http_wire.ExchangeLog``).
"""

from __future__ import annotations

import argparse
import sys
from typing import IO, Annotated

import anyio
import uvicorn
from http_wire import ExchangeLog, loopback_socket
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

server = MCPServer("wiretap-http-peer", version="1.0.0", instructions="A test peer for wiretap.", log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
async def count(n: int, ctx: Context) -> str:
    """Report progress n times, then answer."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i}")
    return f"counted to {n}"


@server.tool()
def forecast(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})], days: int) -> str:
    """A tool whose region argument travels as the Mcp-Param-Region header too (2026-07-28)."""
    return f"{days} sunny days in {region}"


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ToolError("deliberate failure")


@server.resource("notes://café/menu", mime_type="text/plain")
def menu() -> str:
    """A resource whose URI is not ASCII, so its Mcp-Name header is base64-encoded."""
    return "croissant, café crème"


@server.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Say hello to {name}."


async def serve(log: IO[str], sse: bool, tls: list[str] | None) -> None:
    sock = loopback_socket()
    port = sock.getsockname()[1]
    app = ExchangeLog(server.sse_app() if sse else server.streamable_http_app(), log)
    certfile, keyfile = tls or (None, None)
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2, ssl_certfile=certfile, ssl_keyfile=keyfile
    )
    origin = f"https://localhost:{port}" if tls else f"http://127.0.0.1:{port}"
    print(f"{origin}/{'sse' if sse else 'mcp'}", flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--sse", action="store_true", help="legacy HTTP+SSE (2024-11-05) instead")
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), help="serve https://localhost:PORT with these")
    args = parser.parse_args()
    with open(args.log, "a", encoding="utf-8") as log:
        anyio.run(serve, log, args.sse, args.tls)
    sys.exit(0)


if __name__ == "__main__":
    main()
