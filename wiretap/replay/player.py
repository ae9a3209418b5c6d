"""A recorded server, answering a live client: ``wiretap replay RECORDING --as server``.

Each live request is matched to a recorded one (matchers.py), and the recorded exchange is played
back: every message the server sent for it, at its recorded offset from the request (scaled by the
pace), the response last, with the live request's id. A progress token or request id that the server
echoed is swapped for the live one. A request the server sent the client (elicitation, roots, sampling)
is sent as recorded; what came after the client's answer in the recording waits for the live client's
answer and is timed from it. Task polls are answered by the client's clock (tasks.py).

What the server sent unprompted is sent at its recorded offset from the client's message that preceded
it (its n-th message with that method; from the start if there was none), and not before the responses
recorded before it. Offsets from the start of the session would drift: a live client is rarely exactly
as fast as the recorded one.

A request with no match gets a JSON-RPC error naming the closest recorded one. The transports
(stdio.py, http.py) hand live messages in and give the player an ``Outlet`` to send on.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import IO, Any

from wiretap.replay.index import Index
from wiretap.replay.matchers import Request
from wiretap.replay.plan import MISS_CODE, ClientGone, Miss, Outlet, Plan, ReplayOptions
from wiretap.replay.script import (
    POLL_METHODS,
    Exchange,
    Json,
    Script,
    Step,
    id_key,
    poll_task_key,
    progress_token,
    sent_key,
)
from wiretap.replay.source import RecordingChanged
from wiretap.replay.tasks import TaskClock
from wiretap.wire.json_values import as_dict

RELATED_TASK = "io.modelcontextprotocol/related-task"
_A2A_SEND = frozenset({"SendMessage", "SendStreamingMessage", "message/send", "message/stream"})


@dataclass
class _Asked:
    """A request the player sent the live client, waiting for its answer."""

    step: Step
    answered: asyncio.Future[float]


class Player:
    def __init__(
        self,
        script: Script,
        options: ReplayOptions | None = None,
        *,
        stderr: IO[str] = sys.stderr,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.script = script
        self.options = options or ReplayOptions()
        self.stderr = stderr
        self.clock = clock
        self.started = clock()
        self.sent: dict[str, int] = {}
        """How many messages the live client sent, by method (``response``: answers to the player)."""
        self.arrivals: dict[tuple[str, int], float] = {}
        """When the live client's n-th message with each method arrived."""
        self._gates: list[tuple[tuple[str, int], asyncio.Future[None]]] = []
        self._asked: dict[Hashable, _Asked] = {}
        self.tasks = {
            key: TaskClock(task, script.polls(key), self.options.pace)
            for key, task in script.tasks.items()
            if task.states and script.polls(key)
        }
        self.index = Index(script.exchanges, self.options.match_on, script.named)
        self._replying: dict[int, tuple[float, asyncio.Event]] = {}
        """Exchanges chosen and not yet answered (by id of their plan): their recorded response time, and
        whether the response went out."""
        self.matched = 0
        self.repeated = 0
        self.by_task_clock = 0
        self.misses: list[Miss] = []
        self.gone = False
        self.failure: RecordingChanged | None = None
        """Why the replay cannot go on (the recording changed under it); the server stops and raises it."""
        self._on_failure: list[Callable[[], None]] = []

    def when_failed(self, stop: Callable[[], None]) -> None:
        """Call ``stop`` when the replay cannot go on (``failure``)."""
        self._on_failure.append(stop)

    def _fail(self, exc: RecordingChanged) -> None:
        if self.failure is None:
            self.failure = exc
            for stop in self._on_failure:
                stop()

    def now(self) -> float:
        return self.clock()

    # -- live messages in ---------------------------------------------------------------------------

    def plan(self, message: Json, *, path: str | None = None, rest: dict[str, Any] | None = None) -> Plan:
        """Choose what answers the live request ``message`` (an A2A REST call: its body, and ``rest``)."""
        plan = self._choose(message, path, rest)
        if plan.exchange is not None and plan.exchange.response_t is not None:
            # Registered now, not when it starts playing: unprompted messages recorded after its
            # response must wait for it from this moment on.
            self._replying[id(plan)] = (plan.exchange.response_t, plan.replied)
        return plan

    def _choose(self, message: Json, path: str | None, rest: dict[str, Any] | None) -> Plan:
        now = self._arrived(str(rest.get("operation")) if rest is not None else sent_key(message))
        if rest is not None:
            params = dict(message)
            if rest.get("taskId"):
                params.setdefault("id", rest["taskId"])
            volatile = self.options.volatile
            live = Request(str(rest.get("operation")), volatile.normalize(params), None, path, params)
        else:
            live = Request.of(message, self.options.volatile, path)
        self._client_acted(live, now)
        plan = Plan(message, now)
        task_key = poll_task_key(live.method, live.raw_params) if live.method in POLL_METHODS else None
        clock = self.tasks.get(task_key) if task_key is not None else None
        # Polls of the same binding (JSON-RPC or REST, the same method) answer it.
        alike = (
            [p for p in clock.polls if p.method == live.method and (p.rest is None) == (rest is None)] if clock else []
        )
        if clock is not None and alike:
            answer = clock.poll(now, alike)
            plan.exchange, plan.response = answer.exchange, answer.response
            self.by_task_clock += 1
            return plan
        found = self.index.find(live)
        if found is not None:
            plan.exchange, again = found
            self.repeated += again
            plan.exchange.used += 1
            self.matched += 1
            return plan
        near = self.index.closest(live)
        miss = Miss(now - self.started, live, near[0] if near else None, near[1] if near else [])
        self.misses.append(miss)
        plan.miss = miss
        return plan

    def notification(self, message: Json) -> None:
        self._arrived(sent_key(message))

    def client_response(self, message: Json) -> None:
        """The live client answered a request the player sent it."""
        now = self._arrived(sent_key(message))
        asked = self._asked.pop(id_key(message.get("id")), None)
        if asked is None:
            return
        if not asked.answered.done():
            asked.answered.set_result(now)
        assert asked.step.message is not None
        meta = as_dict(as_dict(asked.step.message.get("params")).get("_meta"))
        task_id = as_dict(meta.get(RELATED_TASK)).get("taskId")
        clock = self.tasks.get(f"mcp:{task_id}")
        if clock is not None:
            clock.client_acted(now)

    def client_gone(self) -> None:
        """The client closed its end (stdio): what waits for its answers stops there."""
        self.gone = True
        for asked in self._asked.values():
            if not asked.answered.done():
                asked.answered.set_exception(ClientGone())
                asked.answered.exception()  # retrieved: only a step waiting for it awaits it

    def _arrived(self, key: str) -> float:
        now = self.now()
        self.sent[key] = self.sent.get(key, 0) + 1
        self.arrivals[(key, self.sent[key])] = now
        for gate in [g for g in self._gates if g[0][0] == key and g[0][1] <= self.sent[key]]:
            self._gates.remove(gate)
            if not gate[1].done():
                gate[1].set_result(None)
        return now

    def _client_acted(self, live: Request, now: float) -> None:
        """A live request that answers a task's question or cancels it moves that task's clock on."""
        params = live.raw_params
        key = None
        if live.method == "tasks/update" and "inputResponses" in params:
            key = f"mcp:{params.get('taskId')}"
        elif live.method in ("tasks/cancel", "CancelTask"):
            key = poll_task_key(live.method, params)
        elif live.method in _A2A_SEND and as_dict(params.get("message")).get("taskId"):
            key = f"a2a:{as_dict(params.get('message')).get('taskId')}"
        clock = self.tasks.get(key) if key else None
        if clock is not None:
            clock.client_acted(now)

    # -- answering ----------------------------------------------------------------------------------

    async def perform(self, plan: Plan, outlet: Outlet) -> None:
        """Play the plan's exchange (or the miss's error) to ``outlet``; returns when it is done."""
        live_id = plan.message.get("id")
        if plan.miss is not None:
            error = {"code": MISS_CODE, "message": plan.miss.message(), "data": plan.miss.as_dict()}
            await outlet.send(Step(0.0), {"jsonrpc": "2.0", "id": live_id, "error": error})
            return
        exchange = plan.exchange
        if exchange is None:
            return
        swap = self._swaps(exchange, plan.message)
        try:
            await self._play(plan, exchange, outlet, swap, plan.replied)
        except ClientGone:
            pass  # what the recording sent after the client's answer cannot follow an answer never given
        except RecordingChanged as exc:  # nothing but what was recorded is served: the replay stops
            self._fail(exc)
        finally:
            plan.replied.set()
            self._replying.pop(id(plan), None)

    async def _play(
        self, plan: Plan, exchange: Exchange, outlet: Outlet, swap: dict[str, tuple[Any, Any]], replied: asyncio.Event
    ) -> None:
        pace, live_id = self.options.pace, plan.message.get("id")
        base_recorded, base_live = exchange.t, plan.arrived
        waiting: list[_Asked] = []
        responded = False
        for step in exchange.steps:
            for asked in [a for a in waiting if a.step.answer is not None and a.step.answer.t <= step.t]:
                waiting.remove(asked)
                assert asked.step.answer is not None
                base_recorded, base_live = asked.step.answer.t, await asked.answered
            await self._until(base_live + pace.live(step.t - base_recorded))
            if step.stderr is not None:
                self._stderr(step.stderr)
                continue
            message = step.message
            if message is not None and step.reply and not responded and plan.response is not None:
                message = plan.response
            message = None if message is None else _remapped(message, swap, live_id if step.reply else None)
            if step.asks_client:
                asked = self._ask(step)
                if step.answer is not None:
                    waiting.append(asked)
            await outlet.send(step, message)
            if step.reply and not responded:
                responded = True
                replied.set()
                for key in exchange.tasks_created:
                    if key in self.tasks:
                        self.tasks[key].created(self.now())

    async def play_unprompted(self, outlet: Outlet) -> None:
        """Send what the server sent unprompted, each at its recorded offset, after what preceded it."""
        try:
            await self._play_unprompted(outlet)
        except RecordingChanged as exc:
            self._fail(exc)

    async def _play_unprompted(self, outlet: Outlet) -> None:
        pace = self.options.pace
        for item in self.script.unprompted:
            if item.after is not None:
                await self._gate(item.after)
            for recorded_t, replied in list(self._replying.values()):
                if recorded_t <= item.step.t:  # a response recorded before it goes out before it
                    await replied.wait()
            if item.after is None:
                due = self.started + pace.live(item.step.t)
            else:
                due = self._arrival(item.after) + pace.live(item.step.t - item.after_t)
            await self._until(due)
            if item.step.stderr is not None:
                self._stderr(item.step.stderr)
            else:
                if item.step.asks_client:
                    self._ask(item.step)
                await outlet.send(item.step, item.step.message)

    def _ask(self, step: Step) -> _Asked:
        assert step.message is not None
        asked = _Asked(step, asyncio.get_running_loop().create_future())
        if self.gone:
            asked.answered.set_exception(ClientGone())
            asked.answered.exception()  # retrieved: nobody may ever await it
        else:
            self._asked[id_key(step.message.get("id"))] = asked
        return asked

    async def _gate(self, after: tuple[str, int]) -> None:
        """Until the live client has sent its n-th message with this method."""
        if self.sent.get(after[0], 0) >= after[1]:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._gates.append((after, future))
        await future

    def _arrival(self, after: tuple[str, int]) -> float:
        return self.arrivals.get(after, self.arrivals.get((after[0], self.sent.get(after[0], 0)), self.started))

    async def _until(self, due: float) -> None:
        delay = due - self.now()
        if delay > 0:
            await asyncio.sleep(delay)

    def _stderr(self, line: str) -> None:
        if self.options.replay_stderr:
            print(line, file=self.stderr, flush=True)

    @staticmethod
    def _swaps(exchange: Exchange, live: Json) -> dict[str, tuple[Any, Any]]:
        """Values the server echoes from the request, recorded → live: the progress token, the request id."""
        swaps = {"requestId": (exchange.message.get("id"), live.get("id"))}
        token = progress_token(exchange.message)
        if token is not None:
            swaps["progressToken"] = (token, progress_token(live))
        return swaps

    # -- the end ------------------------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        return {
            "recording": str(self.script.path),
            "requests": self.matched + self.by_task_clock + len(self.misses),
            "matched": self.matched,
            "repeated": self.repeated,
            "polls_by_task_clock": self.by_task_clock,
            "misses": [m.as_dict() for m in self.misses],
        }

    def report_misses(self, out: IO[str]) -> None:
        """The requests that had no recorded match, one paragraph each, for stderr at the end."""
        if not self.misses:
            return
        print(f"wiretap replay: {len(self.misses)} request(s) had no recorded match:", file=out)
        for miss in self.misses:
            print(f"  {miss.at:8.2f} s  {miss.request.describe()}", file=out)
            print(f"              {miss.reason()}", file=out)
        out.flush()


def _remapped(message: Json, swaps: dict[str, tuple[Any, Any]], live_id: Any) -> Json:
    """``message`` with the live request's id (for a response) and echoed values swapped."""
    out = dict(message)
    if live_id is not None and "id" in out:
        out["id"] = live_id
    params = out.get("params")
    if isinstance(params, dict):
        changed = dict(params)
        for key, (recorded, live) in swaps.items():
            if key in changed and changed[key] == recorded and live is not None:
                changed[key] = live
        out["params"] = changed
    return out


def dumps(message: Json) -> str:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))
