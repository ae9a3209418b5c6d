"""Checking a tool call's arguments against the tool's input schema (the small subset the tools use)."""

from __future__ import annotations

from typing import Any

from wiretap.mcp.protocol import ToolError

Json = dict[str, Any]
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
}


def check(arguments: Json, schema: Json) -> Json:
    """``arguments`` if they fit ``schema``; else a ToolError naming the first argument at fault."""
    properties: Json = schema.get("properties", {})
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        raise ToolError(f"unknown argument {unknown[0]!r} (this tool takes: {', '.join(properties) or 'none'})")
    for name in schema.get("required", []):
        if arguments.get(name) is None:
            raise ToolError(f"missing argument {name!r}")
    for name, value in arguments.items():
        if value is not None:
            _check_value(name, value, properties[name])
    return arguments


def _check_value(name: str, value: Any, rule: Json) -> None:
    kinds = rule.get("type")
    allowed = [kinds] if isinstance(kinds, str) else list(kinds or [])
    if allowed and not any(_is(value, kind) for kind in allowed):
        raise ToolError(f"argument {name!r} must be {' or '.join(allowed)}, not {type(value).__name__}")
    if "enum" in rule and value not in rule["enum"]:
        raise ToolError(f"argument {name!r} must be one of {', '.join(map(str, rule['enum']))}, not {value!r}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in rule and value < rule["minimum"]:
            raise ToolError(f"argument {name!r} must be at least {rule['minimum']}")
        if "maximum" in rule and value > rule["maximum"]:
            raise ToolError(f"argument {name!r} must be at most {rule['maximum']}")
    if isinstance(value, list) and "items" in rule:
        for item in value:
            _check_value(name, item, rule["items"])


def _is(value: Any, kind: str) -> bool:
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES.get(kind, (object,)))
