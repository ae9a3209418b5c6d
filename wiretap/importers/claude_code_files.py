"""Where Claude Code keeps its logs and transcripts, and which of them belong to one session.

The MCP logs live in its cache folder, one folder per working directory (``<root>/<slug>/``):
``~/.cache/claude-cli-nodejs`` on Linux (``$XDG_CACHE_HOME`` when set), ``~/Library/Caches/claude-cli-nodejs``
on macOS, ``%LOCALAPPDATA%\\claude-cli-nodejs\\Cache`` on Windows. Transcripts and debug logs live in its
config folder (``$CLAUDE_CONFIG_DIR``, else ``~/.claude``): ``projects/<slug>/<session>.jsonl`` and
``debug/<session>.txt``. The slug is the directory with every character but ASCII letters and digits
turned into ``-``.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from wiretap.errors import BadInput, Unavailable
from wiretap.render.progress import progress_bar

CACHE_APP = "claude-cli-nodejs"
MCP_LOGS = "mcp-logs-"
SLUG_MAX = 200
"""Claude Code cuts a longer slug to this and adds a hash of the whole path."""
MANY = 20
"""From this many log files on, reading them shows a progress bar (on a terminal)."""


def slug(path: str) -> str:
    return re.sub(r"[^a-zA-Z0-9]", "-", path)


def cache_root(env: Mapping[str, str], platform: str = sys.platform) -> Path:
    home = Path(env.get("HOME") or Path.home())
    if platform == "darwin":
        return home / "Library" / "Caches" / CACHE_APP
    if platform == "win32":
        return Path(env.get("LOCALAPPDATA") or home / "AppData" / "Local") / CACHE_APP / "Cache"
    return Path(env.get("XDG_CACHE_HOME") or home / ".cache") / CACHE_APP


def config_dir(env: Mapping[str, str]) -> Path:
    return Path(env.get("CLAUDE_CONFIG_DIR") or Path(env.get("HOME") or Path.home()) / ".claude")


def project_folder(root: Path, cwd: str) -> Path:
    """``root/<slug of cwd>``; for a path whose slug Claude Code cut short, the one folder that starts so."""
    name = slug(cwd)
    if len(name) <= SLUG_MAX:
        return root / name
    found = sorted(root.glob(f"{name[:SLUG_MAX]}-*")) if root.is_dir() else []
    return found[0] if len(found) == 1 else root / name


@dataclass
class Sources:
    """The files of one Claude Code session."""

    session: str
    mcp_logs: dict[str, list[Path]] = field(default_factory=dict)
    """Per log folder (``mcp-logs-<server slug>``, without the prefix): the session's files, oldest first."""
    debug: Path | None = None
    transcript: Path | None = None

    @property
    def files(self) -> list[Path]:
        logs = [f for files in self.mcp_logs.values() for f in files]
        return [*logs, *(f for f in (self.debug, self.transcript) if f is not None)]


def _first_session(path: Path) -> str | None:
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and isinstance(record.get("sessionId"), str):
                    return str(record["sessionId"])
    except OSError as exc:
        raise Unavailable(f"{path}: {exc.strerror or exc}") from None
    return None


def _quiet(_name: str) -> None:
    pass


def log_files(cache: Path) -> list[Path]:
    """Every MCP log in a project's cache folder, oldest first (their names are their UTC start times)."""
    try:
        folders = [p for p in cache.iterdir() if p.is_dir() and p.name.startswith(MCP_LOGS)]
    except OSError as exc:
        raise Unavailable(f"{cache}: {exc.strerror or exc}") from None
    files = []
    for folder in folders:
        try:
            files += [f for f in folder.iterdir() if f.suffix == ".jsonl" and f.is_file()]
        except OSError as exc:
            raise Unavailable(f"{folder}: {exc.strerror or exc}") from None
    return sorted(files, key=lambda f: (f.name, f.parent.name))


def sessions_in(cache: Path) -> dict[str, list[Path]]:
    """The MCP logs of a cache folder by the session that wrote them, in the order the sessions started
    (with a progress bar on a terminal when there are many)."""
    found: dict[str, list[Path]] = {}
    files = log_files(cache)
    bar = progress_bar(len(files), "reading Claude Code's logs") if len(files) >= MANY else nullcontext(_quiet)
    with bar as advance:
        for file in files:
            advance(file.name)
            session = _first_session(file)
            if session is not None:
                found.setdefault(session, []).append(file)
    return found


def locate(
    path: Path | None,
    *,
    session: str | None,
    cwd: Path,
    env: Mapping[str, str],
    platform: str = sys.platform,
) -> Sources:
    """The files of one session: the newest, or ``session``. ``path`` is a project's cache folder, one of
    its ``mcp-logs-*`` folders, or a transcript; without it, where Claude Code keeps them for ``cwd``."""
    config = config_dir(env)
    if path is None:
        cache = project_folder(cache_root(env, platform), str(cwd))
        transcripts = project_folder(config / "projects", str(cwd))
    elif not path.exists():
        raise Unavailable(f"{path}: no such file or folder")
    elif path.is_file():
        session = session or path.stem
        transcripts, config = path.parent, path.parent.parent.parent
        cache = cache_root(env, platform) / path.parent.name
    else:
        cache = path.parent if path.name.startswith(MCP_LOGS) else path
        transcripts = config / "projects" / cache.name
    by_session = sessions_in(cache) if cache.is_dir() else {}
    if session is None:
        if not by_session:
            raise BadInput(f"{cache}: no Claude Code MCP logs here ({MCP_LOGS}<server>/<time>.jsonl)")
        session = list(by_session)[-1]
    found = Sources(session)
    for file in by_session.get(session, []):
        found.mcp_logs.setdefault(file.parent.name.removeprefix(MCP_LOGS), []).append(file)
    transcript = transcripts / f"{session}.jsonl"
    found.transcript = transcript if transcript.is_file() else None
    debug = config / "debug" / f"{session}.txt"
    found.debug = debug if debug.is_file() else None
    if not found.mcp_logs and found.debug is None:
        where = cache if by_session or path is None or path.is_dir() else path
        raise BadInput(f"{where}: no Claude Code MCP logs of session {session} (nor a debug log in {config / 'debug'})")
    return found


def readable(path: Path) -> list[str]:
    """The lines of one source file; an error naming it when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise Unavailable(f"{path}: {exc.strerror or exc}") from None


def real_name(folder: str, names: set[str]) -> str:
    """The server's name for its log folder: the one Claude Code logged that makes that folder name."""
    return next((name for name in sorted(names) if slug(name) == folder), folder)
