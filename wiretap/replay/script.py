"""A recording read back as a script: every request the client sent, with what the server sent for it.

Pairing is by JSON-RPC id (and, over HTTP, by exchange). A message the server sent before a response
belongs to a request still open when it was sent: the one whose progress token it carries, the one whose
HTTP exchange carried it, or else the latest one opened. What belongs to none was sent unprompted.
The same recording is fed to the report's task tracker, so that task states come from one reconstruction.

A recorded message is kept as where it is in the recording (source.py), not parsed: what the replay
needs of it to pair and to match (its method, id, the index's key) is worked out once while loading.
"""

from __future__ import annotations

import gc
import json
import os
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from wiretap.analysis.task_pass import TaskPass
from wiretap.analysis.tasks import Task
from wiretap.recording.events import Direction, Event, Kind
from wiretap.recording.reader import open_recording
from wiretap.replay.keys import default_key, name_key, params_key
from wiretap.replay.matchers import Request
from wiretap.replay.source import Source, place_of
from wiretap.replay.volatile import Volatile
from wiretap.wire.http.a2a_rest import rest_operation
from wiretap.wire.http.rewrite import CARD_PATHS
from wiretap.wire.jsonrpc import S2C, Pairing, Waiting, id_key, is_notification, is_request, is_response

__all__ = ["Json", "Step", "id_key", "is_notification", "is_request", "is_response"]

Json = dict[str, Any]
POLL_METHODS = frozenset({"tasks/get", "GetTask"})
_MESSAGE, _C2S = Kind.MESSAGE.value, Direction.C2S.value


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def sent_key(message: Json) -> str:
    """How the client's messages are counted: by method; an answer to the server is a ``response``."""
    method = message.get("method")
    return method if isinstance(method, str) else "response"


def progress_token(message: Json) -> Any:
    params = _dict(message.get("params"))
    return params.get("progressToken", _dict(params.get("_meta")).get("progressToken"))


@dataclass(eq=False, slots=True)
class ClientAnswer:
    """The client's recorded response to a request the server sent it."""

    t: float
    message: Json


class _Stored:
    """Something holding a recorded message: parsed, or only where it is in the recording (read back and
    parsed each time it is asked for; a replay of a long recording would not fit in memory otherwise)."""

    __slots__ = ("_message", "_source")

    _message: Json | int | None
    _source: Source | None

    @property
    def message(self) -> Json | None:
        body = self._message
        if isinstance(body, int):
            assert self._source is not None
            return self._source.message(body)
        return body


class Step(_Stored):
    """One thing the server did: a message, a non-JSON stdout frame, or a line of stderr.

    ``answer``: for a request to the client (elicitation, roots, sampling), how the client answered.
    ``reply``: whether it answers the exchange's request (a JSON-RPC response, or an A2A REST response body).
    ``ex``: the HTTP exchange whose body carried it (None on stdio).
    ``close``: the server ended that exchange's event stream here (before the response: the client resumes).
    """

    __slots__ = ("answer", "close", "ex", "raw", "reply", "sse", "stderr", "t")

    def __init__(
        self,
        t: float,
        message: Json | None = None,
        raw: str | None = None,
        stderr: str | None = None,
        sse: dict[str, Any] | None = None,
        answer: ClientAnswer | None = None,
        reply: bool = False,
        ex: int | None = None,
        close: bool = False,
        *,
        stored: tuple[Source, int] | None = None,
    ) -> None:
        self.t = t
        self._message, self._source = (stored[1], stored[0]) if stored is not None else (message, None)
        self.raw = raw
        self.stderr = stderr
        self.sse = sse
        self.answer = answer
        self.reply = reply
        self.ex = ex
        self.close = close

    @property
    def asks_client(self) -> bool:
        message = None if self.reply else self.message
        return message is not None and is_request(message)


@dataclass(slots=True)
class HttpShape:
    """How an exchange travelled over HTTP."""

    method: str
    path: str
    query: str | None
    request_headers: dict[str, Any]
    status: int | None = None
    response_headers: dict[str, Any] = field(default_factory=dict)
    ex: int | None = None
    t: float = 0.0
    """When the client sent the request."""

    @property
    def resumes(self) -> str | None:
        """The ``Last-Event-ID`` a GET resumed an event stream after (SEP-1699)."""
        value = self.request_headers.get("last-event-id")
        return value if isinstance(value, str) and value else None

    @property
    def event_stream(self) -> bool:
        content_type = str(self.response_headers.get("content-type", ""))
        return content_type.split(";")[0].strip().lower() == "text/event-stream"


