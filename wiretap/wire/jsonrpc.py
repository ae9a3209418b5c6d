"""Sans-IO JSON-RPC 2.0: what kind a body is, a key for its id, pairing responses with requests, and
reading a live body as a server must.

The one place that decides these for the analyses, the timeline rows and replay. A body that is none of
the three kinds (an agent card, a 202 "Accepted", a text/plain error) is not a JSON-RPC message. Served
(``parse``), a body that is not JSON is a parse error (-32700), and JSON that is not a message an invalid
request (-32600). Nesting is bounded there: ``json`` gives up somewhere near a thousand levels
(RecursionError, not ValueError), and replay's matchers recurse too, so anything nested deeper than
``MAX_DEPTH`` is refused as invalid.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeGuard, TypeVar

REQUEST, NOTIFICATION, RESPONSE = "request", "notification", "response"
C2S, S2C = "c2s", "s2c"

T = TypeVar("T")


def kind_of(body: Any) -> str | None:
    """``request``, ``notification`` or ``response``; None for a body that is not a JSON-RPC message."""
    if not isinstance(body, dict):
        return None
    if isinstance(body.get("method"), str):
        return REQUEST if "id" in body else NOTIFICATION
    if "method" not in body and "id" in body and ("result" in body or "error" in body):
        return RESPONSE
    return None


def is_request(body: Any) -> bool:
    return kind_of(body) == REQUEST


def is_notification(body: Any) -> bool:
    return kind_of(body) == NOTIFICATION


def is_response(body: Any) -> bool:
    """A response, or an error without an id key at all (some servers send one for a body they cannot parse)."""
    return isinstance(body, dict) and "method" not in body and ("result" in body or "error" in body)


def is_message(body: Any) -> TypeGuard[dict[str, Any]]:
    """``kind_of(body) is not None or is_response(body)``, in one look at the body."""
    if not isinstance(body, dict):
        return False
    method = body.get("method", _ABSENT)
    if method is _ABSENT:
        return "result" in body or "error" in body
    return isinstance(method, str)


_ABSENT = object()


def id_key(msg_id: Any) -> Hashable:
    """A dict key for a JSON-RPC id that keeps 1, "1" and true apart."""
    name = _PLAIN_IDS.get(type(msg_id))
    if name is not None:
        return (name, msg_id)
    if isinstance(msg_id, str | int | float | None):
        return (type(msg_id).__name__, msg_id)
    return ("json", json.dumps(msg_id, sort_keys=True))


_PLAIN_IDS: dict[type, str] = {t: t.__name__ for t in (int, str, float, bool, type(None))}


def requester_of(response_direction: str) -> str:
    """The direction the request of a response travelled in."""
    return S2C if response_direction == C2S else C2S


@dataclass(eq=False, slots=True)
class Waiting(Generic[T]):
    key: tuple[str, Hashable]
    ex: Any
    item: T


class Pairing(Generic[T]):
    """Requests waiting for their response, per direction and id.

    Over HTTP a response travels in its request's exchange: when two clients use the same id, the request
    of the response's own exchange wins. An error whose id is null (the server could not read the id, or
    refused the request before reading it) pairs with the request of its own exchange.
    """

    def __init__(self) -> None:
        self._open: dict[tuple[str, Hashable], list[Waiting[T]]] = {}
        self._by_ex: dict[Any, list[Waiting[T]]] = {}
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def open(self, direction: str, msg_id: Any, item: T, ex: Any = None) -> Waiting[T]:
        waiting = Waiting((direction, id_key(msg_id)), ex, item)
        self._open.setdefault(waiting.key, []).append(waiting)
        self._count += 1
        if ex is not None:
            self._by_ex.setdefault(ex, []).append(waiting)
        return waiting

    def find(self, response_direction: str, msg_id: Any, ex: Any = None, *, error: bool = False) -> Waiting[T] | None:
        """The request a response answers, left open (see ``close``)."""
        requester = requester_of(response_direction)
        waiting = self._open.get((requester, id_key(msg_id)))
        if waiting:
            if ex is None or len(waiting) == 1:
                return waiting[0]
            return next((w for w in waiting if w.ex == ex), waiting[0])
        if msg_id is None and error and ex is not None:
            return next((w for w in self._by_ex.get(ex, []) if w.key[0] == requester), None)
        return None

    def close(self, waiting: Waiting[T]) -> None:
        queue = self._open.get(waiting.key)
        if queue is not None and waiting in queue:
            queue.remove(waiting)
            self._count -= 1
            if not queue:
                del self._open[waiting.key]
        if waiting.ex is not None:
            same = self._by_ex.get(waiting.ex, [])
            if waiting in same:
                same.remove(waiting)
            if not same:
                self._by_ex.pop(waiting.ex, None)

    def take(self, response_direction: str, msg_id: Any, ex: Any = None, *, error: bool = False) -> T | None:
        """Find and close: the request a response answers, if it was waiting."""
        found = self.find(response_direction, msg_id, ex, error=error)
        if found is None:
            return None
        self.close(found)
        return found.item

    def waiting(self) -> list[T]:
        return [w.item for queue in self._open.values() for w in queue]

    def first(self) -> Waiting[T] | None:
        """The first request of the id that has waited longest (what a bounded reader gives up on)."""
        return next((queue[0] for queue in self._open.values()), None)

    def in_exchange(self, ex: Any) -> list[Waiting[T]]:
        """The requests still waiting that travelled in exchange ``ex``."""
        return list(self._by_ex.get(ex, []))


# -- reading a live body, as a server must ---------------------------------------------------------------

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
MAX_DEPTH = 100
"""The deepest a live message may nest; real MCP and A2A traffic stays under 20."""


@dataclass
class Parsed:
    messages: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    """JSON-RPC error responses owed to the client."""
    batch: bool = False


def error(code: int, message: str, message_id: Any = None) -> dict[str, Any]:
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


def parse(data: bytes | str) -> Parsed:
    """A live body: its messages, and the errors owed for what is not one (a batch answers in a batch)."""
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
        if is_message(item):
            parsed.messages.append(item)
        else:
            parsed.errors.append(error(INVALID_REQUEST, "Invalid Request", _id_of(item)))
    return parsed
