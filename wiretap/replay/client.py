"""A recorded client, driving a live server: ``wiretap replay RECORDING --as client -- SERVER…``.

The recorded client's messages go out in order, each once the responses it had when it was sent have
arrived, and at its recorded offset from the later of the previous message and those responses
(scaled by the pace). Ids the live server makes up (a task id, a context id) are learned from its
responses and put in place of the recorded ones in what is sent next. A request from the server
(elicitation, roots, sampling) is matched to a recorded one and answered with the recorded answer,
under the live request's id. Every live response is then compared with the recorded one, volatile parts
ignored (structural_diff.py); a task poll that caught the task in another of its recorded states is
timing, not a difference. A server that exits, or refuses a request with an HTTP error, leaves what it
did not answer missing at once (not after ``--timeout``). With ``--out`` the live run is recorded
through ``wiretap tap`` (stdio) or ``wiretap proxy`` (HTTP), as any other run would be.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import heapq
import json
import os
import signal
import sys
import time
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol
from urllib.parse import urljoin, urlsplit

import aiohttp

from wiretap.replay import keys
from wiretap.replay.matchers import DEFAULT_MATCH_ON, Request, failures
from wiretap.replay.pace import RECORDED, Pace
from wiretap.replay.player import dumps
from wiretap.replay.script import (
    POLL_METHODS,
    ClientItem,
    Exchange,
    HttpShape,
    Json,
    Script,
    Sent,
    Step,
    id_key,
    is_request,
    is_response,
)
from wiretap.replay.tasks import reported_state
from wiretap.replay.volatile import Volatile
from wiretap.transports.process import signal_name
from wiretap.wire.framing import LineFramer
from wiretap.wire.structural_diff import Difference, describe, differences

WIRETAP = [sys.executable, "-m", "wiretap"]


def made_up(key: str | None) -> bool:
    """Whether a key names an id that a live server makes up afresh (``id``, ``taskId``, ``context_id``…),
    to be learned from its responses."""
    return key is not None and (key == "id" or key.endswith(("Id", "_id")))


class Unreachable(Exception):
    """The live server could not be reached (nothing listens, it does not answer) or started."""


UNREACHABLE_STATUS = 3
"""``replay --as client`` exits 3 when the live server cannot be reached or started (1: it differs)."""
NO_ANSWER_CODE = -32601
STOP_GRACE = 5.0


@dataclass(frozen=True)
class ClientOptions:
    pace: Pace = RECORDED
    volatile: Volatile = field(default_factory=Volatile)
    timeout: float = 30.0
    """How long to wait for each live response."""
    match_on: tuple[str, ...] = DEFAULT_MATCH_ON
    """How a live server's request is matched to a recorded one."""
    out: Path | None = None


@dataclass
class Compared:
    exchange: Exchange
    live: Json | None
    differences: list[Difference]
    timing: str | None = None
    """Why a difference was let go: a poll that caught the task in another recorded state."""
    refused: str | None = None
    """How the live server refused the request instead of answering it (``HTTP 404 Not Found``)."""

    @property
    def differs(self) -> bool:
        return self.live is None or bool(self.differences)

    def describe(self) -> str:
        head = f"#{self.exchange.number} {self.exchange.request.describe(80)}"
        if self.live is None:
            return f"{head}: no live response" + (f" ({self.refused})" if self.refused else "")
        return f"{head}: {describe(self.differences, limit=5)}"


@dataclass
class ClientResult:
    compared: list[Compared] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    """Requests from the live server that the recording could not answer."""
    recording: Path | None = None
    server_status: int | None = None
    unreachable: str | None = None
    """Why the live server could not be reached or started (nothing was compared)."""
    exited: str | None = None
    """How the live server exited while the recorded client still expected answers."""

    @property
    def differing(self) -> list[Compared]:
        return [c for c in self.compared if c.differs]

    @property
    def exit_status(self) -> int:
        if self.unreachable is not None:
            return UNREACHABLE_STATUS
        return 1 if self.differing or self.unexpected else 0

    def summary(self) -> dict[str, Any]:
        return {
            "responses": len(self.compared),
            "differing": [
                {
                    "number": c.exchange.number,
                    "method": c.exchange.method,
                    "live": c.live is not None,
                    "refused": c.refused,
                    "differences": [d.as_dict() for d in c.differences],
                }
                for c in self.differing
            ],
            "timing": [{"number": c.exchange.number, "why": c.timing} for c in self.compared if c.timing],
            "unexpected": self.unexpected,
            "recording": None if self.recording is None else str(self.recording),
            "server_status": self.server_status,
            "unreachable": self.unreachable,
            "exited": self.exited,
        }

    def report(self, out: IO[str]) -> None:
        for compared in self.differing:
            print(compared.describe(), file=out)
        for note in self.unexpected:
            print(note, file=out)
        if self.exited is not None:
            print(self.exited, file=out)


