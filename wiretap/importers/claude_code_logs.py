"""Parsers for what Claude Code writes about its MCP servers: the per-server logs in its cache folder
(``mcp-logs-<server>/<time>.jsonl``), the ``--debug`` log (``debug/<session>.txt``) and the session
transcript (``projects/<slug>/<session>.jsonl``). Pure functions from lines to facts; nothing here reads
a file."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class LogLine:
    """One line Claude Code logged about one server."""

    at_ns: int
    """Its wall-clock timestamp (millisecond resolution), nanoseconds since the epoch."""
    server: str
    text: str
    level: str
    """``debug`` or ``error``."""
    session: str | None = None
    cwd: str | None = None


@dataclass(frozen=True)
class Dispatch:
    """A ``[Stall] tool_dispatch_start`` / ``tool_dispatch_end`` line of the debug log."""

    at_ns: int
    phase: str
    """``start`` or ``end``."""
    tool_use_id: str
    fields: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolUse:
    """A ``tool_use`` block of the transcript: the model asked for a tool."""

    at_ns: int
    id: str
    name: str
    input: Any


@dataclass(frozen=True)
class ToolResult:
    """A ``tool_result`` block of the transcript: what Claude Code gave the model back."""

    at_ns: int
    tool_use_id: str
    content: Any
    is_error: bool


def parse_time(stamp: object) -> int | None:
    """``2026-12-03T11:22:52.511Z`` as nanoseconds since the epoch; None if it is not such a time."""
    if not isinstance(stamp, str):
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    whole = int(moment.timestamp())
    return whole * 1_000_000_000 + moment.microsecond * 1000


def parse_mcp_log_line(raw: str, server: str) -> LogLine | None:
    """One line of ``mcp-logs-<server>/<time>.jsonl``: ``{"debug"|"error": TEXT, "timestamp", "sessionId",
    "cwd"}``; None for a line that is not one."""
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    at = parse_time(record.get("timestamp"))
    level = "error" if "error" in record else "debug"
    text = record.get(level)
    if at is None or not isinstance(text, str):
        return None
    session, cwd = record.get("sessionId"), record.get("cwd")
    return LogLine(
        at, server, text, level, session if isinstance(session, str) else None, cwd if isinstance(cwd, str) else None
    )


_DEBUG_LINE = re.compile(r"^(?P<at>\d{4}-\d\d-\d\dT[\d:.]+Z) \[(?P<level>[A-Z]+)\] (?P<text>.*)$")
_SERVER_TEXT = re.compile(r'^MCP server "(?P<server>(?:[^"\\]|\\.)*)"(?::)? (?P<text>.*)$')
_DISPATCH = re.compile(r"^\[Stall\] tool_dispatch_(?P<phase>start|end) (?P<fields>.*)$")


def parse_debug_line(raw: str) -> LogLine | Dispatch | None:
    """One line of ``debug/<session>.txt``: a line about an MCP server, a tool dispatch, or None."""
    found = _DEBUG_LINE.match(raw.rstrip("\n"))
    if found is None:
        return None
    at = parse_time(found["at"])
    if at is None:
        return None
    text = found["text"]
    if (server := _SERVER_TEXT.match(text)) is not None:
        level = "error" if found["level"] == "ERROR" else "debug"
        return LogLine(at, server["server"], server["text"], level)
    if (dispatch := _DISPATCH.match(text)) is not None:
        fields = dict(part.split("=", 1) for part in dispatch["fields"].split() if "=" in part)
        if "toolUseId" in fields:
            return Dispatch(at, dispatch["phase"], fields.pop("toolUseId"), fields)
    return None


def parse_transcript_line(raw: str) -> tuple[list[ToolUse], list[ToolResult], dict[str, str]]:
    """One line of a transcript: its ``tool_use`` and ``tool_result`` blocks, and its ``sessionId`` and
    ``cwd`` when it names them."""
    try:
        record = json.loads(raw)
    except ValueError:
        return [], [], {}
    if not isinstance(record, dict):
        return [], [], {}
    where = {key: value for key in ("sessionId", "cwd") if isinstance(value := record.get(key), str)}
    at = parse_time(record.get("timestamp"))
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if at is None or not isinstance(content, list):
        return [], [], where
    uses, results = [], []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
            uses.append(ToolUse(at, block["id"], str(block.get("name", "")), block.get("input")))
        elif block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
            results.append(ToolResult(at, block["tool_use_id"], block.get("content"), block.get("is_error") is True))
    return uses, results, where


_DURATION = re.compile(r"^(?:(?P<m>\d+)m )?(?:(?P<s>\d+)s|(?P<ms>\d+)ms)$")


def parse_duration(text: str) -> tuple[float, float] | None:
    """Claude Code's ``6ms``, ``3s``, ``2m 5s`` as (seconds, resolution in seconds)."""
    found = _DURATION.match(text.strip())
    if found is None:
        return None
    if found["ms"] is not None:
        return int(found["ms"]) / 1000, 0.001
    return int(found["m"] or 0) * 60 + int(found["s"]), 1.0


