"""Loading a recording into a script (script.py): each event fed once, in order, to one loader.

The loader pairs by JSON-RPC id (and, over HTTP, by exchange); the recording's tasks come from the
report's own task pass, so that task states come from one reconstruction.
"""

from __future__ import annotations

import gc
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

from wiretap.analysis.task import Task
from wiretap.analysis.task_pass import TaskPass
from wiretap.recording.event_types import MessageEvent, typed
from wiretap.recording.events import Direction, Event
from wiretap.recording.reader import open_recording
from wiretap.replay.keys import name_key, params_key
from wiretap.replay.matchers import Request
from wiretap.replay.script import (
    ClientAnswer,
    ClientItem,
    Exchange,
    HttpShape,
    Json,
    Script,
    Step,
    Unprompted,
    progress_token,
    sent_key,
)
from wiretap.replay.source import Source, place_of
from wiretap.replay.volatile import Volatile
from wiretap.wire.http.a2a_rest import rest_operation
from wiretap.wire.http.rewrite import CARD_PATHS
from wiretap.wire.json_values import as_dict
from wiretap.wire.jsonrpc import S2C, Pairing, Waiting, is_request, is_response

_C2S = Direction.C2S.value


class _Loader:
    def __init__(self, script: Script, volatile: Volatile, source: Source | None = None) -> None:
        self.script = script
        self.volatile = volatile
        self.source = source
        self.open: Pairing[Exchange] = Pairing()
        self.ids: dict[Exchange, Waiting[Exchange]] = {}
        """Where each exchange still open waits (its message is not kept parsed)."""
        self.tokens: dict[Exchange, Any] = {}
        """The progress token of each exchange still open that has one."""
        self.methods: dict[str, str] = {}
        """One copy of each method name."""
        self.line = b""
        """The line of the event fed last (when it is known: what ``Volatile.leaves_alone`` looks at)."""
        self.names: tuple[bytes, ...] | None = None
        """The volatile keys' names that the line may hold (None: any)."""
        self.open_order: list[Exchange] = []
        self.asked: Pairing[Step] = Pairing()
        self.http: dict[int, HttpShape] = {}
        self.by_ex: dict[int, Exchange] = {}
        self.sent: dict[str, int] = {}
        self.last_sent: tuple[str, int] | None = None
        self.last_sent_t = 0.0
        self.streaming: set[int] = set()
        self.event_owner: dict[str, Exchange] = {}
        """Event id → the exchange whose stream sent it (a GET resuming after it continues that one)."""
        self.resumed: dict[int, Exchange] = {}

    def feed(self, recorded: Event, place: int | None = None) -> None:
        """``place``: where the event's line is in the source (``place_of``), when it is known."""
        event, t = typed(recorded), float(recorded["t"])
        ex = recorded.get("ex")
        ex = ex if isinstance(ex, int) else None
        if event["kind"] == "message":
            body = event.get("msg")
            if "rest" in event:
                self._rest(t, event, ex)
                return
            if "raw" in event and event.get("dir") == Direction.S2C.value:
                self._server_did(Step(t, raw=str(event["raw"]), sse=as_dict(event.get("sse")) or None, ex=ex), ex)
            if isinstance(body, dict):
                stored = (self.source, place) if self.source is not None and place is not None else None
                self._message(t, str(event.get("dir")), body, ex, event.get("sse"), stored)
                return
            for item in body if isinstance(body, list) else []:
                if isinstance(item, dict):
                    self._message(t, str(event.get("dir")), item, ex, event.get("sse"), None)
        elif event["kind"] == "sse" and event.get("dir") == Direction.S2C.value:
            fields: dict[str, Any] = {k: recorded[k] for k in ("event", "id", "retry") if k in recorded}
            self._server_did(Step(t, sse=fields, ex=ex), ex)  # no data: a priming event, a retry
        elif event["kind"] == "stderr":
            self._server_did(Step(t, stderr=str(event.get("text", ""))), None)
        elif event["kind"] == "listen":
            self.script.listen_url = str(event.get("url", "")) or None
        elif event["kind"] == "eof" and event.get("dir") == Direction.C2S.value:
            self.script.client_eof = t
        elif event["kind"] == "http_request" and ex is not None:
            shape = HttpShape(
                str(event.get("method")),
                str(event.get("path")),
                event.get("query"),
                as_dict(event.get("headers")),
                ex=ex,
                t=t,
            )
            self.http[ex] = shape
            resumed = self.event_owner.get(shape.resumes or "") if shape.method == "GET" else None
            if resumed is not None:  # what this stream carries continues that exchange
                self.by_ex[ex] = resumed
                self.resumed[ex] = resumed
            if shape.method == "GET" and shape.path not in CARD_PATHS and rest_operation("GET", shape.path) is None:
                self.script.streams.append(shape)
            self.script.ends_session |= shape.method == "DELETE"
        elif event["kind"] == "http_response" and ex is not None and ex in self.http:
            self.http[ex].status = int(event.get("status", 0)) or None
            self.http[ex].response_headers = as_dict(event.get("headers"))
        elif event["kind"] == "http_end" and ex is not None:
            self._stream_ended(ex, t)
            self._end_of_exchange(ex)

    # -- messages ----------------------------------------------------------------------------------

    def _stream_ended(self, ex: int, t: float) -> None:
        """An exchange's own stream ended before its response, or a resumed one ended: the replay ends
        the live stream there too."""
        exchange = self.by_ex.get(ex)
        if exchange is None:
            return
        own_stream_cut = (
            exchange.ex == ex and exchange.response_t is None and bool(exchange.http and exchange.http.event_stream)
        )
        if own_stream_cut or ex in self.resumed:
            exchange.add(Step(t, ex=ex, close=True))

    def _message(
        self, t: float, direction: str, message: Json, ex: int | None, sse: Any, stored: tuple[Source, int] | None
    ) -> None:
        if direction == _C2S:
            self._client_sent(t, message, ex, stored)
            return
        shape = self.http.get(ex) if ex is not None else None
        if shape is not None and shape.method == "GET" and shape.path in CARD_PATHS:
            self.script.agent_card = message
            return
        if is_response(message):
            self._server_answered(t, message, ex, sse, stored)
            return
        step = Step(t, message=message, sse=as_dict(sse) or None, ex=ex, stored=stored)
        if is_request(message):
            self.asked.open(S2C, message.get("id"), step)
            self.script.server_requests.append(step)
        self._server_did(step, ex, message)

    def _client_sent(self, t: float, message: Json, ex: int | None, stored: tuple[Source, int] | None) -> None:
        http = self.http.get(ex) if ex is not None else None
        if is_request(message):
            number = len(self.script.exchanges) + 1
            if stored is None:
                request = Request.of(message, self.volatile, http.path if http is not None else None)
                exchange = Exchange(number, t, message, request, ex=ex, http=http)
                params = request.params
            else:
                method = str(message.get("method"))
                method = self.methods.setdefault(method, sys.intern(method))
                sent = message.get("params")
                params = as_dict(sent)
                if not self.volatile.leaves_alone(self.line, self.names):
                    params = self.volatile.normalize(params)
                key = params_key(method, params)
                exchange = Exchange(number, t, {}, ex=ex, http=http, stored=stored, method=method, key=key)
            self.script.exchanges.append(exchange)
            self.script.client_items.append(exchange)  # an exchange is its request's item
            named = name_key(exchange.method, params)
            if named is not None:
                self.script.named.setdefault(named, []).append(exchange)
            self.ids[exchange] = self.open.open(_C2S, message.get("id"), exchange, ex)
            token = progress_token(message)
            if token is not None:
                self.tokens[exchange] = token
            self.open_order.append(exchange)
            if ex is not None:
                self.by_ex[ex] = exchange
        else:
            item = ClientItem(t, message, http=http, stored=stored)
            if is_response(message):
                asked = self.asked.take(_C2S, message.get("id"))
                if asked is not None:
                    asked.answer = ClientAnswer(t, message)
                    item.answers = asked
            self.script.client_items.append(item)
        self._count(sent_key(message), t)

    def _server_answered(
        self, t: float, message: Json, ex: int | None, sse: Any, stored: tuple[Source, int] | None
    ) -> None:
        waiting = self.open.find(S2C, message.get("id"), ex)
        exchange = waiting.item if waiting is not None else None
        if exchange is None:
            exchange = self.by_ex.get(ex) if ex is not None else None
            if exchange is None or exchange.response_t is None:
                return  # a response to nothing we saw
        plain = stored is not None and ex is None and sse is None and not exchange.steps
        if plain and stored is not None and stored[0] is exchange._source:
            exchange.answered_plainly(t, stored)
        else:
            step = Step(t, message=message, sse=as_dict(sse) or None, reply=True, ex=ex, stored=stored)
            exchange.add(step)
            self._owns_event(step, exchange)
            exchange.answered_by(step)
        # An event stream may answer a request many times (A2A streaming): it stays open to the end of
        # its exchange.
        if sse is not None and ex is not None and exchange.ex == ex:
            self.streaming.add(ex)
        else:
            self._close(exchange)

    def _server_did(self, step: Step, ex: int | None, message: Json | None = None) -> None:
        owner = self._owner(message, ex)
        if owner is not None:
            owner.add(step)
            self._owns_event(step, owner)
        elif ex is None or self.http.get(ex, HttpShape("GET", "", None, {})).method == "GET":
            self.script.unprompted.append(Unprompted(step, self.last_sent, self.last_sent_t))

    def _owns_event(self, step: Step, exchange: Exchange) -> None:
        event_id = (step.sse or {}).get("id")
        if isinstance(event_id, str) and event_id:
            self.event_owner[event_id] = exchange

    def _owner(self, message: Json | None, ex: int | None) -> Exchange | None:
        if ex is not None:
            return self.by_ex.get(ex)
        live = [e for e in self.open_order if e.response_t is None or e.ex in self.streaming]
        if message is not None:
            token = progress_token(message)
            if token is not None:
                for exchange in reversed(live):
                    if self.tokens.get(exchange) == token:
                        return exchange
        return live[-1] if live else None

    def _count(self, key: str, t: float) -> None:
        self.sent[key] = self.sent.get(key, 0) + 1
        self.last_sent, self.last_sent_t = (key, self.sent[key]), t

    def _close(self, exchange: Exchange) -> None:
        waiting = self.ids.pop(exchange, None)
        self.tokens.pop(exchange, None)
        if waiting is not None:
            self.open.close(waiting)
        if exchange in self.open_order:
            self.open_order.remove(exchange)

    def _end_of_exchange(self, ex: int) -> None:
        exchange = self.by_ex.get(ex)
        if exchange is not None and ex in self.streaming:
            self.streaming.discard(ex)
            self._close(exchange)

    # -- A2A REST ----------------------------------------------------------------------------------

    def _rest(self, t: float, event: MessageEvent, ex: int | None) -> None:
        rest = as_dict(event.get("rest"))
        body = as_dict(event.get("msg"))
        http = self.http.get(ex) if ex is not None else None
        if event.get("dir") == Direction.C2S.value:
            params = dict(body)
            if rest.get("taskId"):
                params.setdefault("id", rest["taskId"])
            operation = str(rest.get("operation"))
            request = Request(operation, self.volatile.normalize(params), None, rest.get("path"), params)
            exchange = Exchange(len(self.script.exchanges) + 1, t, body, request, ex=ex, http=http, rest=rest)
            self.script.exchanges.append(exchange)
            self.script.client_items.append(exchange)
            self.open_order.append(exchange)
            if ex is not None:
                self.by_ex[ex] = exchange
            self._count(operation, t)
            return
        answered = self.by_ex.get(ex) if ex is not None else None
        if answered is None:
            return
        step = Step(t, message=body, sse=as_dict(event.get("sse")) or None, reply=True)
        answered.add(step)
        answered.answered_by(step)
        if event.get("sse") is not None and ex is not None:
            self.streaming.add(ex)
        else:
            self._close(answered)


