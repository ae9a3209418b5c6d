"""``wiretap import claude-code``: a Claude Code session rebuilt from its logs as a wiretap session folder.

Each server gets a recording whose events are ``observed`` facts: what Claude Code logged (connecting,
connected, capabilities and negotiated version, each tool call and its outcome, the shutdown), with the
tool's input and result from the transcript and its ``toolUseId`` from the transcript or the debug log.
The JSON-RPC messages themselves were never logged, so there are none: no id, method, body or size is
made up. Times are the logs' wall-clock timestamps (milliseconds) on one clock for all servers.
"""

from __future__ import annotations

import json
import re
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from wiretap import __version__
from wiretap.errors import BadInput
from wiretap.files import write_private
from wiretap.importers.claude_code_files import Sources, readable, real_name
from wiretap.importers.claude_code_logs import (
    Dispatch,
    LogLine,
    ToolResult,
    ToolUse,
    fact,
    parse_debug_line,
    parse_mcp_log_line,
    parse_transcript_line,
)
from wiretap.recording.event_types import EndEvent, HeaderLine, ObservedEvent
from wiretap.recording.events import FORMAT_VERSION, utc_iso_ms
from wiretap.recording.folders import MANIFEST
from wiretap.recording.paths import safe_name
from wiretap.wire.redact import redact_json, redact_text
from wiretap.wrap.session import new_session_dir

FROM = "claude-code"
CLOCK = "wall-clock seconds since started, from Claude Code's log timestamps (millisecond resolution)"
KNOWN = ["connection", "negotiated_version", "tool_calls", "tool_outcomes", "shutdown_signals"]
UNKNOWN = [
    "jsonrpc_messages",
    "jsonrpc_ids",
    "message_bytes",
    "requests_other_than_tool_calls",
    "notifications",
    "tasks",
    "server_stderr",
    "server_pid",
    "exit_status",
]
DISPATCH_SLACK_NS = 50_000_000
"""How far apart (either way) a debug log's dispatch line and the MCP log's line of the same call may be."""


@dataclass
class Collected:
    """Everything read from one session's files."""

    lines: dict[str, list[LogLine]] = field(default_factory=dict)
    """Per server name, its log lines in file order."""
    dispatches: list[Dispatch] = field(default_factory=list)
    uses: dict[str, ToolUse] = field(default_factory=dict)
    results: dict[str, ToolResult] = field(default_factory=dict)
    cwd: str | None = None


def collect(sources: Sources) -> Collected:
    found = Collected()
    debug_lines: dict[str, list[LogLine]] = {}
    if sources.debug is not None:
        for raw in readable(sources.debug):
            parsed = parse_debug_line(raw)
            if isinstance(parsed, Dispatch):
                found.dispatches.append(parsed)
            elif parsed is not None:
                debug_lines.setdefault(parsed.server, []).append(parsed)
    for folder, files in sources.mcp_logs.items():
        name = real_name(folder, set(debug_lines))
        for file in files:
            for raw in readable(file):
                if (line := parse_mcp_log_line(raw, name)) is not None:
                    found.lines.setdefault(name, []).append(line)
                    found.cwd = found.cwd or line.cwd
    for name, lines in debug_lines.items():
        found.lines.setdefault(name, lines)  # a server whose MCP log is gone: what the debug log has
    if sources.transcript is not None:
        for raw in readable(sources.transcript):
            uses, results, where = parse_transcript_line(raw)
            found.uses.update((use.id, use) for use in uses)
            found.results.update((result.tool_use_id, result) for result in results)
            found.cwd = found.cwd or where.get("cwd")
    return found


def _tool_name_prefix(server: str) -> str:
    return "mcp__" + re.sub(r"[^a-zA-Z0-9_-]", "_", server) + "__"


class Calls:
    """Which ``toolUseId`` each logged call and outcome of one server belongs to."""

    def __init__(self, server: str, collected: Collected) -> None:
        self.prefix = _tool_name_prefix(server)
        self.collected = collected
        self.open: dict[str, deque[tuple[str | None, int]]] = {}

    def start(self, tool: str, at: int, claimed: set[str]) -> str | None:
        wanted = self.prefix + tool
        uses = self.collected.uses
        near = [
            d for d in self.collected.dispatches
            if d.phase == "start" and d.tool_use_id not in claimed and abs(d.at_ns - at) <= DISPATCH_SLACK_NS
            and (d.tool_use_id not in uses or uses[d.tool_use_id].name == wanted)
        ]  # fmt: skip
        if near:
            chosen: str | None = min(near, key=lambda d: abs(d.at_ns - at)).tool_use_id
        else:
            chosen = next(
                (u.id for u in uses.values() if u.id not in claimed and u.name == wanted and u.at_ns <= at + 10**9),
                None,
            )
        if chosen is not None:
            claimed.add(chosen)
        self.open.setdefault(tool, deque()).append((chosen, at))
        return chosen

    def finish(self, tool: str, at: int) -> tuple[str | None, int | None]:
        waiting = self.open.get(tool)
        if not waiting:
            return None, None
        ended = {
            d.tool_use_id for d in self.collected.dispatches
            if d.phase == "end" and abs(d.at_ns - at) <= DISPATCH_SLACK_NS
        }  # fmt: skip
        index = next((i for i, (use_id, _) in enumerate(waiting) if use_id in ended), 0)
        use_id, started = waiting[index]
        del waiting[index]
        return use_id, started


