"""Requests the client stopped waiting for, answers that came after it had, and tool calls silent past
the client's idle limit: ``client-gave-up``, ``answer-after-give-up`` and ``idle-timeout-risk``.

A client gives up on a request when it cancels it (``notifications/cancelled``), when it abandons it (the
HTTP connection carrying it closes, it closes the server's stdin, it exits: a session manifest's exit)
or when the request goes unanswered past the client's own limit for it (``limits.py``). The signs seen on
the wire come first; a limit counts only when none was seen. Closing stdin alone is not giving up: a
client may read the answers after it; it is once the client stopped reading too (``peer_gone``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wiretap.analysis.conversation import NOTIFICATION, REQUEST, RESPONSE, Conversation, Message
from wiretap.analysis.limits import LIMITS, ClientLimit, Limit, largest_limit, limit_for
from wiretap.recording.event_types import typed
from wiretap.recording.events import Direction, Event
from wiretap.wire.jsonrpc import id_key

if TYPE_CHECKING:
    from wiretap.analysis.findings import Findings

C2S, S2C = Direction.C2S.value, Direction.S2C.value
SHORTEST_LIMIT = 1.0
"""Seconds: no client limit is shorter (Claude Code's idle limit has a 1 s floor), so a request answered
sooner, with no sign of the client giving up, needs no keeping."""


@dataclass(eq=False, slots=True)
class Watch:
    request: Message
    last: float
    """The last sign of life while the request waited: when it was sent, or its last progress."""
    silences: list[tuple[float, float]] = field(default_factory=list)
    """Silent stretches of SHORTEST_LIMIT or more before ``last``."""
    head: float | None = None
    """Over HTTP: when the response head of its exchange came."""
    gave_up: tuple[float, str] | None = None
    stdin_closed: float | None = None
    answered: float | None = None
    answered_ex: Any = None
    task_result: bool = False

    @property
    def tool_call(self) -> bool:
        """A plain tool call: not task-augmented, not answered with a task."""
        return self.request.method == "tools/call" and "task" not in self.request.params and not self.task_result

    def alive(self, t: float, measure: bool) -> None:
        if measure and t - self.last >= SHORTEST_LIMIT:
            self.silences.append((self.last, t))
        self.last = max(self.last, t)

    def give_up(self, t: float, how: str) -> None:
        if self.gave_up is None or t < self.gave_up[0]:
            self.gave_up = (t, how)


@dataclass(frozen=True)
class ClientLimits:
    """The limits of the client that ran, for one recording."""

    request: tuple[float, ClientLimit] | None = None
    idle: tuple[float, ClientLimit] | None = None

    @classmethod
    def of(
        cls, client: str | None, version: str | None, transport: str, settings: Mapping[str, str] | None
    ) -> ClientLimits:
        request = largest_limit(client, Limit.REQUEST, transport=transport, version=version, settings=settings)
        idle = limit_for(client, Limit.IDLE, transport=transport, version=version, settings=settings)
        return cls(request, idle if idle is not None and idle[0] > 0 else None)


class GiveUps:
    """Fed every event and every message of the one pass; ``finish`` adds the findings."""

    def __init__(self) -> None:
        self._open: dict[Message, Watch] = {}
        self._by_ex: dict[int, list[Watch]] = {}
        self._by_token: dict[Hashable, Watch] = {}
        self._asking = 0
        """Elicitations the server has open: Claude Code's idle clock stands still while one is."""
        self.kept: list[Watch] = []
        self.client_exit: float | None = None
        """From a session manifest, on the recording's clock: set before the events are fed."""
        self._exit_noted = False
        self._stopped_reading = False

    def message_event(self, t: float) -> None:
        """A message event: all ``feed_event`` reads of one is its time."""
        if self.client_exit is not None:
            self._note_exit(t)

    def feed_event(self, recorded: Event) -> None:
        event, t = typed(recorded), float(recorded.get("t", 0.0))
        self._note_exit(t)
        if event["kind"] == "http_response" and isinstance(ex := event.get("ex"), int):
            for watch in self._by_ex.get(ex, []):
                watch.head = t if watch.head is None else watch.head
        elif event["kind"] == "http_end" and isinstance(ex := event.get("ex"), int):
            for watch in self._by_ex.pop(ex, []):
                if event.get("outcome") == "client_disconnected" and watch.request in self._open:
                    watch.give_up(t, "its HTTP connection closed before the answer")
        elif event["kind"] == "eof" and event.get("dir") == C2S:
            for watch in self._open.values():
                watch.stdin_closed = t
        elif event["kind"] == "error" and event.get("error") == "peer_gone" and event.get("dir") == S2C:
            self._stopped_reading = True

    def feed(self, message: Message, conversation: Conversation) -> None:
        if message.dir == C2S and message.kind == REQUEST:
            self._watch(message)
        elif message.dir == C2S and message.kind == NOTIFICATION and message.method == "notifications/cancelled":
            request = conversation.waiting_request(C2S, message.params.get("requestId"), message.ex)
            if request is None or request not in self._open:
                request = conversation.waiting_request(C2S, message.params.get("requestId"))
            if request is not None and (watch := self._open.get(request)) is not None:
                watch.give_up(message.t, "the client cancelled it (notifications/cancelled)")
        elif message.dir == S2C and message.method == "notifications/progress":
            watch = self._by_token.get(id_key(message.params.get("progressToken")))
            if watch is not None and watch.gave_up is None:
                watch.alive(message.t, not self._asking)
        elif message.dir == S2C and message.kind == REQUEST and message.method == "elicitation/create":
            self._all_alive(message.t)
            self._asking += 1
        elif message.dir == C2S and message.kind == RESPONSE and message.method == "elicitation/create":
            self._asking = max(0, self._asking - 1)
            self._all_alive(message.t)
        elif message.dir == S2C and message.kind == RESPONSE and message.request is not None:
            self._answered(message)

    def _watch(self, request: Message) -> None:
        watch = Watch(request, request.t)
        self._open[request] = watch
        if isinstance(request.ex, int):
            self._by_ex.setdefault(request.ex, []).append(watch)
        meta = request.params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if token is not None:
            self._by_token[id_key(token)] = watch

    def _all_alive(self, t: float) -> None:
        for watch in self._open.values():
            if watch.gave_up is None:
                watch.alive(t, not self._asking)

    def _answered(self, response: Message) -> None:
        assert response.request is not None
        watch = self._open.pop(response.request, None)
        if watch is None:
            return
        self._forget(watch)
        watch.answered, watch.answered_ex = response.t, response.ex
        result = response.result
        watch.task_result = isinstance(result, dict) and (result.get("resultType") == "task" or "task" in result)
        if watch.gave_up is not None or response.t - watch.request.t >= SHORTEST_LIMIT:
            self.kept.append(watch)

    def _forget(self, watch: Watch) -> None:
        if isinstance(watch.request.ex, int) and watch in (same := self._by_ex.get(watch.request.ex, [])):
            same.remove(watch)
        meta = watch.request.params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if token is not None and self._by_token.get(id_key(token)) is watch:
            del self._by_token[id_key(token)]

    def _note_exit(self, t: float) -> None:
        if self.client_exit is not None and not self._exit_noted and t >= self.client_exit:
            self._exit_noted = True
            for watch in self._open.values():
                watch.give_up(self.client_exit, "the client exited")

    def finish(self, findings: Findings, limits: ClientLimits, end: float, leaving: float | None = None) -> None:
        """``leaving``: when the client began to leave (its signal to the server, stdin closed); a request it
        sent from then on that was never answered is no give-up, as no answer was coming."""
        if self.client_exit is not None:
            self._note_exit(max(end, self.client_exit))
        watches = sorted([*self.kept, *self._open.values()], key=lambda w: w.request.t)
        for watch in watches:
            if watch.request.method in LONG_LIVED:
                continue
            if leaving is not None and watch.request.t >= leaving and watch.answered is None:
                continue
            self._judge(watch, findings, limits, end)

    def _judge(self, watch: Watch, findings: Findings, limits: ClientLimits, end: float) -> None:
        request = watch.request
        if self._stopped_reading and watch.stdin_closed is not None:
            watch.give_up(watch.stdin_closed, "the client closed the server's stdin and stopped reading")
        resumed = watch.answered_ex is not None and watch.answered_ex != request.ex
        if watch.gave_up is not None and watch.gave_up[1].startswith("its HTTP") and resumed:
            watch.gave_up = None  # the client came back on another connection for the answer
        if watch.gave_up is None and limits.request is not None:
            watch.gave_up = _timed_out(watch, limits.request, end)
        if watch.gave_up is not None:
            findings.client_gave_up(request, *watch.gave_up)
            if watch.answered is not None:
                findings.answer_after_give_up(request, watch.gave_up[0], watch.answered)
        if limits.idle is not None and watch.tool_call:
            _idle(watch, findings, limits.idle, end)


LONG_LIVED = frozenset({"subscriptions/listen"})


def _timed_out(watch: Watch, limit: tuple[float, ClientLimit], end: float) -> tuple[float, str] | None:
    """Over HTTP the limit runs until the response head (an event stream's head stops it)."""
    seconds, row = limit
    deadline = watch.request.t + seconds
    waited = min(t for t in (watch.head, watch.answered, end) if t is not None)
    if waited <= deadline or end < deadline:
        return None
    return deadline, f"no response within {seconds:g} s, {_rule(row)}"


def _rule(row: ClientLimit) -> str:
    """The client's rule in words: its limit and the settings that change it."""
    rows = [r for r in LIMITS if (r.client, r.limit, r.transport) == (row.client, row.limit, row.transport)]
    settings = [r.setting for r in rows if r.setting]
    changed = f" (the largest of {row.default_s:g} s and {', '.join(settings)})" if len(rows) > 1 else ""
    if len(rows) == 1 and row.setting:
        changed = f" ({row.setting})"
    return f"{row.client}'s {row.limit} limit over {row.transport or 'any transport'}{changed}"


def _idle(watch: Watch, findings: Findings, limit: tuple[float, ClientLimit], end: float) -> None:
    seconds, row = limit
    stop = watch.answered if watch.answered is not None else end
    if watch.gave_up is not None:
        stop = min(stop, watch.gave_up[0])
    spans = [*watch.silences, (watch.last, stop)]
    clipped = [(a, min(b, stop)) for a, b in spans if a < stop]
    if not clipped:
        return
    start, until = max(clipped, key=lambda span: span[1] - span[0])
    if until - start > seconds:
        findings.idle_timeout_risk(watch.request, start, until, seconds, row, answered=until == watch.answered)
