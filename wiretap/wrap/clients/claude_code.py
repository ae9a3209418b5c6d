"""Claude Code: which MCP servers it would load, and how to start it with those servers wrapped.

Scopes, highest precedence first: ``--mcp-config`` files or JSON strings, local
(``projects[<cwd>].mcpServers`` in ``~/.claude.json``), project (``.mcp.json`` in the working directory,
only servers the user approved), user (top-level ``mcpServers`` in ``~/.claude.json``); then plugins'
servers (claude_plugins) and agents' (claude_agents). ``CLAUDE_CONFIG_DIR`` moves ``.claude.json`` and
the settings.

Claude Code is started with the wrapped servers in a generated ``--mcp-config``, without
``--strict-mcp-config`` unless the user gave it: a ``--mcp-config`` server takes the place of a
configured or plugin server of the same name, and everything wiretap does not wrap still loads.
``--bare`` loads only ``--mcp-config`` servers; ``--safe-mode`` and a managed ``managed-mcp.json`` load
none of them, so there the command runs as given.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wiretap.wire.json_values import as_dict
from wiretap.wrap.clients.claude_agents import (
    AgentServers,
    agent_servers,
    file_agents,
    read_agents_option,
    wrapped_agents,
)
from wiretap.wrap.clients.claude_plugins import discover_plugins
from wiretap.wrap.clients.launch import Launch, private_json
from wiretap.wrap.clients.proxy_use import NODE
from wiretap.wrap.clients.servers import ConfigError, Server, expand_all

NAME = "Claude Code"
PROXY_USE = NODE
MANAGED_MCP = {
    "darwin": Path("/Library/Application Support/ClaudeCode/managed-mcp.json"),
    "linux": Path("/etc/claude-code/managed-mcp.json"),
}


@dataclass
class Discovery:
    servers: list[Server] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Servers wiretap leaves out, and why (shown in the summary)."""
    client_argv: list[str] = field(default_factory=list)
    """The user's arguments without their --mcp-config, --strict-mcp-config and --agents (replaced by ours)."""
    strict: bool = False
    """The user gave --strict-mcp-config: only their --mcp-config servers load."""
    command_line: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The user's own --mcp-config servers, as given: those wiretap does not wrap go in its config as they are."""
    agents: AgentServers = field(default_factory=AgentServers)
    agents_given: bool = False
    as_given: list[str] | None = None
    """The command exactly as the user gave it, when Claude Code would load no wrapped server."""


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    return as_dict(data)


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
        return "--mcp-config (JSON)", as_dict(data)
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


def option_values(argv: list[str], option: str) -> list[str]:
    """Every value of a one-value ``option`` (``--option VALUE`` or ``--option=VALUE``)."""
    values = []
    for i, arg in enumerate(argv):
        if arg == option and i + 1 < len(argv):
            values.append(argv[i + 1])
        elif arg.startswith(option + "="):
            values.append(arg.split("=", 1)[1])
    return values


def without_option(argv: list[str], option: str) -> list[str]:
    rest: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == option:
            skip = True
        elif not arg.startswith(option + "="):
            rest.append(arg)
    return rest


def managed_mcp(platform: str = sys.platform) -> Path | None:
    """The organization's managed-mcp.json, when there is one where Claude Code looks."""
    path = MANAGED_MCP.get(platform)
    return path if path is not None and path.exists() else None


def _settings(argv: list[str], cwd: Path, settings_dir: Path) -> list[dict[str, Any]]:
    """The settings Claude Code reads, lowest precedence first: user, project, local, then --settings."""
    sources = option_values(argv, "--setting-sources")
    chosen = {s.strip() for s in sources[-1].split(",")} if sources else {"user", "project", "local"}
    files = {
        "user": settings_dir / "settings.json",
        "project": cwd / ".claude" / "settings.json",
        "local": cwd / ".claude" / "settings.local.json",
    }
    found = [_read_json(path) for scope, path in files.items() if scope in chosen]
    for value in option_values(argv, "--settings"):
        if value.strip().startswith("{"):
            try:
                data = json.loads(value)
            except ValueError as exc:
                raise ConfigError(f"--settings is not valid JSON: {exc}") from None
            found.append(as_dict(data))
        else:
            found.append(_read_json(Path(value) if Path(value).is_absolute() else cwd / value))
    return found


