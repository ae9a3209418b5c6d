"""Gemini CLI's A2A remote subagents: which it would load, and a private copy of them pointed at proxies.

Gemini reads agent definitions from ``.gemini/agents/*.md`` (names not starting with ``_``): YAML
frontmatter between ``---`` lines, one agent or a list of remote agents. A remote agent has
``agent_card_url`` (or an inline ``agent_card_json``); Gemini fetches the card and talks to the URL
inside it, and the model reaches the agent through the ``invoke_agent`` tool. Agents are on unless
``experimental.enableAgents`` is false; ``agents.overrides.NAME.enabled: false`` turns one off.

Project agents (a trusted workspace's ``.gemini/agents``) are read before the user's, register only once
acknowledged, and a name seen twice keeps its first definition. wiretap redirects the user's remote
agents: the private ``.gemini`` gets its own ``agents`` folder whose files link to the user's, except
those defining a remote agent by URL, which are private copies with ``agent_card_url`` pointing at the
session's ``wiretap proxy`` for that card.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

AGENTS_DIR = "agents"
FRONTMATTER = re.compile(r"^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n([\s\S]*))?")


@dataclass
class RemoteAgent:
    name: str
    scope: str
    file: Path
    card_url: str


@dataclass
class Agents:
    remote: list[RemoteAgent] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _definitions(path: Path) -> list[dict[str, Any]]:
    """The agents one file defines, as Gemini parses them; none when it would refuse the file."""
    try:
        match = FRONTMATTER.match(path.read_text(encoding="utf-8"))
        data = yaml.safe_load(match.group(1)) if match else None
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return []
    items = data if isinstance(data, list) else [data]
    return [item for item in items if isinstance(item, dict) and isinstance(item.get("name"), str)]


def _is_remote(definition: dict[str, Any]) -> bool:
    return definition.get("kind") == "remote" or "agent_card_url" in definition or "agent_card_json" in definition


def _files(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix == ".md" and not p.name.startswith("_"))
    except OSError:
        return []


def discover(user_dir: Path, cwd: Path, trusted: bool, settings: dict[str, Any]) -> Agents:
    found = Agents()
    if (settings.get("experimental") or {}).get("enableAgents") is False:
        return found
    overrides = (settings.get("agents") or {}).get("overrides") or {}
    seen: set[str] = set()
    project = cwd / ".gemini" / AGENTS_DIR
    if trusted and project.resolve() != (user_dir / AGENTS_DIR).resolve():
        for path in _files(project):
            for definition in _definitions(path):
                seen.add(definition["name"])
                if _is_remote(definition):
                    found.skipped.append(
                        f"agent {definition['name']} (project, {path}): Gemini reads project agents before "
                        "yours, from your project's files, which wiretap does not write; its A2A is not recorded"
                    )
    for path in _files(user_dir / AGENTS_DIR):
        for definition in _definitions(path):
            name = definition["name"]
            if name in seen or not _is_remote(definition):
                seen.add(name)
                continue
            seen.add(name)
            if (overrides.get(name) or {}).get("enabled") is False:
                continue
            if isinstance(definition.get("agent_card_url"), str):
                found.remote.append(RemoteAgent(name, "user agent", path, definition["agent_card_url"]))
            else:
                found.skipped.append(
                    f"agent {name} (user, {path}): its card is inline (agent_card_json), with no URL "
                    "wiretap can point at a proxy"
                )
    return found


def _redirected(path: Path, urls: dict[str, str]) -> str:
    """The file with each remote agent's ``agent_card_url`` replaced (by agent name); the body kept."""
    text = path.read_text(encoding="utf-8")
    match = FRONTMATTER.match(text)
    assert match is not None
    data = yaml.safe_load(match.group(1))
    for item in data if isinstance(data, list) else [data]:
        if isinstance(item, dict) and item.get("name") in urls:
            item["agent_card_url"] = urls[item["name"]]
    head = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    return f"---\n{head}---\n{match.group(2) or ''}"


def private_agents(folder: Path, user_agents: Path, agents: list[RemoteAgent], urls: dict[str, str]) -> None:
    """``folder`` (new, private): a link to each of the user's entries, and redirected copies of the files
    that define ``agents`` (``urls``: each agent's proxy URL, by name)."""
    folder.mkdir(mode=0o700)
    copies = {agent.file.name for agent in agents if agent.name in urls}
    for item in user_agents.iterdir():
        if item.name in copies:
            fd = os.open(folder / item.name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(_redirected(item, urls))
        else:
            (folder / item.name).symlink_to(item.resolve())
