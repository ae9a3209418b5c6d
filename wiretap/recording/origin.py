"""Recording time (``t``, monotonic seconds since t = 0, the header's ``started``) on the wall clock: the one
origin every renderer and export that shows wall-clock times uses."""

from __future__ import annotations

from datetime import datetime

from wiretap.recording.events import Event, utc_iso_ms


def origin_ns(header: Event) -> int:
    """The wall clock at t = 0: the header's ``wall_origin_ns``, else (older recordings) its ``started``,
    which is only exact to the millisecond."""
    exact = header.get("wall_origin_ns")
    if isinstance(exact, int) and not isinstance(exact, bool):
        return exact
    started = header.get("started")
    if isinstance(started, str):
        try:
            moment = datetime.fromisoformat(started.replace("Z", "+00:00"))
        except ValueError:
            return 0
        return round(moment.timestamp() * 1000) * 1_000_000
    return 0


def utc_ms(ns: int) -> str:
    """Unix nanoseconds as UTC to the millisecond, as the header's ``started`` is written."""
    return utc_iso_ms(ns / 1e9)


def at(origin: int, t: float) -> int:
    """``t`` is recorded to the microsecond; rounding there first keeps float noise out of the nanoseconds."""
    return origin + round(t * 1_000_000) * 1000