_FACTS: list[tuple[str, re.Pattern[str]]] = [
    ("connecting", re.compile(r"^Starting connection with timeout of (?P<timeout_ms>\d+)ms$")),
    ("connected", re.compile(r"^Successfully connected \(transport: (?P<transport>[\w-]+)\) in (?P<took>.+)$")),
    ("capabilities", re.compile(r"^Connection established with capabilities: (?P<json>\{.*\})$")),
    ("tool_call", re.compile(r"^Calling MCP tool: (?P<tool>.+)$")),
    ("tool_result", re.compile(r"^Tool '(?P<tool>.+)' completed successfully in (?P<took>.+)$")),
    ("tool_failed", re.compile(r"^Tool '(?P<tool>.+?)' failed after (?P<took>\d+s): (?P<error>.*)$")),
    ("signal_sent", re.compile(r"^Sending (?P<signal>SIG[A-Z0-9]+) to MCP server process$")),
    ("closed", re.compile(r"^(?P<transport>[A-Za-z]+) connection closed after (?P<took>.+?) \((?P<how>[^)]*)\)$")),
    ("exited", re.compile(r"^MCP server process exited (?P<how>.+)$")),
]


def fact(text: str) -> dict[str, Any]:
    """What one log text says, as the fields of an ``observed`` event: ``what`` and what it names."""
    for what, pattern in _FACTS:
        found = pattern.match(text)
        if found is None:
            continue
        parts = {k: v for k, v in found.groupdict().items() if v is not None}
        if what == "capabilities":
            try:
                capabilities = json.loads(parts.pop("json"))
            except ValueError:
                break
            return _capabilities(capabilities)
        if what == "connecting":
            return {"what": what, "timeout_ms": int(parts["timeout_ms"])}
        if what == "tool_failed":
            return {"what": "tool_result", "tool": parts["tool"], "outcome": "error", **_took(parts["took"]),
                    "error": parts["error"]}  # fmt: skip
        if what == "tool_result":
            return {"what": what, "tool": parts["tool"], "outcome": "ok", **_took(parts["took"])}
        if "took" in parts:
            return {"what": what, **{k: v for k, v in parts.items() if k != "took"}, **_took(parts["took"])}
        return {"what": what, **parts}
    return {"what": "log"}


def _took(text: str) -> dict[str, Any]:
    """Claude Code's own measure of a duration, as it logged it, and in seconds with its resolution."""
    parsed = parse_duration(text)
    if parsed is None:
        return {"logged_duration": text}
    seconds, resolution = parsed
    return {"logged_duration": text, "logged_seconds": seconds, "logged_resolution": resolution}


def _capabilities(capabilities: object) -> dict[str, Any]:
    found: dict[str, Any] = {"what": "capabilities", "capabilities": capabilities}
    if isinstance(capabilities, dict):
        for key, name in (("negotiatedProtocolVersion", "protocol_version"), ("protocolEra", "era"),
                          ("serverVersion", "server_info")):  # fmt: skip
            if key in capabilities:
                found[name] = capabilities[key]
    return found
