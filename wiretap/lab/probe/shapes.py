"""The probe server's wire shapes in both MCP revisions: its identity, its tools, tasks and questions."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from wiretap.lab.conditions import CONDITIONS, Kind

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
SUPPORTED = (MODERN, LEGACY)
TASKS_EXT = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SERVER_INFO = {"name": "wiretap-lab", "version": "1.0.0"}
TTL_MS = 3_600_000
CACHE = {"ttlMs": 0, "cacheScope": "private"}
"""2026-07-28 cacheable results (discover, the lists) must say how long they may be cached: not at all."""
INSTRUCTIONS = (
    "The wiretap lab's probe: each tool is one condition of a client-behaviour investigation. "
    "Call each tool exactly as its description says."
)

FORM_KEY, ROOTS_KEY = "lab_form", "lab_roots"
FORM = {
    "mode": "form",
    "message": "The lab's input_task needs two answers: which environment, and whether to go ahead.",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "environment": {"type": "string", "title": "Environment", "enum": ["staging", "production"]},
            "confirm": {"type": "boolean", "title": "Go ahead?"},
        },
        "required": ["environment", "confirm"],
    },
}


def iso(wall: float) -> str:
    return datetime.fromtimestamp(wall, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def tools(legacy: bool) -> list[dict[str, Any]]:
    out = []
    for condition in CONDITIONS:
        tool: dict[str, Any] = {
            "name": condition.tool,
            "description": condition.description,
            "inputSchema": condition.input_schema(),
        }
        if legacy:
            tool["execution"] = {"taskSupport": "optional" if condition.kind is Kind.TASK else "forbidden"}
        out.append(tool)
    return out


def discover() -> dict[str, Any]:
    return {
        "supportedVersions": list(SUPPORTED),
        "capabilities": {"tools": {}, "prompts": {}, "resources": {}, "extensions": {TASKS_EXT: {}}},
        "instructions": INSTRUCTIONS,
        "_meta": {SERVER_INFO_KEY: SERVER_INFO},
    }


def initialize(version: str) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": {
            "tools": {},
            "prompts": {},
            "resources": {},
            "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
        },
        "serverInfo": SERVER_INFO,
        "instructions": INSTRUCTIONS,
    }


def text_result(text: str, lab: dict[str, Any], is_error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error, "_meta": {"wiretap/lab": lab}}


def input_requests(keys: list[str], task_id: str | None) -> dict[str, Any]:
    """The 2026-07-28 ``inputRequests`` map (no id, no ``jsonrpc``) of the keys still unanswered."""
    requests: dict[str, Any] = {}
    for key in keys:
        requests[key] = ask(key, task_id, legacy=False)
    return requests


def ask(key: str, task_id: str | None, legacy: bool) -> dict[str, Any]:
    """One of the input task's two questions: the form, or roots/list."""
    params: dict[str, Any] = dict(FORM) if key == FORM_KEY else {}
    if legacy and task_id is not None:
        params["_meta"] = {RELATED: {"taskId": task_id}}
    return {"method": "elicitation/create" if key == FORM_KEY else "roots/list", "params": params}
