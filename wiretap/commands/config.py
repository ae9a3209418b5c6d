"""``wiretap config``: a desktop client's config snippet for a tapped server."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command("config")
@click.argument("client", type=click.Choice(["claude-desktop", "cursor", "vscode"]))
@click.option("--name", "-n", required=True, help="The server's name in the client's config.")
@click.option("--url", help="An HTTP server's URL (routed through 'wiretap proxy').")
@click.option("--listen", default="127.0.0.1:8765", show_default=True, help="Where that proxy listens.")
@click.option("--env", "-e", "env", multiple=True, help="KEY=VALUE for a stdio server's environment (repeatable).")
@click.option(
    "--out", "-o", type=click.Path(path_type=Path), help="Where recordings go (default: ~/wiretap-recordings)."
)
@click.argument("server", nargs=-1, type=click.UNPROCESSED)
def config_snippet(
    client: str,
    name: str,
    url: str | None,
    listen: str,
    env: tuple[str, ...],
    out: Path | None,
    server: tuple[str, ...],
) -> None:
    """Print the config snippet that routes a server through wiretap for a desktop CLIENT; edits no file.

    \b
    wiretap config cursor --name files -- npx -y @modelcontextprotocol/server-filesystem ~/notes
    wiretap config vscode --name web --url https://example.com/mcp
    """
    import json

    from wiretap.wrap.desktop import NotSupported, http_snippet, stdio_snippet

    folder = (out or Path.home() / "wiretap-recordings").expanduser().resolve()
    pairs = dict(item.split("=", 1) for item in env if "=" in item)
    try:
        if bool(url) == bool(server):
            raise NotSupported("give either --url URL or -- COMMAND [ARGS...], not both or neither")
        if len(pairs) != len(env):
            raise NotSupported(f"--env takes KEY=VALUE, not {next(e for e in env if '=' not in e)!r}")
        snippet = (
            http_snippet(client, name, url, listen, folder)
            if url
            else stdio_snippet(client, name, list(server), pairs, folder)
        )
    except NotSupported as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    click.echo(json.dumps(snippet.config, indent=2))
    for note in snippet.notes:
        click.echo(f"# {note}", err=True)
