"""``wiretap import claude-code [PATH]``: what a client kept in its own logs, as a wiretap session folder."""

from __future__ import annotations

import os
from pathlib import Path

import click

from wiretap.importers.claude_code import import_session
from wiretap.importers.claude_code_files import locate


@click.group(name="import")
def import_group() -> None:
    """Rebuild a session wiretap did not record from a client's own logs (marked as imported)."""


@import_group.command("claude-code")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--session", "session_id", metavar="ID", help="The session to import (default: the newest).")
@click.option("--out", type=click.Path(path_type=Path), help="The session folder to write (default: a new one).")
def claude_code(path: Path | None, session_id: str | None, out: Path | None) -> None:
    """Import a Claude Code session from its MCP logs, debug log and transcript.

    PATH is a project's cache folder (holding mcp-logs-<server>/), one mcp-logs-<server> folder, or a
    transcript (projects/<slug>/<session>.jsonl). Without it, the files Claude Code keeps for the
    current directory.
    """
    sources = locate(path, session=session_id, cwd=Path.cwd(), env=os.environ)
    imported = import_session(sources, out)
    click.echo(f"wiretap: imported Claude Code session {imported.session} into {imported.folder}")
    for name, events in imported.servers.items():
        calls = sum(1 for e in events if e.get("what") == "tool_call")
        connected = next((e for e in events if e.get("what") == "connected"), None)
        took = f", connected in {connected['logged_duration']}" if connected else ""
        click.echo(f"  {name}: {calls} tool call{'' if calls == 1 else 's'}{took}")
    click.echo(f"  from: {', '.join(str(f) for f in sources.files)}")
    click.echo(f"  read it with: wiretap show {imported.folder}   (or: wiretap report {imported.folder})")
