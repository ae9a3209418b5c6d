"""From recorded events to JSON-RPC (and A2A REST) exchanges: requests, notifications, responses paired.

The one place that knows how a message event is shaped; analyses see ``Message`` objects.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any

from wiretap.model import Direction, Event, Kind

REQUEST, NOTIFICATION, RESPONSE = "request", "notification", "response"


@dataclass(eq=False, slots=True)
class Message:
    t: float
    dir: str
    kind: str
    """request, notification or response."""
    method: str | None
    """For a response, the method (or A2A REST operation) of its request, when it was seen."""
    id: Any = None
    params: dict[str, Any] = field(default_factory=dict)
    result: Any = None
    error: dict[str, Any] | None = None
    ex: int | None = None
    rest: dict[str, Any] | None = None
    request: Message | None = None
    """For a response: its request. (A request does not point back: no cycles, so memory is freed as
    the recording streams past.)"""
    answered_at: float | None = None
    """For a request: when its first response came."""
    answer_error: dict[str, Any] | None = None
    answers: int = 0
    """For a request: how many responses it got so far (an event stream may answer many times)."""
    a2a_version: str | None = None
    """The A2A-Version header of the HTTP exchange, if any."""

    @property
    def latency(self) -> float | None:
        return self.t - self.request.t if self.request is not None else None

    def answered_by(self, response: Message) -> None:
        if self.answered_at is None:
            self.answered_at, self.answer_error = response.t, response.error
        self.answers += 1
        response.request = self

    @property
    def error_code(self) -> int | None:
        code = (self.error or {}).get("code")
        return code if isinstance(code, int) else None


def _id_key(msg_id: Any) -> Hashable:
    """A dict key for a JSON-RPC id that keeps 1, "1" and true apart."""
    if isinstance(msg_id, str | int | float | None):
        return (type(msg_id).__name__, msg_id)
    return ("json", json.dumps(msg_id, sort_keys=True))


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _rest_status_error(body: dict[str, Any], status: int | None) -> dict[str, Any] | None:
    if "error" in body and isinstance(body["error"], dict):
        return body["error"]
    if status is not None and status >= 400:
        return {"code": status, "message": f"HTTP {status}"}
    return None


class Conversation:
    """Pairs responses with requests as events stream past; yields Messages and other events."""

    def __init__(self) -> None:
        self._open: dict[tuple[str, Hashable], list[Message]] = {}
        self._rest_open: dict[int, Message] = {}
        self._a2a_version: dict[int, str] = {}
        self._status: dict[int, int] = {}
        self._streaming: dict[int, list[tuple[tuple[str, Hashable], Message]]] = {}

    def feed(self, event: Event) -> Iterator[Message | Event]:
        kind = event.get("kind")
        if kind == Kind.HTTP_REQUEST:
            version = _dict(event.get("headers")).get("a2a-version")
            if isinstance(version, str) and isinstance(event.get("ex"), int):
                self._a2a_version[event["ex"]] = version
        elif kind == Kind.HTTP_RESPONSE and isinstance(event.get("ex"), int):
            self._status[event["ex"]] = int(event.get("status", 0))
        elif kind == Kind.HTTP_END and isinstance(event.get("ex"), int):
            self._end_of_exchange(event["ex"])
        if kind != Kind.MESSAGE:
            yield event
            return
        if "rest" in event:
            yield self._rest(event)
            return
        body = event.get("msg")
        for item in body if isinstance(body, list) else [body]:
            if isinstance(item, dict):
                yield self._jsonrpc(event, item)

    def pending(self) -> list[Message]:
        """Requests that never got a response."""
        waiting = [m for queue in self._open.values() for m in queue] + list(self._rest_open.values())
        return sorted((m for m in waiting if m.answered_at is None), key=lambda m: m.t)

    def _jsonrpc(self, event: Event, body: dict[str, Any]) -> Message:
        t, direction, ex = float(event["t"]), str(event.get("dir")), event.get("ex")
        version = self._a2a_version.get(ex) if isinstance(ex, int) else None
        method = body.get("method")
        if isinstance(method, str):
            kind = REQUEST if "id" in body else NOTIFICATION
            message = Message(
                t,
                direction,
                kind,
                method,
                body.get("id"),
                _dict(body.get("params")),
                ex=ex,
                a2a_version=version,
            )
            if kind == REQUEST:
                self._open.setdefault((direction, _id_key(body.get("id"))), []).append(message)
            return message
        response = Message(
            t,
            direction,
            RESPONSE,
            None,
            body.get("id"),
            result=body.get("result"),
            error=body.get("error") if isinstance(body.get("error"), dict) else None,
            ex=ex,
            a2a_version=version,
        )
        requester = Direction.S2C.value if direction == Direction.C2S.value else Direction.C2S.value
        key = (requester, _id_key(body.get("id")))
        waiting = self._open.get(key)
        if waiting:
            request = next((w for w in waiting if ex is not None and w.ex == ex), waiting[0])
            # An event stream may answer one request many times (A2A streaming): keep it open until
            # its exchange ends.
            if event.get("sse") is not None and request.ex == ex and isinstance(ex, int):
                if request.answered_at is None:
                    self._streaming.setdefault(ex, []).append((key, request))
            else:
                self._close(key, request)
            request.answered_by(response)
            response.method = request.method
            response.a2a_version = response.a2a_version or request.a2a_version
        return response

    def _rest(self, event: Event) -> Message:
        t, direction, ex = float(event["t"]), str(event.get("dir")), event.get("ex")
        rest = _dict(event.get("rest"))
        body = _dict(event.get("msg"))
        version = self._a2a_version.get(ex) if isinstance(ex, int) else None
        operation = rest.get("operation")
        if direction == Direction.C2S.value:
            params = dict(body)
            if rest.get("taskId"):
                params.setdefault("id", rest["taskId"])
            message = Message(t, direction, REQUEST, operation, None, params, ex=ex, rest=rest, a2a_version=version)
            if isinstance(ex, int):
                self._rest_open[ex] = message
            return message
        request = self._rest_open.get(ex) if isinstance(ex, int) else None
        status = self._status.get(ex) if isinstance(ex, int) else None
        error = _rest_status_error(body, status)
        response = Message(
            t,
            direction,
            RESPONSE,
            operation,
            None,
            result=None if error else body,
            error=error,
            ex=ex,
            rest=rest,
            a2a_version=version,
        )
        if request is not None:
            request.answered_by(response)
        return response

    def _close(self, key: tuple[str, Hashable], request: Message) -> None:
        waiting = self._open.get(key, [])
        if request in waiting:
            waiting.remove(request)
        if not waiting:
            self._open.pop(key, None)

    def _end_of_exchange(self, ex: int) -> None:
        self._a2a_version.pop(ex, None)
        self._status.pop(ex, None)
        request = self._rest_open.get(ex)
        if request is not None and request.answered_at is not None:
            del self._rest_open[ex]
        for key, streamed in self._streaming.pop(ex, []):
            self._close(key, streamed)
