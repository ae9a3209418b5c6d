"""Which client a recording shows: the name and version from its handshake."""

from __future__ import annotations

from pathlib import Path

from wiretap.analysis.observe import Observer
from wiretap.recording.reader import NotARecording, open_recording

HANDSHAKE_EVENTS = 200
"""The handshake comes first: a long recording need not be read to its end."""


def client_identity(path: Path) -> dict[str, str] | None:
    """``{"name": ..., "version": ...}`` from a recording's handshake, or None when it shows none."""
    observer = Observer()
    try:
        with open_recording(path) as reader:
            for n, event in enumerate(reader.events()):
                observer.feed(event)
                if n >= HANDSHAKE_EVENTS:
                    break
    except (NotARecording, OSError, ValueError):
        return None
    handshake = observer.handshake()
    if not handshake.client_name:
        return None
    return {"name": str(handshake.client_name), "version": str(handshake.client_version or "")}
