"""Keeping every tool result small enough for a model's context.

A result's JSON text (compact, UTF-8) is at most ``CAP`` bytes. Strings longer than a limit are clipped
and say their full length; lists come in pages (``offset``/``limit``, with ``total`` and ``next_offset``),
and a page holds fewer items than asked when more would not fit.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from wiretap.mcp.protocol import ToolError

CAP = 32 * 1024
"""Bytes of JSON text in one tool result."""
STRING_LIMIT = 1000
"""Characters of one string in a listed item; a message shown whole gets ``WHOLE_STRING_LIMIT``."""
WHOLE_STRING_LIMIT = 8000
DEFAULT_LIMIT, MAX_LIMIT = 50, 200
_TIGHTER = (500, 200, 80, 20)

Json = dict[str, Any]


def size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def clip(value: Any, limit: int = STRING_LIMIT) -> Any:
    """A copy of a JSON value with every string over ``limit`` characters cut, saying how long it was."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        return f"{value[:limit]}… [clipped: {len(value)} characters in all]"
    if isinstance(value, dict):
        return {key: clip(item, limit) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [clip(item, limit) for item in value]
    return value


def clip_object(value: Json, limit: int = STRING_LIMIT) -> Json:
    return {key: clip(item, limit) for key, item in value.items()}


class Window:
    """Items from ``offset``, at most ``limit``, counted as they stream by (only the window is kept)."""

    def __init__(self, offset: int, limit: int) -> None:
        self.offset, self.limit = offset, limit
        self.total = 0
        self.items: list[Any] = []

    def add(self, item: Any) -> None:
        if self.offset <= self.total < self.offset + self.limit:
            self.items.append(item)
        self.total += 1

    def extend(self, items: Iterable[Any]) -> None:
        for item in items:
            self.add(item)

    def page(self, head: Json, key: str = "items") -> Json:
        """``head`` with the page: as many of the window's items as fit under CAP."""
        result: Json = {**head, "total": self.total, "offset": self.offset, "next_offset": None, key: []}
        room = CAP - size(result) - 200  # what next_offset and the clipping note may add
        kept: list[Any] = []
        for item in self.items:
            room -= size(item) + 1
            if room < 0 and kept:
                break
            kept.append(item)
        result[key] = kept
        end = self.offset + len(kept)
        if end < self.total:
            result["next_offset"] = end
        if len(kept) < len(self.items):
            result["page_note"] = f"{len(kept)} of the {len(self.items)} asked for fit under {CAP // 1024} KiB"
        return fit(result)


def fit(result: Json) -> Json:
    """``result`` if it fits under CAP; else with its strings clipped tighter; else a tool error."""
    if size(result) <= CAP:
        return result
    for limit in _TIGHTER:
        note = f"strings cut to {limit} characters to stay under {CAP // 1024} KiB"
        clipped = {**clip(result, limit), "clipped_to_fit": note}
        if size(clipped) <= CAP:
            return clipped
    raise ToolError(f"the result is over {CAP // 1024} KiB even with its strings clipped; ask for a smaller page")


def paging(arguments: Json) -> tuple[int, int]:
    offset = arguments.get("offset", 0)
    limit = arguments.get("limit", DEFAULT_LIMIT)
    return int(offset), min(int(limit), MAX_LIMIT)


PAGING_SCHEMA: Json = {
    "offset": {"type": "integer", "minimum": 0, "description": "First item to return (0-based); see next_offset."},
    "limit": {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_LIMIT,
        "description": f"Items per page (default {DEFAULT_LIMIT}); fewer come back when more would not fit.",
    },
}
