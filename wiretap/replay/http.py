"""Serving a replay over HTTP: MCP Streamable HTTP (both eras), A2A JSON-RPC and REST.

A POSTed request is answered the way the recorded one was: a JSON body, or an event stream carrying
everything the server sent for it (progress, requests to the client) and then the response. A POSTed
notification or response gets ``202 Accepted``. A GET opens the event stream that unprompted messages
go to, when the recorded client had one (``405`` otherwise); DELETE ends the session. The session id
the recorded server handed out is handed out again, and every response carries the live request's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections.abc import Coroutine
from typing import IO, Any

from aiohttp import web

from wiretap.replay.plan import Outlet, Plan
from wiretap.replay.player import Player, dumps
from wiretap.replay.script import Json, Step, is_request, is_response
from wiretap.run.proxy import parse_listen
from wiretap.wire import jsonrpc
from wiretap.wire.http.a2a_rest import rest_operation
from wiretap.wire.http.rewrite import CARD_PATHS
from wiretap.wire.json_values import as_dict

SESSION = "mcp-session-id"
SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}


def sse_event(step: Step, message: Json | None) -> bytes:
    fields = step.sse or {}
    lines = []
    if fields.get("event"):
        lines.append(f"event: {fields['event']}")
    if fields.get("id") is not None:
        lines.append(f"id: {fields['id']}")
    if fields.get("retry") is not None:
        lines.append(f"retry: {fields['retry']}")
    data = dumps(message) if message is not None else step.raw or ""
    lines += [f"data: {part}" for part in data.split("\n")]
    return ("\n".join(lines) + "\n\n").encode()


class EventStream:
    """An Outlet onto one HTTP response's event stream."""

    def __init__(self, response: web.StreamResponse, rebase: tuple[str, str] | None = None) -> None:
        self.response = response
        self.closed = False
        self.ended = asyncio.Event()
        self.rebase = rebase
        """(recorded origin, live origin): the legacy ``endpoint`` event may name the recording proxy."""

    async def send(self, step: Step, message: Json | None) -> None:
        if self.closed:
            return
        if step.close:
            await self.end()
            return
        if message is None and step.raw and self.rebase and self.rebase[0] and (step.sse or {}).get("event"):
            step = Step(step.t, raw=step.raw.replace(*self.rebase), sse=step.sse, ex=step.ex)
        try:
            await self.response.write(sse_event(step, message))
        except (ConnectionError, RuntimeError):
            self.closed = True
            self.ended.set()

    async def end(self) -> None:
        """The server ends the stream where the recording shows it did (the client may resume)."""
        self.closed = True
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self.response.write_eof()
        self.ended.set()


class Routed:
    """The Outlet for one exchange: what the recording shows on the exchange's own response goes there;
    what came on a GET stream goes to the live GET stream standing for it (the legacy transport's
    stream, a stream resumed after a ``Last-Event-ID``)."""

    def __init__(self, server: ReplayServer, own: Outlet, ex: int | None) -> None:
        self.server = server
        self.own = own
        self.ex = ex

    async def send(self, step: Step, message: Json | None) -> None:
        if step.ex is None or step.ex == self.ex:
            if step.close and isinstance(self.own, EventStream):
                await self.own.end()
            elif not step.close:
                await self.own.send(step, message)
            return
        await (await self.server.stream_for(step.ex)).send(step, message)


class Collected:
    """An Outlet that keeps what it is sent, for a plain JSON response."""

    def __init__(self) -> None:
        self.messages: list[Json] = []

    async def send(self, step: Step, message: Json | None) -> None:
        if message is not None:
            self.messages.append(message)


class Streams:
    """The Outlet for what came on GET event streams: the n-th recorded GET stream is the n-th live one
    (a recording may hold several legacy sessions, each with its stream); held until it is open. What
    names no recorded stream goes to the latest one; a stream the client left, to the latest open."""

    def __init__(self, recorded: list[int | None] | None = None) -> None:
        self.order = {ex: n for n, ex in enumerate(recorded or []) if ex is not None}
        self.open: list[EventStream] = []
        self.held: dict[int | None, list[tuple[Step, Json | None]]] = {}

    async def send(self, step: Step, message: Json | None) -> None:
        index = self.order.get(step.ex) if step.ex is not None else None
        if index is None and not [s for s in self.open if not s.closed]:
            self.held.setdefault(None, []).append((step, message))
            return
        if index is not None and index >= len(self.open):
            self.held.setdefault(index, []).append((step, message))
            return
        stream = self.open[index] if index is not None else self.open[-1]
        if stream.closed:
            live = [s for s in self.open if not s.closed]
            if not live:
                return
            stream = live[-1]
        await stream.send(step, message)

    async def attach(self, stream: EventStream) -> None:
        self.open.append(stream)
        held = self.held.pop(len(self.open) - 1, []) + self.held.pop(None, [])
        for step, message in sorted(held, key=lambda item: item[0].t):
            await stream.send(step, message)


