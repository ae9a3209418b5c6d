"""The MCP servers Claude Code's agents define inline (``mcpServers`` in an agent), and the agents to pass
with ``--agents`` so that those servers start wrapped.

Claude Code starts an agent's inline server under the entry's own name, when the agent runs, and a
``--mcp-config`` server of that name does not replace it. An agent given with ``--agents`` takes the place
of a file-based agent of the same name (``.claude/agents/*.md``, user or project): so each agent that has
inline servers is passed again, with ``--agents``, its servers wrapped. String entries name a session
server; they are left as they are.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from wiretap.wrap.clients.servers import ConfigError, Server, expand_all

Agents = dict[str, dict[str, Any]]


@dataclass
class AgentServers:
    agents: Agents = field(default_factory=dict)
    """Every agent to pass with ``--agents`` (the user's own first), before wrapping."""
    slots: dict[str, tuple[str, int, str]] = field(default_factory=dict)
    """A wrapped server's name -> (its agent, its place in the agent's mcpServers, its own name)."""
    servers: list[Server] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def read_agents_option(value: str, cwd: Path) -> Agents:
    """``--agents``: a JSON object, or a file that holds one."""
    text = value.strip()
    if not text.startswith("{"):
        path = Path(value) if Path(value).is_absolute() else cwd / value
        try:
            text = path.read_text()
        except OSError as exc:
            raise ConfigError(f"--agents: cannot read {value}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"--agents is not valid JSON: {exc}") from None
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def read_agent_file(path: Path) -> tuple[str, dict[str, Any]] | None:
    """(its name, its definition as ``--agents`` takes it) from a Markdown file with YAML frontmatter."""
    try:
        text = path.read_text()
    except OSError:
        return None
    if not text.startswith("---"):
        return None
    head, sep, body = text[3:].partition("\n---")
    try:
        front = yaml.safe_load(head) if sep else None
    except yaml.YAMLError:
        return None
    if not isinstance(front, dict):
        return None
    definition = {k: v for k, v in front.items() if k != "name"}
    for key in ("tools", "disallowedTools"):
        if isinstance(definition.get(key), str):
            definition[key] = [t.strip() for t in definition[key].split(",") if t.strip()]
    definition["prompt"] = body.partition("\n")[2].strip()
    return str(front.get("name") or path.stem), definition


def trusted(cwd: Path, claude_json: Mapping[str, Any]) -> bool:
    """Whether the user accepted Claude Code's trust dialog for this folder or one above it."""
    projects = claude_json.get("projects") or {}
    return any(
        (projects.get(str(folder)) or {}).get("hasTrustDialogAccepted") is True for folder in [cwd, *cwd.parents]
    )


def file_agents(config_dir: Path, cwd: Path, claude_json: Mapping[str, Any], skipped: list[str]) -> Agents:
    """User agents, then project agents (a project agent takes the place of a user agent of its name)."""
    found: Agents = {}
    for scope, folder in (("user", config_dir / "agents"), ("project", cwd / ".claude" / "agents")):
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
            read = read_agent_file(path)
            if read is None or not _inline(read[1]):
                continue
            name, definition = read
            if scope == "project" and not trusted(cwd, claude_json):
                skipped.append(
                    f"agent {name} ({path}): this folder is not trusted, so Claude Code starts none of its servers"
                )
                found.pop(name, None)
                continue
            found[name] = definition
    return found


def _inline(definition: Mapping[str, Any]) -> list[tuple[int, str, Any]]:
    servers = definition.get("mcpServers")
    return [
        (i, key, entry)
        for i, item in enumerate(servers if isinstance(servers, list) else [])
        if isinstance(item, dict) and len(item) == 1
        for key, entry in item.items()
    ]


def agent_servers(flag_agents: Agents, from_files: Agents, env: Mapping[str, str]) -> AgentServers:
    found = AgentServers(agents={**{k: v for k, v in from_files.items() if k not in flag_agents}, **flag_agents})
    for agent, definition in found.agents.items():
        for index, key, entry in _inline(definition):
            name = f"agent:{agent}:{key}"
            if not isinstance(entry, dict):
                found.skipped.append(f"{name}: not a server entry")
                continue
            missing: set[str] = set()
            scope = "agent (--agents)" if agent in flag_agents else "agent (file)"
            found.servers.append(Server(name, scope, expand_all(entry, env, missing), missing, raw=dict(entry)))
            found.slots[name] = (agent, index, key)
    return found


def wrapped_agents(agents: Agents, slots: Mapping[str, tuple[str, int, str]], entries: Mapping[str, Any]) -> Agents:
    """The agents with each wrapped server's entry in its place."""
    out = copy.deepcopy(agents)
    for name, (agent, index, key) in slots.items():
        if name in entries:
            out[agent]["mcpServers"][index] = {key: entries[name]}
    return out