class Link(Protocol):
    """The way to the live server."""

    async def send(self, item: Sent, message: Json) -> None: ...

    async def close(self) -> None:
        """End of input: close the server's stdin, or end the HTTP session."""


def learn(recorded: Any, live: Any, into: dict[str, Any], key: str | None = None) -> None:
    """Where the live value of a made-up id differs from the recorded one, remember recorded → live."""
    if isinstance(recorded, dict) and isinstance(live, dict):
        for k, value in recorded.items():
            if k in live:
                learn(value, live[k], into, k)
    elif isinstance(recorded, list) and isinstance(live, list):
        for a, b in zip(recorded, live, strict=False):
            learn(a, b, into, key)
    elif made_up(key) and isinstance(recorded, str) and isinstance(live, str | int) and recorded != live:
        into[recorded] = live


def swapped(value: Any, swaps: dict[str, Any]) -> Any:
    """``value`` with every string that is a learned recorded id replaced by the live one."""
    if not swaps:
        return value
    if isinstance(value, dict):
        return {k: swapped(v, swaps) for k, v in value.items()}
    if isinstance(value, list):
        return [swapped(v, swaps) for v in value]
    if isinstance(value, str) and value in swaps:
        return swaps[value]
    return value


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


# -- stdio ---------------------------------------------------------------------------------------------


class StdioLink:
    """A server process (through ``wiretap tap`` when recording), spoken to on its pipes."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def send(self, item: Sent, message: Json) -> None:
        assert self.proc.stdin is not None
        with contextlib.suppress(ConnectionError):
            self.proc.stdin.write(dumps(message).encode() + b"\n")
            await self.proc.stdin.drain()

    async def close(self) -> None:
        assert self.proc.stdin is not None
        with contextlib.suppress(ConnectionError, OSError):
            self.proc.stdin.close()
            await self.proc.stdin.wait_closed()

    async def read(self, driver: Driver) -> None:
        assert self.proc.stdout is not None
        framer = LineFramer()
        while chunk := await self.proc.stdout.read(1 << 16):
            for frame in framer.feed(chunk):
                _deliver(bytes(frame), driver, None)
        last = framer.close()
        if last is not None:
            _deliver(bytes(last), driver, None)


def _deliver(data: bytes, driver: Driver, exchange: Exchange | None) -> None:
    try:
        body: Any = json.loads(data)
    except ValueError:
        return
    for message in body if isinstance(body, list) else [body]:
        if isinstance(message, dict):
            driver.received(message, exchange)


async def _stop(proc: asyncio.subprocess.Process, grace: float = STOP_GRACE) -> int:
    for signum in (None, signal.SIGTERM, signal.SIGKILL):
        if signum is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signum)
        try:
            return await asyncio.wait_for(proc.wait(), grace)
        except TimeoutError:
            continue
    return await proc.wait()


STDERR_FD = 2
STDERR_TAIL = 4096
"""How much of the end of the server's stderr is kept, to say why it exited."""
STDERR_SETTLE = 1.0
"""How long to wait for the rest of a dead server's stderr (a grandchild may hold the pipe open)."""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


async def _pass_stderr(stream: asyncio.StreamReader, tail: bytearray) -> None:
    """The server's stderr, passed on to ours as it comes (as when it was inherited: straight to file
    descriptor 2, in a thread so a slow reader stalls nothing else); its end kept in ``tail``."""
    while chunk := await stream.read(1 << 16):
        with contextlib.suppress(OSError):
            await asyncio.to_thread(_write_all, STDERR_FD, chunk)
        tail += chunk
        del tail[:-STDERR_TAIL]


