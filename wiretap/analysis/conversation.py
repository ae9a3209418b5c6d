"""From recorded events to JSON-RPC (and A2A REST) exchanges: requests, notifications, responses paired.

The one place that knows how a message event is shaped; analyses see ``Message`` objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from wiretap.recording.event_types import typed
from wiretap.recording.events import Direction, Event
from wiretap.wire.json_values import as_dict
from wiretap.wire.jsonrpc import NOTIFICATION, REQUEST, RESPONSE, Pairing, Waiting, is_message, requester_of

__all__ = ["NOTIFICATION", "REQUEST", "RESPONSE", "Conversation", "Message", "OtherBody"]


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
        if self.error is None:
            return None
        code = self.error.get("code")
        return code if isinstance(code, int) else None


@dataclass(frozen=True, slots=True)
class OtherBody:
    """A body that is not a JSON-RPC message (nor an A2A REST one): shown as what it is, never counted."""

    t: float
    dir: str
    what: str
    """``agent card``, ``202 Accepted``, ``JSON body``, ``text body``…"""


AGENT_CARD_KEYS = frozenset({"skills", "capabilities", "defaultInputModes", "supportedInterfaces", "url"})


def describe_body(body: Any, raw: str | None, status: int | None) -> str:
    """A non-JSON-RPC body in a few words."""
    if isinstance(body, dict) and "name" in body and len(AGENT_CARD_KEYS & body.keys()) >= 2:
        return "agent card"
    if raw is not None and status is not None:
        text = raw.strip()
        return f"{status} {text}" if text and len(text) <= 40 and "\n" not in text else f"HTTP {status} text body"
    if raw is not None:
        return "text body"
    return "JSON body"


def _rest_status_error(body: dict[str, Any], status: int | None) -> dict[str, Any] | None:
    if "error" in body and isinstance(body["error"], dict):
        return body["error"]
    if status is not None and status >= 400:
        return {"code": status, "message": f"HTTP {status}"}
    return None


class Conversation:
    """Pairs responses with requests as events stream past; yields Messages and other events."""

    def __init__(self) -> None:
        self._open: Pairing[Message] = Pairing()
        self._rest_open: dict[int, Message] = {}
        self._a2a_version: dict[int, str] = {}
        self._status: dict[int, int] = {}
        self._streaming: dict[int, list[Waiting[Message]]] = {}

    def feed(self, event: Event) -> Sequence[Message | OtherBody | Event]:
        if event.get("kind") == "message":
            return self.message(event)
        self.other(event)
        return [event]

    def other(self, recorded: Event) -> None:
        """An event that is not a message (what HTTP says of an exchange)."""
        event = typed(recorded)
        if event["kind"] == "http_request":
            version = as_dict(event.get("headers")).get("a2a-version")
            if isinstance(version, str) and isinstance(ex := event.get("ex"), int):
                self._a2a_version[ex] = version
        elif event["kind"] == "http_response" and isinstance(ex := event.get("ex"), int):
            self._status[ex] = int(event.get("status", 0))
        elif event["kind"] == "http_end" and isinstance(ex := event.get("ex"), int):
            self._end_of_exchange(ex, float(event.get("t", 0.0)))

    def message(self, event: Event) -> list[Message | OtherBody]:
        """A message event's messages (a batch holds several), each paired as it comes."""
        body = event.get("msg")
        if type(body) is dict and "rest" not in event:
            if is_message(body):
                return [self._jsonrpc(event, body)]
            return [OtherBody(float(event["t"]), str(event.get("dir")), describe_body(body, None, None))]
        if "rest" in event:
            return [self._rest(event)]
        if "msg" not in event:
            ex = event.get("ex")
            status = self._status.get(ex) if isinstance(ex, int) else None
            what = describe_body(None, str(event.get("raw", "")), status)
            return [OtherBody(float(event["t"]), str(event.get("dir")), what)]
        found: list[Message | OtherBody] = []
        for item in body if isinstance(body, list) else [body]:
            if is_message(item):
                found.append(self._jsonrpc(event, item))
            else:
                found.append(OtherBody(float(event["t"]), str(event.get("dir")), describe_body(item, None, None)))
        return found

    def pending(self) -> list[Message]:
        """Requests that never got a response."""
        waiting = self._open.waiting() + list(self._rest_open.values())
        return sorted((m for m in waiting if m.answered_at is None), key=lambda m: m.t)

    def waiting_request(self, direction: str, msg_id: Any, ex: Any = None) -> Message | None:
        """The request sent in ``direction`` with this id that is still waiting for its response."""
        waiting = self._open.find(requester_of(direction), msg_id, ex)
        return waiting.item if waiting is not None else None

    def _jsonrpc(self, event: Event, body: dict[str, Any]) -> Message:
        t, direction, ex = float(event["t"]), str(event.get("dir")), event.get("ex")
        version = self._a2a_version.get(ex) if isinstance(ex, int) else None
        method, msg_id = body.get("method"), body.get("id")
        if isinstance(method, str):
            params = body.get("params")
            if "id" in body:
                message = Message(t, direction, REQUEST, method, msg_id, params if isinstance(params, dict) else {})
                message.ex, message.a2a_version = ex, version
                self._open.open(direction, msg_id, message, ex)
            else:
                message = Message(t, direction, NOTIFICATION, method, msg_id, as_dict(params))
                message.ex, message.a2a_version = ex, version
            return message
        error = body.get("error")
        response = Message(t, direction, RESPONSE, None, msg_id, {}, body.get("result"))
        response.error = error if isinstance(error, dict) else None
        response.ex, response.a2a_version = ex, version
        waiting = self._open.find(direction, msg_id, ex, error=response.error is not None)
        if waiting is not None:
            request = waiting.item
            # An event stream may answer one request many times (A2A streaming): keep it open until
            # its exchange ends.
            if event.get("sse") is not None and request.ex == ex and isinstance(ex, int):
                if request.answered_at is None:
                    self._streaming.setdefault(ex, []).append(waiting)
            else:
                self._open.close(waiting)
            request.answered_by(response)
            response.method = request.method
            response.a2a_version = response.a2a_version or request.a2a_version
        return response

    def _rest(self, event: Event) -> Message:
        t, direction, ex = float(event["t"]), str(event.get("dir")), event.get("ex")
        rest = as_dict(event.get("rest"))
        body = as_dict(event.get("msg"))
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

    def _end_of_exchange(self, ex: int, t: float) -> None:
        self._a2a_version.pop(ex, None)
        status = self._status.pop(ex, None)
        if status is not None and status >= 400:
            # Refused at the HTTP level (an OAuth 401, a 404): answered, with no JSON-RPC response to come.
            for waiting in self._open.in_exchange(ex):
                self._open.close(waiting)
                asked = waiting.item
                if asked.answered_at is None:
                    error = {"code": status, "message": f"HTTP {status}"}
                    asked.answered_by(Message(t, "", RESPONSE, asked.method, asked.id, error=error, ex=ex))
        request = self._rest_open.get(ex)
        if request is not None and request.answered_at is not None:
            del self._rest_open[ex]
        for streamed in self._streaming.pop(ex, []):
            self._open.close(streamed)
