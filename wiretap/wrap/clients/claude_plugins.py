"""The MCP servers of Claude Code's plugins: marketplace plugins, ``--plugin-dir`` ones and skills-dir ones.

Claude Code names a plugin's server ``plugin:<plugin>:<server>``. It fills ``${CLAUDE_PLUGIN_ROOT}`` (the
plugin's folder), ``${CLAUDE_PLUGIN_DATA}`` (``$CLAUDE_CONFIG_DIR/plugins/data/<plugin>-<marketplace>``) and
``${user_config.KEY}`` (settings ``pluginConfigs``) itself, sets the first two in the server's environment,
and expands ``${VAR}`` from the environment. A wrapped entry comes from ``--mcp-config``, where Claude Code
does only the last: wiretap fills in the rest.

Which plugins are enabled and where they live comes from ``claude plugin list --json`` (run with the same
settings arguments); the settings files are read when it fails or does not list a plugin.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wiretap.wire.json_values import as_dict
from wiretap.wrap.clients.servers import Server, expand_all

PLUGIN_LIST_TIMEOUT = 10.0
_USER_CONFIG = re.compile(r"\$\{user_config\.([A-Za-z0-9_.-]+)\}")


@dataclass
class Plugin:
    name: str
    marketplace: str
    root: Path
    declared: dict[str, Any] | None = None
    """The servers ``claude plugin list`` or the marketplace entry gave; None: read the plugin's files."""

    @property
    def id(self) -> str:
        return f"{self.name}@{self.marketplace}"


@dataclass
class Found:
    servers: list[Server] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def plugin_list(
    binary: str, settings_args: list[str], cwd: Path, env: Mapping[str, str]
) -> list[dict[str, Any]] | None:
    """``claude plugin list --json`` (it writes nothing, starts no server); None when it fails."""
    try:
        done = subprocess.run(
            [binary, "plugin", "list", "--json", *settings_args],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=PLUGIN_LIST_TIMEOUT,
        )
        listed = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return [p for p in listed if isinstance(p, dict)] if isinstance(listed, list) else None


def enabled_in(settings: list[dict[str, Any]]) -> dict[str, bool]:
    """``enabledPlugins`` over the settings, later ones winning."""
    enabled: dict[str, bool] = {}
    for source in settings:
        for plugin_id, on in as_dict(source.get("enabledPlugins")).items():
            enabled[plugin_id] = on is not False
    return enabled


def _marketplace_folder(market: str, settings: list[dict[str, Any]], plugins_dir: Path) -> Path | None:
    known = as_dict(read_json(plugins_dir / "known_marketplaces.json")).get(market)
    if isinstance(known, dict) and known.get("installLocation"):
        return Path(str(known["installLocation"]))
    for source in reversed(settings):
        declared = as_dict(as_dict(source.get("extraKnownMarketplaces")).get(market)).get("source")
        if isinstance(declared, dict) and declared.get("source") == "directory" and declared.get("path"):
            return Path(str(declared["path"]))
    return None


def from_settings(plugin_id: str, settings: list[dict[str, Any]], plugins_dir: Path) -> Plugin | None:
    """A marketplace plugin found without ``claude plugin list``: installed, or in a directory marketplace."""
    name, _, market = plugin_id.partition("@")
    folder = _marketplace_folder(market, settings, plugins_dir)
    entry: dict[str, Any] = {}
    if folder is not None:
        listed = as_dict(read_json(folder / ".claude-plugin" / "marketplace.json")).get("plugins") or []
        entry = next((p for p in listed if isinstance(p, dict) and p.get("name") == name), {})
    root: Path | None = None
    if isinstance(entry.get("source"), str) and folder is not None:
        root = (folder / entry["source"]).resolve()
    else:
        installs = as_dict(read_json(plugins_dir / "installed_plugins.json")).get("plugins") or {}
        for install in installs.get(plugin_id) or []:
            if isinstance(install, dict) and install.get("installPath"):
                root = Path(str(install["installPath"]))
    if root is None:
        return None
    plugin = Plugin(name, market, root)
    if entry.get("strict") is False and not (root / ".claude-plugin" / "plugin.json").exists():
        plugin.declared = as_dict(entry.get("mcpServers"))
    return plugin


def from_folder(folder: Path, marketplace: str) -> Plugin | None:
    manifest = as_dict(read_json(folder / ".claude-plugin" / "plugin.json"))
    if not manifest and not (folder / ".mcp.json").exists():
        return None
    return Plugin(str(manifest.get("name") or folder.name), marketplace, folder.resolve())


def plugin_dirs(values: list[str], cwd: Path) -> list[Plugin]:
    """``--plugin-dir`` plugins: a plugin folder, or a folder of plugins (each child)."""
    found = []
    for value in values:
        folder = Path(value) if Path(value).is_absolute() else cwd / value
        plugin = from_folder(folder, "inline")
        if plugin is not None:
            found.append(plugin)
        elif folder.is_dir():
            found += [p for child in sorted(folder.iterdir()) if (p := from_folder(child, "inline")) is not None]
    return found