def how_it_exited(returncode: int) -> str:
    return f"was killed by {signal_name(-returncode)}" if returncode < 0 else f"exited with status {returncode}"


def last_words(stderr_tail: bytes) -> str:
    """The last lines a server wrote on stderr, on one line."""
    lines = [line.strip() for line in stderr_tail.decode("utf-8", errors="replace").splitlines() if line.strip()]
    said = " / ".join(lines[-3:])
    return "…" + said[-299:] if len(said) > 300 else said


async def _watch_exit(
    proc: asyncio.subprocess.Process,
    reader: asyncio.Task[None],
    pump: asyncio.Task[None],
    tail: bytearray,
    driver: Driver,
) -> None:
    """Once the server has closed its stdout and exited, tell the driver how."""
    await asyncio.gather(reader, return_exceptions=True)
    returncode = await proc.wait()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(pump), STDERR_SETTLE)
    driver.server_exited(how_it_exited(returncode), last_words(bytes(tail)))


async def replay_stdio(script: Script, server: list[str], options: ClientOptions) -> ClientResult:
    command = [*WIRETAP, "tap", "--out", str(options.out), "--", *server] if options.out is not None else server
    try:
        proc = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
    except OSError as exc:
        raise Unreachable(f"cannot start {server[0]}: {exc.strerror or exc}") from None
    assert proc.stderr is not None
    link = StdioLink(proc)
    driver = Driver(script, options)
    reader = asyncio.create_task(link.read(driver))
    tail = bytearray()
    pump = asyncio.create_task(_pass_stderr(proc.stderr, tail))
    watch = asyncio.create_task(_watch_exit(proc, reader, pump, tail, driver))
    try:
        result = await driver.run_until_lost(link)
    finally:
        await link.close()
        status = await _stop(proc)
        watch.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(pump), STDERR_SETTLE)
        for task in (reader, pump):
            task.cancel()
        await asyncio.gather(reader, pump, watch, return_exceptions=True)
    result.server_status = status
    return result


# -- HTTP ----------------------------------------------------------------------------------------------

SESSION = "mcp-session-id"
RESUMPTIONS = 5
"""How many times a stream cut short is resumed before the response counts as missing."""
CONNECT_TIMEOUT = 5.0
"""How long a live server may take to accept a connection before the replay gives up on it."""
_NOT_REPLAYED = frozenset(
    {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "accept-encoding", "mcp-session-id"}
)


def _endpoint_key(path: str, query: str | None) -> str:
    return f"{path}?{query}" if query else path


def _legacy_streams(script: Script) -> dict[str, HttpShape]:
    """Each recorded legacy endpoint (its path and query: the TypeScript SDK's ``?sessionId=``, the
    Python SDK's ``?session_id=``) → the GET stream that handed it out."""
    shapes = {shape.ex: shape for shape in script.streams}
    out = {}
    for item in script.unprompted:
        step = item.step
        if (step.sse or {}).get("event") == "endpoint" and step.raw and step.ex in shapes:
            shape = shapes[step.ex]
            endpoint = urlsplit(urljoin(f"http://recorded{shape.path}", step.raw.strip()))
            out[_endpoint_key(endpoint.path, endpoint.query)] = shape
    return out


