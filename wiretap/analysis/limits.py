"""What each client waits for before it gives up, in one table: the limits findings judge a session by.

Every row names its source. A limit applies to a session when the client that ran matches (its
``clientInfo`` name, or the wrapped command), the version is in range and the transport matches; the
session's recorded environment or config (``setting``) may change it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum


class Limit(StrEnum):
    STARTUP = "startup"
    """From spawn (or the first connection) to the answer of the first request."""
    REQUEST = "request"
    """One request's answer, after it was sent."""
    IDLE = "idle"
    """A tool call with no answer and no progress notification for this long."""


@dataclass(frozen=True)
class ClientLimit:
    client: str
    """The client's ``clientInfo.name`` as it sends it."""
    limit: Limit
    default_s: float
    source: str
    """Where the value comes from: the client's documentation or source (a URL)."""
    transport: str | None = None
    """``stdio`` or ``http``; None for both."""
    since: str | None = None
    """The first client version it applies to (None: every version seen)."""
    setting: str | None = None
    """The environment variable (``MCP_TIMEOUT``) or config key (``startup_timeout_sec``) that changes it."""
    unit_s: float = 1.0
    """Seconds per unit of ``setting``'s value (0.001 for a value in milliseconds)."""


CLAUDE_CODE_2_1_197 = "https://www.npmjs.com/package/@anthropic-ai/claude-code/v/2.1.197"
CLAUDE_CODE_2_1_332 = "https://www.npmjs.com/package/@anthropic-ai/claude-code/v/2.1.332"

GIVE_UP_LIMITS: tuple[ClientLimit, ...] = (
    # Claude Code over HTTP aborts a POST whose response head has not come by the largest of these.
    ClientLimit("claude-code", Limit.REQUEST, 60.0, "https://github.com/anthropics/claude-code/issues/36221", "http"),
    ClientLimit("claude-code", Limit.REQUEST, 60.0, CLAUDE_CODE_2_1_197, "http", "2.1.197", "MCP_TOOL_TIMEOUT", 0.001),
    ClientLimit("claude-code", Limit.REQUEST, 30.0, CLAUDE_CODE_2_1_332, "http", "2.1.332", "MCP_TIMEOUT", 0.001),
    ClientLimit(
        "claude-code",
        Limit.IDLE,
        300.0,
        CLAUDE_CODE_2_1_197,
        "http",
        "2.1.187",
        "CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT",
        0.001,
    ),
    ClientLimit(
        "claude-code",
        Limit.IDLE,
        1800.0,
        CLAUDE_CODE_2_1_332,
        "stdio",
        "2.1.332",
        "CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT",
        0.001,
    ),
)


STARTUP_LIMITS: tuple[ClientLimit, ...] = (
    # Startup: from spawn (or the first connection) to the answer of the handshake.
    ClientLimit(
        "claude-code",
        Limit.STARTUP,
        30.0,
        "https://code.claude.com/docs/en/mcp",
        setting="MCP_TIMEOUT",
        unit_s=0.001,
    ),
    ClientLimit(
        "codex-mcp-client",
        Limit.STARTUP,
        10.0,
        "https://github.com/openai/codex/blob/main/codex-rs/core/src/mcp_connection_manager.rs",
        setting="startup_timeout_sec",
    ),
    ClientLimit(
        "gemini-cli-mcp-client",
        Limit.STARTUP,
        600.0,
        "https://github.com/google-gemini/gemini-cli/blob/main/packages/core/src/tools/mcp-client.ts",
        setting="timeout",
        unit_s=0.001,
    ),
)

LIMITS: tuple[ClientLimit, ...] = (*STARTUP_LIMITS, *GIVE_UP_LIMITS)

WRAPPED_CLIENTS = {"Claude Code": "claude-code", "Codex": "codex-mcp-client", "Gemini CLI": "gemini-cli-mcp-client"}
"""A session manifest's ``client`` (the wrapper's name) → the ``clientInfo`` name its rows use."""


def _settings() -> set[str]:
    return {row.setting for row in LIMITS if row.setting}


def limits_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment variables (upper-case settings) of the table that are set: what a session records."""
    return {name: env[name] for name in sorted(_settings()) if name.isupper() and name in env}


def server_limits(entry: Mapping[str, object]) -> dict[str, str]:
    """The config keys of the table (lower-case settings) that a server's entry sets to a number."""
    found = {}
    for key in sorted(_settings()):
        value = entry.get(key)
        if not key.isupper() and isinstance(value, int | float) and not isinstance(value, bool):
            found[key] = str(value)
    return found


def _version_at_least(version: str | None, since: str | None) -> bool:
    if since is None or version is None:
        return True
    try:
        have = tuple(int(part) for part in version.split("-")[0].split("."))
        want = tuple(int(part) for part in since.split("."))
    except ValueError:
        return True
    return have >= want


def _applying(
    client: str | None, limit: Limit, transport: str, version: str | None, settings: Mapping[str, str] | None
) -> Iterator[tuple[float, ClientLimit]]:
    """Each row that applies to the client that ran, in the table's order, with its value in seconds."""
    for row in LIMITS:
        if row.client != client or row.limit is not limit or row.transport not in (None, transport):
            continue
        if not _version_at_least(version, row.since):
            continue
        value = (settings or {}).get(row.setting or "")
        try:
            yield (float(value) * row.unit_s if value else row.default_s), row
        except ValueError:
            yield row.default_s, row


def limit_for(
    client: str | None,
    limit: Limit,
    *,
    transport: str,
    version: str | None = None,
    settings: Mapping[str, str] | None = None,
) -> tuple[float, ClientLimit] | None:
    """The limit in seconds for the client that ran, and the row it comes from; None when unknown."""
    return next(_applying(client, limit, transport, version, settings), None)


def largest_limit(
    client: str | None,
    limit: Limit,
    *,
    transport: str,
    version: str | None = None,
    settings: Mapping[str, str] | None = None,
) -> tuple[float, ClientLimit] | None:
    """The largest of the limits that apply (a client that waits for whichever of its settings is longest)."""
    return max(_applying(client, limit, transport, version, settings), key=lambda pair: pair[0], default=None)
