"""WebSocket through ``wiretap proxy``: the upgrade passes, the bytes after the 101 pass unchanged both ways,
and the recording holds the JSON-RPC the frames carried, with the other frames in brief.

Real peers: aiohttp's WebSocket server and client, and raw sockets where the exact bytes are the point."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import socket
import ssl
import struct
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import jsonschema
import pytest
import trustme
from aiohttp import web
from click.testing import CliRunner
from forwardrun import running_forward
from proxyrun import ProxyRun, running_proxy
from taprun import settled_read_all
from test_durability import peak_rss
from test_proxy_durability import start_proxy

from wiretap.analysis.report import build_report
from wiretap.cli import cli
from wiretap.export.har import har_of_recording
from wiretap.schemas import schema
from wiretap.wire.websocket import BINARY, CLOSE, CONTINUATION, PING, PONG, TEXT, encode_frame


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


@pytest.fixture
def server() -> Iterator[EchoServer]:
    echo = EchoServer()
    echo.start()
    yield echo
    echo.stop()


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


def test_json_rpc_binary_ping_and_close_pass_unchanged_and_the_json_rpc_is_recorded(
    server: EchoServer, tmp_path: Path
) -> None:
    outgoing = [("text", request(1)), ("binary", bytes(range(256)) * 3), ("ping", b"are you there"),
                ("text", "not json"), ("text", request(2)), ("text", request(3))]  # fmt: skip
    with running_proxy(server.url, tmp_path / "ws.jsonl") as run:
        got = asyncio.run(talk(run.url + "/ws", outgoing, expect=6))
    assert got == [
        ("text", server.sent[0][1]),
        ("text", reply(request(1))),
        ("binary", (bytes(range(256)) * 3)[::-1]),
        ("pong", b"are you there"),
        ("text", reply(request(2))),
        ("text", reply(request(3))),
    ]
    assert server.received == [x for x in outgoing if x[0] != "ping"] + [("close", 1000)]
    assert server.sent == [x for x in got if x[0] != "pong"]
    assert [e["status"] for e in run.of_kind("http_response")] == [101]
    assert messages(run, "c2s") == [json.loads(request(n)) for n in (1, 2, 3)]
    assert messages(run, "s2c") == [json.loads(server.sent[0][1])] + [json.loads(reply(request(n))) for n in (1, 2, 3)]
    assert frames(run, "c2s") == [("binary", 768), ("ping", 13), ("text", 8), ("close", 5)]
    assert frames(run, "s2c") == [("binary", 768), ("pong", 13), ("close", 2)]
    (close,) = [e for e in run.of_kind("websocket") if e["dir"] == "c2s" and e["opcode"] == "close"]
    assert close["code"] == 1000 and close["reason"] == "bye"
    (end,) = run.of_kind("http_end")
    assert end["outcome"] == "complete" and end["bytes_in"] > 768 and end["bytes_out"] > 768
    follow_the_schema(run)
    report = build_report(run.recording).to_dict()
    assert [(row["method"], row["count"], row["errors"]) for row in report["latency"]] == [("tools/call", 3, 0)]
    shown = CliRunner().invoke(cli, ["show", str(run.recording)]).output
    assert shown.count("tools/call") == 6 and "ping from the client, 13 bytes" in shown
    assert "close from the client, 5 bytes, code 1000 (bye)" in shown
    (entry,) = har_of_recording(run.recording)["log"]["entries"]
    sent = [(m["opcode"], m["data"]) for m in entry["_webSocketMessages"] if m["type"] == "send"]
    assert entry["_resourceType"] == "websocket" and entry["response"]["status"] == 101
    assert [json.loads(data) for opcode, data in sent if opcode == 1 and data.startswith("{")] == [
        json.loads(request(n)) for n in (1, 2, 3)
    ]
    assert [opcode for opcode, _ in sent] == [1, 2, 9, 1, 1, 1, 8] and sent[-1][1] == "[close, code 1000: bye]"


def test_a_wss_upstream_serves_a_plain_client_and_the_pipe_ends_cleanly_when_it_closes(tmp_path: Path) -> None:
    ca = trustme.CA()
    ca_file = tmp_path / "upstream-ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(tls)
    echo = EchoServer(tls=tls)
    echo.start()
    try:
        with running_proxy(echo.url, tmp_path / "ws.jsonl", "--upstream-cafile", str(ca_file)) as run:
            got = asyncio.run(talk(run.url + "/ws", [("text", request(5))], expect=2))
    finally:
        echo.stop()
    assert got[1] == ("text", reply(request(5))) and echo.received == [("text", request(5)), ("close", 1000)]
    assert messages(run, "c2s") == [json.loads(request(5))]
    assert run.of_kind("error") == [] and [e["outcome"] for e in run.of_kind("http_end")] == ["complete"]


def test_an_upgrade_the_upstream_refuses_is_relayed_as_an_ordinary_response(server: EchoServer, tmp_path: Path) -> None:
    async def refused(url: str) -> int:
        async with aiohttp.ClientSession() as session:
            with pytest.raises(aiohttp.WSServerHandshakeError) as caught:
                await session.ws_connect(url, headers={"X-Refuse": "1"})
            return caught.value.status

    with running_proxy(server.url, tmp_path / "ws.jsonl") as run:
        assert asyncio.run(refused(run.url + "/ws")) == 403
    assert [e["status"] for e in run.of_kind("http_response")] == [403]
    assert run.of_kind("websocket") == [] and run.of_kind("http_end")[0]["outcome"] == "complete"


def test_a_flood_of_frames_both_ways_is_recorded_frame_for_frame(server: EchoServer, tmp_path: Path) -> None:
    count = 3000
    outgoing = [("text", request(n)) for n in range(count)]
    with running_proxy(server.url, tmp_path / "ws.jsonl") as run:
        got = asyncio.run(talk(run.url + "/ws", outgoing, expect=count + 1))
    assert got[1:] == [("text", reply(request(n))) for n in range(count)]
    assert [m["id"] for m in messages(run, "c2s")] == list(range(count))
    assert [m.get("id") for m in messages(run, "s2c")] == [None, *range(count)]


def test_concurrent_websockets_each_keep_their_own_frames_in_order(server: EchoServer, tmp_path: Path) -> None:
    clients, count = 4, 300

    async def all_at_once(url: str) -> list[list[tuple[str, Any]]]:
        return await asyncio.gather(
            *(talk(url, [("text", request(c * 1000 + n)) for n in range(count)], count + 1) for c in range(clients))
        )

    with running_proxy(server.url, tmp_path / "ws.jsonl") as run:
        answers = asyncio.run(all_at_once(run.url + "/ws"))
    for c, got in enumerate(answers):
        assert got[1:] == [("text", reply(request(c * 1000 + n))) for n in range(count)]
    by_exchange: dict[int, list[int]] = {}
    for event in run.messages("c2s"):
        by_exchange.setdefault(event["ex"], []).append(event["msg"]["id"])
    assert sorted(by_exchange.values()) == [[c * 1000 + n for n in range(count)] for c in range(clients)]
    assert len(run.messages("s2c")) == clients * (count + 1)
    assert [e["outcome"] for e in run.of_kind("http_end")] == ["complete"] * clients


def test_compressed_frames_pass_unchanged_and_their_json_rpc_is_inflated_for_the_recording(
    tmp_path: Path,
) -> None:
    echo = EchoServer(compress=True)
    echo.start()
    try:
        outgoing = [("text", request(n)) for n in range(20)] + [("binary", b"\x00" * 5000)]
        with running_proxy(echo.url, tmp_path / "ws.jsonl") as run:
            got = asyncio.run(talk(run.url + "/ws", outgoing, expect=22, compress=15))
    finally:
        echo.stop()
    assert got[1:21] == [("text", reply(request(n))) for n in range(20)]
    assert echo.received[:21] == outgoing
    (response,) = run.of_kind("http_response")
    assert "permessage-deflate" in str(response["headers"])
    assert messages(run, "c2s") == [json.loads(request(n)) for n in range(20)]
    assert messages(run, "s2c")[1:] == [json.loads(reply(request(n))) for n in range(20)]
    assert all(e["ws"]["compressed"] for e in run.messages())
    binary = [e for e in run.of_kind("websocket") if e["opcode"] == "binary"]
    assert [e["size"] for e in binary] == [5000, 5000] and all(e["compressed"] for e in binary)
    follow_the_schema(run)


@pytest.mark.parametrize("scheme", ["wss", "ws"])
def test_through_the_forward_proxy_the_client_keeps_the_real_url_and_the_frames_are_recorded(
    scheme: str, tmp_path: Path
) -> None:
    ca = trustme.CA()
    ca_file = tmp_path / "upstream-ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    tls = None
    if scheme == "wss":
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert("127.0.0.1").configure_cert(tls)
    echo = EchoServer(tls=tls)
    echo.start()
    outgoing = [("text", request(1)), ("binary", b"\x01\x02\x03"), ("text", request(2))]
    try:
        with running_forward(tmp_path / "rec", "--upstream-cafile", str(ca_file)) as run:
            client = ssl.create_default_context(cafile=run.env["SSL_CERT_FILE"]) if tls else False
            url = echo.url.replace("http", "ws", 1) + "/ws"
            got = asyncio.run(talk(url, outgoing, expect=4, proxy=run.url, ssl=client))
    finally:
        echo.stop()
    assert got == [echo.sent[0], ("text", reply(request(1))), ("binary", b"\x03\x02\x01"), ("text", reply(request(2)))]
    assert echo.received == [*outgoing, ("close", 1000)]
    events = run.events(echo.url)
    assert [e["status"] for e in events if e["kind"] == "http_response"] == [101]
    assert [e["msg"] for e in events_of(events, "message", "c2s")] == [json.loads(request(n)) for n in (1, 2)]
    assert [e["opcode"] for e in events_of(events, "websocket", "c2s")] == ["binary", "close"]
    assert [e["outcome"] for e in events if e["kind"] == "http_end"] == ["complete"]


def test_a_proxy_killed_mid_stream_leaves_every_frame_its_client_received_in_the_recording(
    server: EchoServer, tmp_path: Path
) -> None:
    recording = tmp_path / "ws.jsonl"
    proc, url = start_proxy(server.url, recording)

    async def read_until_gone() -> list[int]:
        got: list[int] = []
        async with aiohttp.ClientSession() as session, session.ws_connect(url + "/ws?flood=1000000") as ws:
            async for frame in ws:
                got.append(json.loads(frame.data)["params"]["n"])
                if len(got) == 20_000:
                    proc.send_signal(signal.SIGKILL)
        return got

    received = asyncio.run(read_until_gone())
    proc.wait(30)
    assert len(received) >= 20_000 and received == list(range(len(received)))
    _, events, _ = settled_read_all(recording)
    recorded = [e["msg"]["params"]["n"] for e in events if e["kind"] == "message" and e["dir"] == "s2c"]
    assert recorded[: len(received)] == received
    assert events[-1]["kind"] == "end" and events[-1]["ended"] == "relay_died" and events[-1]["lost"] == 0


# The exact bytes: a raw client and a raw upstream.

SWITCH = (
    b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nX-Other: kept\r\n\r\n"
)
MASK = b"\x37\xfa\x21\x3d"


def client_frames() -> bytes:
    """A JSON-RPC request in three masked fragments with a ping between them, a binary frame, a close."""
    text = request(7).encode()
    return b"".join(
        [
            encode_frame(TEXT, text[:10], fin=False, mask=MASK),
            encode_frame(PING, b"mid-message", mask=MASK),
            encode_frame(CONTINUATION, text[10:30], fin=False, mask=b"\x01\x02\x03\x04"),
            encode_frame(CONTINUATION, text[30:], mask=MASK),
            encode_frame(BINARY, b"\xff\x00" * 70000, mask=MASK),
            encode_frame(CLOSE, b"\x03\xe8done", mask=MASK),
        ]
    )


def server_frames() -> tuple[bytes, bytes]:
    """What the upstream sends with its 101, and after the client shut down its side."""
    first = encode_frame(TEXT, json.dumps({"jsonrpc": "2.0", "method": "notifications/ready"}).encode())
    later = encode_frame(TEXT, reply(request(7)).encode()) + encode_frame(PONG, b"mid-message")
    return first, later + encode_frame(CLOSE, b"\x03\xe8")


class RawUpstream:
    """Reads a request head, answers ``SWITCH`` with its first frames in the same write, keeps every byte
    after the head until the client's side ends, then sends the rest and closes."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.head = b""
        self.after = bytearray()
        self.done = threading.Event()
        threading.Thread(target=self._one, daemon=True).start()

    def _one(self) -> None:
        conn, _ = self.server.accept()
        self.server.close()
        got = bytearray()
        while b"\r\n\r\n" not in got:
            got += conn.recv(65536)
        end = got.index(b"\r\n\r\n") + 4
        self.head, self.after = bytes(got[:end]), got[end:]
        first, later = server_frames()
        conn.sendall(SWITCH + first)
        while chunk := conn.recv(65536):
            self.after += chunk
        conn.sendall(later)
        conn.close()
        self.done.set()


