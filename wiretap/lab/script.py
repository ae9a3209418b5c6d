"""The lab's walk through its conditions: the calls in order, as a prompt a model follows and as the script
the loopback fake model plays (``--scripted``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from wiretap.lab.conditions import BY_NAME, CONDITIONS, Condition

SERVER = "wiretap-lab"
"""The lab server's name in the client's generated config."""


@dataclass(frozen=True)
class Step:
    condition: Condition
    arguments: dict[str, Any] = field(default_factory=dict)
    stop: bool = False
    """Stop the task while it runs (TaskStop), rather than waiting for it."""
    why: str = ""

    @property
    def tool(self) -> str:
        return self.condition.tool


WALK: tuple[Step, ...] = (
    Step(BY_NAME["poll-interval"], {"interval_ms": 1000, "seconds": 4}, why="the cadence at an asked interval"),
    Step(BY_NAME["poll-interval"], {"interval_ms": 100, "seconds": 3}, why="an interval below the client's floor"),
    Step(BY_NAME["poll-interval"], {"seconds": 6}, why="no interval: the client's default"),
    Step(BY_NAME["input-required"], {"after_s": 1}, why="a question: answer the form"),
    Step(BY_NAME["forgotten-task"], {"forget_after_s": 2}, why="a task id the server forgets"),
    Step(BY_NAME["failing-polls"], {"failures": 2, "seconds": 3}, why="polls that fail"),
    Step(BY_NAME["until-cancelled"], {}, stop=True, why="a task that runs until it is stopped"),
    Step(BY_NAME["until-cancelled"], {}, why="a task left running: the client exits with it live"),
    Step(BY_NAME["progress"], {"count": 4, "every_s": 0.5}, why="progress notifications"),
    Step(BY_NAME["slow-answer"], {"seconds": 3}, why="an inline answer that takes a while"),
)


def walk(conditions: Sequence[Condition] | None = None) -> list[Step]:
    """The steps of the chosen conditions (all by default), in the lab's order."""
    chosen = {c.name for c in conditions} if conditions is not None else {c.name for c in CONDITIONS}
    return [step for step in WALK if step.condition.name in chosen]


def model_tool(step: Step, server: str = SERVER) -> str:
    """The tool's name as Claude Code offers it to the model."""
    return f"mcp__{server}__{step.tool}"


def prompt(steps: Sequence[Step], server: str = SERVER) -> str:
    """What to tell the model: each call in order, with its arguments and what to do with it."""
    lines = [
        f"You are running a protocol experiment with the MCP server {server!r}. Call its tools exactly as listed, "
        "one at a time, in this order, with exactly these arguments. Wait for each call to finish before the "
        "next unless told otherwise; do not retry a call that fails; say nothing between calls.",
    ]
    for n, step in enumerate(steps, 1):
        if step.stop:
            todo = "then stop that task (TaskStop) while it is still running"
        elif step.condition.name == "until-cancelled":
            todo = "leave it running and go on"
        else:
            todo = "wait for its result"
        lines.append(f"{n}. {step.tool} {json.dumps(step.arguments)}: {step.why}; {todo}.")
    lines.append("When all are done, reply with one word: done. (Then the user exits, with that task still running.)")
    return "\n".join(lines)
