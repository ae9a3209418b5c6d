"""OpenAI Codex CLI: which MCP servers it would load, and how to start it with them wrapped.

Codex reads ``$CODEX_HOME/config.toml`` (``~/.codex``): ``[mcp_servers.NAME]`` with ``command``,
``args``, ``env``, ``cwd``… or ``url`` (Streamable HTTP); ``enabled = false`` leaves one out. ``-c
KEY=VALUE`` (``--config``) on the command line overrides any key, the value read as TOML (a bare word
as a string). wiretap writes no file: it adds ``-c`` overrides that replace each server's command and
arguments (or URL), so every other key, Codex's own environment clearing included, stays as configured.
Codex does not expand variables in its config.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wiretap.wrap.clients.launch import Launch
from wiretap.wrap.clients.servers import ConfigError, Server

NAME = "Codex"
OVERRIDE_FLAGS = ("-c", "--config")
WRAPPED_KEYS = ("command", "args", "url")


@dataclass
class Discovery:
    servers: list[Server] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    client_argv: list[str] = field(default_factory=list)


def config_path(env: Mapping[str, str]) -> Path:
    home = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else Path(env.get("HOME", str(Path.home()))) / ".codex"
    return home / "config.toml"


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None


def _toml_value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except ValueError:
        return text


def overrides(argv: list[str]) -> list[tuple[int, str, Any]]:
    """Each ``-c KEY=VALUE`` as (index of the flag, key, value)."""
    found = []
    for n, arg in enumerate(argv):
        if arg in OVERRIDE_FLAGS and n + 1 < len(argv):
            text, at = argv[n + 1], n
        elif arg.startswith("--config="):
            text, at = arg.split("=", 1)[1], n
        else:
            continue
        key, sep, value = text.partition("=")
        if sep:
            found.append((at, key.strip(), _toml_value(value.strip())))
    return found


def _apply(config: dict[str, Any], key: str, value: Any) -> None:
    *path, last = key.split(".")
    table = config
    for part in path:
        table = table.setdefault(part, {}) if isinstance(table.get(part, {}), dict) else {}
    table[last] = value


def discover(argv: list[str], cwd: Path, env: Mapping[str, str]) -> Discovery:
    config = _read_toml(config_path(env))
    scope: dict[str, str] = dict.fromkeys(config.get("mcp_servers") or {}, "config.toml")
    for _, key, value in overrides(argv):
        if key.startswith("mcp_servers."):
            scope.setdefault(key.split(".")[1], "-c")
        _apply(config, key, value)
    found = Discovery(client_argv=list(argv))
    for name, entry in (config.get("mcp_servers") or {}).items():
        if not isinstance(entry, dict):
            found.skipped.append(f"{name} ({scope.get(name)}): not a server entry")
        elif entry.get("enabled") is False:
            found.skipped.append(f"{name} ({scope.get(name)}): disabled in Codex, so not started")
        else:
            entry = {**entry, "type": "stdio" if "command" in entry else "http"}
            found.servers.append(Server(name, scope.get(name, "config.toml"), entry, raw=dict(entry)))
    return found


def _without_replaced(argv: list[str], names: set[str]) -> list[str]:
    """The user's own overrides of what wiretap replaces would win over ours (later wins): drop them."""
    drop: set[int] = set()
    for at, key, _ in overrides(argv):
        parts = key.split(".")
        if len(parts) == 3 and parts[0] == "mcp_servers" and parts[1] in names and parts[2] in WRAPPED_KEYS:
            drop |= {at} if argv[at].startswith("--config=") else {at, at + 1}
    return [arg for n, arg in enumerate(argv) if n not in drop]


def _override(name: str, key: str, value: Any) -> list[str]:
    # JSON strings and arrays of strings are valid TOML values.
    return ["-c", f"mcp_servers.{name}.{key}={json.dumps(value)}"]


def launch(discovery: Discovery, entries: dict[str, dict[str, Any]]) -> Launch:
    added: list[str] = []
    for name, entry in entries.items():
        if "url" in entry:
            added += _override(name, "url", entry["url"])
        else:
            added += _override(name, "command", entry["command"]) + _override(name, "args", entry["args"])
    rest = _without_replaced(discovery.client_argv, set(entries))
    return Launch([rest[0], *added, *rest[1:]])
