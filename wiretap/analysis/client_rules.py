"""What each known client does with tasks, in one table: the rules a report applies to that client's
sessions only (its ``clientInfo`` name, or a session's wrapped client), and "no known rule" otherwise.

Every row names its source and the first version it was seen on.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from wiretap.analysis.limits import CLAUDE_CODE_2_1_332


class Behaviour(StrEnum):
    POLL = "poll"
    """How it spaces ``tasks/get`` against the server's interval."""
    HEADLESS_QUESTION = "headless-question"
    """What a headless run does when a task turns ``input_required``."""
    OPEN_FORM = "open-form"
    """What it does while a form for ``input_required`` is open."""
    EXIT_WITH_TASK = "exit-with-task"
    """What it does with a live task when it exits."""


@dataclass(frozen=True)
class ClientRule:
    client: str
    """The client's ``clientInfo.name`` as it sends it."""
    who: str
    """The client as a person names it."""
    behaviour: Behaviour
    rule: str
    since: str
    """The first client version it was seen on."""
    source: str
    design: str | None = None
    """The task design it applies to (``mcp-2025-11-25``, ``mcp-tasks-extension``); None for every one."""
    floor_ms: int | None = None
    """For ``POLL``: the shortest interval it polls at (None: no floor)."""
    ceiling_ms: int | None = None
    default_ms: int | None = None
    """For ``POLL``: its interval when the server asks for none (None: not known)."""

    def applied_ms(self, requested: int | None) -> int | None:
        """The interval this poll rule applies to the server's ``requested`` one."""
        if requested is None:
            return self.default_ms
        low = self.floor_ms if self.floor_ms is not None else requested
        high = self.ceiling_ms if self.ceiling_ms is not None else requested
        return max(low, min(high, requested))


MCP_SDK_1_30 = "https://pypi.org/project/mcp/1.30.0/"
FASTMCP_4_1_4 = "https://pypi.org/project/fastmcp-tasks/4.1.4/"
INSPECTOR_2_12 = "https://www.npmjs.com/package/@modelcontextprotocol/inspector/v/2.12.0"

RULES: tuple[ClientRule, ...] = (
    ClientRule(
        "claude-code",
        "Claude Code",
        Behaviour.POLL,
        "the server's interval clamped to 250 ms–30 s; 2 s when the server gives none",
        "2.1.332",
        CLAUDE_CODE_2_1_332,
        floor_ms=250,
        ceiling_ms=30_000,
        default_ms=2000,
    ),
    ClientRule(
        "claude-code",
        "Claude Code",
        Behaviour.HEADLESS_QUESTION,
        "headless (-p) cancels the task at input_required, in the same tick",
        "2.1.332",
        CLAUDE_CODE_2_1_332,
    ),
    ClientRule(
        "claude-code",
        "Claude Code",
        Behaviour.OPEN_FORM,
        "no polls while the form is open; one tasks/update carries every answer",
        "2.1.332",
        CLAUDE_CODE_2_1_332,
    ),
    ClientRule(
        "claude-code",
        "Claude Code",
        Behaviour.EXIT_WITH_TASK,
        "no cancel on exit with a live task; a stdio server gets SIGINT, SIGTERM 100 ms later",
        "2.1.332",
        CLAUDE_CODE_2_1_332,
    ),
    # The Python SDK and fastmcp both send the SDK's default clientInfo ("mcp"): the task design tells them apart.
    ClientRule(
        "mcp",
        "MCP Python SDK",
        Behaviour.POLL,
        "polls exactly at the server's pollInterval",
        "1.30",
        MCP_SDK_1_30,
        design="mcp-2025-11-25",
    ),
    ClientRule(
        "mcp",
        "fastmcp",
        Behaviour.POLL,
        "polls after 20 ms, doubling up to the server's pollIntervalMs",
        "4.1.4",
        FASTMCP_4_1_4,
        design="mcp-tasks-extension",
    ),
    ClientRule(
        "inspector-cli",
        "MCP Inspector CLI",
        Behaviour.POLL,
        "polls at the server's interval (at least 10 ms, no ceiling); every 1 s when the server gives none",
        "2.12.0",
        INSPECTOR_2_12,
        floor_ms=10,
        default_ms=1000,
    ),
)


def rules_for(client: str | None, behaviour: Behaviour, design: str | None = None) -> list[ClientRule]:
    """The rows for the client that ran (and, when given, its task design), in the table's order."""
    return [
        row
        for row in RULES
        if row.client == client and row.behaviour is behaviour and (design is None or row.design in (None, design))
    ]


def poll_rule_for(client: str | None, design: str | None = None) -> ClientRule | None:
    found = rules_for(client, Behaviour.POLL, design)
    return found[0] if found else None


def describe(client: str | None, version: str | None, design: str | None = None) -> str:
    """The poll rule a report prints: the client's own, or that none is known for it."""
    row = poll_rule_for(client, design)
    if row is None:
        return f"No known poll rule for {client}" if client else "No known poll rule: the client is not named"
    seen = "" if not version or version == row.since else f", this client is {version}"
    return f"{row.who}'s rule (seen on {row.since}{seen}): {row.rule}"
