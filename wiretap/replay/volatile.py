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
        replaced by a placeholder. Below ``MAX_DEPTH`` levels a value is kept as it is."""
        if depth > MAX_DEPTH:
            return value
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if self.ignores(key):
                    continue
                kept = self.normalize(item, depth + 1)
                if kept == {} and item != {}:  # only volatile inside (a ``_meta`` with a progress token)
                    continue
                out[key] = kept
            return out
        if isinstance(value, list):
            return [self.normalize(v, depth + 1) for v in value]
        if self.timestamps and isinstance(value, str) and TIMESTAMP.match(value):
            return TIMESTAMP_PLACEHOLDER
        return value


NOTHING_VOLATILE = Volatile(keys=frozenset(), timestamps=False)
