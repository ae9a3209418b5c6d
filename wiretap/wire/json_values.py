"""Reading parsed JSON whose shape is not trusted: a value that should be an object, or else empty."""

from __future__ import annotations

from typing import Any


def as_dict(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (a missing or malformed field reads as empty)."""
    return value if isinstance(value, dict) else {}
