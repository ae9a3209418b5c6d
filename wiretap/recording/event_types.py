"""The shape of each kind of recording line, as a ``TypedDict``: what mypy checks a writer's and a
reader's fields against.

At run time these are plain dicts (``Event``), exactly what the JSON line holds. The keys and which of
them are required follow ``wiretap/schemas/recording.schema.json``; ``tests/recording/test_event_types.py``
fails when the two drift apart. A reader turns an event it read into ``AnyEvent`` with ``typed()``,
narrows it by ``event["kind"]``, and still uses ``.get`` for a ``NotRequired`` key, and for any key of a
recording it did not write: an older or hand-made file may lack it.

Why one module: the shapes are the format's one vocabulary, read side by side with the schema.

No ``from __future__ import annotations`` here: ``__required_keys__`` reads the ``NotRequired`` of
evaluated annotations only (Python 3.11).
"""

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict, cast

JSON = Any
"""A JSON value as the peer sent it (a message, an agent card's fields, a tool's input)."""
Headers = dict[str, str | list[str]]
"""HTTP header names lower-case; a repeated header as a list."""


class RestCall(TypedDict):
    """An A2A HTTP+JSON (REST) operation: a message's ``rest``."""

    operation: str
    method: str
    path: str
    taskId: NotRequired[str]


class StreamBase(TypedDict):
    """The fields every event of one recorded stream of messages carries (a ``StreamSpec``'s ``base``)."""

    dir: str
    ex: NotRequired[int]
    rest: NotRequired[RestCall]


class WebSocketMessage(TypedDict, total=False):
    """A message's ``ws``: it came in WebSocket frames."""

    fragments: int
    compressed: bool
    compressed_size: int


class SSEFields(TypedDict, total=False):
    """An SSE event's own fields (a message's ``sse``, or an ``sse`` event's)."""

    event: str
    id: str
    retry: int
    incomplete: bool


class MessageExtras(TypedDict, total=False):
    """What a message event may carry after its frame's fields: how it came."""

    eol: str
    sse: SSEFields
    ws: WebSocketMessage


class HeaderLine(TypedDict):
    kind: Literal["header"]
    format: int
    wiretap: str
    started: str
    clock: str
    transport: str
    name: str
    argv: NotRequired[list[str]]
    cwd: NotRequired[str | None]
    pid: NotRequired[int]
    redacted: NotRequired[bool]
    upstream: NotRequired[str]
    mode: NotRequired[str]
    max_size: NotRequired[int | None]
    monotonic_origin: NotRequired[float]
    wall_origin_ns: NotRequired[int]
    imported: NotRequired[bool]
    imported_from: NotRequired[str]
    known: NotRequired[list[str]]
    unknown: NotRequired[list[str]]


class MessageEvent(TypedDict):
    t: float
    kind: Literal["message"]
    dir: str
    size: int
    ex: NotRequired[int]
    msg: NotRequired[JSON]
    raw: NotRequired[str]
    raw_base64: NotRequired[str]
    redacted: NotRequired[int]
    eol: NotRequired[str]
    truncated: NotRequired[bool]
    rest: NotRequired[RestCall]
    sse: NotRequired[SSEFields]
    ws: NotRequired[WebSocketMessage]


class StderrEvent(TypedDict):
    t: float
    kind: Literal["stderr"]
    text: str
    truncated: NotRequired[bool]
    size: NotRequired[int]


# A ``...Fields`` shape is what a relay hands ``Recorder.event`` for that kind: the event but for its
# ``t`` and ``kind``, which the recorder adds.


class SpawnFields(TypedDict):
    argv: list[str]
    pid: int


class SpawnEvent(SpawnFields):
    t: float
    kind: Literal["spawn"]


class SpawnFailedFields(TypedDict):
    argv: list[str]
    error: str
    status: int


class SpawnFailedEvent(SpawnFailedFields):
    t: float
    kind: Literal["spawn_failed"]


class EofEvent(TypedDict):
    t: float
    kind: Literal["eof"]
    dir: str


class SignalFields(TypedDict):
    signal: str
    signum: int
    forwarded: NotRequired[bool]


class SignalEvent(SignalFields):
    t: float
    kind: Literal["signal"]


class ExitFields(TypedDict):
    status: int
    code: NotRequired[int]
    signal: NotRequired[str]
    signum: NotRequired[int]


class ExitEvent(ExitFields):
    t: float
    kind: Literal["exit"]


class ErrorFields(TypedDict):
    error: str
    message: str
    dir: NotRequired[str]
    ex: NotRequired[int]
    conn: NotRequired[int]
    rest: NotRequired[RestCall]
    since: NotRequired[float]
    lost: NotRequired[int]
    bytes: NotRequired[int]
    chunks: NotRequired[int]
    lines: NotRequired[int]
    events: NotRequired[int]
    max_size: NotRequired[int]
    size: NotRequired[int]


class ErrorEvent(ErrorFields):
    t: float
    kind: Literal["error"]


class Capped(TypedDict):
    """What the size cap kept out of the recording: an end event's ``capped``."""

    since: float
    messages: int
    events: int
    bytes: int


