"""Published JSON Schemas (draft 2020-12) for the recording format, the report JSON and the expectations
YAML, shipped with the package: ``wiretap schema recording|report|expect`` prints them.

``report.schema.json`` is generated from the report model (``python -m wiretap.schemas.generate``); a
test keeps the shipped file equal to what the model says.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

NAMES = ("recording", "report", "expect")
BASE_URI = "urn:wiretap:schema:"


def schema_text(name: str) -> str:
    """The schema as shipped (JSON text). Raises KeyError for an unknown name."""
    if name not in NAMES:
        raise KeyError(name)
    return resources.files(__name__).joinpath(f"{name}.schema.json").read_text(encoding="utf-8")


def schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(schema_text(name))
    return loaded