class ReplayServer:
    def __init__(self, player: Player) -> None:
        self.player = player
        self.streams = Streams([shape.ex for shape in player.script.streams if shape.resumes is None])
        self.stopping = asyncio.Event()
        self.resumed: dict[str, asyncio.Future[EventStream]] = {}
        """Last-Event-ID → the live GET stream that resumed after it."""
        self.shapes = {shape.ex: shape for shape in player.script.streams}
        self.background: set[asyncio.Task[None]] = set()

    async def stream_for(self, ex: int) -> Outlet:
        """The live stream for a recorded GET stream: the one resuming after the same event id, when
        the recorded GET resumed; else the latest GET stream."""
        shape = self.shapes.get(ex)
        if shape is None or shape.resumes is None:
            return self.streams
        return await self._resumed(shape.resumes)

    def _resumed(self, event_id: str) -> asyncio.Future[EventStream]:
        if event_id not in self.resumed:
            self.resumed[event_id] = asyncio.get_running_loop().create_future()
        return self.resumed[event_id]

    async def handle(self, request: web.BaseRequest) -> web.StreamResponse:
        path = request.rel_url.path
        rest = rest_operation(request.method, path)
        if rest is not None:
            return await self._rest(request, rest)
        if request.method == "POST":
            return await self._post(request)
        if request.method == "GET" and path in CARD_PATHS:
            return await self._card(request)
        if request.method == "GET":
            return await self._stream(request)
        if request.method == "DELETE":
            return web.Response(status=200, headers=self._session(request, None))
        return web.Response(status=405)

    @staticmethod
    def _session(request: web.BaseRequest, plan: Plan | None) -> dict[str, str]:
        shape = plan.exchange.http if plan is not None and plan.exchange is not None else None
        recorded = shape.response_headers.get(SESSION) if shape is not None else None
        value = request.headers.get(SESSION) or recorded
        return {SESSION: str(value)} if value else {}

    async def _post(self, request: web.BaseRequest) -> web.StreamResponse:
        parsed = jsonrpc.parse(await request.read())
        if parsed.errors and not any(is_request(m) for m in parsed.messages):
            errors: Any = parsed.errors if parsed.batch else parsed.errors[0]
            return web.json_response(errors, status=400, headers=self._session(request, None), dumps=dumps)
        messages = parsed.messages
        requests = [m for m in messages if is_request(m)]
        for message in messages:
            if is_response(message):
                self.player.client_response(message)
            elif not is_request(message):
                self.player.notification(message)
        if not requests:
            return web.Response(status=202, headers=self._session(request, None))
        plans = [self.player.plan(m, path=request.rel_url.path) for m in requests]
        if len(plans) == 1 and plans[0].event_stream:
            return await self._answer_streaming(request, plans[0])
        if len(plans) == 1 and _answered_elsewhere(plans[0]):
            return self._accepted_then_answered(request, plans[0])
        collected = Collected()
        await asyncio.gather(*(self.player.perform(plan, self._routed(plan, collected)) for plan in plans))
        replies = [m for m in collected.messages if "method" not in m] + parsed.errors
        status = plans[0].exchange.http.status if plans[0].exchange and plans[0].exchange.http else None
        headers = self._session(request, plans[0])
        if not replies:
            return web.Response(status=202, headers=headers)
        payload = replies if parsed.batch else replies[0]
        text = json.dumps(payload, ensure_ascii=False)
        return web.Response(status=status or 200, text=text, content_type="application/json", headers=headers)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(work)
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        return task

    def _routed(self, plan: Plan, own: Outlet) -> Routed:
        return Routed(self, own, plan.exchange.ex if plan.exchange is not None else None)

    def _accepted_then_answered(self, request: web.BaseRequest, plan: Plan) -> web.StreamResponse:
        """The legacy transport: the POST is accepted at once, the answer goes on the GET stream."""
        self._spawn(self.player.perform(plan, self._routed(plan, Collected())))
        status = plan.exchange.http.status if plan.exchange and plan.exchange.http else None
        return web.Response(status=status or 202, headers=self._session(request, plan))

    async def _answer_streaming(self, request: web.BaseRequest, plan: Plan) -> web.StreamResponse:
        status = plan.exchange.http.status if plan.exchange and plan.exchange.http else None
        response = web.StreamResponse(status=status or 200, headers={**SSE_HEADERS, **self._session(request, plan)})
        await response.prepare(request)
        stream = EventStream(response)
        # Its own task: a client that leaves once the stream was closed on it (to resume on a GET) must
        # not cancel what the recording sent after. And the handler returns as soon as the stream is
        # closed: a client (or a proxy) may send its resuming GET on this very connection, which is
        # read only once this handler is done.
        performing = self._spawn(self.player.perform(plan, self._routed(plan, stream)))
        ended = asyncio.create_task(stream.ended.wait())
        try:
            await asyncio.wait([performing, ended], return_when=asyncio.FIRST_COMPLETED)
        finally:
            ended.cancel()
        with contextlib.suppress(ConnectionError, RuntimeError):
            await response.write_eof()
        return response

    async def _stream(self, request: web.BaseRequest) -> web.StreamResponse:
        if not self.player.script.streams:
            return web.Response(status=405, headers={"Allow": "POST, DELETE"})
        response = web.StreamResponse(status=200, headers={**SSE_HEADERS, **self._session(request, None)})
        await response.prepare(request)
        origin = self.player.script.card_origin()
        stream = EventStream(response, (origin, f"{request.scheme}://{request.host}"))
        last_event_id = request.headers.get("Last-Event-ID")
        if last_event_id:
            if self._resumed(last_event_id).done():  # resumed again: what is still to come goes here
                self.resumed.pop(last_event_id)
            self._resumed(last_event_id).set_result(stream)
        else:
            await self.streams.attach(stream)
        stopping = asyncio.create_task(self.stopping.wait())
        ended = asyncio.create_task(stream.ended.wait())
        try:
            await asyncio.wait([stopping, ended], return_when=asyncio.FIRST_COMPLETED)
        finally:
            stream.closed = True
            stopping.cancel()
            ended.cancel()
        return response

    async def _rest(self, request: web.BaseRequest, rest: tuple[str, str | None]) -> web.StreamResponse:
        operation, task_id = rest
        raw = await request.read()
        try:
            body: Any = json.loads(raw) if raw.strip() else {}
        except (ValueError, RecursionError):
            body = {}
        if jsonrpc.deeper_than(body):
            error = {"code": 400, "message": f"nested more than {jsonrpc.MAX_DEPTH} deep"}
            return web.json_response({"error": error}, status=400)
        fields = {"operation": operation, "method": request.method, "path": request.rel_url.path, "taskId": task_id}
        plan = self.player.plan(as_dict(body), path=request.rel_url.path, rest=fields)
        if plan.miss is not None:
            error = {"code": 404, "message": plan.miss.message(), "data": plan.miss.as_dict()}
            return web.json_response({"error": error}, status=404)
        if plan.event_stream:
            return await self._answer_streaming(request, plan)
        collected = Collected()
        await self.player.perform(plan, collected)
        status = plan.exchange.http.status if plan.exchange and plan.exchange.http else None
        if not collected.messages:
            return web.Response(status=status or 200)
        return web.json_response(collected.messages[0], status=status or 200, dumps=dumps)

    async def _card(self, request: web.BaseRequest) -> web.StreamResponse:
        card = self.player.script.agent_card
        if card is None:
            return web.Response(status=404)
        host = f"{request.scheme}://{request.host}"
        return web.json_response(rebase_card(card, self.player.script.card_origin(), host), dumps=dumps)


