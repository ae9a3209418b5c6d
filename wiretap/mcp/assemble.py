"""The MCP server's protocol object: its tools over the folders it may read, and what it tells the agent."""

from __future__ import annotations

from pathlib import Path

from wiretap import __version__
from wiretap.mcp import budget
from wiretap.mcp.protocol import Protocol
from wiretap.mcp.roots import Roots
from wiretap.mcp.tools import Tools


def instructions(roots: Roots) -> str:
    return (
        "wiretap's recordings of what crossed the wire between AI clients and their MCP servers and A2A agents, "
        f"read-only. It reads {roots.describe()} and nothing else. Start with list_sessions (or list_recordings), "
        "then timeline, report (findings, tasks, questions) and get_message for one message whole; search "
        f"looks across all recordings, diff compares two. Every result is at most {budget.CAP // 1024} KiB of "
        "JSON: lists are paged (offset, limit; follow next_offset), long strings are clipped and say their length."
    )


def build(cwd: Path, roots: tuple[Path, ...]) -> Protocol:
    found = Roots(cwd, roots)
    return Protocol(Tools(found).all(), {"name": "wiretap", "version": __version__}, instructions(found))
