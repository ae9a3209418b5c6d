"""WebSocket peers for the proxy's tests: aiohttp's server and client, and what the recording should say."""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import threading
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import jsonschema
from aiohttp import web

from support.proxyrun import ProxyRun
from wiretap.schemas import schema


def request(n: int) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "echo", "n": n}})


def reply(text: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": json.loads(text)["id"], "result": {"echoed": json.loads(text)}})


@dataclass
class EchoServer:
    """An aiohttp WebSocket server on a thread of its own: answers each JSON-RPC request, sends binary back
    reversed, and keeps what it received and sent as (type, data)."""

    url: str = ""
    received: list[tuple[str, Any]] = field(default_factory=list)
    sent: list[tuple[str, Any]] = field(default_factory=list)
    compress: bool = False
    tls: ssl.SSLContext | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _runner: web.AppRunner | None = None

    async def _handler(self, http: web.Request) -> web.StreamResponse:
        if http.headers.get("X-Refuse"):
            return web.Response(status=403, text="no websocket for you")
        ws = web.WebSocketResponse(compress=self.compress, max_msg_size=0)
        await ws.prepare(http)
        if "flood" in http.query:
            with contextlib.suppress(ConnectionError):  # (the proxy may be killed under it)
                for n in range(int(http.query["flood"])):
                    await ws.send_str(f'{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"n":{n}}}}}')
            return ws
        hello = json.dumps({"jsonrpc": "2.0", "method": "notifications/hello"})
        await ws.send_str(hello)
        self.sent.append(("text", hello))
        async for frame in ws:
            if frame.type == aiohttp.WSMsgType.TEXT:
                self.received.append(("text", frame.data))
                if frame.data.startswith("{") and "id" in json.loads(frame.data):
                    answer = reply(frame.data)
                    await ws.send_str(answer)
                    self.sent.append(("text", answer))
            elif frame.type == aiohttp.WSMsgType.BINARY:
                self.received.append(("binary", frame.data))
                await ws.send_bytes(frame.data[::-1])
                self.sent.append(("binary", frame.data[::-1]))
        self.received.append(("close", ws.close_code))
        return ws

    def start(self) -> None:
        ready = threading.Event()

        def serve() -> None:
            loop = self._loop = asyncio.new_event_loop()
            app = web.Application()
            app.router.add_get("/ws", self._handler)
            self._runner = web.AppRunner(app)
            loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self.tls)
            loop.run_until_complete(site.start())
            port = self._runner.addresses[0][1]
            self.url = f"{'https' if self.tls else 'http'}://127.0.0.1:{port}"
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._runner.cleanup())
            loop.close()

        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        assert ready.wait(10)

    def stop(self) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)


async def talk(url: str, outgoing: list[tuple[str, Any]], expect: int, **connect: Any) -> list[tuple[str, Any]]:
    """Connect, send ``outgoing`` (text, binary, ping), read ``expect`` frames back, and close with 1000."""
    got: list[tuple[str, Any]] = []
    # (enable_cleanup_closed: aiohttp's remedy for a TLS shutdown still under way as its session closes)
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(enable_cleanup_closed=True)) as session,
        session.ws_connect(url, autoping=False, max_msg_size=0, **connect) as ws,
    ):
        for kind, data in outgoing:
            if kind == "text":
                await ws.send_str(data)
            elif kind == "binary":
                await ws.send_bytes(data)
            else:
                await ws.ping(data)
        while len(got) < expect:
            frame = await ws.receive(timeout=30)
            name = {aiohttp.WSMsgType.TEXT: "text", aiohttp.WSMsgType.BINARY: "binary"}.get(frame.type)
            got.append((name or frame.type.name.lower(), frame.data))
        await ws.close(code=1000, message=b"bye")
    return got


def events_of(events: list[dict[str, Any]], kind: str, direction: str) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == kind and e.get("dir") == direction]


def messages(run: ProxyRun, direction: str) -> list[Any]:
    return [e["msg"] for e in run.messages(direction)]


def frames(run: ProxyRun, direction: str) -> list[tuple[str, int]]:
    return [(e["opcode"], e["size"]) for e in run.of_kind("websocket") if e["dir"] == direction]


def follow_the_schema(run: ProxyRun) -> None:
    validator = jsonschema.Draft202012Validator(schema("recording"))
    assert [e.message for event in run.events for e in validator.iter_errors(event)] == []
