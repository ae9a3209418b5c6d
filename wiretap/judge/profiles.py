"""Profiles of a recording or of each recording in a session folder, keyed by server name."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wiretap.analysis.profile import Profile, profile_of
from wiretap.analysis.report import build_report
from wiretap.recording.folders import open_session


@dataclass(frozen=True)
class Source:
    path: Path
    profiles: dict[str, Profile]
    """By server name; a server the client started again is NAME#2, NAME#3…"""
    manifest: dict[str, Any] | None = None

    @property
    def client(self) -> str:
        """The client as its handshake names it: ``codex-mcp-client 0.171.0``."""
        for profile in self.profiles.values():
            if profile.handshake.client_name:
                return f"{profile.handshake.client_name} {profile.handshake.client_version or '?'}".strip()
        if self.manifest and self.manifest.get("client"):
            return str(self.manifest["client"])
        return self.path.name


def load(path: Path) -> Source:
    """Raises NotASession, NotARecording, UnsupportedFormat, OSError."""
    if path.is_dir():
        session = open_session(path)
        exited = session.client_exited_monotonic
        profiles: dict[str, Profile] = {}
        for server, file in session.recordings:
            name = str(server.get("name"))
            key, n = name, 1
            while key in profiles:
                n += 1
                key = f"{name}#{n}"
            profiles[key] = profile_recording(file, client_exited_monotonic=exited)
        return Source(path, profiles, session.manifest)
    if not path.exists():
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path))
    profile = profile_recording(path)
    return Source(path, {profile.name: profile})


def profile_recording(path: Path, *, client_exited_monotonic: float | None = None) -> Profile:
    """One recording's profile, from the report's single pass over it. Raises NotARecording / OSError."""
    return profile_of(build_report(path, client_exited_monotonic=client_exited_monotonic, behaviour=True))
