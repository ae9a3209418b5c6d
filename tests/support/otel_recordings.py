"""Small recordings written for the OTel tests, and spans read back by name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wiretap.otel.spans import Span

ORIGIN_NS = 1_790_000_000_123_456_789


def by_name(spans: list[Span], name: str) -> list[Span]:
    return [s for s in spans if s.name == name]


def write_recording(path: Path, events: list[dict[str, Any]], **header: Any) -> Path:
    head = {
        "kind": "header",
        "format": 1,
        "started": "2026-09-21T12:00:00.123Z",
        "transport": "stdio",
        "name": "synthetic",
    }
    lines = [json.dumps({**head, **header})] + [json.dumps(e) for e in events]
    path.write_text("\n".join(lines) + "\n")
    return path


def call(t: float, direction: str, msg: dict[str, Any]) -> dict[str, Any]:
    return {"t": t, "kind": "message", "dir": direction, "size": 1, "msg": {"jsonrpc": "2.0", **msg}}
