"""What a live client sent, read as JSON-RPC the way a server must: a body that is not JSON is a parse
error (-32700), JSON that is not a request, notification or response is an invalid request (-32600).

Nesting is bounded: ``json`` gives up somewhere near a thousand levels (RecursionError, not ValueError),
and the matchers recurse too, so anything nested deeper than ``MAX_DEPTH`` is refused as invalid.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from wiretap.replay.script import Json, is_notification, is_request, is_response

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
MAX_DEPTH = 100
"""The deepest a live message may nest; real MCP and A2A traffic stays under 20."""


@dataclass
class Parsed:
    messages: list[Json] = field(default_factory=list)
    errors: list[Json] = field(default_factory=list)
    """JSON-RPC error responses owed to the client."""
    batch: bool = False


def error(code: int, message: str, message_id: Any = None) -> Json:
    return {"jsonrpc": "2.0", "id": message_id, "error": {"code": code, "message": message}}


def deeper_than(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests more than ``limit`` levels (iteratively: it may be too deep to recurse)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def _id_of(item: Any) -> Any:
    value = item.get("id") if isinstance(item, dict) else None
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


def valid(item: Any) -> bool:
    return isinstance(item, dict) and (is_request(item) or is_notification(item) or is_response(item))


def parse(data: bytes | str) -> Parsed:
    try:
        body: Any = json.loads(data)
    except (ValueError, RecursionError):
        return Parsed(errors=[error(PARSE_ERROR, "Parse error")])
    if deeper_than(body):
        too_deep = f"Invalid Request: nested more than {MAX_DEPTH} deep"
        return Parsed(errors=[error(INVALID_REQUEST, too_deep, _id_of(body))])
    batch = isinstance(body, list)
    items = body if batch else [body]
    if not items:
        return Parsed(errors=[error(INVALID_REQUEST, "Invalid Request: an empty batch")], batch=False)
    parsed = Parsed(batch=batch)
    for item in items:
        if valid(item):
            parsed.messages.append(item)
        else:
            parsed.errors.append(error(INVALID_REQUEST, "Invalid Request", _id_of(item)))
    return parsed
