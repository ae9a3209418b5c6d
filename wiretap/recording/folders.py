"""Reading session folders (``wiretap -- CLIENT``): the manifest, its recordings, recent sessions."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from wiretap.errors import BadInput, Unavailable

DEFAULT_DIR = Path("wiretap-sessions")
MANIFEST = "manifest.json"


class NotASession(BadInput):
    pass


@dataclass
class SessionFolder:
    path: Path
    manifest: dict[str, Any]

    @property
    def recordings(self) -> list[tuple[dict[str, Any], Path]]:
        return [
            (server, self.path / name)
            for server in self.manifest.get("servers", [])
            for name in server.get("recordings") or self._expected(server)
        ]

    def _expected(self, server: dict[str, Any]) -> list[str]:
        """A finished session's server without recordings was never started: nothing to read."""
        return [] if self.manifest.get("running") is False and "recordings" in server else [server["recording"]]

    def recordings_of(self, server: str | None = None) -> list[tuple[dict[str, Any], Path]]:
        """The recordings to read (one server's with ``server``); a clear error when there are none."""
        names = [str(info.get("name")) for info in self.manifest.get("servers", [])]
        if server is not None and server not in names:
            raise BadInput(f"{self.path}: no server {server!r} in this session (it has: {', '.join(names) or 'none'})")
        chosen = [(info, file) for info, file in self.recordings if server in (None, info.get("name"))]
        if not chosen:
            reasons = "; ".join(self.manifest.get("not_wrapped") or []) or "the client had no MCP servers"
            raise BadInput(f"{self.path}: this session has no recordings ({reasons})")
        return chosen

    @property
    def client_started_monotonic(self) -> float | None:
        """When the client started, on the machine's monotonic clock: t = 0 of the session's timeline."""
        m = self.manifest
        if isinstance(m.get("client_started_monotonic"), int | float):
            return float(m["client_started_monotonic"])
        started, after = m.get("started_monotonic"), m.get("client_started")
        if not isinstance(started, int | float):
            return None
        if isinstance(after, int | float):
            return float(started + after)
        return None if m.get("running") else float(started)  # the client never started

    def clock_offset(self, header: dict[str, Any]) -> float:
        """What to add to a recording's ``t`` to put it on the session's clock (0 = the client's start).

        Recordings share the machine's monotonic clock (``monotonic_origin``); without it, the wall-clock
        start times (millisecond resolution) are the fallback."""
        origin, start = header.get("monotonic_origin"), self.client_started_monotonic
        if isinstance(origin, int | float) and start is not None:
            return float(origin) - start
        recorded, session = _epoch(header.get("started")), _epoch(self.manifest.get("started"))
        after = self.manifest.get("client_started", 0.0)
        if recorded is None or session is None or not isinstance(after, int | float):
            return 0.0
        return recorded - (session + after)

    @property
    def started_at(self) -> float | None:
        """When the session started, on the wall clock (seconds since the epoch); None if not recorded."""
        return _epoch(self.manifest.get("started"))

    @property
    def client_exited_monotonic(self) -> float | None:
        value = self.manifest.get("client_exited_monotonic")
        return float(value) if isinstance(value, int | float) else None

    def describe(self) -> str:
        m = self.manifest
        exit_ = m.get("exit") or {}
        status = "running" if m.get("running") else exit_.get("signal") or f"exit {exit_.get('code', '?')}"
        servers = (
            ", ".join(f"{s['name']} ({s.get('messages', '?')} msgs)" for s in m.get("servers", [])) or "no servers"
        )
        info = m.get("client_info") or {}
        client = f"{info.get('name', '?')} {info.get('version', '')}".strip() if info else m.get("client", "?")
        argv = " ".join(m.get("client_argv", []))[:60]
        return f"{self.path}  {m.get('started', '?')}  {client}  {argv}  [{status}]  {servers}"


def _epoch(stamp: object) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def is_session(path: Path) -> bool:
    return path.is_dir() and (path / MANIFEST).is_file()


def open_session(path: Path) -> SessionFolder:
    if not path.is_dir():
        raise NotASession(f"{path}: not a session folder")
    try:
        manifest = json.loads((path / MANIFEST).read_text())
    except FileNotFoundError:
        raise NotASession(f"{path}: not a wiretap session (no {MANIFEST})") from None
    except OSError as exc:
        raise Unavailable(f"{path / MANIFEST}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise NotASession(f"{path / MANIFEST}: not JSON: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("kind") != "wiretap-session":
        raise NotASession(f"{path / MANIFEST}: not a wiretap session manifest")
    servers = manifest.get("servers", [])
    if not isinstance(servers, list) or not all(_server_entry_ok(s) for s in servers):
        raise NotASession(f"{path / MANIFEST}: 'servers' must list entries with a name and a recording")
    return SessionFolder(path, manifest)


def _server_entry_ok(entry: object) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        return False
    files = entry.get("recordings") or [entry.get("recording")]
    return isinstance(files, list) and all(isinstance(f, str) and f and "/" not in f for f in files)


def one_recording(path: Path) -> Path:
    """A path that must name one recording; a folder gets an error saying what to give instead."""
    if not path.is_dir():
        return path
    if not is_session(path):
        raise BadInput(f"{path}: a folder, not a recording")
    files = ", ".join(str(file) for _, file in open_session(path).recordings) or "none"
    raise BadInput(f"{path}: a session folder; name one of its recordings ({files})")


def recent_sessions(root: Path = DEFAULT_DIR, limit: int = 20) -> list[SessionFolder]:
    if not root.is_dir():
        return []
    found = []
    for folder in sorted(root.iterdir(), reverse=True):
        if is_session(folder):
            try:
                found.append(open_session(folder))
            except (NotASession, Unavailable):
                continue
        if len(found) >= limit:
            break
    return found


def recordings_of(first: Path) -> list[Path]:
    """A server's recordings: a client that starts it again gets NAME.1.jsonl, NAME.2.jsonl…"""
    found = [first] if first.exists() else []
    n = 1
    while (following := first.with_name(f"{first.stem}.{n}{first.suffix}")).exists():
        found.append(following)
        n += 1
    return found
