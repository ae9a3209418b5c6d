"""Sans-IO: a recording's events in, finished spans out.

``feed`` returns each call's span as soon as its response is recorded (and each notification at once),
so the live follower and the exporters share one mapping; ``finish`` adds what needs the whole recording:
calls left unanswered, the spans of long-running tasks (from the report) and the recording's root span.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from wiretap import __version__
from wiretap.analysis.model import Report
from wiretap.otel import attributes as attrs
from wiretap.otel.report_spans import report_spans
from wiretap.otel.spans import Link, Span, SpanEvent, SpanKind, parse_traceparent, span_id_for, trace_id_for
from wiretap.recording.event_types import HttpRequestEvent, HttpResponseEvent, MessageEvent, typed
from wiretap.recording.events import Event
from wiretap.recording.origin import at, origin_ns
from wiretap.wire.json_values import as_dict
from wiretap.wire.jsonrpc import Pairing, id_key

MAX_PENDING = 10_000
"""Requests awaiting a response beyond which the oldest is given up on: memory stays bounded under a
flood of requests nobody answers."""
LONG_LIVED = frozenset({"subscriptions/listen"})
"""Requests that stay open by design: no response is not an error for them."""
ROOT_EVENTS = frozenset({"spawn", "spawn_failed", "eof", "signal", "exit", "error", "end"})


@dataclass
class _Exchange:
    session_id: str | None = None
    http_version: str | None = None
    status: int | None = None
    traceparent: tuple[bytes, bytes] | None = None
    """The HTTP request's W3C ``traceparent`` header: what Claude Code sends (not ``_meta``)."""


_NO_EXCHANGE = _Exchange()
"""A message's outside any HTTP exchange (stdio): read, never written."""


@dataclass
class _Peers:
    client: dict[str, Any] = field(default_factory=dict)
    server: dict[str, Any] = field(default_factory=dict)


