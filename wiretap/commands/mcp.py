"""``wiretap mcp``: the read-only MCP server over stdio (``claude mcp add wiretap -- wiretap mcp``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from wiretap.mcp.assemble import build
from wiretap.mcp.server import serve


@click.command()
@click.option(
    "--root",
    "roots",
    multiple=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="Another folder to read sessions and recordings from (repeatable); "
    "./wiretap-sessions and ./wiretap-recordings always are.",
)
def mcp(roots: tuple[Path, ...]) -> None:
    """Serve sessions and recordings to an agent over MCP (stdio), read-only.

    Add it to a client with: claude mcp add wiretap -- wiretap mcp
    """
    serve(build(Path.cwd(), roots), sys.stdin.buffer, sys.stdout.buffer)
