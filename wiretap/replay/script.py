"""A recording read back as a script: every request the client sent, with what the server sent for it.

Pairing is by JSON-RPC id (and, over HTTP, by exchange). A message the server sent before a response
belongs to a request still open when it was sent: the one whose progress token it carries, the one whose
HTTP exchange carried it, or else the latest one opened. What belongs to none was sent unprompted.
loader.py builds a script from a recording.

A recorded message is kept as where it is in the recording (source.py), not parsed: what the replay
needs of it to pair and to match (its method, id, the index's key) is worked out once while loading.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from wiretap.analysis.task import Task
from wiretap.recording.events import Event
from wiretap.replay.keys import default_key
from wiretap.replay.matchers import Request
from wiretap.replay.source import Source
from wiretap.wire.json_values import as_dict
from wiretap.wire.jsonrpc import id_key, is_notification, is_request, is_response

__all__ = ["Json", "Step", "id_key", "is_notification", "is_request", "is_response"]

Json = dict[str, Any]
POLL_METHODS = frozenset({"tasks/get", "GetTask"})


def sent_key(message: Json) -> str:
    """How the client's messages are counted: by method; an answer to the server is a ``response``."""
    method = message.get("method")
    return method if isinstance(method, str) else "response"


def progress_token(message: Json) -> Any:
    params = as_dict(message.get("params"))
    return params.get("progressToken", as_dict(params.get("_meta")).get("progressToken"))


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
        params = as_dict(self.message.get("params"))
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
