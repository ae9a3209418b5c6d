"""What an A2A task's end says beyond its state: the reason a task was rejected (its status message) and
an artifact reporting failure inside a task whose state says it completed (``summary.json`` with
``"failed": 1``)."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

FAILURE_KEYS = ("failed", "failures", "errors")
"""A count under one of these keys above 0 means failure; so does ``ok``, ``success`` or ``passed`` false."""


def status_text(payload: dict[str, Any]) -> str:
    """The text parts of a task's status message, joined."""
    status = payload.get("status")
    message = status.get("message") if isinstance(status, dict) else None
    parts = message.get("parts") if isinstance(message, dict) else None
    return " ".join(p["text"] for p in parts or [] if isinstance(p, dict) and isinstance(p.get("text"), str))


def failing_artifact(payload: dict[str, Any]) -> tuple[str, str] | None:
    """(artifact name, what in it says failure) for the first artifact whose data reports failure."""
    artifacts = payload.get("artifacts")
    for artifact in artifacts if isinstance(artifacts, list) else []:
        if not isinstance(artifact, dict):
            continue
        name = str(artifact.get("name") or artifact.get("artifactId") or "artifact")
        for part in artifact.get("parts") or []:
            said = _failure(_data(part)) if isinstance(part, dict) else None
            if said is not None:
                return name, said
    return None


def _data(part: dict[str, Any]) -> Any:
    """A part's JSON: a data part, JSON text, or a JSON file (1.0 ``raw`` or 0.3 ``file.bytes``)."""
    if "data" in part:
        return part["data"]
    file = part.get("file")
    raw = part.get("raw") or (file.get("bytes") if isinstance(file, dict) else None)
    text = part.get("text")
    if isinstance(raw, str):
        try:
            text = base64.b64decode(raw, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return None
    if isinstance(text, str) and text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except ValueError:
            return None
    return None


def _failure(data: Any) -> str | None:
    if not isinstance(data, dict):
        return None
    for key in FAILURE_KEYS:
        value = data.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return f'"{key}": {value:g}'
    for key in ("ok", "success", "passed"):
        if data.get(key) is False:
            return f'"{key}": false'
    return None