def declared_servers(plugin: Plugin) -> dict[str, Any]:
    """What the plugin declares: ``.mcp.json`` at its root, and ``mcpServers`` in its plugin.json (inline, a
    file, or a list of them)."""
    if plugin.declared is not None:
        return dict(plugin.declared)
    servers: dict[str, Any] = {}

    def add(data: Any) -> None:
        data = as_dict(data)
        servers.update(as_dict(data.get("mcpServers")) if "mcpServers" in data else data)

    add(read_json(plugin.root / ".mcp.json"))
    declared = as_dict(read_json(plugin.root / ".claude-plugin" / "plugin.json")).get("mcpServers")
    for item in declared if isinstance(declared, list) else [declared]:
        if isinstance(item, str):
            add(read_json(plugin.root / item))
        elif isinstance(item, dict):
            servers.update(item)
    return servers


def _secret_options(plugin: Plugin) -> set[str]:
    options = as_dict(as_dict(read_json(plugin.root / ".claude-plugin" / "plugin.json")).get("userConfig"))
    return {key for key, spec in options.items() if isinstance(spec, dict) and spec.get("sensitive") is True}


def _fill(value: Any, known: Mapping[str, str], options: Mapping[str, Any], unreadable: set[str]) -> Any:
    if isinstance(value, str):
        for name, text in known.items():
            value = value.replace("${" + name + "}", text)

        def option(match: re.Match[str]) -> str:
            if match.group(1) in options and not isinstance(options[match.group(1)], dict | list):
                return str(options[match.group(1)])
            unreadable.add(match.group(1))
            return match.group(0)

        return _USER_CONFIG.sub(option, value)
    if isinstance(value, list):
        return [_fill(v, known, options, unreadable) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, known, options, unreadable) for k, v in value.items()}
    return value


def plugin_servers(
    plugin: Plugin, config_dir: Path, settings: list[dict[str, Any]], env: Mapping[str, str], found: Found
) -> None:
    data = config_dir / "plugins" / "data" / f"{plugin.name}-{plugin.marketplace}"
    known = {"CLAUDE_PLUGIN_ROOT": str(plugin.root), "CLAUDE_PLUGIN_DATA": str(data)}
    options: dict[str, Any] = {}
    for source in settings:
        options.update(as_dict(as_dict(as_dict(source.get("pluginConfigs")).get(plugin.id)).get("options")))
    secret = _secret_options(plugin)
    for key, entry in declared_servers(plugin).items():
        name = f"plugin:{plugin.name}:{key}"
        if not isinstance(entry, dict):
            found.skipped.append(f"{name} (plugin {plugin.id}): not a server entry")
            continue
        unreadable: set[str] = set()
        raw = _fill(entry, known, {k: v for k, v in options.items() if k not in secret}, unreadable)
        if unreadable:
            found.skipped.append(
                f"{name} (plugin {plugin.id}): it uses the plugin option {', '.join(sorted(unreadable))}, "
                "which wiretap cannot read (a secret, or not set); Claude Code still loads it, unrecorded"
            )
            continue
        if "command" in raw:  # the server's own environment, as Claude Code gives it unwrapped
            raw["env"] = {**known, **as_dict(raw.get("env"))}
        missing: set[str] = set()
        found.servers.append(Server(name, f"plugin {plugin.id}", expand_all(raw, env, missing), missing, raw=raw))


def discover_plugins(
    binary: str,
    settings_args: list[str],
    plugin_dir_values: list[str],
    cwd: Path,
    env: Mapping[str, str],
    config_dir: Path,
    settings: list[dict[str, Any]],
) -> Found:
    """Every enabled plugin's servers, each entry as Claude Code would start it."""
    found = Found()
    enabled = enabled_in(settings)
    plugins: dict[str, Plugin] = {}
    listed = plugin_list(binary, settings_args, cwd, env)
    seen = {str(item.get("id", "")) for item in listed or []}
    for item in listed or []:
        plugin_id = str(item.get("id", ""))
        name, _, market = plugin_id.partition("@")
        if market == "builtin" or item.get("enabled") is False or not item.get("installPath"):
            continue
        root = Path(str(item.get("readFromFolder") or item["installPath"]))
        declared = item.get("mcpServers")
        plugins[plugin_id] = Plugin(name, market, root, declared if isinstance(declared, dict) else None)
    if listed is None:
        skills = config_dir / "skills"
        for child in sorted(skills.iterdir()) if skills.is_dir() else []:
            if (plugin := from_folder(child, "skills-dir")) is not None and enabled.get(plugin.id, True):
                plugins[plugin.id] = plugin
    for plugin_id, on in enabled.items():
        if on and plugin_id not in seen and "@" in plugin_id and not plugin_id.endswith(("@skills-dir", "@inline")):
            plugin = from_settings(plugin_id, settings, config_dir / "plugins")
            if plugin is None:
                found.skipped.append(f"plugin {plugin_id}: wiretap cannot find where it is installed")
            else:
                plugins[plugin_id] = plugin
    for plugin in plugin_dirs(plugin_dir_values, cwd):
        if enabled.get(plugin.id, True):
            plugins.setdefault(plugin.id, plugin)
    for plugin in plugins.values():
        plugin_servers(plugin, config_dir, settings, env, found)
    return found