class Exchange(_Stored):
    """A request the client sent and everything the server sent for it, the response last.

    ``number``: 1-based, in the order the requests were sent. ``tasks_created``: keys (``mcp:ID``,
    ``a2a:ID``) of the tasks its response created. ``key``: what the index files it under for the default
    ``match_on`` (keys.default_key), worked out once while loading.
    """

    __slots__ = (
        "_place",
        "_reply",
        "_request",
        "_steps",
        "ex",
        "http",
        "key",
        "method",
        "number",
        "rest",
        "t",
        "tasks_created",
        "used",
    )

    def __init__(
        self,
        number: int,
        t: float,
        message: Json,
        request: Request | None = None,
        steps: Sequence[Step] = (),
        ex: int | None = None,
        http: HttpShape | None = None,
        rest: dict[str, Any] | None = None,
        *,
        stored: tuple[Source, int] | None = None,
        method: str | None = None,
        key: int | None = None,
    ) -> None:
        self.number = number
        self.t = t
        self._message, self._source = (stored[1], stored[0]) if stored is not None else (message, None)
        self._request = request if stored is None else None
        self.method = method if method is not None else request.method if request is not None else ""
        self.key = key if key is not None or request is None else default_key(request)
        self._steps: Sequence[Step] | float = steps
        """A tuple while it holds one step, a list once it holds more; for a lone plain response (most
        exchanges: stdio, nothing before it), when it came, with ``_place`` where it is."""
        self._place = 0
        self.ex = ex
        self.http = http
        self.rest = rest
        self.tasks_created: list[str] | tuple[()] = ()
        self.used = 0
        self._reply: Step | None = None

    @property
    def message(self) -> Json:
        return super().message or {}

    @property
    def request(self) -> Request:
        """The request as the matchers see it (worked out again each time for a stored one)."""
        if self._request is not None:
            return self._request
        assert self._source is not None
        path = self.http.path if self.http is not None else None
        return Request.of(self.message, self._source.volatile, path)

    @property
    def steps(self) -> Sequence[Step]:
        """What the server did for it, the response last (a lone plain response: made when asked for)."""
        steps = self._steps
        return (self._plain_reply(steps),) if isinstance(steps, float) else steps

    def _plain_reply(self, t: float) -> Step:
        assert self._source is not None
        return Step(t, reply=True, stored=(self._source, self._place))

    def add(self, step: Step) -> None:
        steps = self._steps
        if isinstance(steps, list):
            steps.append(step)
        elif isinstance(steps, float):
            self._reply = self._plain_reply(steps)
            self._steps = [self._reply, step]
        else:
            self._steps = (step,) if not steps else [*steps, step]

    def answered_plainly(self, t: float, stored: tuple[Source, int]) -> None:
        """Its response came at ``t``, at this place, with nothing before it (and no event-stream field)."""
        assert not self._steps and self._reply is None and stored[0] is self._source
        self._steps, self._place = t, stored[1]

    @property
    def exchange(self) -> Exchange:
        """As the client's item (ClientItem): it is its own exchange."""
        return self

    @property
    def answers(self) -> None:
        """As the client's item: it answers no request of the server's."""
        return None

    def answered_by(self, step: Step) -> None:
        """``step`` is the response (the first that answered the request)."""
        if self._reply is None:
            self._reply = step

    @property
    def response(self) -> Json | None:
        if isinstance(self._steps, float):
            assert self._source is not None
            return self._source.message(self._place)
        return None if self._reply is None else self._reply.message

    @property
    def response_t(self) -> float | None:
        if isinstance(self._steps, float):
            return self._steps
        return None if self._reply is None else self._reply.t

    @property
    def latency(self) -> float | None:
        at = self.response_t
        return None if at is None else at - self.t

    def describe(self) -> str:
        return f"#{self.number} {self.request.describe()} at {self.t:.2f} s"

    def task_key(self) -> str | None:
        """For a task poll or cancel: the task it names."""
        params = _dict(self.message.get("params"))
        return poll_task_key(self.request.method, params)


def poll_task_key(method: str, params: dict[str, Any]) -> str | None:
    if method in ("GetTask", "CancelTask") or ("id" in params and "taskId" not in params):
        return f"a2a:{params['id']}" if params.get("id") not in (None, "") else None
    return f"mcp:{params['taskId']}" if params.get("taskId") not in (None, "") else None


@dataclass(eq=False, slots=True)
class Unprompted:
    """Something the server did with no request open."""

    step: Step
    after: tuple[str, int] | None
    """The client's last message before it: its method (``response`` for an answer) and which of the
    client's messages with that method it was (1 for the first); None if it came before any."""
    after_t: float
    """When that message was sent (0 if none)."""


class ClientItem(_Stored):
    """One message the client sent, in order; a response answers a request the server sent."""

    __slots__ = ("answers", "exchange", "http", "rest", "t")

    def __init__(
        self,
        t: float,
        message: Json,
        exchange: Exchange | None = None,
        answers: Step | None = None,
        http: HttpShape | None = None,
        rest: dict[str, Any] | None = None,
        *,
        stored: tuple[Source, int] | None = None,
    ) -> None:
        self.t = t
        self._message, self._source = (stored[1], stored[0]) if stored is not None else (message, None)
        self.exchange = exchange
        self.answers = answers
        self.http = http
        self.rest = rest

    @property
    def message(self) -> Json:
        return super().message or {}


Sent = ClientItem | Exchange
"""What the client sent: an exchange stands for the request that opened it."""


