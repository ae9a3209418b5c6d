"""What changes from run to run and so never counts when requests are matched or responses compared."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

DEFAULT_VOLATILE_KEYS = frozenset(
    {
        # Per-connection tokens and request ids (JSON-RPC ids themselves are never compared).
        "progressToken",
        "requestId",
        # Who the client is: a new client version must still match.
        "clientInfo",
        "io.modelcontextprotocol/clientInfo",
        # Sessions and client-made message ids.
        "sessionId",
        "messageId",
        "message_id",
        # Timestamps.
        "createdAt",
        "lastUpdatedAt",
        "updatedAt",
        "timestamp",
    }
)
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
"""An ISO 8601 date and time, wherever it appears, is a timestamp."""
TIMESTAMP_PLACEHOLDER = "<timestamp>"
_DATE_TIME = re.compile(rb"-\d\d-\d\d[T ]\d\d:\d\d")
"""What any timestamp's JSON text holds (to know cheaply that a text holds none)."""
MAX_DEPTH = 100
"""How deep normalizing goes (a recorded message may nest deeper than recursion allows)."""


@dataclass(frozen=True)
class Volatile:
    """The keys whose values are ignored (wherever they are nested), and whether timestamps are."""

    keys: frozenset[str] = DEFAULT_VOLATILE_KEYS
    timestamps: bool = True
    extra: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def with_extra(cls, keys: Iterable[str]) -> Volatile:
        return cls(extra=frozenset(keys))

    def leaves_alone(self, line: bytes, names: tuple[bytes, ...] | None = None) -> bool:
        """Whether ``normalize`` surely changes nothing in the JSON text ``line``: no volatile key's name
        and nothing like a timestamp is in it (nor a ``\\u`` escape that could spell one). Cheaper than
        normalizing; False when unsure. ``names``: those of ``self.names`` that may be in the line (all
        of them unless it is known that the others are not)."""
        if not line:
            return False
        for name in self.names if names is None else names:
            if name in line:
                return False
        # (A timestamp's digits may be any Unicode digits: a line with other than ASCII is not looked into.)
        return not (self.timestamps and b"-" in line and (not line.isascii() or _DATE_TIME.search(line)))

    @cached_property
    def names(self) -> tuple[bytes, ...]:
        """What ``leaves_alone`` looks for."""
        # A name with a "/" may be written with "\/": its part after the last "/" is looked for; a
        # name ending in "/" leaves nothing to look for, and an empty name is in every line.
        return (b"\\u", *sorted({key.rsplit("/", 1)[-1].encode() for key in self.keys | self.extra}))

    def ignores(self, key: str) -> bool:
        return key in self.keys or key in self.extra

    def normalize(self, value: Any, depth: int = 0) -> Any:
        """``value`` without volatile keys (and objects left empty by that), and with every timestamp
        replaced by a placeholder. Below ``MAX_DEPTH`` levels a value is kept as it is. What has nothing
        volatile in it is returned as it is, not copied (a replay holds every recorded request)."""
        if isinstance(value, dict):
            return self._object(value, depth) if depth <= MAX_DEPTH else value
        if isinstance(value, list):
            if depth > MAX_DEPTH:
                return value
            items = [self.normalize(v, depth + 1) for v in value]
            return value if all(a is b for a, b in zip(items, value, strict=True)) else items
        return self._text(value) if isinstance(value, str) else value

    def _object(self, value: dict[str, Any], depth: int) -> dict[str, Any]:
        out = {}
        changed = False
        for key, item in value.items():
            if key in self.keys or key in self.extra:
                changed = True
                continue
            if isinstance(item, dict | list):
                kept = self.normalize(item, depth + 1)
                if isinstance(item, dict) and item and not kept:  # only volatile inside (``_meta`` with a token)
                    changed = True
                    continue
            else:
                kept = self._text(item) if isinstance(item, str) else item
            changed = changed or kept is not item
            out[key] = kept
        return out if changed else value

    def _text(self, value: str) -> str:
        # The cheap test first: most strings are not 16+ characters with a dash after a 4-digit year.
        if self.timestamps and len(value) >= 16 and value[4] == "-" and TIMESTAMP.match(value):
            return TIMESTAMP_PLACEHOLDER
        return value


NOTHING_VOLATILE = Volatile(keys=frozenset(), timestamps=False)
