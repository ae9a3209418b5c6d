"""A recording's timeline rows as the arrows and notes of a sequence diagram.

Over HTTP, an exchange without a JSON-RPC request body (a GET, an agent card, an event stream) gets its
request drawn from the HTTP head, and an error status is drawn as the server's answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from wiretap.analysis.timeline import IN, LIFE, OUT, Row
from wiretap.recording.event_types import HttpResponseEvent, typed
from wiretap.recording.events import Direction
from wiretap.wire.json_values import as_dict

CLIENT, SERVER = "C", "S"
POLLS = frozenset({"tasks/get", "GetTask", "ping"})
"""Requests whose runs collapse into one line with a count."""
_NOTED = frozenset({"eof", "exit", "spawn failed", "signal", "error", "http end"})


def clip(text: str, width: int = 90) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass
class Line:
    """One arrow or note; ``group`` is set for traffic that may collapse (a poll, its answer, a notification)."""

    t: float
    text: str
    arrow: str = ""
    """Empty for a note."""
    frm: str = CLIENT
    to: str = SERVER
    group: tuple[str, ...] | None = None
    request: bool = True
    outcome: str = ""


def _task_key(row: Row) -> str:
    event = row.event
    rest = as_dict(event.get("rest"))
    if rest.get("taskId"):
        return str(rest["taskId"])
    params = as_dict(as_dict(event.get("msg")).get("params"))
    return str(params.get("taskId", params.get("id", "")))


def _outcome(row: Row) -> str:
    """A poll's answer in a word: the task's state, or the error code."""
    body = as_dict(row.event.get("msg"))
    if "error" in body:
        return f"error {as_dict(body['error']).get('code', '')}".strip()
    result = as_dict(body.get("result")) if "result" in body else body
    task = as_dict(result.get("task")) or result
    state = task.get("status")
    if isinstance(state, dict):
        state = state.get("state")
    return str(state) if state is not None else "ok"


class Sequence:
    """Rows of one recording to diagram lines; remembers which request each poll answer belongs to, and
    which HTTP requests have not been drawn yet."""

    def __init__(self, server: str) -> None:
        self.server = server
        self._polls: dict[tuple[Any, str], tuple[str, ...]] = {}
        self._heads: dict[Any, Row] = {}
        """HTTP requests (by exchange) whose arrow waits for a body or an answer."""
        self._status: dict[Any, int] = {}

    def lines(self, row: Row) -> list[Line]:
        event, ex = typed(row.event), row.event.get("ex")
        known = "kind" in row.event  # (always, from a reader)
        if known and event["kind"] == "http_request":
            self._heads[ex] = row
            return []
        if known and event["kind"] == "http_response":
            return self._http_response(row, event)
        if row.lane in (IN, OUT):
            head = self._heads.pop(ex, None) if ex is not None else None
            before = [self._head_arrow(head)] if head is not None and row.lane == OUT else []
            return [*before, self._message(row)]
        if row.lane == LIFE and row.title in _NOTED:
            if row.title == "http end" and event["kind"] == "http_end" and event.get("outcome") == "complete":
                return []
            if row.title == "signal" and event["kind"] == "signal" and "forwarded" not in event:
                # wiretap's own signal (the proxy was stopped), not the client's
                text = f"{row.t:.2f} s wiretap received {event.get('signal', 'a signal')}"
                return [Line(row.t, text, frm=f"{CLIENT},{self.server}")]
            who = CLIENT if row.event.get("dir") == Direction.C2S.value or row.title == "signal" else self.server
            return [Line(row.t, f"{row.t:.2f} s {row.title}: {clip(row.summary)}", frm=who)]
        return []

    def _head_arrow(self, head: Row) -> Line:
        return Line(head.t, f"{head.t:.2f} s {clip(head.summary)}", "->>", CLIENT, self.server)

    def _http_response(self, row: Row, event: HttpResponseEvent) -> list[Line]:
        ex, status = event.get("ex"), int(event.get("status", 0))
        self._status[ex] = status
        head = self._heads.pop(ex, None)
        drawn = [self._head_arrow(head)] if head is not None else []
        if status >= 400 or head is not None:
            arrow = "--x" if status >= 400 else "-->>"
            text = f"{row.t:.2f} s HTTP {status} {event.get('reason') or ''}".rstrip()
            drawn.append(Line(row.t, text, arrow, self.server, CLIENT))
        return drawn

    def _message(self, row: Row) -> Line:
        inbound = row.lane == IN
        frm, to = (CLIENT, self.server) if inbound else (self.server, CLIENT)
        body = as_dict(row.event.get("msg"))
        is_request = "method" in body or ("rest" in row.event and inbound)
        key = (row.event.get("ex"), json.dumps(body.get("id")))
        text = f"{row.t:.2f} s {row.title} {clip(row.summary)}".rstrip()
        if not is_request and not {"id", "result", "error"} & body.keys() and "rest" not in row.event:
            keys = ", ".join(list(body)[:6])
            text = f"{row.t:.2f} s {row.title}" + (f" ({clip(keys, 60)})" if keys else "")
        if is_request:
            method = row.method or row.title
            if "id" not in body and "rest" not in row.event:
                return Line(row.t, text, "-)", frm, to, ("note", self.server, row.lane, method, method))
            if method in POLLS:
                poll = ("poll", self.server, row.lane, method, f"{method} {_task_key(row)}".rstrip())
                self._polls[key] = poll
                return Line(row.t, text, "->>", frm, to, poll)
            return Line(row.t, text, "->>", frm, to)
        group = self._polls.pop(key, None) if "rest" not in row.event else self._rest_poll(row)
        arrow = "--x" if row.error else "-->>"
        return Line(row.t, text, arrow, frm, to, group, request=False, outcome=_outcome(row) if group else "")

    def _rest_poll(self, row: Row) -> tuple[str, ...] | None:
        method = row.method or ""
        if method not in POLLS:
            return None
        key = (row.event.get("ex"), json.dumps(None))
        return self._polls.pop(key, None) or ("poll", self.server, IN, method, f"{method} {_task_key(row)}".rstrip())
