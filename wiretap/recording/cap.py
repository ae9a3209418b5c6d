"""The recording's size cap (``--max-size``): how a size is written, and what is still stored past it.

The cap bounds the file, never the traffic: past it every byte still passes whole and unchanged, and
the recorder counts what it does not store (the ``end`` event's ``capped``). A recording holds at most
``max_size`` bytes of header and events, then one ``recording_cap`` error, then at most ``TAIL`` bytes of
lifecycle events (``LASTING``), then the ``end`` event.
"""

from __future__ import annotations

import re

from wiretap.errors import BadInput

DEFAULT_MAX_SIZE = 1 << 30
LASTING = frozenset({"spawn", "spawn_failed", "eof", "signal", "exit", "listen"})
"""Event kinds still stored past the cap: a few per recording, and what the exit analyses read."""
TAIL = 64 << 10
"""Bytes the ``recording_cap`` error and the lasting events may take past the cap, at most."""

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"(\d+)\s*([KMGT]?)(?:I?B)?", re.IGNORECASE)


def parse_size(text: str) -> int:
    """Bytes, from ``500K``, ``64M``, ``1G`` (binary units: K is 1024), a byte count, or ``unlimited``
    / ``0`` (no cap: 0). Raises BadInput naming the value."""
    value = text.strip()
    if value.lower() == "unlimited":
        return 0
    match = _SIZE.fullmatch(value)
    if match is None:
        raise BadInput(f"--max-size {text!r}: not a size (say 500K, 64M, 1G, a number of bytes, or unlimited)")
    return int(match[1]) * _UNITS[match[2].upper()]


def format_size(size: int) -> str:
    """What ``parse_size`` reads back: ``1G``, ``64M``, ``1536K``, ``1000``; ``unlimited`` for 0."""
    if not size:
        return "unlimited"
    for unit in ("T", "G", "M", "K"):
        if size % _UNITS[unit] == 0:
            return f"{size // _UNITS[unit]}{unit}"
    return str(size)


def kind_of(line: bytes | bytearray) -> str | None:
    """The kind of an encoded event (``{"t":…,"kind":"…",…``: the first ``kind`` in it is its own)."""
    at = line.find(b'"kind":"')
    if at < 0:
        return None
    end = line.find(b'"', at + 8)
    return bytes(line[at + 8 : end]).decode("utf-8", errors="replace")
