"""Recordings and expectation files of known truth for ``wiretap check`` and the CI outputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support import paths
from wiretap.recording.events import Header
from wiretap.recording.writer import encode_event

REPO = paths.REPO

DEMO = REPO / "recordings" / "demo.jsonl"

EXT = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}


def task_recording(
    path: Path, poll_times: list[float], *, asked_ms: int = 3000, cancel: bool = False, client: str | None = None
) -> Path:
    """A client polling one 2026-07-28 extension task at ``poll_times``, then closing stdin; ``client``: the
    name it gives in its ``clientInfo``, none by default."""
    events: list[dict[str, Any]] = []

    def msg(t: float, direction: str, body: dict[str, Any]) -> None:
        events.append({"t": t, "kind": "message", "dir": direction, "msg": {"jsonrpc": "2.0", **body}})

    meta = {**EXT, **({"io.modelcontextprotocol/clientInfo": {"name": client, "version": "1.0.0"}} if client else {})}
    msg(0.1, "c2s", {"id": 1, "method": "tools/call", "params": {"name": "build", "_meta": meta}})
    msg(
        0.2,
        "s2c",
        {"id": 1, "result": {"resultType": "task", "taskId": "T", "status": "working", "pollIntervalMs": asked_ms}},
    )
    for n, t in enumerate(poll_times, 2):
        msg(t, "c2s", {"id": n, "method": "tasks/get", "params": {"taskId": "T"}})
        msg(t + 0.01, "s2c", {"id": n, "result": {"resultType": "complete", "taskId": "T", "status": "working"}})
    if cancel:
        msg(poll_times[-1] + 0.5, "c2s", {"id": 99, "method": "tasks/cancel", "params": {"taskId": "T"}})
    events.append({"t": poll_times[-1] + 1, "kind": "eof", "dir": "c2s"})
    header = Header(transport="stdio", name="t", argv=[]).to_dict()
    path.write_bytes(b"".join(encode_event(e)[0] for e in [header, *events]))
    return path


def expectations(path: Path, body: str) -> Path:
    path.write_text("version: 1\nexpect:\n" + body)
    return path
