"""The driver of ``replay --as client``: the recorded client's messages sent in order and on time, the
live server's requests answered from the recording, its responses compared with the recorded ones.

It speaks to the live server through a ``Link`` (links/stdio.py, links/http.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import json
import time
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from wiretap.replay import keys
from wiretap.replay.ids import learn, swapped
from wiretap.replay.matchers import DEFAULT_MATCH_ON, Request, failures
from wiretap.replay.pace import RECORDED, Pace
from wiretap.replay.result import ClientResult, Compared, Unreachable
from wiretap.replay.script import POLL_METHODS, ClientItem, Exchange, Json, Script, Sent, Step
from wiretap.replay.tasks import reported_state
from wiretap.replay.volatile import Volatile
from wiretap.wire.jsonrpc import id_key, is_request, is_response
from wiretap.wire.structural_diff import differences

NO_ANSWER_CODE = -32601


@dataclass(frozen=True)
class ClientOptions:
    pace: Pace = RECORDED
    volatile: Volatile = field(default_factory=Volatile)
    timeout: float = 30.0
    """How long to wait for each live response."""
    match_on: tuple[str, ...] = DEFAULT_MATCH_ON
    """How a live server's request is matched to a recorded one."""
    out: Path | None = None


class Link(Protocol):
    """The way to the live server."""

    async def send(self, item: Sent, message: Json) -> None: ...

    async def close(self) -> None:
        """End of input: close the server's stdin, or end the HTTP session."""


def _without_id(message: Json) -> Json:
    return {k: v for k, v in message.items() if k != "id"}


