"""JSON text to Python values, as ``json.loads`` gives them, three times faster where it can be.

orjson parses what ``json`` parses into the same values; what it refuses (``NaN``, integers past 64 bits,
lone surrogates, deep nesting) goes to ``json``, which accepts or refuses it as it always did.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def loads(data: bytes | str) -> Any:
    try:
        return orjson.loads(data)
    except ValueError:  # orjson.JSONDecodeError, and whatever else it refuses
        return json.loads(data)