@pytest.mark.parametrize("early", [False, True], ids=["after the 101", "with the request"])
def test_the_bytes_after_the_101_pass_unchanged_both_ways_and_fragments_are_joined_for_the_recording(
    early: bool, tmp_path: Path
) -> None:
    upstream = RawUpstream()
    with running_proxy(upstream.url, tmp_path / "ws.jsonl") as run:
        where = urlsplit(run.url)
        sock = socket.create_connection((where.hostname, where.port))
        head = (
            b"GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n" % where.netloc.encode()
        )
        got = bytearray()
        first, later = server_frames()
        if early:  # frames and the end of the client's side before the upgrade is granted: held until it is
            sock.sendall(head + client_frames())
            sock.shutdown(socket.SHUT_WR)
        else:
            sock.sendall(head)
            while len(got) < len(SWITCH) + len(first):
                got += sock.recv(65536)
            sock.sendall(client_frames())
            sock.shutdown(socket.SHUT_WR)
        while chunk := sock.recv(65536):
            got += chunk
        sock.close()
        assert upstream.done.wait(10)
    assert bytes(got) == SWITCH + first + later
    assert bytes(upstream.after) == client_frames()
    assert b"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" in upstream.head
    assert messages(run, "c2s") == [json.loads(request(7))]
    assert run.messages("c2s")[0]["ws"] == {"fragments": 3}
    assert messages(run, "s2c") == [{"jsonrpc": "2.0", "method": "notifications/ready"}, json.loads(reply(request(7)))]
    assert frames(run, "c2s") == [("ping", 11), ("binary", 140000), ("close", 6)]
    assert frames(run, "s2c") == [("pong", 11), ("close", 2)]
    (end,) = run.of_kind("http_end")
    assert end["bytes_in"] == len(client_frames()) and end["bytes_out"] == len(first + later)


