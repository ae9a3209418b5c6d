"""The link to a live HTTP server: POSTs and A2A REST calls, its sessions, GET event streams, resumed
streams and legacy HTTP+SSE endpoints."""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
import signal
from typing import Any
from urllib.parse import urljoin, urlsplit

import aiohttp

from wiretap.replay.drive import ClientOptions, Driver, deliver
from wiretap.replay.links.process import WIRETAP, stop
from wiretap.replay.player import dumps
from wiretap.replay.result import ClientResult, Unreachable
from wiretap.replay.script import Exchange, HttpShape, Json, Script, Sent

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
                        deliver(event.data, self.driver, exchange)
                if until is not None and until.done():
                    return None if last_id is None else (last_id, retry)
            for event in decoder.close():
                if event.data:
                    deliver(event.data, self.driver, exchange)
            return None if last_id is None else (last_id, retry)
        data = await response.read()
        if exchange is not None and exchange.rest is not None:
            try:
                parsed: Any = json.loads(data) if data.strip() else {}
            except ValueError:
                parsed = {"raw": data.decode("utf-8", errors="replace")}
            self.driver.received(parsed if isinstance(parsed, dict) else {"body": parsed}, exchange)
        elif data.strip():
            deliver(data, self.driver, exchange)
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
            await stop(proxy)
    return result
