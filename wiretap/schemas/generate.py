"""The report JSON Schema, derived from the report model's dataclasses and their type hints.

``python -m wiretap.schemas.generate`` rewrites ``report.schema.json`` beside this file.
"""

from __future__ import annotations

import json
import sys
import types
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

from wiretap.analysis import model
from wiretap.schemas import BASE_URI

_SCALARS: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
}
_DESCRIPTIONS = {
    "settled_interval": f"The {model.FIGURES['settled_interval']} in seconds: the median interval between polls "
    "once the client has backed off to its cadence, leaving out intervals that span a question to the user.",
    "settled_floor": f"The {model.FIGURES['settled_floor']} in seconds: the shortest of the intervals the "
    "settled cadence is the median of; the interval the client schedules, as its machine runs timers late, "
    "never early.",
    "median_interval": f"The {model.FIGURES['median_interval']} in seconds: every interval between polls, back-off "
    "and open questions included.",
    "longest_gap": f"The {model.FIGURES['longest_gap']} in seconds between polls while a question was open.",
    "cadence_outside": f"The {model.FIGURES['cadence_outside']}: the median interval between polls outside questions.",
}


def _type(hint: Any, defs: dict[str, Any]) -> dict[str, Any]:
    if hint in _SCALARS:
        return dict(_SCALARS[hint])
    if hint is Any:
        return {}
    if isinstance(hint, type) and is_dataclass(hint):
        if hint.__name__ not in defs:
            defs[hint.__name__] = {}  # reserve: recursion
            defs[hint.__name__] = _object(hint, defs)
        return {"$ref": f"#/$defs/{hint.__name__}"}
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        options = [_type(arg, defs) for arg in get_args(hint)]
        simple = [o.get("type") for o in options if set(o) == {"type"}]
        if len(simple) == len(options):
            return {"type": simple}
        return {"anyOf": options}
    if origin is list:
        (item,) = get_args(hint)
        return {"type": "array", "items": _type(item, defs)}
    if origin is tuple:
        return {"type": "array", "prefixItems": [_type(arg, defs) for arg in get_args(hint)]}
    if origin is dict:
        _, value = get_args(hint)
        return {"type": "object", "additionalProperties": _type(value, defs)}
    raise TypeError(f"no JSON Schema for {hint!r}")


def _object(cls: type, defs: dict[str, Any], *, closed: bool = True) -> dict[str, Any]:
    hints = get_type_hints(cls, vars(model))
    properties: dict[str, Any] = {}
    required: list[str] = []
    for f in fields(cls):
        if not f.metadata.get("json", True):
            continue
        prop = _type(hints[f.name], defs)
        if f.name in _DESCRIPTIONS:
            prop["description"] = _DESCRIPTIONS[f.name]
        properties[f.name] = prop
        if not f.metadata.get("omit_none"):  # to_dict() writes every other field, defaults included
            required.append(f.name)
    schema: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    if closed:
        schema["additionalProperties"] = False
    doc = (cls.__doc__ or "").strip()
    if doc and not doc.startswith(f"{cls.__name__}("):
        schema["description"] = " ".join(doc.split())
    return schema


def report_schema() -> dict[str, Any]:
    defs: dict[str, Any] = {}
    # The top level stays open: later versions may add keys (REPORT_FORMAT changes only when one changes
    # meaning or goes away).
    report = _object(model.Report, defs, closed=False)
    report["properties"]["report_format"] = {"const": model.REPORT_FORMAT}
    defs["Report"] = report
    defs["Session"] = {
        "type": "object",
        "description": "wiretap report --format json of a session folder: the session's one report (every server, "
        "on the session's clock: t = 0 is the client's start), and each server's own on the same clock.",
        "properties": {
            "session": {"type": "object"},
            "report": {"$ref": "#/$defs/Report"},
            "reports": {"type": "array", "items": {"$ref": "#/$defs/Report"}},
        },
        "required": ["session", "reports"],
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{BASE_URI}report",
        "title": "wiretap report JSON",
        "description": "wiretap report --format json: one recording's report, or a session's (with its reports).",
        "anyOf": [{"$ref": "#/$defs/Report"}, {"$ref": "#/$defs/Session"}],
        "$defs": dict(sorted(defs.items())),
    }


def report_schema_text() -> str:
    return json.dumps(report_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    target = Path(__file__).with_name("report.schema.json")
    target.write_text(report_schema_text(), encoding="utf-8")
    sys.stdout.write(f"wrote {target.name}\n")
