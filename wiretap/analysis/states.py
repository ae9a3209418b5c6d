"""Task states across MCP (both task designs) and A2A (1.0 enum names, 0.3 lower-case names)."""

from __future__ import annotations

from dataclasses import dataclass

WORKING, INPUT_REQUIRED, COMPLETED, FAILED, CANCELLED = (
    "working",
    "input_required",
    "completed",
    "failed",
    "cancelled",
)
SUBMITTED, REJECTED, AUTH_REQUIRED, UNKNOWN = "submitted", "rejected", "auth_required", "unknown"

TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED, REJECTED})
INTERRUPTED = frozenset({INPUT_REQUIRED, AUTH_REQUIRED})

_MCP = {s: s for s in (WORKING, INPUT_REQUIRED, COMPLETED, FAILED, CANCELLED)}
_A2A_10 = {
    "TASK_STATE_SUBMITTED": SUBMITTED,
    "TASK_STATE_WORKING": WORKING,
    "TASK_STATE_COMPLETED": COMPLETED,
    "TASK_STATE_FAILED": FAILED,
    "TASK_STATE_CANCELED": CANCELLED,
    "TASK_STATE_CANCELLED": CANCELLED,
    "TASK_STATE_INPUT_REQUIRED": INPUT_REQUIRED,
    "TASK_STATE_REJECTED": REJECTED,
    "TASK_STATE_AUTH_REQUIRED": AUTH_REQUIRED,
}
_A2A_03 = {
    "submitted": SUBMITTED,
    "working": WORKING,
    "completed": COMPLETED,
    "failed": FAILED,
    "canceled": CANCELLED,
    "input-required": INPUT_REQUIRED,
    "rejected": REJECTED,
    "auth-required": AUTH_REQUIRED,
}


@dataclass(frozen=True)
class State:
    raw: str
    """As it was on the wire."""
    canonical: str
    """One of the names above; ``unknown`` for anything unrecognised or unspecified."""
    spelling: str
    """``mcp``, ``a2a-1.0``, ``a2a-0.3`` or ``unknown``."""

    @property
    def terminal(self) -> bool:
        return self.canonical in TERMINAL


_MCP_STATES = {text: State(text, name, "mcp") for text, name in _MCP.items()}
_A2A_STATES = {
    **{text: State(text, name, "a2a-0.3") for text, name in _A2A_03.items()},
    **{text: State(text, name, "a2a-1.0") for text, name in _A2A_10.items()},
}


def mcp_state(raw: object) -> State:
    text = raw if type(raw) is str else str(raw)
    known = _MCP_STATES.get(text)
    return known if known is not None else State(text, UNKNOWN, "unknown")


def a2a_state(raw: object) -> State:
    text = raw if type(raw) is str else str(raw)
    known = _A2A_STATES.get(text)
    return known if known is not None else State(text, UNKNOWN, "unknown")
