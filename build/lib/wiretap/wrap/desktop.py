"""``wiretap config CLIENT``: the config snippet that routes one server through wiretap, for clients
wiretap cannot start itself (desktop apps). It only prints; it never edits a file.

The formats are the clients' documented ones:

- Claude Desktop: ``claude_desktop_config.json``, ``{"mcpServers": {NAME: {"command", "args", "env"}}}``
  (stdio only: remote servers are added as connectors in the app, not in this file).
- Cursor: ``~/.cursor/mcp.json`` or a project's ``.cursor/mcp.json``, ``{"mcpServers": {NAME: {...}}}``
  with ``command``/``args``/``env`` or ``url``.
- VS Code: a workspace's ``.vscode/mcp.json``, ``{"servers": {NAME: {"type": "stdio", "command", …}}}``
  or ``{"type": "http", "url"}``.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

DEFAULT_LISTEN = "127.0.0.1:8765"


class NotSupported(ValueError):
    pass


@dataclass(frozen=True)
class Client:
    title: str
    key: str
    where: str
    http: bool
    typed: bool
    """Entries carry ``type`` (VS Code)."""


CLIENTS = {
    "claude-desktop": Client(
        "Claude Desktop",
        "mcpServers",
        "claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/; Windows: %APPDATA%\\Claude\\)",
        http=False,
        typed=False,
    ),
    "cursor": Client("Cursor", "mcpServers", "~/.cursor/mcp.json, or .cursor/mcp.json in a project", True, False),
    "vscode": Client(
        "VS Code", "servers", ".vscode/mcp.json in a workspace (or your user profile's mcp.json)", True, True
    ),
}


@dataclass(frozen=True)
class Snippet:
    config: dict[str, Any]
    notes: list[str]


def wiretap_command() -> list[str]:
    """Absolute, since a desktop app starts servers with a short PATH and an unknown working folder."""
    found = shutil.which("wiretap")
    return [str(Path(found).resolve())] if found else [sys.executable, "-m", "wiretap"]


def stdio_snippet(client: str, name: str, server: list[str], env: dict[str, str], out: Path) -> Snippet:
    spec = CLIENTS[client]
    command = [*wiretap_command(), "tap", "--out", str(out), "--name", name, "--", *server]
    entry: dict[str, Any] = {"type": "stdio"} if spec.typed else {}
    entry |= {"command": command[0], "args": command[1:]}
    if env:
        entry["env"] = dict(env)
    notes = [
        f"add it under {spec.key!r} in {spec.where}",
        f"recordings go to {out}/ (create the folder first: mkdir -p {shlex.quote(str(out))})",
    ]
    return Snippet({spec.key: {name: entry}}, notes)


def http_snippet(client: str, name: str, url: str, listen: str, out: Path) -> Snippet:
    spec = CLIENTS[client]
    if not spec.http:
        raise NotSupported(
            f"{spec.title}'s config file holds stdio servers only (a remote server is a connector in the app); "
            "wrap a stdio server instead: wiretap config claude-desktop --name NAME -- COMMAND [ARGS...]"
        )
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise NotSupported(f"--url must be an http:// or https:// URL, not {url!r}")
    proxied = f"http://{listen}{parts.path or ''}{'?' + parts.query if parts.query else ''}"
    entry: dict[str, Any] = {"type": "http", "url": proxied} if spec.typed else {"url": proxied}
    proxy = [*wiretap_command(), "proxy", "--upstream", url, "--listen", listen, "--out", str(out), "--name", name]
    notes = [
        f"add it under {spec.key!r} in {spec.where}",
        f"recordings go to {out}/ (create the folder first: mkdir -p {shlex.quote(str(out))})",
        "keep the proxy running while the client uses the server: " + shlex.join(proxy),
    ]
    return Snippet({spec.key: {name: entry}}, notes)