class HttpLink:
    """POSTs (and A2A REST calls) to a live HTTP server, with the session id it hands out."""

    def __init__(self, session: Any, base: str, driver: Driver, script: Script) -> None:
        self.http = session
        self.base = base
        self.origin = "{0.scheme}://{0.netloc}".format(urlsplit(base))
        self.driver = driver
        self.script = script
        self.session_id: str | None = None
        """The live session id handed out last (for messages whose recorded session is unknown)."""
        self.sessions: dict[str, str] = {}
        """Recorded session id → the live one: each recorded client session runs as its own live one."""
        self.exchanges: set[asyncio.Task[None]] = set()
        self.streams: set[asyncio.Task[None]] = set()
        """GET event streams."""
        self.streams_opened: set[str] = set()
        self.pending_streams: list[tuple[HttpShape, str]] = []
        """GET streams of a live session, to open when the recorded client opened its own."""
        self.item_times = [item.t for item in script.client_items]
        self.last_sent_t = float("-inf")
        self.legacy_streams = _legacy_streams(script)
        """Recorded legacy session id → the GET stream that handed out its endpoint."""
        self.endpoints: dict[int | None, asyncio.Future[str]] = {}

    def _url(self, item: Sent) -> str:
        if item.http is None:
            return self.base
        query = f"?{item.http.query}" if item.http.query else ""
        path = item.http.path
        for recorded, live in self.driver.swaps.items():  # an A2A REST path names the task
            if recorded in path:
                path = path.replace(recorded, str(live))
        return f"{self.origin}{path}{query}"

    def _headers(self, item: Sent) -> dict[str, str]:
        recorded = item.http.request_headers if item.http is not None else {}
        headers = {k: str(v) for k, v in recorded.items() if k not in _NOT_REPLAYED and not isinstance(v, list)}
        if item.http is None:
            headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        session = self._live_session(recorded.get(SESSION) if item.http is not None else None, item.http is None)
        if session:
            headers[SESSION] = session
        return headers

    def _live_session(self, recorded: Any, unknown: bool) -> str | None:
        """The live session for a recorded one; none for a message sent without one (an initialize)."""
        if isinstance(recorded, str) and recorded in self.sessions:
            return self.sessions[recorded]
        return self.session_id if recorded or unknown else None

    def _learn_session(self, item: Sent, live: str | None) -> None:
        if not live:
            return
        recorded = item.exchange.http.response_headers.get(SESSION) if item.exchange and item.exchange.http else None
        recorded = recorded or (item.http.request_headers.get(SESSION) if item.http is not None else None)
        if isinstance(recorded, str) and recorded:
            self.sessions.setdefault(recorded, live)
        self.session_id = live

    async def send(self, item: Sent, message: Json) -> None:
        if item.http is not None:  # a recorded message (an answer made up live has no recorded time)
            self._open_streams(item.t)
            self.last_sent_t = item.t
        task = asyncio.create_task(self._exchange(item, message))
        self.exchanges.add(task)
        task.add_done_callback(self.exchanges.discard)
        if item.exchange is None:
            await task

    async def _exchange(self, item: Sent, message: Json) -> None:
        method = item.http.method if item.http is not None and item.rest is not None else "POST"
        body = dumps(message).encode() if (item.rest is None or message) else None
        live_session = None
        try:
            url = await self._legacy_url(item) or self._url(item)
            async with self.http.request(method, url, data=body, headers=self._headers(item)) as response:
                live_session = response.headers.get(SESSION)
                self._learn_session(item, live_session)
                resume = await self._read(response, item.exchange)
                if response.status >= 400 and item.exchange is not None:
                    self.driver.refused(item.exchange, f"HTTP {response.status} {response.reason or ''}".strip())
            if item.exchange is not None:
                await self._resume(item, item.exchange, resume)
        except aiohttp.ClientConnectorError as exc:
            self.driver.lost(f"cannot connect to {self.base}: {exc.os_error.strerror or exc.os_error}")
        except (OSError, aiohttp.ClientError) as exc:
            self.driver.unexpected.append(f"#{item.exchange.number if item.exchange else '-'}: {exc}")
        finally:
            if item.exchange is not None:
                self.driver.ended(item.exchange)
        if live_session and live_session not in self.streams_opened:
            shape = self._stream_shape(item)
            if shape is not None:
                self.streams_opened.add(live_session)
                ended = item.exchange.response_t if item.exchange and item.exchange.response_t else item.t
                self._open_stream_later(shape, live_session, ended)

    def _open_stream_later(self, shape: HttpShape, session: str, after: float) -> None:
        """Open the session's GET stream where the recorded client did: ``shape.t - after`` (paced) from
        now, or before the first later message it sent, whichever comes first; never before one it sent
        earlier (``notifications/initialized``), so as fast as possible it waits for the next one."""
        opening = (shape, session)
        self.pending_streams.append(opening)
        delay = self.driver.options.pace.live(max(0.0, shape.t - after))
        before = bisect.bisect_left(self.item_times, shape.t)
        sent_before = self.item_times[before - 1] if before else float("-inf")
        if delay <= 0:
            return

        async def in_time() -> None:
            await asyncio.sleep(delay)
            if opening in self.pending_streams and self.last_sent_t >= sent_before:
                self.pending_streams.remove(opening)
                self.streams.add(asyncio.create_task(self._stream(*opening)))

        self.streams.add(asyncio.create_task(in_time()))

    def _open_streams(self, before: float) -> None:
        """Open the pending GET streams the recorded client had opened before sending at ``before``."""
        for opening in [o for o in self.pending_streams if o[0].t <= before]:
            self.pending_streams.remove(opening)
            self.streams.add(asyncio.create_task(self._stream(*opening)))

    def _stream_shape(self, item: Sent) -> HttpShape | None:
        """The GET event stream the recorded client opened in this exchange's session, if it did."""
        recorded = item.exchange.http.response_headers.get(SESSION) if item.exchange and item.exchange.http else None
        for shape in self.script.streams:
            if shape.resumes:
                continue  # a GET resuming a cut stream is sent by _resume, not opened for the session
            if recorded is None or shape.request_headers.get(SESSION) in (recorded, None):
                return shape
        return None

    async def _resume(self, item: Sent, exchange: Exchange, resume: tuple[str, int | None] | None) -> None:
        """A stream that ended before its response is resumed with GET and ``Last-Event-ID`` (SEP-1699),
        after the ``retry`` the server asked for, as an SDK client does."""
        for _ in range(RESUMPTIONS):
            future = self.driver.waiting.get(self.driver._key(exchange))
            if resume is None or future is None or future.done():
                return
            last_id, retry = resume
            await asyncio.sleep(self.driver.options.pace.live((retry or 0) / 1000))
            headers = {"accept": "text/event-stream", "last-event-id": last_id}
            session = self._live_session((item.http.request_headers if item.http else {}).get(SESSION), True)
            if session:
                headers[SESSION] = session
            async with self.http.get(self._url(item), headers=headers) as response:
                if response.status != 200:
                    return
                # A resumed stream may stay open once it has replayed the response (the TypeScript SDK's
                # does): the recorded client had what it resumed for, and so has the replay.
                resume = await self._read(response, exchange, until=future) or resume

    async def _read(
        self,
        response: Any,
        exchange: Exchange | None,
        endpoint: asyncio.Future[str] | None = None,
        until: asyncio.Future[Any] | None = None,
    ) -> tuple[str, int | None] | None:
        """Deliver what the response carried; for an event stream, the last event id and retry seen (an
        event stream is left once ``until`` is done)."""
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type == "text/event-stream":
            from wiretap.wire.sse import SSEDecoder

            decoder = SSEDecoder()
            last_id: str | None = None
            retry: int | None = None
            async for chunk in response.content.iter_any():
                for event in [*decoder.feed(chunk)]:
                    last_id, retry = event.id or last_id, event.retry if event.retry is not None else retry
                    if event.event == "endpoint" and event.data and endpoint is not None and not endpoint.done():
                        endpoint.set_result(event.data.decode("utf-8", errors="replace").strip())
                    elif event.data:
                        _deliver(event.data, self.driver, exchange)
                if until is not None and until.done():
                    return None if last_id is None else (last_id, retry)
            for event in decoder.close():
                if event.data:
                    _deliver(event.data, self.driver, exchange)
            return None if last_id is None else (last_id, retry)
        data = await response.read()
        if exchange is not None and exchange.rest is not None:
            try:
                parsed: Any = json.loads(data) if data.strip() else {}
            except ValueError:
                parsed = {"raw": data.decode("utf-8", errors="replace")}
            self.driver.received(parsed if isinstance(parsed, dict) else {"body": parsed}, exchange)
        elif data.strip():
            _deliver(data, self.driver, exchange)
        return None

    async def _legacy_url(self, item: Sent) -> str | None:
        """Legacy HTTP+SSE (2024-11-05): a POST to a recorded session's endpoint goes to the endpoint the
        live server gave on the GET stream standing for that session's (opened first, as a client does)."""
        shape = self.legacy_streams.get(_endpoint_key(item.http.path, item.http.query)) if item.http else None
        if shape is None:
            return None
        endpoint = self.endpoints.get(shape.ex)
        if endpoint is None:
            endpoint = self.endpoints[shape.ex] = asyncio.get_running_loop().create_future()
            task = asyncio.create_task(self._legacy_stream(shape, endpoint))
            self.streams.add(task)
        return urljoin(f"{self.origin}{shape.path}", await asyncio.wait_for(endpoint, CONNECT_TIMEOUT * 6))

    async def _legacy_stream(self, shape: HttpShape, endpoint: asyncio.Future[str]) -> None:
        headers = {k: str(v) for k, v in shape.request_headers.items() if k not in _NOT_REPLAYED}
        with contextlib.suppress(OSError, aiohttp.ClientError):
            async with self.http.get(f"{self.origin}{shape.path}", headers=headers) as response:
                await self._read(response, None, endpoint)

    async def _stream(self, shape: HttpShape, session: str) -> None:
        headers = {k: str(v) for k, v in shape.request_headers.items() if k not in _NOT_REPLAYED}
        headers[SESSION] = session
        with contextlib.suppress(OSError, asyncio.CancelledError):
            async with self.http.get(f"{self.origin}{shape.path}", headers=headers) as response:
                if response.status == 200:
                    await self._read(response, None)

    async def close(self) -> None:
        """Let every response (event streams included) finish, then end the session."""
        self._open_streams(float("inf"))
        if self.exchanges:
            await asyncio.wait(list(self.exchanges), timeout=self.driver.options.timeout)
        if self.script.ends_session:
            for session in dict.fromkeys([*self.sessions.values(), *([self.session_id] if self.session_id else [])]):
                with contextlib.suppress(OSError, aiohttp.ClientError):
                    async with self.http.delete(self.base, headers={SESSION: session}):
                        pass
        for task in [*self.exchanges, *self.streams]:
            task.cancel()
        await asyncio.gather(*self.exchanges, *self.streams, return_exceptions=True)