class EndEvent(TypedDict):
    t: float
    kind: Literal["end"]
    ended: NotRequired[str]
    written: NotRequired[int]
    lost: NotRequired[int]
    signals: NotRequired[list[str]]
    message: NotRequired[str]
    dropped: NotRequired[dict[str, int]]
    capped: NotRequired[Capped]
    lost_unknown: NotRequired[bool]
    recorder_max_rss: NotRequired[int]


class SseEvent(TypedDict):
    t: float
    kind: Literal["sse"]
    dir: str
    ex: int
    event: NotRequired[str]
    id: NotRequired[str]
    retry: NotRequired[int]
    incomplete: NotRequired[bool]
    rest: NotRequired[RestCall]


class ConnectionFields(TypedDict):
    conn: int | None
    state: str
    peer: NotRequired[str | None]
    error: NotRequired[str]
    moved: NotRequired[bool]


class ConnectionEvent(ConnectionFields):
    t: float
    kind: Literal["connection"]


class HttpRequestFields(TypedDict):
    ex: int
    method: str
    path: str
    conn: NotRequired[int | None]
    query: NotRequired[str | None]
    version: NotRequired[str]
    headers: NotRequired[Headers]


class HttpRequestEvent(HttpRequestFields):
    t: float
    kind: Literal["http_request"]


class HttpResponseFields(TypedDict):
    ex: int
    status: int
    reason: NotRequired[str]
    headers: NotRequired[Headers]
    generated: NotRequired[bool]


class HttpResponseEvent(HttpResponseFields):
    t: float
    kind: Literal["http_response"]


class HttpEndEvent(TypedDict):
    t: float
    kind: Literal["http_end"]
    ex: int
    outcome: str
    bytes_in: NotRequired[int]
    bytes_out: NotRequired[int]


class RewriteFields(TypedDict):
    ex: int
    what: str
    changed: NotRequired[list[dict[str, str]]]
    left_alone: NotRequired[list[dict[str, str]]]


class RewriteEvent(RewriteFields):
    t: float
    kind: Literal["rewrite"]


class ListenFields(TypedDict):
    url: str
    upstream: str
    mode: NotRequired[str]


class ListenEvent(ListenFields):
    t: float
    kind: Literal["listen"]


class WebSocketEvent(TypedDict):
    t: float
    kind: Literal["websocket"]
    dir: str
    ex: int
    opcode: str
    size: int
    code: NotRequired[int]
    reason: NotRequired[str]
    fragments: NotRequired[int]
    compressed: NotRequired[bool]
    unread: NotRequired[bool]
    compressed_size: NotRequired[int]
    truncated: NotRequired[bool]
    incomplete: NotRequired[bool]


class ObservedEvent(TypedDict):
    t: float
    kind: Literal["observed"]
    what: str
    text: NotRequired[str]
    level: NotRequired[str]
    redacted: NotRequired[int]
    tool: NotRequired[str]
    tool_use_id: NotRequired[str | None]
    input: NotRequired[JSON]
    outcome: NotRequired[str]
    error: NotRequired[str]
    result: NotRequired[JSON]
    result_is_error: NotRequired[bool]
    duration: NotRequired[float]
    logged_duration: NotRequired[str]
    logged_seconds: NotRequired[float]
    logged_resolution: NotRequired[float]
    timeout_ms: NotRequired[int]
    transport: NotRequired[str]
    protocol_version: NotRequired[str]
    era: NotRequired[str]
    server_info: NotRequired[JSON]
    capabilities: NotRequired[JSON]
    signal: NotRequired[str]
    how: NotRequired[str]


AnyEvent = (
    MessageEvent
    | StderrEvent
    | SpawnEvent
    | SpawnFailedEvent
    | EofEvent
    | SignalEvent
    | ExitEvent
    | ErrorEvent
    | EndEvent
    | SseEvent
    | ConnectionEvent
    | HttpRequestEvent
    | HttpResponseEvent
    | HttpEndEvent
    | RewriteEvent
    | ListenEvent
    | WebSocketEvent
    | ObservedEvent
)
"""Every event (every line after the header), told apart by ``kind``."""

BY_KIND: dict[str, type] = {
    "header": HeaderLine,
    "message": MessageEvent,
    "stderr": StderrEvent,
    "spawn": SpawnEvent,
    "spawn_failed": SpawnFailedEvent,
    "eof": EofEvent,
    "signal": SignalEvent,
    "exit": ExitEvent,
    "error": ErrorEvent,
    "end": EndEvent,
    "sse": SseEvent,
    "connection": ConnectionEvent,
    "http_request": HttpRequestEvent,
    "http_response": HttpResponseEvent,
    "http_end": HttpEndEvent,
    "rewrite": RewriteEvent,
    "listen": ListenEvent,
    "websocket": WebSocketEvent,
    "observed": ObservedEvent,
}
"""The TypedDict of each kind (``Kind``'s values)."""


def typed(event: Mapping[str, Any]) -> AnyEvent:
    """An event read from a recording, as the union mypy tells apart by ``event["kind"]``.

    Nothing is checked at run time: the dict is returned as it is. A reader narrows it by its kind and
    still reads with ``.get`` what may be absent: a kind it does not know, an older or a hand-made
    recording can lack any field but ``t`` and ``kind`` (which the reader guarantees)."""
    return cast(AnyEvent, event)
