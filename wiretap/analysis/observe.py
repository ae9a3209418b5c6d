"""Streams over a recording's events and keeps what a behaviour profile needs (see profile.py)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from wiretap.analysis.behaviour import Handshake, HttpTraits, ServerRequest, Shutdown, ShutdownStep, Step
from wiretap.analysis.conversation import Message
from wiretap.recording.events import Direction, Event, Kind
from wiretap.wire.json_values import as_dict
from wiretap.wire.jsonrpc import REQUEST, RESPONSE, Pairing, id_key
from wiretap.wire.versions import Era, parse_version

HANDSHAKES = ("initialize", "server/discover")
LONG_LIVED = frozenset({"subscriptions/listen"})
POLLS = frozenset({"tasks/get", "GetTask"})
"""Left out of the method sequence: where a poll falls among the client's other requests is the clock's
(tasks running side by side interleave their polls as it has it); its task's cadence is the behaviour.
So is a ``notifications/cancelled`` of a poll (a client stopping a task may abort the poll it has out)."""
RECENT_POLLS = 64
"""How many of the latest polls' ids are kept, to know a cancel of one of them."""
META = "io.modelcontextprotocol/"
TOGETHER = 0.010


def _type(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "null" if value is None else "boolean"
    return "string" if isinstance(value, str) else "number" if isinstance(value, int | float) else "other"


def era(version: str | None) -> str:
    """The era a protocol version belongs to, by ``wire.versions`` (a pre-release by the revision it precedes)."""
    parsed = parse_version(version) if version else None
    if parsed is None or parsed.era is Era.UNKNOWN:
        return "unknown"
    return "stateless (2026-07-28 on)" if parsed.modern else "session (initialize, up to 2025-11-25)"


def _answer(method: str, body: dict[str, Any]) -> str:
    if "error" in body:
        return f"error {as_dict(body['error']).get('code')}"
    result = as_dict(body.get("result"))
    if "action" in result:
        return f"result: {result['action']}"
    if method == "roots/list":
        return f"result: {len(result.get('roots') or [])} root(s)"
    return "result"


def _actions(responses: dict[str, Any], keys: list[str]) -> str:
    actions = sorted({str(as_dict(responses.get(key)).get("action", "?")) for key in keys})
    return "/".join(actions)


def _within(short: tuple[str, ...], long: tuple[str, ...]) -> bool:
    """``short``'s keys appear in ``long`` in the same order."""
    rest = iter(long)
    return all(key in rest for key in short)


def _together(steps: list[tuple[float, str]]) -> list[tuple[float, str]]:
    """What the client did within ``TOGETHER`` seconds is one step (``SIGTERM + stdin closed``): which of
    the two reached the tap first is a race, not a behaviour. The server's end stays a step of its own."""
    grouped: list[tuple[float, list[str]]] = []
    for t, what in steps:
        joins = grouped and t - grouped[-1][0] <= TOGETHER and not grouped[-1][1][0].startswith("server ")
        if joins and not what.startswith("server "):
            grouped[-1][1].append(what)
        else:
            grouped.append((t, [what]))
    return [(t, " + ".join(sorted(whats))) for t, whats in grouped]


class StepRuns:
    """Steps folded as they close: a run of the same step (polls) or of the same pair (poll, progress) is
    one behaviour, so what is kept grows with the behaviours, not with the recording."""

    def __init__(self) -> None:
        self._out: list[Step] = []
        self._held: tuple[str, ...] | None = None
        """A step that repeats the one before the last: whether it starts a repeated pair shows at the next."""

    def copy(self) -> StepRuns:
        twin = StepRuns()
        twin._out, twin._held = list(self._out), self._held
        return twin

    def add(self, items: tuple[str, ...]) -> None:
        out = self._out
        if self._held is not None:
            held, self._held = self._held, None
            if out[-1].items == items:
                out[-1] = Step(items, repeated=True)
                return
            out.append(Step(held))
        if out and out[-1].items == items:
            out[-1] = Step(items, repeated=True)
        elif len(out) >= 2 and out[-2].items == items:
            self._held = items
        else:
            out.append(Step(items))

    def finish(self) -> tuple[Step, ...]:
        if self._held is not None:
            self._out.append(Step(self._held))
            self._held = None
        return tuple(self._out)


class Observer:
    """``behaviour``: keep everything a behaviour profile reads; without it, only the handshake and the
    shutdown (what a report names), so a report does not pay for the profile's bookkeeping per message."""

    def __init__(self, behaviour: bool = True) -> None:
        self.keeps_behaviour = behaviour
        self._attempts: list[tuple[str, Hashable, dict[str, Any]]] = []
        self._outcomes: dict[Hashable, str] = {}
        self._awaiting: set[Hashable] = set()
        """The keys of handshake attempts with no outcome yet."""
        self._first_meta: dict[str, Any] = {}
        self._meta_keys: set[str] = set()
        self._requests = 0
        self._with_meta = 0
        self._id_types: set[str] = set()
        self._key_orders: list[tuple[str, ...]] = []
        self._step_open: list[str] = []
        """The messages of the step in flight; a closed step goes to ``_runs``."""
        self._runs = StepRuns()
        self._polls: dict[Hashable, None] = {}
        """The latest polls' ids, oldest first."""
        self._in_flight: dict[Hashable, int] = {}
        self._server_pending: Pairing[str] = Pairing()
        self._mrtr_pending: dict[str, str] = {}
        self._answers: dict[tuple[str, str], None] = {}
        self._http_methods: set[str] = set()
        self._mcp_headers: set[str] = set()
        self._version_headers: set[str] = set()
        self._session_id = False
        self._exit_steps: list[tuple[float, str]] = []
        self._server_exit: tuple[float, str] | None = None
        self._complete = False
        self._http = False
        self._last_close: float | None = None

    def feed(self, event: Event) -> None:
        kind = event.get("kind")
        if kind == Kind.MESSAGE:
            body = event.get("msg")
            if not self.keeps_behaviour:
                return  # (a report's observer reads the conversation's messages: ``handshake_message``)
            if type(body) is dict:
                self._message(event, body)
            elif isinstance(body, list):
                for item in body:
                    if isinstance(item, dict):
                        self._message(event, item)
        elif kind in (Kind.HTTP_REQUEST, Kind.HTTP_RESPONSE):
            self._http_event(event)
        elif kind == Kind.EOF and event.get("dir") == Direction.C2S:
            self._exit_steps.append((float(event["t"]), "stdin closed"))
        elif kind == Kind.SIGNAL and not self._http:
            # A proxy's signal is its own (wiretap stopping it), not the client's doing.
            self._exit_steps.append((float(event["t"]), str(event.get("signal"))))
        elif kind == Kind.EXIT:
            how = f"killed by {event['signal']}" if "signal" in event else f"exited with code {event.get('code')}"
            self._server_exit = (float(event["t"]), how)
            self._exit_steps.append((float(event["t"]), f"server {how}"))
        elif kind == Kind.CONNECTION and event.get("state") == "closed":
            self._last_close = float(event["t"])
        elif kind == Kind.END:
            self._complete = True

    # -- messages

    def _message(self, event: Event, body: dict[str, Any]) -> None:
        direction = str(event.get("dir"))
        rest = event.get("rest")
        method = rest.get("operation") if isinstance(rest, dict) else body.get("method")
        key = ("ex", event.get("ex")) if isinstance(rest, dict) else id_key(body.get("id"))
        if isinstance(method, str) and direction == Direction.C2S and (isinstance(rest, dict) or "method" in body):
            self._client_request(method, body, key, event)
        elif isinstance(method, str) and direction == Direction.S2C and "method" in body:
            self._server_message(method, body, key)
        elif direction == Direction.S2C:
            self._in_flight.pop(key, None)
            self._results(body)
        elif direction == Direction.C2S and not isinstance(rest, dict):
            method = self._server_pending.take(direction, body.get("id"))
            if method is not None:
                self._answers[(method, _answer(method, body))] = None

    def handshake_message(self, message: Message) -> None:
        """For an observer without ``behaviour``, a message of the conversation: what ``handshake`` names
        from it (the handshake attempts, their outcomes, the first request's ``_meta`` of the stateless era)."""
        if message.rest is not None:
            return
        if message.dir == Direction.C2S:
            if message.kind == REQUEST and (
                message.method in HANDSHAKES or ("_meta" in message.params and not self._first_meta)
            ):
                self._handshake_request(str(message.method), id_key(message.id), message.params)
        elif message.kind == RESPONSE and self._awaiting:
            self._outcome(id_key(message.id), message.error)

    def _client_request(self, method: str, body: dict[str, Any], key: Hashable, event: Event) -> None:
        params = as_dict(body.get("params"))
        is_request = "id" in body or isinstance(event.get("rest"), dict)
        label = f"→ {method}"
        if isinstance(params.get("inputResponses"), dict):
            label += " +inputResponses"
            self._mrtr_answered(method, params["inputResponses"])
        if method in POLLS:
            self._polls[key] = None
            if len(self._polls) > RECENT_POLLS:
                del self._polls[next(iter(self._polls))]
        elif not (method == "notifications/cancelled" and id_key(params.get("requestId")) in self._polls):
            self._step(label, request_key=key if is_request and method not in LONG_LIVED else None)
        if not is_request:
            return
        self._requests += 1
        self._id_types.add(_type(body.get("id")))
        self._key_order(tuple(body))
        meta = as_dict(params.get("_meta"))
        if meta:
            self._with_meta += 1
            self._meta_keys.update(meta)
        self._handshake_request(method, key, params)

    def _handshake_request(self, method: str, key: Hashable, params: dict[str, Any]) -> None:
        """What ``handshake`` reads from a client's request: the first ``_meta`` of the stateless era, and
        each handshake attempt."""
        if not self._first_meta:
            meta = as_dict(params.get("_meta"))
            if any(k.startswith(META) for k in meta):
                self._first_meta = meta
        if method in HANDSHAKES:
            self._attempts.append((method, key, params))
            if key not in self._outcomes:
                self._awaiting.add(key)

    def _key_order(self, order: tuple[str, ...]) -> None:
        """Kept once per order; a request without params follows the order of one with them."""
        if any(_within(order, seen) for seen in self._key_orders):
            return
        self._key_orders = [seen for seen in self._key_orders if not _within(seen, order)] + [order]

    def _server_message(self, method: str, body: dict[str, Any], key: Hashable) -> None:
        self._step(f"← {method}", request_key=None)
        if "id" in body:
            self._server_pending.open(Direction.S2C.value, body.get("id"), method)

    def _outcome(self, key: Hashable, error: Any) -> None:
        """A response, to the handshake attempt it answers (the first response to an id is its outcome)."""
        if key in self._awaiting:
            self._awaiting.discard(key)
            self._outcomes[key] = f"error {as_dict(error).get('code')}" if error is not None else "ok"

    def _results(self, body: dict[str, Any]) -> None:
        if self._awaiting:
            self._outcome(id_key(body.get("id")), body.get("error"))
        requests = as_dict(as_dict(body.get("result")).get("inputRequests"))
        for name, request in requests.items():
            self._mrtr_pending[name] = str(as_dict(request).get("method") or "?")

    def _mrtr_answered(self, method: str, responses: dict[str, Any]) -> None:
        by_method: dict[str, list[str]] = {}
        for name in responses:
            if name in self._mrtr_pending:
                by_method.setdefault(self._mrtr_pending.pop(name), []).append(name)
        for asked, names in by_method.items():
            answer = f"{method} retried with inputResponses: {_actions(responses, names)}"
            self._answers[(f"{asked} (input_required)", answer)] = None

    def _step(self, label: str, *, request_key: Hashable | None) -> None:
        if not self._in_flight and self._step_open:
            self._runs.add(tuple(sorted(self._step_open)))
            self._step_open = []
        if label not in self._step_open:
            self._step_open.append(label)
        if request_key is not None:
            self._in_flight[request_key] = 1

    # -- http

    def _http_event(self, event: Event) -> None:
        self._http = True
        headers = as_dict(event.get("headers"))
        if "mcp-session-id" in headers:
            self._session_id = True
        if event.get("kind") != Kind.HTTP_REQUEST:
            return
        method = str(event.get("method"))
        self._http_methods.add(method)
        if method == "DELETE":
            self._exit_steps.append((float(event["t"]), "DELETE"))
        self._mcp_headers.update(name for name in headers if name.startswith("mcp-"))
        version = headers.get("mcp-protocol-version")
        if isinstance(version, str):
            self._version_headers.add(version)

    # -- results

    def handshake(self) -> Handshake:

        chosen = next(
            (a for a in reversed(self._attempts) if self._outcomes.get(a[1]) == "ok"),
            self._attempts[-1] if self._attempts else None,
        )
        method, params = (chosen[0], chosen[2]) if chosen else (None, {})
        meta = as_dict(params.get("_meta")) or self._first_meta
        version = params.get("protocolVersion") or meta.get(META + "protocolVersion")
        info = as_dict(params.get("clientInfo")) or as_dict(meta.get(META + "clientInfo"))
        capabilities = params.get("capabilities", meta.get(META + "clientCapabilities"))
        return Handshake(
            method=method,
            protocol_version=str(version) if version else None,
            era=era(str(version) if version else None),
            client_name=info.get("name"),
            client_version=info.get("version"),
            capabilities=capabilities if isinstance(capabilities, dict) else None,
            meta_keys=tuple(sorted(self._meta_keys)),
            meta_on="none"
            if not self._with_meta
            else "every request"
            if self._with_meta == self._requests
            else "some requests",
            id_types=tuple(sorted(self._id_types)),
            key_order=tuple(",".join(order) for order in self._key_orders[:4]),
            attempts=tuple(f"{m} ({self._outcomes.get(k, 'no answer')})" for m, k, _ in self._attempts),
        )

    def steps(self) -> tuple[Step, ...]:
        runs = self._runs.copy()
        if self._step_open:
            runs.add(tuple(sorted(self._step_open)))
        return runs.finish()

    def server_requests(self) -> tuple[ServerRequest, ...]:

        answers = dict(self._answers)
        for method in self._server_pending.waiting():
            answers[(method, "unanswered")] = None
        for method in self._mrtr_pending.values():
            answers[(f"{method} (input_required)", "unanswered")] = None
        return tuple(ServerRequest(m, a) for m, a in sorted(answers))

    def http_traits(self) -> HttpTraits:

        return HttpTraits(
            session_id=self._session_id,
            get_stream="GET" in self._http_methods,
            delete_on_exit="DELETE" in self._http_methods,
            mcp_headers=tuple(sorted(self._mcp_headers)),
            protocol_version_header=tuple(sorted(self._version_headers)),
            methods=tuple(sorted(self._http_methods)),
        )

    def shutdown(self, client_exited: float | None) -> Shutdown:

        steps = sorted(self._exit_steps)
        if self._http and self._last_close is not None:
            steps.append((self._last_close, "connections closed"))
        start = steps[0][0] if steps else 0.0
        orphaned = None
        if client_exited is not None and self._server_exit is not None:
            orphaned = self._server_exit[0] > client_exited
        return Shutdown(
            steps=tuple(ShutdownStep(what, round(t - start, 3)) for t, what in _together(steps)),
            server=self._server_exit[1] if self._server_exit else None,
            recording_complete=self._complete,
            orphaned=orphaned,
        )
