"""Claude Code: which MCP servers it would load, and how to start it with a wrapped config instead.

Scopes, highest precedence first: local (``projects[<cwd>].mcpServers`` in ``~/.claude.json``),
project (``.mcp.json`` in the working directory, only servers the user approved), user (top-level
``mcpServers`` in ``~/.claude.json``); ``--mcp-config`` files or JSON strings are added, and with
``--strict-mcp-config`` they are the only ones. ``CLAUDE_CONFIG_DIR`` moves ``.claude.json`` and the
settings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wiretap.wrap.clients.launch import Launch, private_json
from wiretap.wrap.clients.servers import ConfigError, Server, expand_all

NAME = "Claude Code"


@dataclass
class Discovery:
    servers: list[Server] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Servers wiretap leaves out, and why (shown in the summary)."""
    client_argv: list[str] = field(default_factory=list)
    """The user's arguments without their --mcp-config / --strict-mcp-config (replaced by ours)."""


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    return data if isinstance(data, dict) else {}


def config_home(env: Mapping[str, str]) -> tuple[Path, Path]:
    """(the .claude.json file, the settings folder)."""
    if env.get("CLAUDE_CONFIG_DIR"):
        folder = Path(env["CLAUDE_CONFIG_DIR"])
        return folder / ".claude.json", folder
    home = Path(env.get("HOME", str(Path.home())))
    return home / ".claude.json", home / ".claude"


def split_argv(argv: list[str]) -> tuple[list[str], list[str], bool]:
    """(the other arguments, the --mcp-config values, whether --strict-mcp-config was given)."""
    rest: list[str] = []
    configs: list[str] = []
    strict = False
    taking = False
    for arg in argv[1:]:
        if taking and not arg.startswith("-"):
            configs.append(arg)
            continue
        taking = False
        if arg == "--mcp-config":
            taking = True
        elif arg.startswith("--mcp-config="):
            configs.append(arg.split("=", 1)[1])
        elif arg == "--strict-mcp-config":
            strict = True
        else:
            rest.append(arg)
    return [argv[0], *rest], configs, strict


def _config_source(value: str, cwd: Path) -> tuple[str, dict[str, Any]]:
    text = value.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ConfigError(f"--mcp-config is not valid JSON: {exc}") from None
        return "--mcp-config (JSON)", data if isinstance(data, dict) else {}
    path = Path(value) if Path(value).is_absolute() else cwd / value
    if not path.exists():
        raise ConfigError(f"--mcp-config file not found: {value}")
    return f"--mcp-config {value}", _read_json(path)


def _approved(name: str, settings: list[dict[str, Any]], local: dict[str, Any]) -> bool:
    for source in [*settings, local]:
        if name in (source.get("disabledMcpjsonServers") or []):
            return False
    return any(
        source.get("enableAllProjectMcpServers") is True or name in (source.get("enabledMcpjsonServers") or [])
        for source in [*settings, local]
    )


def discover(argv: list[str], cwd: Path, env: Mapping[str, str]) -> Discovery:
    client_argv, config_values, strict = split_argv(argv)
    found = Discovery(client_argv=client_argv)
    by_name: dict[str, Server] = {}

    def add(scope: str, servers: Any) -> None:
        for name, entry in (servers or {}).items():
            if not isinstance(entry, dict):
                found.skipped.append(f"{name} ({scope}): not a server entry")
                continue
            missing: set[str] = set()
            by_name.setdefault(name, Server(name, scope, expand_all(entry, env, missing), missing, raw=dict(entry)))

    for value in config_values:
        source, data = _config_source(value, cwd)
        add(source, data.get("mcpServers"))
    if not strict:
        claude_json_path, settings_dir = config_home(env)
        claude_json = _read_json(claude_json_path)
        local = (claude_json.get("projects") or {}).get(str(cwd)) or {}
        add("local", local.get("mcpServers"))
        project = _read_json(cwd / ".mcp.json").get("mcpServers") or {}
        settings = [
            _read_json(settings_dir / "settings.json"),
            _read_json(cwd / ".claude" / "settings.json"),
            _read_json(cwd / ".claude" / "settings.local.json"),
        ]
        approved = {name: entry for name, entry in project.items() if _approved(name, settings, local)}
        found.skipped += [
            f"{name} (project .mcp.json): not approved in Claude Code, so not loaded"
            for name in project
            if name not in approved
        ]
        add("project", approved)
        add("user", claude_json.get("mcpServers"))
        if any(s.get("enabledPlugins") for s in settings):
            found.skipped.append("servers from plugins: not loaded in a wrapped session (its config is strict)")
    found.servers = list(by_name.values())
    return found


def launch_argv(client_argv: list[str], config_path: Path) -> list[str]:
    """The client's command with our generated config as its only MCP config."""
    return [client_argv[0], "--mcp-config", str(config_path), "--strict-mcp-config", *client_argv[1:]]


def launch(discovery: Discovery, entries: dict[str, dict[str, Any]]) -> Launch:
    """A private config holding the wrapped servers, given as the only MCP config."""
    config = private_json({"mcpServers": entries})
    return Launch(launch_argv(discovery.client_argv, config), private=[config])
