"""Running the real Claude Code offline, in print mode, against a fake Messages API (PEERS.md).

``offline_env`` builds a throwaway home, ``write_mcp_config`` the ``--mcp-config`` file, and
``run_claude`` runs one prompt with a bounded timeout and returns the parsed stream-json output.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.processes import run_bounded
from wiretap.lab.offline import API_KEY as API_KEY
from wiretap.lab.offline import OFFLINE as OFFLINE
from wiretap.lab.offline import claude_env

Json = dict[str, Any]


def offline_env(root: Path, api_url: str) -> dict[str, str]:
    """Environment for an offline Claude Code with its home and config under ``root``."""
    (root / "home" / ".claude").mkdir(parents=True, exist_ok=True)
    return claude_env(root, api_url, os.environ)


def stdio_server(command: str, args: Sequence[str] = (), env: Mapping[str, str] | None = None) -> Json:
    """One ``mcpServers`` entry for a stdio server."""
    entry: Json = {"type": "stdio", "command": command, "args": list(args)}
    if env:
        entry["env"] = dict(env)
    return entry


def write_mcp_config(path: Path, servers: Mapping[str, Json]) -> Path:
    path.write_text(json.dumps({"mcpServers": dict(servers)}, indent=2))
    return path


@dataclass
class ClaudeRun:
    """What one ``claude -p`` run printed: its stream-json events, stderr and exit status."""

    argv: list[str]
    returncode: int
    events: list[Json]
    stdout: str
    stderr: str

    def of_type(self, kind: str, subtype: str | None = None) -> list[Json]:
        return [e for e in self.events if e.get("type") == kind and (subtype is None or e.get("subtype") == subtype)]

    @property
    def init(self) -> Json:
        return self.of_type("system", "init")[0]

    @property
    def result(self) -> Json:
        return self.of_type("result")[-1]

    @property
    def result_text(self) -> str:
        return str(self.result.get("result"))

    def mcp_status(self, server: str) -> str | None:
        return next((s.get("status") for s in self.init.get("mcp_servers", []) if s.get("name") == server), None)

    def describe(self) -> str:
        return f"claude exited {self.returncode}\nstdout:\n{self.stdout[-4000:]}\nstderr:\n{self.stderr[-4000:]}"


def parse_stream_json(text: str) -> list[Json]:
    events = []
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            if isinstance(event, dict):
                events.append(event)
    return events


def run_claude(
    binary: Path,
    prompt: str,
    *,
    env: Mapping[str, str],
    cwd: Path,
    mcp_config: Path,
    allowed_tools: Sequence[str],
    timeout: float = 120,
    extra_args: Sequence[str] = (),
) -> ClaudeRun:
    """``claude -p PROMPT`` with only ``mcp_config``'s servers; its whole process group dies on timeout."""
    argv = [
        str(binary), "-p", prompt,
        "--mcp-config", str(mcp_config), "--strict-mcp-config",
        "--allowedTools", ",".join(allowed_tools),
        "--output-format", "stream-json", "--verbose",
        "--no-session-persistence",
        *extra_args,
    ]  # fmt: skip
    result = run_bounded(argv, cwd=cwd, env=env, timeout=timeout)
    return ClaudeRun(argv, result.returncode, parse_stream_json(result.stdout), result.stdout, result.stderr)
