"""The Claude Code transcript a session belongs to: ``$CLAUDE_CONFIG_DIR/projects/<slug>/<session>.jsonl``,
found by a ``claudecode/toolUseId`` the session's recordings carry. Read-only, and only searched for the
id's bytes: the transcript's content is never parsed or kept."""

from __future__ import annotations

import json
import mmap
from collections.abc import Iterable, Mapping
from pathlib import Path

from wiretap.wrap.clients.claude_code import config_home

TOOL_USE_META = "claudecode/toolUseId"
MAX_IDS = 50


def tool_use_ids(recordings: Iterable[Path]) -> list[str]:
    """The toolUseIds of the recordings' requests, in order, at most ``MAX_IDS``."""
    found: list[str] = []
    needle = TOOL_USE_META.encode()
    for recording in recordings:
        try:
            lines = recording.open("rb")
        except OSError:
            continue
        with lines:
            for line in lines:
                if needle not in line:
                    continue
                found += [i for i in _ids_in(line) if i not in found]
                if len(found) >= MAX_IDS:
                    return found[:MAX_IDS]
    return found


def _ids_in(line: bytes) -> list[str]:
    try:
        event = json.loads(line)
    except ValueError:
        return []
    messages = event.get("msg") if isinstance(event, dict) else None
    ids = []
    for msg in messages if isinstance(messages, list) else [messages]:
        params = msg.get("params") if isinstance(msg, dict) else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        value = meta.get(TOOL_USE_META) if isinstance(meta, dict) else None
        if isinstance(value, str) and value:
            ids.append(value)
    return ids


def find_transcript(env: Mapping[str, str], ids: list[str], since: float) -> Path | None:
    """The newest transcript written since ``since`` (Unix seconds) that holds one of ``ids``."""
    if not ids:
        return None
    projects = config_home(env)[1] / "projects"
    try:
        candidates = [p for p in projects.glob("*/*.jsonl") if p.stat().st_mtime >= since]
    except OSError:
        return None
    needles = [json.dumps(i).encode() for i in ids]
    for path in sorted(candidates, key=lambda p: p.stat().st_mtime, reverse=True):
        if _holds(path, needles):
            return path
    return None


def _holds(path: Path, needles: list[bytes]) -> bool:
    try:
        with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return any(data.find(needle) >= 0 for needle in needles)
    except (OSError, ValueError):  # (an empty file cannot be mapped)
        return False
