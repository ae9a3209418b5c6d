"""Structural differences between two JSON values, as paths a person can read."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

SHOWN = 60
"""How many characters of a value a difference shows."""
_MISSING = object()
MAX_DEPTH = 100


def _text(value: Any) -> str | None:
    """JSON text to compare deep values by; None when even that is too deep (never equal then)."""
    try:
        return json.dumps(value, sort_keys=True) if value is not _MISSING else "<missing>"
    except (RecursionError, ValueError, TypeError):
        return None


@dataclass(frozen=True)
class Difference:
    path: str
    """``result.content[0].text``; empty for the value as a whole."""
    recorded: Any
    live: Any

    def describe(self, left: str = "recorded", right: str = "live") -> str:
        where = self.path or "the value"
        if self.recorded is _MISSING:
            return f"{where}: only {right} ({shown(self.live)})"
        if self.live is _MISSING:
            return f"{where}: only {left} ({shown(self.recorded)})"
        return f"{where}: {left} {shown(self.recorded)}, {right} {shown(self.live)}"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path}
        if self.recorded is not _MISSING:
            out["recorded"] = self.recorded
        if self.live is not _MISSING:
            out["live"] = self.live
        return out


def shown(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except RecursionError:
        return "(nested too deep to show)"
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def _join(path: str, key: str) -> str:
    plain = key.replace("_", "").replace("-", "").isalnum()
    return (f"{path}.{key}" if path else key) if plain else f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def differences(recorded: Any, live: Any, path: str = "", depth: int = 0) -> list[Difference]:
    """Every place where ``live`` differs from ``recorded``; 1 and 1.0 are equal, 1 and true are not.
    Below ``MAX_DEPTH`` levels a value is compared whole (as its JSON text: ``==`` recurses too)."""
    if depth > MAX_DEPTH:
        text = _text(recorded)
        return [] if text is not None and text == _text(live) else [Difference(path, recorded, live)]
    depth += 1
    if isinstance(recorded, dict) and isinstance(live, dict):
        out: list[Difference] = []
        for key in recorded:
            out += differences(recorded[key], live.get(key, _MISSING), _join(path, key), depth)
        out += [Difference(_join(path, key), _MISSING, live[key]) for key in live if key not in recorded]
        return out
    if isinstance(recorded, list) and isinstance(live, list):
        out = []
        for index, (a, b) in enumerate(zip(recorded, live, strict=False)):
            out += differences(a, b, f"{path}[{index}]", depth)
        shorter = min(len(recorded), len(live))
        out += [Difference(f"{path}[{i}]", recorded[i], _MISSING) for i in range(shorter, len(recorded))]
        out += [Difference(f"{path}[{i}]", _MISSING, live[i]) for i in range(shorter, len(live))]
        return out
    if live is _MISSING or recorded is _MISSING:
        return [Difference(path, recorded, live)]
    if type(recorded) is bool or type(live) is bool:
        return [] if recorded is live else [Difference(path, recorded, live)]
    return [] if recorded == live else [Difference(path, recorded, live)]


def describe(found: list[Difference], limit: int = 3, left: str = "recorded", right: str = "live") -> str:
    shown_ = "; ".join(d.describe(left, right) for d in found[:limit])
    return shown_ + (f" (and {len(found) - limit} more)" if len(found) > limit else "")
