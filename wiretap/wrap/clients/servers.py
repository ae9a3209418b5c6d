"""MCP server entries as clients configure them, and ``${VAR}`` expansion as Claude Code does it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wiretap.errors import BadInput


class ConfigError(BadInput):
    """A client's config file cannot be read."""


_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand(value: str, env: Mapping[str, str], missing: set[str]) -> str:
    """``${VAR}`` and ``${VAR:-default}``; names with neither a value nor a default are collected."""

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        missing.add(name)
        return match.group(0)

    return _VAR.sub(one, value)


def expand_all(value: Any, env: Mapping[str, str], missing: set[str]) -> Any:
    if isinstance(value, str):
        return expand(value, env, missing)
    if isinstance(value, list):
        return [expand_all(v, env, missing) for v in value]
    if isinstance(value, dict):
        return {k: expand_all(v, env, missing) for k, v in value.items()}
    return value


@dataclass
class Server:
    name: str
    scope: str
    """Where it was configured: local, project, user, or a --mcp-config source."""
    entry: dict[str, Any]
    """As configured, with variables expanded (what wiretap itself needs: the command, the URL)."""
    missing_vars: set[str] = field(default_factory=set)
    raw: dict[str, Any] = field(default_factory=dict)
    """As configured: the client expands it again from the generated config, so it must not twice."""
    forward_only: str | None = None
    """Why only a forward proxy can record it (its entry cannot be rewritten): said when there is none."""

    @property
    def transport(self) -> str:
        kind = str(self.entry.get("type") or ("stdio" if "command" in self.entry else "http"))
        return "http" if kind == "streamable-http" else kind
