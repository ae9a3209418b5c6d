"""WebSocket through ``wiretap proxy`` with real peers (aiohttp's server and client), in both modes: the
upgrade passes, frames pass unchanged both ways, and the recording holds the JSON-RPC they carried, with
the other frames in brief."""

from __future__ import annotations

import asyncio
import json
import signal
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import trustme
from click.testing import CliRunner
from support.forwardrun import running_forward
from support.proxyrun import running_proxy, start_proxy
from support.taprun import settled_read_all
from support.wspeers import EchoServer, events_of, follow_the_schema, frames, messages, reply, request, talk

from wiretap.analysis.report import build_report
from wiretap.cli import cli
from wiretap.export.har import har_of_recording


@pytest.fixture
def server() -> Iterator[EchoServer]:
    echo = EchoServer()
    echo.start()
    yield echo
    echo.stop()


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