def _redacted(event: ObservedEvent) -> ObservedEvent:
    """The event with every string and value Claude Code or the server wrote through wiretap's redaction."""
    count = 0
    fields = cast(dict[str, Any], event)  # (keys of ObservedEvent, taken in turn)
    for key in ("text", "error"):
        if isinstance(fields.get(key), str):
            fields[key], n = redact_text(fields[key])
            count += n
    for key in ("input", "result", "capabilities", "server_info"):
        if key in fields:
            fields[key], n = redact_json(fields[key])
            count += n
    if count:
        event["redacted"] = count
    return event


def server_events(server: str, collected: Collected, origin_ns: int, claimed: set[str]) -> list[ObservedEvent]:
    """One server's ``observed`` events, in time order, on the clock whose 0 is ``origin_ns``."""
    calls = Calls(server, collected)
    events: list[ObservedEvent] = []
    for line in sorted(collected.lines.get(server, []), key=lambda line: line.at_ns):
        found = fact(line.text)
        # (``found``: the fields of a fact, as ``fact`` reads them from the line)
        event = cast(ObservedEvent, {"t": round((line.at_ns - origin_ns) / 1e9, 6), "kind": "observed", **found})
        if line.level == "error":
            event["level"] = "error"
        if found["what"] == "tool_call":
            use_id = calls.start(found["tool"], line.at_ns, claimed)
            event["tool_use_id"] = use_id
            if use_id is not None and use_id in collected.uses:
                event["input"] = collected.uses[use_id].input
        elif found["what"] == "tool_result":
            use_id, started = calls.finish(found["tool"], line.at_ns)
            event["tool_use_id"] = use_id
            if started is not None:
                event["duration"] = round((line.at_ns - started) / 1e9, 6)
            if use_id is not None and (result := collected.results.get(use_id)) is not None:
                event["result"] = result.content
                event["result_is_error"] = result.is_error
        event["text"] = line.text
        events.append(_redacted(event))
    return events


def header(
    server: str, transport: str, origin_ns: int, cwd: str | None, known: list[str], unknown: list[str]
) -> HeaderLine:
    return {
        "kind": "header",
        "format": FORMAT_VERSION,
        "wiretap": __version__,
        "started": utc_iso_ms(origin_ns / 1e9),
        "clock": CLOCK,
        "transport": transport,
        "name": server,
        "cwd": redact_text(cwd)[0] if cwd else None,
        "redacted": True,
        "wall_origin_ns": origin_ns,
        "imported": True,
        "imported_from": FROM,
        "known": known,
        "unknown": unknown,
    }


def _transport(events: list[ObservedEvent]) -> str:
    said = next((e.get("transport") for e in events if e.get("what") == "connected"), None)
    return "stdio" if said in (None, "stdio") else "http"


def _known(sources: Sources, events: list[ObservedEvent]) -> tuple[list[str], list[str]]:
    known, unknown = list(KNOWN), list(UNKNOWN)
    calls = [e for e in events if e.get("what") == "tool_call"]
    (known if sources.transcript is not None else unknown).extend(["tool_inputs", "tool_results"])
    ids = bool(calls) and all(e.get("tool_use_id") for e in calls)
    (known if ids or sources.transcript or sources.debug else unknown).append("tool_use_ids")
    return known, unknown


@dataclass
class Imported:
    folder: Path
    session: str
    servers: dict[str, list[ObservedEvent]]


def import_session(sources: Sources, out: Path | None) -> Imported:
    """Read the session's files and write them as a session folder (``out``, or a new one)."""
    collected = collect(sources)
    stamps = [line.at_ns for lines in collected.lines.values() for line in lines]
    if not stamps:
        where = ", ".join(str(f) for f in sources.files)
        raise BadInput(f"{where}: no MCP server lines in Claude Code's logs of session {sources.session}")
    origin = min(stamps)
    claimed: set[str] = set()
    servers = {name: server_events(name, collected, origin, claimed) for name in sorted(collected.lines)}
    folder = new_session_dir(out, origin / 1e9)
    entries, names = [], set()
    for name, events in servers.items():
        file = safe_name(name)
        while file in names:
            file += "_"
        names.add(file)
        known, unknown = _known(sources, events)
        head = header(name, _transport(events), origin, collected.cwd, known, unknown)
        last = events[-1]["t"] if events else 0.0
        end: EndEvent = {"t": last, "kind": "end", "written": len(events) + 2, "ended": "imported"}
        text = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in [head, *events, end])
        write_private(folder / f"{file}.jsonl", text)
        entries.append(
            {
                "name": name,
                "scope": "imported",
                "transport": head["transport"],
                "recording": f"{file}.jsonl",
                "recordings": [f"{file}.jsonl"],
                "messages": 0,
                "observed": len(events),
                "complete": True,
                "missing_variables": [],
                "limits": {},
            }
        )
    manifest = {
        "kind": "wiretap-session",
        "format": 1,
        "client": "claude",
        "client_argv": [],
        "cwd": redact_text(collected.cwd)[0] if collected.cwd else None,
        "started": utc_iso_ms(origin / 1e9),
        "client_started": 0.0,
        "limits_env": {},
        "running": False,
        "servers": entries,
        "not_wrapped": [],
        "imported": {
            "from": FROM,
            "session_id": sources.session,
            "files": [redact_text(str(f))[0] for f in sources.files],
            "imported_at": utc_iso_ms(time.time()),
            "clock": CLOCK,
            "known": sorted({k for s in servers.values() for k in _known(sources, s)[0]}),
            "unknown": list(UNKNOWN),
        },
    }
    write_private(folder / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return Imported(folder, sources.session, servers)