def _settings_args(argv: list[str]) -> list[str]:
    args = []
    for option in ("--settings", "--setting-sources"):
        for value in option_values(argv, option):
            args += [option, value]
    return args


def discover(argv: list[str], cwd: Path, env: Mapping[str, str]) -> Discovery:
    client_argv, config_values, strict = split_argv(argv)
    managed = managed_mcp()
    if managed is not None:
        return Discovery(
            skipped=[
                f"every server: {managed} gives your organization control of MCP servers, and Claude Code then "
                "refuses --mcp-config; the session ran as without wiretap, unrecorded"
            ],
            as_given=list(argv),
        )
    if "--safe-mode" in argv[1:]:
        return Discovery(
            skipped=["every server: --safe-mode loads no MCP server (not even --mcp-config), so none to record"],
            as_given=list(argv),
        )
    bare = "--bare" in argv[1:]
    agents_values = option_values(client_argv, "--agents")
    found = Discovery(client_argv=without_option(client_argv, "--agents"), strict=strict)
    found.agents_given = bool(agents_values)
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
        servers = data.get("mcpServers") or {}
        add(source, servers)
        found.command_line.update({k: v for k, v in servers.items() if isinstance(v, dict)})
    claude_json_path, settings_dir = config_home(env)
    claude_json = _read_json(claude_json_path)
    settings = _settings(argv, cwd, settings_dir)
    if not strict and not bare:
        local = (claude_json.get("projects") or {}).get(str(cwd)) or {}
        add("local", local.get("mcpServers"))
        project = _read_json(cwd / ".mcp.json").get("mcpServers") or {}
        approved = {name: entry for name, entry in project.items() if _approved(name, settings, local)}
        found.skipped += [
            f"{name} (project .mcp.json): not approved in Claude Code, so not loaded"
            for name in project
            if name not in approved
        ]
        add("project", approved)
        add("user", claude_json.get("mcpServers"))
        plugins = discover_plugins(
            argv[0], _settings_args(argv), option_values(argv, "--plugin-dir"), cwd, env, settings_dir, settings
        )
        found.skipped += plugins.skipped
        for server in plugins.servers:
            by_name.setdefault(server.name, server)
    if not bare:
        flag_agents = read_agents_option(agents_values[-1], cwd) if agents_values else {}
        from_files = {} if strict else file_agents(settings_dir, cwd, claude_json, found.skipped)
        found.agents = agent_servers(flag_agents, from_files, env)
        found.skipped += found.agents.skipped
        for server in found.agents.servers:
            by_name.setdefault(server.name, server)
    found.servers = list(by_name.values())
    return found


def launch_argv(
    client_argv: list[str], config_path: Path | None, *, strict: bool = False, agents: str | None = None
) -> list[str]:
    """The client's command with our generated config (and agents) in place of the user's."""
    ours = ["--mcp-config", str(config_path)] if config_path is not None else []
    ours += ["--strict-mcp-config"] if strict else []
    ours += ["--agents", agents] if agents is not None else []
    return [client_argv[0], *ours, *client_argv[1:]]


def launch(discovery: Discovery, entries: dict[str, dict[str, Any]]) -> Launch:
    """A private config holding the wrapped servers (and the user's --mcp-config servers left as they are)."""
    if discovery.as_given is not None:
        return Launch(list(discovery.as_given))
    slots = discovery.agents.slots
    servers = {name: entry for name, entry in discovery.command_line.items() if name not in entries}
    servers.update({name: entry for name, entry in entries.items() if name not in slots})
    wraps_agents = any(name in entries for name in slots)
    agents = None
    if wraps_agents or discovery.agents_given:
        agents = json.dumps(wrapped_agents(discovery.agents.agents, slots, entries))
    if not servers and not discovery.command_line and not discovery.strict:
        return Launch(launch_argv(discovery.client_argv, None, agents=agents))
    config = private_json({"mcpServers": servers})
    return Launch(launch_argv(discovery.client_argv, config, strict=discovery.strict, agents=agents), private=[config])
