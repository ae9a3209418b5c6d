"""The only folders ``wiretap mcp`` reads, and the paths a tool call may name inside them.

By default ``./wiretap-sessions`` and ``./wiretap-recordings`` of the server's working directory, and
every ``--root DIR``. A path is resolved (symlinks followed, ``..`` collapsed) before it is checked, so
neither a link nor a climb leads out; a relative path is tried against the working directory, then each
root (a session is named by its folder name alone).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from wiretap.errors import Unavailable
from wiretap.mcp.protocol import ToolError
from wiretap.recording.folders import DEFAULT_DIR as SESSIONS_DIR
from wiretap.recording.folders import NotASession, SessionFolder, is_session, open_session
from wiretap.recording.paths import DEFAULT_DIR as RECORDINGS_DIR

SEARCH_DEPTH = 3
"""How deep below a root loose recordings are looked for."""
_HEADER = re.compile(rb'^\s*\{.*"kind"\s*:\s*"header"')


class Roots:
    def __init__(self, cwd: Path, extra: Sequence[Path] = ()) -> None:
        self.cwd = cwd.resolve()
        given = [self.cwd / SESSIONS_DIR, self.cwd / RECORDINGS_DIR, *(self.cwd / p for p in extra)]
        self.folders = list(dict.fromkeys(p.resolve() for p in given))

    def describe(self) -> str:
        return ", ".join(self.shown(p) for p in self.folders)

    def shown(self, path: Path) -> str:
        """A path as results give it: relative to the working directory when under it."""
        return str(path.relative_to(self.cwd)) if path.is_relative_to(self.cwd) else str(path)

    def inside(self, path: Path) -> bool:
        return any(path.is_relative_to(folder) for folder in self.folders)

    def resolve(self, given: str) -> Path:
        """The real path ``given`` names inside a root; a ToolError if it leads out or names nothing."""
        if not given or "\0" in given:
            raise ToolError(f"{given!r} is not a path")
        path = Path(given)
        candidates = [path] if path.is_absolute() else [self.cwd / path, *(folder / path for folder in self.folders)]
        reals = [candidate.resolve() for candidate in candidates]
        existing = next((real for real in reals if real.exists()), None)
        if existing is not None and self.inside(existing):
            return existing
        if existing is not None or not any(self.inside(real) for real in reals):
            raise ToolError(f"{given}: outside the folders wiretap mcp reads ({self.describe()})")
        raise ToolError(f"{given}: no such session or recording in {self.describe()}")

    def sessions(self) -> list[SessionFolder]:
        """Every session folder in the roots (up to SEARCH_DEPTH below them), newest first."""
        found: dict[Path, SessionFolder] = {}
        for folder in self.folders:
            for path in self._scan(folder, sessions=True):
                with contextlib.suppress(NotASession, Unavailable):
                    found.setdefault(path, SessionFolder(path, open_session(path).manifest))
        return sorted(found.values(), key=lambda s: (str(s.manifest.get("started", "")), s.path.name), reverse=True)

    def loose_recordings(self) -> list[Path]:
        """Recording files in the roots that are not part of a session folder, by path."""
        return sorted({path for folder in self.folders for path in self._scan(folder, sessions=False)})

    def _scan(self, top: Path, *, sessions: bool) -> Iterator[Path]:
        """Session folders (or loose recordings) at or below ``top``, inside the roots; none below a session."""
        if top.is_file() and not sessions and _has_header(top):
            yield top
        if not top.is_dir():
            return
        for here, dirs, files in os.walk(top):
            if is_session(Path(here)):
                dirs[:] = []
                real = Path(here).resolve()
                if sessions and self.inside(real):
                    yield real
                continue
            depth = len(Path(here).relative_to(top).parts)
            dirs[:] = [] if depth >= SEARCH_DEPTH else sorted(dirs)
            for name in [] if sessions else files:
                real = Path(here, name).resolve()
                if name.endswith(".jsonl") and self.inside(real) and real.is_file() and _has_header(real):
                    yield real


def _has_header(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return _HEADER.search(file.readline(4096)) is not None
    except OSError:
        return False