@dataclass
class Script:
    path: Path
    header: Event
    exchanges: list[Exchange] = field(default_factory=list)
    unprompted: list[Unprompted] = field(default_factory=list)
    client_items: list[Sent] = field(default_factory=list)
    """An exchange stands for the request that opened it."""
    server_requests: list[Step] = field(default_factory=list)
    """Every request the server sent the client, with the client's recorded answer."""
    client_eof: float | None = None
    """When the client closed the server's stdin (stdio)."""
    streams: list[HttpShape] = field(default_factory=list)
    """GET event streams the client opened (HTTP)."""
    ends_session: bool = False
    """Whether the client ended its HTTP session with DELETE."""
    tasks: dict[str, Task] = field(default_factory=dict)
    agent_card: Json | None = None
    """The A2A agent card the client fetched (HTTP), as the proxy served it."""
    listen_url: str | None = None
    """Where the recording proxy listened: the card's URLs point there."""
    skipped: int = 0
    source: Source | None = None
    """Where the recorded messages are read back from (None: they are held parsed)."""
    named: dict[int, list[Exchange]] = field(default_factory=dict)
    """The exchanges by the tool, prompt or resource they asked for (keys.name_key)."""
    _polls: dict[str, list[Exchange]] | None = field(default=None, repr=False)

    @property
    def transport(self) -> str:
        return str(self.header.get("transport", "stdio"))

    def base_path(self) -> str:
        """The path a client starts from (HTTP): the recorded upstream's, as the proxy showed it."""
        upstream = self.header.get("upstream")
        if isinstance(upstream, str) and upstream:
            path = urlsplit(upstream).path
            return "" if path in ("", "/") else path
        return self.post_path()

    def post_path(self) -> str:
        """The path clients posted JSON-RPC to (HTTP); ``/`` when there was none."""
        for exchange in self.exchanges:
            if exchange.http is not None and exchange.rest is None:
                return exchange.http.path
        return "/"

    def card_origin(self) -> str:
        """``scheme://host:port`` of the recording proxy, which the recorded card's URLs name."""
        parts = urlsplit(self.listen_url or "")
        return f"{parts.scheme}://{parts.netloc}" if parts.netloc else ""

    def polls(self, task_key: str) -> list[Exchange]:
        if self._polls is None:
            self._polls = {}
            for e in self.exchanges:
                if e.method in POLL_METHODS and e.response_t is not None:
                    self._polls.setdefault(e.task_key() or "", []).append(e)
        return list(self._polls.get(task_key, []))


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

    def feed(self, event: Event, place: int | None = None) -> None:
        """``place``: where the event's line is in the source (``place_of``), when it is known."""
        kind, t = event.get("kind"), float(event["t"])
        ex = event.get("ex")
        ex = ex if isinstance(ex, int) else None
        if kind == _MESSAGE:
            body = event.get("msg")
            if "rest" in event:
                self._rest(t, event, ex)
                return
            if "raw" in event and event.get("dir") == Direction.S2C.value:
                self._server_did(Step(t, raw=str(event["raw"]), sse=_dict(event.get("sse")) or None, ex=ex), ex)
            if isinstance(body, dict):
                stored = (self.source, place) if self.source is not None and place is not None else None
                self._message(t, str(event.get("dir")), body, ex, event.get("sse"), stored)
                return
            for item in body if isinstance(body, list) else []:
                if isinstance(item, dict):
                    self._message(t, str(event.get("dir")), item, ex, event.get("sse"), None)
        elif kind == Kind.SSE and event.get("dir") == Direction.S2C.value:
            fields: dict[str, Any] = {k: event[k] for k in ("event", "id", "retry") if k in event}
            self._server_did(Step(t, sse=fields, ex=ex), ex)  # no data: a priming event, a retry
        elif kind == Kind.STDERR:
            self._server_did(Step(t, stderr=str(event.get("text", ""))), None)
        elif kind == Kind.LISTEN:
            self.script.listen_url = str(event.get("url", "")) or None
        elif kind == Kind.EOF and event.get("dir") == Direction.C2S.value:
            self.script.client_eof = t
        elif kind == Kind.HTTP_REQUEST and ex is not None:
            shape = HttpShape(
                str(event.get("method")),
                str(event.get("path")),
                event.get("query"),
                _dict(event.get("headers")),
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
        elif kind == Kind.HTTP_RESPONSE and ex is not None and ex in self.http:
            self.http[ex].status = int(event.get("status", 0)) or None
            self.http[ex].response_headers = _dict(event.get("headers"))
        elif kind == Kind.HTTP_END and ex is not None:
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
        step = Step(t, message=message, sse=_dict(sse) or None, ex=ex, stored=stored)
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
                params = sent if isinstance(sent, dict) else {}
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
            step = Step(t, message=message, sse=_dict(sse) or None, reply=True, ex=ex, stored=stored)
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

    def _rest(self, t: float, event: Event, ex: int | None) -> None:
        rest = _dict(event.get("rest"))
        body = _dict(event.get("msg"))
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
        step = Step(t, message=body, sse=_dict(event.get("sse")) or None, reply=True)
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
