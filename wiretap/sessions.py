"""Reading session folders (``wiretap -- CLIENT``): the manifest, its recordings, recent sessions."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wiretap.session import DEFAULT_DIR, MANIFEST


class NotASession(ValueError):
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
            for name in server.get("recordings") or [server["recording"]]
        ]

    @property
    def client_exited_monotonic(self) -> float | None:
        value = self.manifest.get("client_exited_monotonic")
        return float(value) if isinstance(value, int | float) else None

    def describe(self) -> str:
        m = self.manifest
        exit_ = m.get("exit") or {}
        status = "running" if m.get("running") else exit_.get("signal") or f"exit {exit_.get('code', '?')}"
        servers = ", ".join(f"{s['name']} ({s['messages']} msgs)" for s in m.get("servers", [])) or "no servers"
        info = m.get("client_info") or {}
        client = f"{info.get('name', '?')} {info.get('version', '')}".strip() if info else m.get("client", "?")
        argv = " ".join(m.get("client_argv", []))[:60]
        return f"{self.path}  {m.get('started', '?')}  {client}  {argv}  [{status}]  {servers}"


def is_session(path: Path) -> bool:
    return path.is_dir() and (path / MANIFEST).is_file()


def open_session(path: Path) -> SessionFolder:
    try:
        manifest = json.loads((path / MANIFEST).read_text())
    except FileNotFoundError:
        raise NotASession(f"{path}: not a wiretap session (no {MANIFEST})") from None
    except (OSError, ValueError) as exc:
        raise NotASession(f"{path}/{MANIFEST}: cannot read it: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("kind") != "wiretap-session":
        raise NotASession(f"{path}/{MANIFEST}: not a wiretap session manifest")
    return SessionFolder(path, manifest)


def recent_sessions(root: Path = DEFAULT_DIR, limit: int = 20) -> list[SessionFolder]:
    if not root.is_dir():
        return []
    found = []
    for folder in sorted(root.iterdir(), reverse=True):
        if is_session(folder):
            try:
                found.append(open_session(folder))
            except NotASession:
                continue
        if len(found) >= limit:
            break
    return found
