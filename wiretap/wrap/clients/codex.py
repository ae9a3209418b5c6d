"""OpenAI Codex CLI: which MCP servers it would load, and how to start it with them wrapped.

Codex merges its config layers table by table, lowest first: ``/etc/codex/config.toml``, the user's
``$CODEX_HOME/config.toml`` (``~/.codex``), each ``.codex/config.toml`` from the project root (the
nearest folder above holding one of ``project_root_markers``, ``.git`` by default) down to the working
folder when the project is trusted (``[projects."PATH"] trust_level = "trusted"``), the profile file
``$CODEX_HOME/NAME.config.toml`` of ``--profile NAME``, and ``-c KEY=VALUE`` (``--config``) overrides,
the value read as TOML (a bare word as a string). A server is ``[mcp_servers.NAME]`` with ``command``,
``args``, ``env``, ``cwd``… or ``url`` (Streamable HTTP); ``enabled = false`` leaves one out.

wiretap writes no file: it adds ``-c`` overrides, the top layer, that replace each server's command and
arguments (or URL), so every other key, Codex's own environment clearing included, stays as configured.
Codex does not expand variables in its config. A server that logs in with OAuth stays as it is (the
stored login belongs to its URL), and Codex's own tools, which are not MCP servers, are listed.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wiretap.wrap.clients.launch import Launch
from wiretap.wrap.clients.proxy_use import THROUGH, ProxyUse
from wiretap.wrap.clients.servers import ConfigError, Server

NAME = "Codex"
PROXY_USE = ProxyUse(THROUGH, own_ca=("CODEX_CA_CERTIFICATE", "SSL_CERT_FILE"), whole_store="CODEX_CA_CERTIFICATE")
"""Codex (Rust) honours the proxy variables, and takes its whole trust store from ``CODEX_CA_CERTIFICATE``
(or ``SSL_CERT_FILE``); it passes the Node variables on to its stdio servers, so it gets none."""
OVERRIDE_FLAGS = ("-c", "--config")
PROFILE_FLAGS = ("-p", "--profile")
WRAPPED_KEYS = ("command", "args", "url")
SYSTEM_CONFIG = Path("/etc/codex/config.toml")
OAUTH_KEYS = ("scopes", "oauth", "oauth_resource")
BUILT_IN = (
    "Codex's built-in tools (shell, apply_patch, web search…) and ChatGPT connectors: not MCP servers "
    "from your config, so nothing of theirs is recorded"
)


@dataclass
class Discovery:
    servers: list[Server] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    client_argv: list[str] = field(default_factory=list)


def codex_home(env: Mapping[str, str]) -> Path:
    return Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else Path(env.get("HOME", str(Path.home()))) / ".codex"


def config_path(env: Mapping[str, str]) -> Path:
    return codex_home(env) / "config.toml"


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


def _merge(base: dict[str, Any], overlay: dict[str, Any]) -> None:
    """Codex's layering: tables merge key by key, any other value replaces."""
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value


def profile_name(argv: list[str]) -> str | None:
    for n, arg in enumerate(argv):
        if arg in PROFILE_FLAGS and n + 1 < len(argv):
            return argv[n + 1]
        if arg.startswith("--profile="):
            return arg.split("=", 1)[1]
    return None


def _project_folders(cwd: Path, markers: list[str]) -> list[Path]:
    """The project root down to ``cwd``: the folders whose ``.codex/config.toml`` Codex reads."""
    chain = [cwd, *cwd.parents]
    root = next((d for d in chain if any((d / m).exists() for m in markers)), cwd)
    return list(reversed(chain[: chain.index(root) + 1]))


def _trusted(folder: Path, projects: dict[str, Any]) -> bool:
    for candidate in [folder, *folder.parents]:
        entry = projects.get(str(candidate))
        if isinstance(entry, dict) and "trust_level" in entry:
            return bool(entry["trust_level"] == "trusted")
    return False


def _layers(argv: list[str], cwd: Path, env: Mapping[str, str]) -> list[tuple[str, dict[str, Any]]]:
    user = _read_toml(config_path(env))
    layers = [("system", _read_toml(SYSTEM_CONFIG)), ("config.toml", user)]
    markers = user.get("project_root_markers", [".git"])
    folders = _project_folders(cwd, markers if isinstance(markers, list) else [".git"])
    if folders and _trusted(folders[0], user.get("projects") or {}):
        for folder in folders:
            path = folder / ".codex" / "config.toml"
            if path.parent.resolve() != codex_home(env).resolve():
                layers.append((f"project {path}", _read_toml(path)))
    if (name := profile_name(argv)) is not None:
        layers.append((f"profile {name}", _read_toml(codex_home(env) / f"{name}.config.toml")))
    return layers


def _oauth(name: str, entry: dict[str, Any], home: Path) -> bool:
    if any(key in entry for key in OAUTH_KEYS):
        return True
    try:
        stored = (home / ".credentials.json").read_text()
    except OSError:
        return False
    return "url" in entry and f'"{name}"' in stored


def discover(argv: list[str], cwd: Path, env: Mapping[str, str]) -> Discovery:
    config: dict[str, Any] = {}
    scope: dict[str, str] = {}
    for layer, values in _layers(argv, cwd, env):
        scope |= dict.fromkeys(values.get("mcp_servers") or {}, layer)
        _merge(config, values)
    for _, key, value in overrides(argv):
        if key.startswith("mcp_servers."):
            scope.setdefault(key.split(".")[1], "-c")
        _apply(config, key, value)
    found = Discovery(client_argv=list(argv))
    for name, entry in (config.get("mcp_servers") or {}).items():
        where = scope.get(name, "config.toml")
        if not isinstance(entry, dict):
            found.skipped.append(f"{name} ({where}): not a server entry")
        elif entry.get("enabled") is False:
            found.skipped.append(f"{name} ({where}): disabled in Codex, so not started")
        else:
            entry = {**entry, "type": "stdio" if "command" in entry else "http"}
            server = Server(name, where, entry, raw=dict(entry))
            if _oauth(name, entry, codex_home(env)):
                server.forward_only = "it logs in with OAuth, and Codex keeps the login for its URL"
            found.servers.append(server)
    found.skipped.append(BUILT_IN)
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