MiB = 1 << 20


class BigFrameUpstream(RawUpstream):
    """Answers the upgrade, then sends one text frame of ``size`` bytes holding JSON-RPC, streamed, and a
    small frame after it."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.small = encode_frame(TEXT, b'{"jsonrpc":"2.0","id":2,"result":{}}')
        super().__init__()

    def _one(self) -> None:
        conn, _ = self.server.accept()
        self.server.close()
        got = bytearray()
        while b"\r\n\r\n" not in got:
            got += conn.recv(65536)
        opening, closing = b'{"jsonrpc":"2.0","id":1,"result":"', b'"}'
        conn.sendall(SWITCH + bytes([0x81, 127]) + struct.pack("!Q", self.size))
        conn.sendall(opening)
        left, block = self.size - len(opening) - len(closing), b"x" * MiB
        while left:
            conn.sendall(block[: min(left, MiB)])
            left -= min(left, MiB)
        conn.sendall(closing + self.small)
        conn.close()
        self.done.set()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the proxy's peak memory from /proc")
def test_a_frame_over_the_message_limit_passes_whole_in_bounded_memory_and_is_recorded_truncated(
    tmp_path: Path,
) -> None:
    size = 160 * MiB
    upstream = BigFrameUpstream(size)
    recording = tmp_path / "ws.jsonl"
    proc, url = start_proxy(upstream.url, recording)
    where = urlsplit(url)
    with socket.create_connection((where.hostname, where.port)) as sock:
        sock.sendall(
            b"GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n" % where.netloc.encode()
        )
        total, tail = 0, b""
        while chunk := sock.recv(1 << 16):
            total += len(chunk)
            tail = (tail + chunk)[-len(upstream.small) :]
    assert total == len(SWITCH) + 10 + size + len(upstream.small) and tail == upstream.small
    proxy_peak = peak_rss(proc.pid)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    _, events, _ = settled_read_all(recording)
    big, small = [e for e in events if e["kind"] == "message"]
    assert big["truncated"] is True and big["size"] == size and big["dir"] == "s2c"
    assert small["msg"] == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert [e["error"] for e in events if e["kind"] == "error"] == ["truncated"]
    assert proxy_peak < 128 * MiB, "the proxy grew past 128 MiB"
    assert events[-1]["recorder_max_rss"] < 256 * MiB, "the recorder held more than its cap"
