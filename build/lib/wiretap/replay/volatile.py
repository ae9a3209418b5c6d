"""What changes from run to run and so never counts when requests are matched or responses compared."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
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