class Driver:
    def __init__(self, script: Script, options: ClientOptions, clock: Any = time.monotonic) -> None:
        self.script = script
        self.options = options
        self.clock = clock
        self.swaps: dict[str, Any] = {}
        self.waiting: dict[Hashable, asyncio.Future[tuple[float, Json]]] = {}
        self.received_at: dict[int, float] = {}
        """Exchange number → when its live response came."""
        self.live: dict[int, Json] = {}
        """Exchange number → its first live response."""
        self.replies: dict[int, list[Json]] = {}
        """Exchange number → every live response (an event stream may answer many times)."""
        self.sent: dict[Hashable, Exchange] = {}
        self._ends: dict[int, asyncio.Event] = {}
        self.answered: set[int] = set()
        self.unexpected: list[str] = []
        self.used: set[int] = set()
        """The recorded server requests answered already (by id())."""
        self.link: Link | None = None
        self._answering: set[asyncio.Task[None]] = set()
        self._asked_by_key: dict[int | None, list[tuple[int, Step]]] | None = None
        """The recorded server requests with an answer, by their key (None: no key), made at the first."""
        self.gone: asyncio.Future[str] | None = None
        """Set, with the reason, when the live server is found unreachable."""
        self.heard = False
        """Whether the live server has sent anything yet."""
        self.closing = False
        """Whether the recorded client has closed its end (after that a server may well exit)."""
        self.exited = asyncio.Event()
        """The live server process has exited (stdio): nothing more will come from it."""
        self.exit_note: str | None = None
        """How it exited, when that cut the run short."""
        self.refusals: dict[int, str] = {}
        """Exchange number → the HTTP error the live server gave instead of a response."""

    def lost(self, reason: str) -> None:
        """The live server cannot be reached: the run stops (see ``run_until_lost``)."""
        if self.gone is not None and not self.gone.done():
            self.gone.set_result(reason)

    def refused(self, exchange: Exchange, why: str) -> None:
        """The live server answered ``exchange`` with an HTTP error and no JSON-RPC response: none will
        come, so it is missing at once instead of after the timeout."""
        future = self.waiting.get(self._key(exchange))
        if future is not None and not future.done():
            self.refusals[exchange.number] = why
            future.cancel()

    def server_exited(self, how: str, stderr: str) -> None:
        """The live server process exited (``how``: with which status; ``stderr``: its last words). Before
        it said anything, it could not be started; later, what it left unanswered is missing, at once
        instead of a timeout each; after the client closed its end, that is how a stdio server ends."""
        said = f"; its stderr ended: {stderr}" if stderr else "; it wrote nothing on stderr"
        pending = [key for key, future in self.waiting.items() if not future.done()]
        if not self.heard and not self.closing:
            self.lost(f"the server {how} before answering anything{said}")
        elif pending or not self.closing:
            self.exit_note = f"the server {how} before the recorded client was done{said}"
        self.exited.set()

    async def run_until_lost(self, link: Link) -> ClientResult:
        """``run``, raising Unreachable as soon as the link finds the live server unreachable."""
        self.gone = asyncio.get_running_loop().create_future()
        running = asyncio.create_task(self.run(link))
        waiting: list[asyncio.Future[Any]] = [running, self.gone]
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if self.gone.done():
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
            raise Unreachable(self.gone.result())
        self.gone.cancel()
        return running.result()

    def now(self) -> float:
        return float(self.clock())

    async def run(self, link: Link) -> ClientResult:
        self.link = link
        pace, loop = self.options.pace, asyncio.get_running_loop()
        items = [i for i in self.script.client_items if i.answers is None]
        first_t = items[0].t if items else 0.0
        prev_recorded, prev_live = first_t, self.now()
        sent: list[Exchange] = []
        planned = [i.exchange for i in items if i.exchange is not None]
        # What the recorded client had seen before each message: responses and stream ends, by their
        # recorded time (heaps: each is waited for once, so the run is linear in the recording).
        responses: list[tuple[float, int, Exchange]] = []
        ends: list[tuple[float, int, Exchange]] = []
        for item in items:
            base_recorded, base_live = prev_recorded, prev_live
            while responses and responses[0][0] <= item.t:
                response_t, _, exchange = heapq.heappop(responses)
                at = await self._response(exchange)
                if at is not None and response_t >= base_recorded:
                    base_recorded, base_live = response_t, at
            while ends and ends[0][0] <= item.t:  # the recorded client had seen its event stream end
                await self._ended(heapq.heappop(ends)[2])
            await self._pause(base_live + pace.live(item.t - base_recorded))
            if self.exited.is_set():
                break
            message = swapped(item.message, self.swaps)
            if item.exchange is not None:
                exchange = item.exchange
                key = self._key(exchange)
                self.waiting[key] = loop.create_future()
                self.sent[key] = exchange
                sent.append(exchange)
                if exchange.response_t is not None:
                    heapq.heappush(responses, (exchange.response_t, exchange.number, exchange))
                ended = _stream_end(exchange)
                if ended is not None:
                    heapq.heappush(ends, (ended, exchange.number, exchange))
            await link.send(item, message)
            prev_recorded, prev_live = item.t, self.now()
        eof = self.script.client_eof
        # What the recorded server answered only once the client had closed its end (a 2026-07-28
        # ``subscriptions/listen``) is waited for after closing it here too.
        after_eof = [e for e in sent if eof is not None and e.response_t is not None and e.response_t > eof]
        for exchange in sent:
            if exchange.response is not None and exchange not in after_eof:
                await self._response(exchange)
        if eof is not None:
            await self._pause(prev_live + pace.live(eof - prev_recorded))
        await asyncio.gather(*self._answering, return_exceptions=True)
        self.closing = True
        await link.close()
        for exchange in after_eof:
            await self._response(exchange)
        # What a server that exited early was never sent is missing too.
        compared = [self._compare(e) for e in planned if e.response is not None]
        exited = self.exit_note if any(c.differs for c in compared) else None
        return ClientResult(compared, self.unexpected, exited=exited)

    async def _pause(self, due: float) -> None:
        """Wait until ``due`` (live clock), or until the live server has exited."""
        delay = due - self.now()
        if delay > 0 and not self.exited.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.exited.wait(), delay)

    async def _live(self, future: asyncio.Future[tuple[float, Json]]) -> tuple[float, Json] | None:
        """The live response, once it comes; None if the live server exits first."""
        if not future.done():
            exited = asyncio.create_task(self.exited.wait())
            either: list[asyncio.Future[Any]] = [future, exited]
            try:
                await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            finally:
                exited.cancel()
        return future.result() if future.done() and not future.cancelled() else None

    def ended(self, exchange: Exchange) -> None:
        """The link says: the live response to ``exchange`` is complete (its event stream ended)."""
        self._ends.setdefault(exchange.number, asyncio.Event()).set()

    async def _ended(self, exchange: Exchange) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ends.setdefault(exchange.number, asyncio.Event()).wait(), self.options.timeout)

    def _key(self, exchange: Exchange) -> Hashable:
        if exchange.rest is not None:
            return ("rest", exchange.number)
        return id_key(exchange.message.get("id"))

    async def _response(self, exchange: Exchange) -> float | None:
        """When the live response to ``exchange`` came (waiting for it); None if it did not in time."""
        if exchange.number in self.received_at:
            return self.received_at[exchange.number]
        future = self.waiting.get(self._key(exchange))
        if future is None or exchange.number in self.answered:
            return None
        self.answered.add(exchange.number)
        try:
            live = await asyncio.wait_for(self._live(future), self.options.timeout)
        except TimeoutError:
            return None
        if live is None:
            return None
        at, message = live
        self.received_at[exchange.number] = at
        self.live[exchange.number] = message
        if exchange.response is not None:
            learn(exchange.response, message, self.swaps)
        return at

    # -- from the live server -----------------------------------------------------------------------

    def received(self, message: Json, exchange: Exchange | None = None) -> None:
        """A message from the live server; ``exchange``: the request it answers, when the transport knows."""
        now = self.now()
        self.heard = True
        if is_request(message):
            task = asyncio.create_task(self._answer(message))
            self._answering.add(task)
            task.add_done_callback(self._answering.discard)
            return
        rest = exchange is not None and exchange.rest is not None
        if rest or is_response(message):
            key = self._key(exchange) if rest and exchange is not None else id_key(message.get("id"))
            future = self.waiting.get(key)
            if future is not None and not future.done():
                future.set_result((now, message))
            answered = self.sent.get(key)
            if answered is not None:
                self.replies.setdefault(answered.number, []).append(message)

    async def _answer(self, message: Json) -> None:
        """Answer a live server's request with the recorded answer to the matching recorded request."""
        arrived = self.now()
        volatile, match_on = self.options.volatile, self.options.match_on
        live = Request.of(message, volatile)
        matching = [s for s in self._asked(live) if not failures(Request.of(s.message or {}, volatile), live, match_on)]
        step: Step | None = next((s for s in matching if id(s) not in self.used), None) or (
            matching[-1] if matching else None
        )
        if step is None or step.answer is None:
            self.unexpected.append(f"the live server asked {live.describe(80)}; the recording holds no such request")
            error = {"code": NO_ANSWER_CODE, "message": "wiretap replay: no recorded answer to this request"}
            reply: Json = {"jsonrpc": "2.0", "id": message.get("id"), "error": error}
        else:
            self.used.add(id(step))
            await _until(arrived + self.options.pace.live(step.answer.t - step.t), self.now)
            reply = {**step.answer.message, "id": message.get("id")}
        if self.link is not None:
            await self.link.send(ClientItem(self.now(), reply), reply)

    def _asked(self, live: Request) -> list[Step]:
        """The recorded requests from the server that may match ``live``: those filed under its key (all
        of them for a matcher of one's own), so that answering each is not a walk through them all."""
        if self._asked_by_key is None:
            self._asked_by_key = {}
            for at, step in enumerate(self.script.server_requests):
                message = step.message if step.answer is not None else None
                if message is not None:
                    filed = self._key_of(Request.of(message, self.options.volatile))
                    self._asked_by_key.setdefault(filed, []).append((at, step))
        filed = self._key_of(live)
        found = self._asked_by_key.get(filed, []) if filed is not None else []
        unkeyed = self._asked_by_key.get(None, [])
        return [step for _, step in (sorted(found + unkeyed, key=lambda s: s[0]) if unkeyed else found)]

    def _key_of(self, request: Request) -> int | None:
        try:
            return (
                keys.key(request, self.options.match_on) if all(n in keys.KEYS for n in self.options.match_on) else None
            )
        except (RecursionError, TypeError, ValueError):
            return None

    # -- comparing ----------------------------------------------------------------------------------

    def _compare(self, exchange: Exchange) -> Compared:
        """The live response against the recorded one; for an event stream, the last against the last
        (what came before depends on timing)."""
        live = self.live.get(exchange.number)
        if live is None or exchange.response is None:
            return Compared(exchange, live, [], refused=self.refusals.get(exchange.number))
        replies = [s.message for s in exchange.steps if s.reply and s.message is not None]
        recorded_last = replies[-1] if replies else exchange.response
        if len(replies) > 1 or len(self.replies.get(exchange.number, [])) > 1:
            live = self.replies[exchange.number][-1]
            learn(recorded_last, live, self.swaps)
        volatile = self.options.volatile
        recorded = volatile.normalize(_without_id(swapped(recorded_last, self.swaps)))
        found = differences(recorded, volatile.normalize(_without_id(live)))
        compared = Compared(exchange, live, found)
        if found and exchange.method in POLL_METHODS:
            was, now = reported_state(exchange.response), reported_state(live)
            task = self.script.tasks.get(exchange.task_key() or "")
            states = {s.raw for _, s in task.states} if task is not None else set()
            if was != now and now in states:
                compared.differences = []
                compared.timing = f"polled at another moment of the task: recorded {was}, live {now}"
        return compared


def _stream_end(exchange: Exchange) -> float | None:
    """When the recorded event stream answering ``exchange`` had sent its last response (None: no stream)."""
    replies = [step.t for step in exchange.steps if step.reply]
    return replies[-1] if len(replies) > 1 else None


async def _until(due: float, now: Any) -> None:
    delay = due - now()
    if delay > 0:
        await asyncio.sleep(delay)


def deliver(data: bytes, driver: Driver, exchange: Exchange | None) -> None:
    try:
        body: Any = json.loads(data)
    except ValueError:
        return
    for message in body if isinstance(body, list) else [body]:
        if isinstance(message, dict):
            driver.received(message, exchange)