def _answered_elsewhere(plan: Plan) -> bool:
    """Whether the recorded response came on another stream than the POST's own (legacy HTTP+SSE)."""
    exchange = plan.exchange
    if exchange is None or exchange.ex is None:
        return False
    return any(step.reply and step.ex not in (None, exchange.ex) for step in exchange.steps)


def rebase_card(card: Json, recorded_origin: str, live_origin: str) -> Json:
    """The card with the recorded server's (or proxy's) origin swapped for the replay's."""
    text = json.dumps(card, ensure_ascii=False)
    return dict(json.loads(text.replace(recorded_origin, live_origin))) if recorded_origin else card


async def serve_http(player: Player, listen: str, *, announce: IO[str]) -> None:
    """Serve until SIGINT or SIGTERM; print the URL clients should use as the first line of ``announce``."""
    host, port = parse_listen(listen)
    server = ReplayServer(player)
    runner = web.ServerRunner(
        web.Server(server.handle, handler_cancellation=True), handle_signals=False, access_log=None
    )
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_address=True)
    await site.start()
    bound = site._server
    assert isinstance(bound, asyncio.base_events.Server)
    bound_host, bound_port = bound.sockets[0].getsockname()[:2]
    shown_host = f"[{bound_host}]" if ":" in bound_host else bound_host
    print(f"http://{shown_host}:{bound_port}{player.script.base_path()}", file=announce, flush=True)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(signum, server.stopping.set)
    player.when_failed(server.stopping.set)
    unprompted = asyncio.create_task(player.play_unprompted(server.streams))
    try:
        await server.stopping.wait()
    finally:
        for task in [unprompted, *server.background]:
            task.cancel()
        await asyncio.gather(unprompted, *server.background, return_exceptions=True)
        await runner.cleanup()
    if player.failure is not None:
        raise player.failure