async def _reachable(url: str) -> None:
    """Raise Unreachable unless something accepts a connection at ``url`` within CONNECT_TIMEOUT."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Unreachable(f"cannot connect to {url}: not an http:// or https:// URL")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(parts.hostname, port), CONNECT_TIMEOUT)
    except TimeoutError:
        raise Unreachable(f"cannot connect to {url}: no answer within {CONNECT_TIMEOUT:g} s") from None
    except OSError as exc:
        raise Unreachable(f"cannot connect to {url}: {exc.strerror or exc}") from None
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()


async def replay_http(script: Script, upstream: str, options: ClientOptions) -> ClientResult:
    proxy = None
    base = upstream
    if options.out is not None:
        command = [*WIRETAP, "proxy", "--upstream", upstream, "--out", str(options.out)]
        proxy = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE)
        assert proxy.stdout is not None
        base = (await proxy.stdout.readline()).decode().strip()
        if not base:
            await proxy.wait()
            raise RuntimeError("wiretap proxy did not start")
    timeout = aiohttp.ClientTimeout(total=None, sock_read=options.timeout, sock_connect=CONNECT_TIMEOUT)
    try:
        await _reachable(upstream)
        async with aiohttp.ClientSession(timeout=timeout, auto_decompress=True) as session:
            driver = Driver(script, options)
            result = await driver.run_until_lost(HttpLink(session, base, driver, script))
    finally:
        if proxy is not None and proxy.returncode is None:
            proxy.send_signal(signal.SIGINT)
            await _stop(proxy)
    return result


def replay_client(
    script: Script,
    server: list[str],
    upstream: str | None,
    options: ClientOptions,
    *,
    out: IO[str],
    notes: IO[str],
) -> ClientResult:
    """Run the recorded client against the live server; print the differences to ``out``."""
    runner = replay_http(script, upstream, options) if upstream else replay_stdio(script, server, options)
    try:
        result = asyncio.run(runner)
    except Unreachable as exc:
        print(f"wiretap replay: {exc}", file=notes)
        return ClientResult(unreachable=str(exc))
    result.recording = options.out
    result.report(out)
    timing = [c for c in result.compared if c.timing]
    print(
        f"wiretap replay: {len(result.compared)} response(s) compared, {len(result.differing)} differ"
        + (f", {len(timing)} poll(s) caught the task at another moment" if timing else "")
        + (f", {len(result.unexpected)} unexpected request(s) from the server" if result.unexpected else ""),
        file=notes,
    )
    return result
