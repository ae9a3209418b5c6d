"""A throwaway Claude Code home that runs offline against a local model API: the user's own is never read.

``claude_home`` writes the first-run answers (onboarding done, the project trusted, the key approved)
and, with ``tasks_in_print_mode``, the flag cache that turns MCP Tasks on for ``-p``; ``claude_env``
is the environment that points Claude Code at that home and the local API and keeps it off the network.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

API_KEY = "sk-ant-fake-wiretap-0123456789abcdefghij"
OFFLINE = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_BUG_COMMAND": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    # Otherwise MCP tools hide behind a search tool and are never offered to the model.
    "ENABLE_TOOL_SEARCH": "false",
}
TASKS_IN_PRINT_MODE = {
    # Read from the 2.1.332 binary: without it the seeded flag cache is ignored when telemetry is off.
    "CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF": "1",
    "CLAUDE_AUTO_BACKGROUND_TASKS": "1",
    "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
}
TASKS_FLAG = "tengu_glowing_lark"
DROPPED_PREFIXES = ("ANTHROPIC_", "CLAUDE", "AWS_", "GOOGLE_", "VERTEX_", "OTEL_", "MCP_")
"""Settings from the user's environment that would change what Claude Code does, or reach their account."""


def claude_home(root: Path, project: Path, *, tasks_in_print_mode: bool = False) -> Path:
    """``root/home/.claude`` (0700) with the first-run screens answered for ``project``; returns it."""
    config = root / "home" / ".claude"
    config.mkdir(parents=True, exist_ok=True, mode=0o700)
    state: dict[str, object] = {
        "hasCompletedOnboarding": True,
        "projects": {str(project.resolve()): {"hasTrustDialogAccepted": True}},
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
    }
    if tasks_in_print_mode:
        state["cachedGrowthBookFeatures"] = {TASKS_FLAG: True}
    for name, data in ((".claude.json", state), ("settings.json", {"enableAllProjectMcpServers": True})):
        fd = os.open(config / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=2)
    return config


def claude_env(
    root: Path, api_url: str, env: Mapping[str, str], *, tasks_in_print_mode: bool = False
) -> dict[str, str]:
    """``env`` without the user's Claude, cloud and telemetry settings, pointed at ``root``'s home and ``api_url``."""
    kept = {k: v for k, v in env.items() if not k.startswith(DROPPED_PREFIXES)}
    home = root / "home"
    return (
        kept
        | OFFLINE
        | (TASKS_IN_PRINT_MODE if tasks_in_print_mode else {})
        | {
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "ANTHROPIC_BASE_URL": api_url,
            "ANTHROPIC_API_KEY": API_KEY,
        }
    )
