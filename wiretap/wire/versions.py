"""MCP protocol version strings, parsed: the published revisions, ``DRAFT-YYYY-vN`` pre-releases, other
dates, and strings that are none of these.

Versions are ordered and given an era by what they are, never by comparing strings (``"DRAFT-2026-v1"``
sorts after ``"2026-07-28"`` as text, and ``"1.0"`` before ``"2024-11-05"``).

A pre-release ``DRAFT-YYYY-vN`` is the draft of the next revision after the latest one dated before
year YYYY: ``DRAFT-2026-v1`` (the TypeScript SDK's ``LATEST_PROTOCOL_VERSION`` while 2026-07-28 was a
draft) precedes 2026-07-28, the first revision dated 2026. A draft for a year after every known
revision precedes a revision not known yet, and is modern.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from enum import StrEnum

__all__ = ["FIRST_MODERN", "REVISIONS", "Era", "Kind", "ProtocolVersion", "era_of", "parse_version"]

REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
"""The published MCP revisions, oldest first."""
FIRST_MODERN = "2026-07-28"
"""The first revision without ``initialize``: version, identity and capabilities travel on every request."""

_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_DRAFT = re.compile(r"DRAFT-(\d{4})-v(\d+)")


class Era(StrEnum):
    LEGACY = "legacy"
    """An ``initialize`` handshake opens a session (2025-11-25 and earlier)."""
    MODERN = "modern"
    """Per-request metadata, no session (2026-07-28 and later)."""
    UNKNOWN = "unknown"


class Kind(StrEnum):
    REVISION = "revision"
    """A published revision."""
    PRE_RELEASE = "pre-release"
    """``DRAFT-YYYY-vN``."""
    DATED = "dated"
    """A date that is no published revision."""
    UNKNOWN = "unknown"
    """Neither a date nor a draft name."""


@dataclass(frozen=True, slots=True)
class ProtocolVersion:
    text: str
    kind: Kind
    era: Era
    precedes: str | None = None
    """For a pre-release: the revision it is the draft of (None: one not known yet)."""
    order: tuple[date, int, int] | None = None
    """Sort key: (date, 0 for a pre-release and 1 otherwise, draft number); None for an unknown string."""

    @property
    def known(self) -> bool:
        return self.kind is Kind.REVISION

    @property
    def modern(self) -> bool:
        return self.era is Era.MODERN

    def describe(self) -> str:
        if self.kind is Kind.PRE_RELEASE:
            return f"{self.text} (a pre-release of {self.precedes or f'a revision after {REVISIONS[-1]}'})"
        if self.kind is Kind.DATED:
            return f"{self.text} (a date that is no published revision)"
        if self.kind is Kind.UNKNOWN:
            return f"{self.text} (not a protocol version wiretap knows)"
        return self.text


def era_of(day: date) -> Era:
    return Era.MODERN if day >= _FIRST_MODERN_DAY else Era.LEGACY


def _day(text: str) -> date | None:
    found = _DATE.fullmatch(text)
    if found is None:
        return None
    try:
        return date(int(found[1]), int(found[2]), int(found[3]))
    except ValueError:
        return None


_FIRST_MODERN_DAY = date.fromisoformat(FIRST_MODERN)
_REVISION_DAYS = {revision: date.fromisoformat(revision) for revision in REVISIONS}


def _draft(text: str, year: int, number: int) -> ProtocolVersion:
    precedes = next((r for r, day in _REVISION_DAYS.items() if day.year >= year), None)
    if precedes is None:
        latest = _REVISION_DAYS[REVISIONS[-1]]
        return ProtocolVersion(text, Kind.PRE_RELEASE, era_of(latest), None, (date(year, 1, 1), 0, number))
    day = _REVISION_DAYS[precedes]
    return ProtocolVersion(text, Kind.PRE_RELEASE, era_of(day), precedes, (day, 0, number))


def parse_version(text: str) -> ProtocolVersion:
    """What a protocol version string is, exactly as written (case and all)."""
    day = _day(text)
    if day is not None:
        kind = Kind.REVISION if text in _REVISION_DAYS else Kind.DATED
        return ProtocolVersion(text, kind, era_of(day), order=(day, 1, 0))
    draft = _DRAFT.fullmatch(text)
    if draft is not None and int(draft[1]) >= 1:
        return _draft(text, int(draft[1]), int(draft[2]))
    return ProtocolVersion(text, Kind.UNKNOWN, Era.UNKNOWN)