class RecordingMapper:
    def __init__(
        self, header: Event, *, name: str = "", trace_id: bytes | None = None, parent_id: bytes | None = None
    ) -> None:
        """``name`` keys span ids within a session's trace (the recording's file name); ``parent_id`` is
        the session's root span."""
        self.header = header
        self.origin = origin_ns(header)
        self.trace_id = trace_id or trace_id_for(header)
        self._prefix = f"{name}/" if name else ""
        self.root_id = span_id_for(self.trace_id, self._prefix + "root")
        self.parent_id = parent_id
        self.file_name = name
        self.a2a = False
        self.protocol_version: str | None = None
        self.session_ids: set[str] = set()
        self.last_t = 0.0
        self.messages = 0
        self.complete = False
        self._http_version: str | None = None
        self._ordinal = 0
        self._pending: Pairing[Span] = Pairing()
        self._progress: dict[Hashable, Span] = {}
        self._tokens: dict[bytes, Hashable] = {}
        """The progress token of each pending request that has one, to forget it in O(1)."""
        self._exchanges: dict[int, _Exchange] = {}
        self._peers = _Peers()
        self._root_events: list[SpanEvent] = []
        self._transports: dict[str | None, dict[str, Any]] = {}
        self._task_span_ids: dict[str, bytes] = {}
        self.task_refs: dict[str, tuple[float, float, int]] = {}
        """Tasks calls were about: first and last time, and how many calls."""

    def span_id(self, key: str) -> bytes:
        return span_id_for(self.trace_id, self._prefix + key)

    def task_span_id(self, task_id: str) -> bytes:
        found = self._task_span_ids.get(task_id)
        if found is None:
            found = self._task_span_ids[task_id] = self.span_id(f"task/{task_id}")
        return found

    def ns(self, t: float) -> int:
        return at(self.origin, t)

    @property
    def end_ns(self) -> int:
        return self.ns(self.last_t)

    def _transport(self, http_version: str | None) -> dict[str, Any]:
        """The same for every call of a recording (but for the HTTP version): computed once per version."""
        if http_version not in self._transports:
            self._transports[http_version] = attrs.transport_attributes(self.header, http_version)
        return self._transports[http_version]

    def feed(self, recorded: Event) -> list[Span]:
        self._ordinal += 1
        t = recorded.get("t")
        if isinstance(t, int | float):
            self.last_t = max(self.last_t, float(t))
        if "kind" not in recorded:  # (not from a reader: it skips such a line)
            return []
        event = typed(recorded)
        if event["kind"] == "message":
            return self._message(event)
        if event["kind"] == "http_request":
            self._http_request(event)
        elif event["kind"] == "http_response":
            self._http_response(event)
        elif event["kind"] == "http_end":
            self._exchanges.pop(int(event.get("ex", 0)), None)  # its messages came before it
        elif event["kind"] == "end":
            self.complete = True
        if event["kind"] in ROOT_EVENTS:
            self._root_event(recorded)
        return []

    def _root_event(self, event: Event) -> None:
        detail = {
            k: v for k, v in event.items() if k not in ("t", "kind", "argv") and isinstance(v, str | int | float | bool)
        }
        attributes: dict[str, Any] = {f"wiretap.{k}": v for k, v in detail.items()}
        self._root_events.append(SpanEvent(f"wiretap.{event['kind']}", self.ns(event.get("t", 0.0)), attributes))

    def _http_request(self, event: HttpRequestEvent) -> None:
        headers = as_dict(event.get("headers"))
        exchange = self._exchanges.setdefault(int(event.get("ex", 0)), _Exchange())
        exchange.http_version = str(event.get("version") or "") or None
        self._http_version = self._http_version or exchange.http_version
        exchange.session_id = _header(headers, "mcp-session-id")
        exchange.traceparent = parse_traceparent(_header(headers, "traceparent"))
        if _header(headers, "a2a-version") or str(event.get("path", "")).startswith("/.well-known/agent"):
            self.a2a = True
        if version := _header(headers, "mcp-protocol-version"):
            self.protocol_version = version

    def _http_response(self, event: HttpResponseEvent) -> None:
        headers = as_dict(event.get("headers"))
        exchange = self._exchanges.setdefault(int(event.get("ex", 0)), _Exchange())
        status = event.get("status")
        exchange.status = status if isinstance(status, int) else None
        exchange.session_id = exchange.session_id or _header(headers, "mcp-session-id")

    def _message(self, event: MessageEvent) -> list[Span]:
        self.messages += 1
        msg = event.get("msg")
        if isinstance(event.get("rest"), dict):
            return self._rest(event)
        frames = msg if isinstance(msg, list) else [msg]
        done: list[Span] = []
        for n, frame in enumerate(frames):
            if isinstance(frame, dict):
                span = self._jsonrpc(event, frame, f"{self._ordinal}.{n}" if len(frames) > 1 else str(self._ordinal))
                if span is not None:
                    done.append(span)
        return done

    def _jsonrpc(self, event: MessageEvent, msg: dict[str, Any], key: str) -> Span | None:
        direction = str(event.get("dir", ""))
        method = msg.get("method")
        if isinstance(method, str):
            span = self._start(event, msg, method, key)
            if "id" not in msg:
                return span  # a notification: a zero-length span
            self._pending.open(direction, msg["id"], span, event.get("ex"))
            return self._evict() if len(self._pending) > MAX_PENDING else None
        if "id" in msg and ("result" in msg or "error" in msg):
            answered = self._pending.take(direction, msg["id"], event.get("ex"), error="error" in msg)
            if answered is not None:
                self._respond(answered, event, msg)
            return answered
        return None

    def _exchange(self, event: MessageEvent) -> _Exchange:
        return self._exchanges.get(int(event.get("ex", 0)), _NO_EXCHANGE) if "ex" in event else _NO_EXCHANGE

    def _start(self, event: MessageEvent, msg: dict[str, Any], method: str, key: str) -> Span:
        params = attrs.params_of(msg)
        a2a = method in attrs.A2A_METHODS or (self.a2a and method in attrs.A2A_TASK_TARGETED)
        self.a2a = self.a2a or method in attrs.A2A_METHODS
        name, attributes = attrs.a2a_call(method, msg) if a2a else attrs.mcp_call(method, msg)
        if (rid := attrs.request_id(msg.get("id"))) is not None:
            attributes["jsonrpc.request.id"] = rid
        if (jsonrpc := msg.get("jsonrpc")) != "2.0" and isinstance(jsonrpc, str):
            attributes["jsonrpc.protocol.version"] = jsonrpc
        meta = attrs.meta_of(params)
        if method == "initialize":
            self._peers.client = as_dict(params.get("clientInfo"))
        elif meta and (client := as_dict(meta.get("io.modelcontextprotocol/clientInfo"))):
            self._peers.client = client
        span = self._span(event, name, attributes, key)
        if not a2a:
            self._mcp_context(span, event)
        task = attrs.targeted_task(method, params, a2a)
        header = self._exchange(event).traceparent if event.get("dir") == "c2s" else None
        self._place(span, params, task, header)
        if meta and (token := meta.get("progressToken")) is not None and "id" in msg:
            self._progress[id_key(token)] = span
            self._tokens[span.span_id] = id_key(token)
        return span

    def _span(self, event: MessageEvent, name: str, attributes: dict[str, Any], key: str) -> Span:
        t = self.ns(float(event.get("t", 0.0)))
        exchange = self._exchange(event)
        attributes.update(self._transport(exchange.http_version or self._http_version))
        attributes["wiretap.direction"] = str(event.get("dir", ""))
        return Span(self.trace_id, self.span_id(f"call/{key}"), self.root_id, name, SpanKind.CLIENT, t, t, attributes)

    def _mcp_context(self, span: Span, event: MessageEvent) -> None:
        if session := self._exchange(event).session_id:
            span.attributes["mcp.session.id"] = session
            self.session_ids.add(session)
        if "mcp.protocol.version" not in span.attributes and self.protocol_version:
            span.attributes["mcp.protocol.version"] = self.protocol_version
        elif self.protocol_version is None and isinstance(version := span.attributes.get("mcp.protocol.version"), str):
            self.protocol_version = version  # a stateless session names its version in each request's _meta

    def _place(
        self, span: Span, params: dict[str, Any], task: str | None, header: tuple[bytes, bytes] | None = None
    ) -> None:
        """The parent: a ``traceparent`` the sender put in ``_meta`` (the MCP conventions' carrier), else
        the one in its HTTP request's header, else the task the call is about, else the call whose progress
        this reports, else the recording. A header that differs from ``_meta`` is the transport's context:
        linked, as the conventions say."""
        remote = attrs.traceparent_of(params) or header
        if remote is not None:
            span.trace_id, span.parent_id = remote
            span.links.append(Link(self.trace_id, self.root_id))
            if header is not None and header != remote:
                span.links.append(Link(*header))
            if task is not None:
                span.attributes["wiretap.task.id"] = task
            return
        if task is not None:
            span.attributes["wiretap.task.id"] = task
            span.parent_id = self.task_span_id(task)
            first, _, calls = self.task_refs.get(task, (self.last_t, self.last_t, 0))
            self.task_refs[task] = (first, self.last_t, calls + 1)
            return
        token = params.get("progressToken")
        if span.attributes.get("mcp.method.name") == "notifications/progress" and token is not None:
            owner = self._progress.get(id_key(token))
            if owner is not None:
                span.trace_id, span.parent_id = owner.trace_id, owner.span_id

    def _respond(self, span: Span, event: MessageEvent, msg: dict[str, Any]) -> None:
        span.end_ns = self.ns(float(event.get("t", 0.0)))
        self._forget_progress(span)
        error = msg.get("error")
        result = msg.get("result")
        if isinstance(error, dict):
            code = str(error.get("code", "error"))
            span.attributes["rpc.response.status_code"] = code
            span.error(code, str(error.get("message", "")))
        elif isinstance(result, dict):
            self._result(span, result)
        if "mcp.method.name" in span.attributes:
            self._mcp_context(span, event)

    def _result(self, span: Span, result: dict[str, Any]) -> None:
        if result.get("isError") is True:
            span.error("tool_error", _first_text(result))
        method = span.attributes.get("mcp.method.name")
        if method == "initialize" or "supportedVersions" in result:
            self._peers.server = as_dict(result.get("serverInfo")) or as_dict(
                attrs.meta_of(result).get("io.modelcontextprotocol/serverInfo")
            )
            if version := result.get("protocolVersion"):
                self.protocol_version = str(version)
        if (task := attrs.created_task(result)) and "wiretap.task.id" not in span.attributes:
            span.attributes["wiretap.task.id"] = task

    def _rest(self, event: MessageEvent) -> list[Span]:
        rest = event["rest"]
        key = ("rest", str(event.get("ex", self._ordinal)))
        direction = str(event.get("dir", ""))
        self.a2a = True
        if event.get("dir") == "c2s":
            name, attributes = attrs.a2a_rest_call(rest)
            span = self._span(event, name, attributes, str(self._ordinal))
            task = rest.get("taskId") if isinstance(rest.get("taskId"), str) else None
            self._place(span, {}, task, self._exchange(event).traceparent)  # (c2s only)
            self._pending.open(direction, key, span)
            return []
        answered = self._pending.take(direction, key)
        if answered is None:
            return []
        return [self._rest_response(answered, event)]

    def _rest_response(self, span: Span, event: MessageEvent) -> Span:
        span.end_ns = self.ns(float(event.get("t", 0.0)))
        status = self._exchange(event).status
        if status is not None:
            span.attributes["http.response.status_code"] = status
            if status >= 400:
                span.error(str(status), _first_text(event.get("msg")))
        if isinstance(msg := event.get("msg"), dict) and (task := attrs.created_task(msg)):
            span.attributes.setdefault("wiretap.task.id", task)
        return span

    def _forget_progress(self, span: Span) -> None:
        token = self._tokens.pop(span.span_id, None)
        if token is not None:
            self._progress.pop(token, None)

    def _evict(self) -> Span:
        oldest = self._pending.first()
        assert oldest is not None
        self._pending.close(oldest)
        span = oldest.item
        self._forget_progress(span)
        return self._unanswered(span)

    def _unanswered(self, span: Span) -> Span:
        span.end_ns = self.end_ns
        span.attributes["wiretap.unanswered"] = True
        if span.attributes.get("mcp.method.name") not in LONG_LIVED:
            span.error("no_response", "no response was recorded")
        return span

    def finish(self, report: Report | None) -> list[Span]:
        """Unanswered calls, task spans and the root; ``report``: the recording's report, if any."""
        done = [self._unanswered(span) for span in self._pending.waiting()]
        self._pending = Pairing()
        root = self.root_span()
        done += report_spans(self, root, report)
        done.append(root)
        return done

    def root_span(self) -> Span:
        h = self.header
        name = str(h.get("name") or "recording")
        attributes: dict[str, Any] = {
            "wiretap.recording.name": name,
            "wiretap.server.name": str(self._peers.server.get("name") or name),
            "wiretap.transport": str(h.get("transport") or ""),
            "wiretap.version": __version__,
            "wiretap.recorded_by": str(h.get("wiretap") or ""),
            "wiretap.format": int(h.get("format") or 0),
            "wiretap.redacted": bool(h.get("redacted", True)),
            "wiretap.complete": self.complete,
            "wiretap.messages": self.messages,
            "wiretap.protocol": "a2a" if self.a2a else "mcp",
            **self._transport(self._http_version),
        }
        if self.file_name:
            attributes["wiretap.recording.file"] = PurePath(self.file_name).name
        attributes.update(_peer_attributes("client", self._peers.client))
        if isinstance(version := self._peers.server.get("version"), str):
            attributes["wiretap.server.version"] = version
        if self.protocol_version:
            attributes["mcp.protocol.version"] = self.protocol_version
        if len(self.session_ids) == 1:
            attributes["mcp.session.id"] = next(iter(self.session_ids))
        return Span(
            self.trace_id, self.root_id, self.parent_id, f"wiretap {name}", SpanKind.INTERNAL,
            self.origin, self.end_ns, attributes, list(self._root_events),
        )  # fmt: skip


def _header(headers: dict[str, Any], name: str) -> str | None:
    value = headers.get(name)
    if isinstance(value, list):
        value = value[0] if value else None
    return value if isinstance(value, str) and value else None


def _peer_attributes(side: str, info: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key in ("name", "version"):
        if isinstance(info.get(key), str):
            out[f"wiretap.{side}.{key}"] = info[key]
    return out


def _first_text(payload: object) -> str:
    """A short status description from a tool error result or an error body."""
    if isinstance(payload, dict):
        for item in payload.get("content") or []:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                return str(item["text"])[:200]
        for key in ("message", "detail", "title"):
            if isinstance(payload.get(key), str):
                return str(payload[key])[:200]
    return ""
