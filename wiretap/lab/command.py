"""``wiretap lab``: the lab's servers and agents."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
from pathlib import Path

import click

from wiretap.errors import BadInput


@click.group()
def lab() -> None:
    """Probe servers and agents whose tools and skills are an investigation's conditions."""


@lab.command()
@click.option("--a2a", "a2a", is_flag=True, help="Serve the A2A agent (JSON-RPC and HTTP+JSON, A2A 1.0 and 0.3).")
@click.option(
    "--http",
    "address",
    metavar="HOST:PORT",
    default=None,
    help="Serve over HTTP at HOST:PORT (loopback only; port 0 picks a free one) and print the URL on stdout. "
    "Without it the MCP probe serves stdio; the A2A agent always serves HTTP (default 127.0.0.1:0).",
)
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The server's own log (created 0600): one JSON line per message and event, wall and monotonic ns.",
)
def serve(a2a: bool, address: str | None, log_path: Path | None) -> None:
    """Serve the lab's probe MCP server (stdio, or Streamable HTTP with --http); with --a2a, the A2A agent."""
    if a2a:
        host, port = loopback_address(address or "127.0.0.1:0")
        from wiretap.lab.a2a.server import serve as serve_a2a

        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(serve_a2a(host, port, log_path))
        return
    if address is None:
        from wiretap.lab.probe.stdio import serve as serve_stdio

        asyncio.run(serve_stdio(log_path))
        return
    host, port = loopback_address(address)
    from wiretap.lab.probe.http import serve as serve_http

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_http(host, port, log_path))


def loopback_address(address: str) -> tuple[str, int]:
    """``HOST:PORT`` of a loopback address; BadInput naming the value otherwise."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if host == "localhost":
        host = "127.0.0.1"
    try:
        number = int(port)
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        raise BadInput(f"--http {address!r}: expected HOST:PORT with a loopback host, e.g. 127.0.0.1:8765") from None
    if not loopback:
        raise BadInput(f"--http {address!r}: the lab listens on loopback only (127.0.0.1 or ::1)")
    if not 0 <= number <= 65535:
        raise BadInput(f"--http {address!r}: the port must be 0–65535")
    return host, number