def _mentions(value: Any, text: str) -> bool:
    return text in json.dumps(value, ensure_ascii=False)


def load_script(path: Path, volatile: Volatile | None = None, *, parsed: bool = False) -> Script:
    """Read a recording into a script. Raises NotARecording, UnsupportedFormat or OSError.

    ``parsed``: hold every recorded message parsed rather than only where each is (for comparing the
    two)."""
    # Loading allocates millions of objects that all live on: the cyclic collector would walk the
    # growing heap again and again for nothing.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _load(path, volatile, parsed)
    finally:
        if collecting:
            gc.enable()


TASK_WORDS = (b"ask", b"Message", b"message/s", b"message\\/s", b"\\u")
"""What a line that may start or move a task has in it (``tasks/get``, ``taskId``, ``GetTask``,
``SendMessage``, ``message/send``…; ``\\u``: a name spelled with escapes). A recording with none of them
holds no task, and the task pass is not run."""


def _load(path: Path, volatile: Volatile | None, parsed: bool) -> Script:
    volatile = volatile or Volatile()
    with open_recording(path) as reader:
        script = Script(path, reader.header)
        # A pipe or a terminal cannot be read again: what comes from one is held parsed.
        fd = reader.file.fileno()
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
        script.source = Source(reader.file, path, reader.version, volatile) if regular and not parsed else None
        # Which words are in the file at all, looked for once: a line is then looked into only for
        # those (a line past what was looked through, written meanwhile, for all of them).
        scanned, found = _words_in(fd, {*TASK_WORDS, *volatile.names}) if regular else (0, set())
        may_hold_tasks = any(word in found for word in TASK_WORDS)
        loader = _Loader(script, volatile, script.source)
        loader.names = tuple(name for name in volatile.names if name in found)
        feed = loader.feed
        for event in reader.events():
            line, at = reader.line, reader.line_at
            if at is None or at + len(line) > scanned:
                loader.names = volatile.names
                may_hold_tasks = may_hold_tasks or any(word in line for word in TASK_WORDS)
            loader.line = line
            feed(event, None if at is None else place_of(at, line))
        script.skipped = len(reader.skipped.lines)
    if may_hold_tasks:
        script.tasks = _tasks(path)
    created: dict[float, list[Exchange]] = {}
    for exchange in script.exchanges if script.tasks else []:
        if exchange.response_t is not None:
            created.setdefault(exchange.response_t, []).append(exchange)
    for key, task in script.tasks.items():
        for exchange in created.get(task.created_at, []):
            if _mentions(exchange.response, task.id):
                exchange.tasks_created = [*exchange.tasks_created, key]
                break
    return script


def _words_in(fd: int, words: set[bytes]) -> tuple[int, set[bytes]]:
    """How far the file was looked through (256 KiB at a time), and which of ``words`` are in it."""
    size, found = os.fstat(fd).st_size, set[bytes]()
    overlap = max(len(word) for word in words) - 1
    tail, offset = b"", 0
    while offset < size and len(found) < len(words):
        window = tail + os.pread(fd, min(1 << 18, size - offset), offset)
        if len(window) == len(tail):
            return offset, found  # shorter than it was (changed meanwhile): looked through up to here
        offset += len(window) - len(tail)
        found |= {word for word in words - found if word in window}
        tail = window[len(window) - overlap :] if overlap else b""
    return (size if len(found) < len(words) else offset), found


def _tasks(path: Path) -> dict[str, Task]:
    """The recording's tasks, as the report's task tracker reconstructs them."""
    tasks = TaskPass()
    with open_recording(path) as reader:
        for event in reader.events():
            tasks.feed(event)
    return tasks.finish()
