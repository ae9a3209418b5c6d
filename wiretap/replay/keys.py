"""What the index files a request under: for each built-in matcher, a key that two requests share exactly
when the matcher passes. The method, the path, and for parameters their canonical JSON (keys sorted,
``1.0`` written as ``1``: the matchers hold 1 and 1.0 equal, and true and 1 apart)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import msgspec

from wiretap.replay.matchers import Request

DEFAULT = ("method", "params")
_encode = msgspec.json.Encoder(order="sorted").encode
_INTEGRAL_FLOAT = re.compile(rb"\d\.0(?![0-9])|\d[eE]")
"""In JSON written by msgspec: where a float that equals an integer may be (``1.0``, ``1e16``). Text in
strings may look the same: that only costs the slower way."""


def _canon(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _canon(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_canon(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def canonical(value: Any) -> str:
    """Raises RecursionError, TypeError or ValueError for what is too deep or not JSON.

    msgspec writes NaN and infinities as ``null``: such keys may be equal where the matchers differ, which
    the index's check with the matchers catches. What it cannot write (a lone surrogate) is written by
    ``json``, the same way for every request holding it."""
    try:
        text = _encode(value)
        if _INTEGRAL_FLOAT.search(text) is not None:
            text = _encode(_canon(value))
        return text.decode()
    except (TypeError, UnicodeEncodeError):
        return json.dumps(_canon(value), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _name(request: Request) -> str:
    return canonical(request.params.get("name", request.params.get("uri")))


KEYS: dict[str, Callable[[Request], str]] = {
    "method": lambda request: request.method,
    "params": lambda request: canonical(request.params),
    "name": _name,
    "arguments": lambda request: canonical(request.params.get("arguments")),
    "id": lambda request: f"{type(request.id).__name__}:{canonical(request.id)}",
    "path": lambda request: str(request.path),
}


def key(request: Request, match_on: tuple[str, ...] = DEFAULT) -> int:
    """A hash of the matchers' keys: equal for requests that match (a collision is possible, so a
    request found by it is still checked with the matchers). Raises as ``canonical`` does."""
    return hash(tuple(KEYS[name](request) for name in match_on))


def default_key(request: Request) -> int | None:
    """``key`` for the default ``match_on``; None when the parameters are too deep or not JSON."""
    return params_key(request.method, request.params)


def params_key(method: str, params: dict[str, Any]) -> int | None:
    """``default_key`` of a request with this method and these (normalized) parameters."""
    try:
        return hash((method, canonical(params)))
    except (RecursionError, TypeError, ValueError):
        return None


def name_key(method: str, params: dict[str, Any]) -> int | None:
    """The method and the tool, prompt or resource asked for (``params.name`` or ``params.uri``), to look
    for a miss's closest request among those asking for the same; None when there is no name."""
    name = params.get("name", params.get("uri"))
    return hash((method, name)) if isinstance(name, str) else None
