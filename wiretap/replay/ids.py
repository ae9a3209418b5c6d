"""Ids a live server makes up afresh (a task id, a context id): learned from its responses, swapped into
what is sent next."""

from __future__ import annotations

from typing import Any


def made_up(key: str | None) -> bool:
    """Whether a key names an id that a live server makes up afresh (``id``, ``taskId``, ``context_id``…),
    to be learned from its responses."""
    return key is not None and (key == "id" or key.endswith(("Id", "_id")))


def learn(recorded: Any, live: Any, into: dict[str, Any], key: str | None = None) -> None:
    """Where the live value of a made-up id differs from the recorded one, remember recorded → live."""
    if isinstance(recorded, dict) and isinstance(live, dict):
        for k, value in recorded.items():
            if k in live:
                learn(value, live[k], into, k)
    elif isinstance(recorded, list) and isinstance(live, list):
        for a, b in zip(recorded, live, strict=False):
            learn(a, b, into, key)
    elif made_up(key) and isinstance(recorded, str) and isinstance(live, str | int) and recorded != live:
        into[recorded] = live


def swapped(value: Any, swaps: dict[str, Any]) -> Any:
    """``value`` with every string that is a learned recorded id replaced by the live one."""
    if not swaps:
        return value
    if isinstance(value, dict):
        return {k: swapped(v, swaps) for k, v in value.items()}
    if isinstance(value, list):
        return [swapped(v, swaps) for v in value]
    if isinstance(value, str) and value in swaps:
        return swaps[value]
    return value
