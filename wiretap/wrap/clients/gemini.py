"""Google Gemini CLI: which MCP servers it would load, and how to start it with them wrapped.

Gemini merges its settings files, highest precedence first: system (``GEMINI_CLI_SYSTEM_SETTINGS_PATH``,
else ``/etc/gemini-cli/settings.json``; read only when it and every folder above it are root's and
not writable by others), the workspace's ``.gemini/settings.json`` (a trusted folder only), the
user's ``$GEMINI_CLI_HOME/.gemini/settings.json`` (``HOME`` by default), then system defaults;
``mcpServers`` merges by server name (a higher scope's entry replaces a lower one's whole).
``mcp.excluded`` (every scope's, together) and ``mcp.allowed`` (the names in every scope's list) filter
them; ``--allowed-mcp-server-names`` replaces both.

wiretap writes none of the user's files. A system settings file would be the natural place for the
wrapped entries, but Gemini refuses one that is not root's, so wiretap gives Gemini a private
``GEMINI_CLI_HOME`` instead: its ``.gemini`` folder links every entry of the user's own (credentials,
history, memory, extensions, trusted folders: Gemini reads and writes them where they are) except
``settings.json``, a private copy of the user's settings whose ``mcpServers`` hold the wrapped
entries. A server from a trusted workspace's settings outranks anything in the user scope, so
wiretap cannot wrap it without writing the project's file: it is listed as not wrapped. So are servers
with OAuth (Gemini ties the login to the server's URL), and servers from extensions (Gemini builds them
from the extension's folder, its ``.env`` settings and enablement, which wiretap does not reproduce).
The user's A2A remote subagents go through a proxy each (gemini_agents.py).
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wiretap.wire.json_values import as_dict
from wiretap.wrap.clients import gemini_agents
from wiretap.wrap.clients.gemini_agents import RemoteAgent
from wiretap.wrap.clients.launch import Launch, private_json
from wiretap.wrap.clients.proxy_use import NODE
from wiretap.wrap.clients.servers import ConfigError, Server, expand_all

NAME = "Gemini CLI"
PROXY_USE = NODE
SYSTEM_ENV = "GEMINI_CLI_SYSTEM_SETTINGS_PATH"
GEMINI_DIR = ".gemini"


@dataclass
class Discovery:
    servers: list[Server] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    client_argv: list[str] = field(default_factory=list)
    user_settings: dict[str, Any] = field(default_factory=dict)
    user_dir: Path = Path()
    agents: dict[str, RemoteAgent] = field(default_factory=dict)
    """The remote subagents wrapped, by the name of their Server."""


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    return as_dict(data)


def system_settings_path(env: Mapping[str, str]) -> Path:
    if env.get(SYSTEM_ENV):
        return Path(env[SYSTEM_ENV])
    folder = "/Library/Application Support/GeminiCli" if sys.platform == "darwin" else "/etc/gemini-cli"
    return Path(folder) / "settings.json"


def _user_dir(env: Mapping[str, str]) -> Path:
    return Path(env.get("GEMINI_CLI_HOME") or env.get("HOME") or str(Path.home())) / ".gemini"


def _secure_system_file(path: Path) -> bool:
    """Gemini's rule for a system settings file: it and every folder above it root's, not writable by others."""
    try:
        return all(p.stat().st_uid == 0 and not p.stat().st_mode & 0o022 for p in [path, *path.parents])
    except OSError:
        return False


def _trusted(cwd: Path, env: Mapping[str, str], scopes: list[dict[str, Any]]) -> bool:
    if env.get("GEMINI_RESTRICTED_MODE") == "true" or env.get("GEMINI_CLI_TRUST_WORKSPACE") == "false":
        return False
    if env.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return True
    if any(((s.get("security") or {}).get("folderTrust") or {}).get("enabled") is False for s in scopes):
        return True
    rules = _read_json(_user_dir(env) / "trustedFolders.json")
    return any(
        rule in ("TRUST_FOLDER", "TRUST_PARENT") and (cwd == Path(folder) or Path(folder) in cwd.parents)
        for folder, rule in rules.items()
    )


def _allowed_names(argv: list[str]) -> set[str] | None:
    names: list[str] = []
    for n, arg in enumerate(argv):
        if arg == "--allowed-mcp-server-names":
            names += [a for a in argv[n + 1 :] if not a.startswith("-")][:1]
        elif arg.startswith("--allowed-mcp-server-names="):
            names.append(arg.split("=", 1)[1])
    return {name.strip() for value in names for name in value.split(",") if name.strip()} if names else None


def _filter(scopes: list[tuple[str, dict[str, Any]]], argv: list[str]) -> tuple[set[str] | None, set[str]]:
    """(allowed names or None for all, excluded names), as Gemini combines its scopes and the command line."""
    if (names := _allowed_names(argv)) is not None:
        return names, set()
    lists = [s.get("mcp", {}).get("allowed") for _, s in scopes]
    defined = [set(x) for x in lists if isinstance(x, list)]
    allowed = set.intersection(*defined) if defined else None
    excluded = {n for _, s in scopes for n in (s.get("mcp", {}).get("excluded") or []) if isinstance(n, str)}
    return allowed, excluded


def _oauth(entry: dict[str, Any]) -> bool:
    return bool((entry.get("oauth") or {}).get("enabled")) or "authProviderType" in entry


def _extensions(user_dir: Path) -> list[tuple[str, str]]:
    """(extension, server name) for each MCP server an installed extension declares."""
    found = []
    folder = user_dir / "extensions"
    for manifest in sorted(folder.glob("*/gemini-extension.json")) if folder.is_dir() else []:
        config = _read_json(manifest)
        found += [(str(config.get("name") or manifest.parent.name), n) for n in config.get("mcpServers") or {}]
    return found


def _merged(scopes: list[tuple[str, dict[str, Any]]], key: str) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for _, settings in scopes:
        if isinstance(settings.get(key), dict):
            merged |= settings[key]
    return merged


def discover(argv: list[str], cwd: Path, env: Mapping[str, str]) -> Discovery:
    if (cwd / GEMINI_DIR).resolve() == _user_dir(env).resolve():
        # Gemini reads the home folder's settings as a workspace's when it runs elsewhere than HOME: with
        # a private home, the user's unwrapped entries would outrank the wrapped ones.
        raise ConfigError(
            "wiretap cannot wrap Gemini's servers when it runs in your home folder; cd to a project first"
        )
    system_path = system_settings_path(env)
    system = _read_json(system_path) if _secure_system_file(system_path) else {}
    user = _read_json(_user_dir(env) / "settings.json")
    scopes: list[tuple[str, dict[str, Any]]] = [("user", user)]
    found = Discovery(client_argv=list(argv), user_settings=user, user_dir=_user_dir(env))
    workspace = cwd / ".gemini" / "settings.json"
    trusted = _trusted(cwd, env, [user, system])
    if workspace.exists() and workspace.parent != _user_dir(env):
        if trusted:
            scopes.append(("workspace", _read_json(workspace)))
        else:
            found.skipped.append(f"{workspace}: the folder is not trusted, so Gemini ignores it")
    scopes.append(("system", system))
    merged: dict[str, tuple[str, Any]] = {}
    for scope, settings in scopes:
        merged |= {name: (scope, entry) for name, entry in (settings.get("mcpServers") or {}).items()}
    allowed, excluded = _filter(scopes, argv)
    for name, (scope, entry) in merged.items():
        if not isinstance(entry, dict):
            found.skipped.append(f"{name} ({scope}): not a server entry")
        elif name in excluded or (allowed is not None and name not in allowed):
            how = "--allowed-mcp-server-names" if _allowed_names(argv) is not None else "mcp.allowed/excluded"
            found.skipped.append(f"{name} ({scope}): filtered out by {how}, so not started")
        elif scope != "user":
            found.skipped.append(
                f"{name} ({scope}): its entry outranks the user's settings, the only ones wiretap can replace "
                "without writing your files; wrap it by hand (wiretap tap -- …)"
            )
        else:
            missing: set[str] = set()
            server = Server(name, scope, _normalised(expand_all(entry, env, missing)), missing, dict(entry))
            if _oauth(entry):
                server.forward_only = "it logs in with OAuth, which Gemini ties to the server's URL"
            found.servers.append(server)
    for extension, name in _extensions(found.user_dir):
        if name not in merged and name not in excluded and (allowed is None or name in allowed):
            found.skipped.append(
                f"{name} (extension {extension}): Gemini builds an extension's servers from its folder, "
                "settings and enablement, which wiretap does not reproduce; wrap it by hand"
            )
    _add_agents(found, cwd, trusted, scopes)
    return found


def _add_agents(found: Discovery, cwd: Path, trusted: bool, scopes: list[tuple[str, dict[str, Any]]]) -> None:
    settings = {key: _merged(scopes, key) for key in ("experimental", "agents")}
    agents = gemini_agents.discover(found.user_dir, cwd, trusted, settings)
    found.skipped += agents.skipped
    taken = {server.name for server in found.servers}
    for agent in agents.remote:
        name = agent.name if agent.name not in taken else f"agent-{agent.name}"
        taken.add(name)
        found.agents[name] = agent
        found.servers.append(Server(name, agent.scope, {"type": "a2a", "url": agent.card_url}))


def _normalised(entry: dict[str, Any]) -> dict[str, Any]:
    """What wiretap needs: a ``type`` and a ``url`` (Gemini also says ``httpUrl`` for Streamable HTTP)."""
    if "command" in entry:
        return {**entry, "type": "stdio"}
    if "httpUrl" in entry:
        return {**entry, "type": "http", "url": entry["httpUrl"]}
    return {**entry, "type": entry.get("type") or "sse"}


def _gemini_entry(entry: dict[str, Any]) -> dict[str, Any]:
    out = dict(entry)
    if "command" in out:
        if out.get("type") == "stdio":
            del out["type"]
    elif "httpUrl" in out:
        out["httpUrl"] = out.pop("url")
    return out


def launch(discovery: Discovery, entries: dict[str, dict[str, Any]]) -> Launch:
    home = Path(tempfile.mkdtemp(prefix="wiretap-gemini-home-"))
    folder = home / GEMINI_DIR
    folder.mkdir(mode=0o700)
    agents = {discovery.agents[n].name: str(e["url"]) for n, e in entries.items() if n in discovery.agents}
    own = {"settings.json"} | ({gemini_agents.AGENTS_DIR} if agents else set())
    if discovery.user_dir.is_dir():
        for item in discovery.user_dir.iterdir():
            if item.name not in own:
                (folder / item.name).symlink_to(item.resolve())
    if agents:
        gemini_agents.private_agents(
            folder / gemini_agents.AGENTS_DIR,
            discovery.user_dir / gemini_agents.AGENTS_DIR,
            list(discovery.agents.values()),
            agents,
        )
    wrapped = {n: _gemini_entry(e) for n, e in entries.items() if n not in discovery.agents}
    servers = {**(discovery.user_settings.get("mcpServers") or {}), **wrapped}
    private_json({**discovery.user_settings, "mcpServers": servers}, folder=folder, name="settings.json")
    return Launch(list(discovery.client_argv), env={"GEMINI_CLI_HOME": str(home)}, private=[home])
