"""Small recordings and session folders with known behaviour, for ``diff`` and ``compare``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from wiretap.recording.events import Header

Events = list[dict[str, Any]]
CAPS = {"roots": {}, "elicitation": {}}
INFO = {"name": "claude-code", "version": "2.1.197"}


def wiretap(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wiretap", *args], capture_output=True, text=True, timeout=60)


def write(path: Path, events: Events, *, transport: str = "stdio", name: str = "scenario") -> Path:
    header = Header(transport=transport, name=name, argv=[], extra={"monotonic_origin": 0.0}).to_dict()
    path.write_text("".join(json.dumps(e) + "\n" for e in [header, *events]))
    return path


def msg(t: float, direction: str, body: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"t": t, "kind": "message", "dir": direction, **extra, "msg": {"jsonrpc": "2.0", **body}}


def stdio_run(
    *,
    version: str = "2025-11-25",
    caps: dict[str, Any] | None = None,
    info: dict[str, Any] | None = None,
    list_order: tuple[str, ...] = ("prompts/list", "resources/list", "tools/list"),
    shutdown: tuple[tuple[float, dict[str, Any]], ...] = (),
) -> Events:
    """A legacy client: initialize, three list requests in flight together, a tool call, then its shutdown."""
    params = {"protocolVersion": version, "capabilities": CAPS if caps is None else caps, "clientInfo": info or INFO}
    events = [
        {"t": 0.001, "kind": "spawn", "argv": ["server"], "pid": 10},
        msg(0.01, "c2s", {"id": 0, "method": "initialize", "params": params}),
        msg(0.02, "s2c", {"id": 0, "result": {"protocolVersion": version, "capabilities": {"tools": {}}}}),
        msg(0.03, "c2s", {"method": "notifications/initialized"}),
    ]
    for n, method in enumerate(list_order, 1):
        events.append(msg(0.04 + n / 1000, "c2s", {"id": n, "method": method}))
    for n, method in enumerate(sorted(list_order), 1):
        key = method.split("/")[0]
        events.append(msg(0.05 + n / 1000, "s2c", {"id": list_order.index(method) + 1, "result": {key: []}}))
    events += [
        msg(1.0, "c2s", {"id": 4, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1}}}),
        msg(1.01, "s2c", {"id": 4, "result": {"content": [{"type": "text", "text": "2"}]}}),
    ]
    default = (
        (2.0, {"kind": "signal", "signal": "SIGINT", "signum": 2, "forwarded": True}),
        (2.004, {"kind": "eof", "dir": "s2c"}),
        (2.005, {"kind": "exit", "status": 130, "signal": "SIGINT", "signum": 2}),
    )
    events += [{"t": t, **e} for t, e in (shutdown or default)]
    events.append({"t": 2.01, "kind": "end", "written": len(events), "lost": 0})
    return events


def http_run(order: tuple[str, ...], *, delete: bool = True, version_header: bool = True) -> Events:
    """A session over Streamable HTTP: a GET stream, parallel POSTs in ``order``, DELETE at the end."""
    events: Events = []
    answers: Events = []
    ex = 0

    def post(t: float, body: dict[str, Any], result: dict[str, Any]) -> None:
        nonlocal ex
        ex += 1
        headers = {"content-type": "application/json", "mcp-session-id": "S"}
        if version_header:
            headers["mcp-protocol-version"] = "2025-06-18"
        events.append(
            {"t": t, "kind": "http_request", "ex": ex, "conn": 1, "method": "POST", "path": "/mcp", "headers": headers}
        )
        events.append(msg(t, "c2s", body, ex=ex))
        answers.append(msg(t + 0.2, "s2c", {"id": body["id"], "result": result}, ex=ex))

    events.append({"t": 0.0, "kind": "connection", "conn": 1, "state": "open"})
    params = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "codex", "version": "0.171.0"},
    }
    post(0.01, {"id": 0, "method": "initialize", "params": params}, {"protocolVersion": "2025-06-18"})
    events.append(answers.pop())
    events.append({"t": 0.3, "kind": "http_request", "ex": 99, "method": "GET", "path": "/mcp", "headers": {}})
    for n, method in enumerate(order, 1):
        post(0.4 + n / 100, {"id": n, "method": method}, {})
    events += answers
    if delete:
        events.append(
            {
                "t": 1.0,
                "kind": "http_request",
                "ex": 100,
                "method": "DELETE",
                "path": "/mcp",
                "headers": {"mcp-session-id": "S"},
            }
        )
    events.append({"t": 1.1, "kind": "connection", "conn": 1, "state": "closed"})
    events.append({"t": 1.2, "kind": "end", "written": len(events), "lost": 0})
    return events


def session(folder: Path, servers: dict[str, Events], exited: float = 100.0) -> Path:
    folder.mkdir(parents=True)
    entries = []
    for name, events in servers.items():
        write(folder / f"{name}.jsonl", events, name=name)
        messages = sum(e["kind"] == "message" for e in events)
        entries.append({"name": name, "transport": "stdio", "recording": f"{name}.jsonl", "messages": messages})
    manifest = {"kind": "wiretap-session", "format": 1, "client": "Claude Code", "servers": entries}
    (folder / "manifest.json").write_text(json.dumps({**manifest, "client_exited_monotonic": exited}))
    return folder
