"""Brings events from older recording formats up to the current one, step by step.

``CONVERTERS[n]`` turns a format-n event (the header included) into a format-(n+1) event. Format 1
is the first, so the table is empty; a reader always goes through ``migrate()`` so that the first
converter lands in one place.
"""

from __future__ import annotations

from collections.abc import Callable

from wiretap.errors import BadInput
from wiretap.recording.events import FORMAT_VERSION, Event

CONVERTERS: dict[int, Callable[[Event], Event]] = {}


class UnsupportedFormat(BadInput):
    pass


def check_format(version: object) -> int:
    if not isinstance(version, int) or version < 1:
        raise UnsupportedFormat(f"unknown recording format {version!r}")
    if version > FORMAT_VERSION:
        raise UnsupportedFormat(
            f"recording format {version} is newer than this wiretap reads ({FORMAT_VERSION}); upgrade wiretap"
        )
    return version


def migrate(event: Event, version: int) -> Event:
    while version < FORMAT_VERSION:
        event = CONVERTERS[version](event)
        version += 1
    return event
