"""MCP clients whose configuration wiretap can read: one module per client, found by its command name.

A client module provides ``NAME``, ``PROXY_USE`` (how it is pointed at a forward proxy: ``proxy_use``),
``discover(argv, cwd, env) -> Discovery`` and ``launch(discovery, entries) -> Launch`` (entries: each
wrapped server's entry, by name).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from wiretap.errors import BadInput
from wiretap.wrap.clients import claude_code, codex, gemini

CLIENTS: dict[str, ModuleType] = {"claude": claude_code, "codex": codex, "gemini": gemini}


class UnknownClient(BadInput):
    pass


def client_for(command: str) -> ModuleType:
    name = Path(command).name
    try:
        return CLIENTS[name]
    except KeyError:
        known = ", ".join(sorted(CLIENTS))
        raise UnknownClient(
            f"wiretap does not know where {name!r} keeps its MCP servers (it knows: {known}). "
            "Wrap each server by hand: put 'wiretap tap --' in front of a stdio server's command, and point "
            "the client at the URL that 'wiretap proxy --upstream URL' prints for an HTTP server."
        ) from None
