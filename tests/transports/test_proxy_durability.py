"""The proxy passes bodies exactly as sent, survives bombs, and its record outlives it (kill -9, SIGTERM)."""

from __future__ import annotations

import gzip
import http.client
import json
import os
import signal
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from scenarios.raw_upstream import BOMB_INFLATED, RawUpstream, bomb
from support.floods import peak_rss
from support.proxyrun import read_sse_until_gone, running_proxy, start_proxy
from support.taprun import settled_read_all

MiB = 1 << 20


@pytest.fixture
def upstream() -> Iterator[RawUpstream]:
    with RawUpstream() as up:
        yield up


def connect(url: str) -> http.client.HTTPConnection:
    parts = urlsplit(url)
    return http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)


@pytest.mark.parametrize(
    ("coding", "compress"),
    [("gzip", gzip.compress), ("deflate", zlib.compress)],
)
def test_a_compressed_request_body_reaches_the_upstream_byte_for_byte(
    upstream: RawUpstream, tmp_path: Path, coding: str, compress: Any
) -> None:
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"text": "lorem ipsum " * 500}}
    body = compress(json.dumps(message).encode())
    with running_proxy(upstream.url, tmp_path / "rec.jsonl") as proxy:
        conn = connect(proxy.url)
        conn.request(
            "POST", "/raw", body=body, headers={"Content-Type": "application/json", "Content-Encoding": coding}
        )
        response = conn.getresponse()
        reply = json.loads(response.read())
        conn.close()
    assert response.status == 200 and reply["result"]["received"] == len(body)
    assert upstream.bodies == [body]
    [request] = proxy.messages("c2s")
    assert request["msg"] == message  # the recorder's copy is decompressed


def test_a_gzip_bomb_passes_whole_and_costs_the_recorder_its_cap_not_the_bomb(
    upstream: RawUpstream, tmp_path: Path
) -> None:
    recording = tmp_path / "rec.jsonl"
    proc, url = start_proxy(upstream.url, recording)
    conn = connect(url)
    conn.request("GET", "/bomb", headers={"Accept-Encoding": "gzip"})
    response = conn.getresponse()
    assert response.status == 200 and response.getheader("Content-Encoding") == "gzip"
    assert response.read() == bomb()  # compressed, as sent
    conn.close()
    proxy_peak = peak_rss(proc.pid) if sys.platform.startswith("linux") else 0
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    _, events, _ = settled_read_all(recording)
    [reply] = [e for e in events if e["kind"] == "message" and e["dir"] == "s2c"]
    assert reply["truncated"] is True and reply["size"] == 64 * MiB < BOMB_INFLATED
    assert [e["error"] for e in events if e["kind"] == "error"] == ["truncated"]
    assert proxy_peak < 128 * MiB, "the proxy grew past 128 MiB"
    assert events[-1]["recorder_max_rss"] < 256 * MiB, "the recorder held more than its cap"


def test_a_proxy_killed_mid_sse_flood_leaves_every_event_its_client_received_in_the_recording(
    upstream: RawUpstream, tmp_path: Path
) -> None:
    recording = tmp_path / "rec.jsonl"
    proc, url = start_proxy(upstream.url, recording)
    conn = connect(url)
    conn.request("GET", "/flood?n=2000000", headers={"Accept": "text/event-stream"})
    response = conn.getresponse()
    got = read_sse_until_gone(response, proc, kill_after=20_000)
    conn.close()
    proc.wait(30)
    received = [json.loads(event[len(b"data: ") :])["params"]["n"] for event in got.split(b"\n\n")[:-1]]
    assert len(received) >= 20_000 and received == list(range(len(received)))
    _, events, _ = settled_read_all(recording)
    recorded = [e["msg"]["params"]["n"] for e in events if e["kind"] == "message" and "msg" in e]
    assert recorded[: len(received)] == received
    assert events[-1]["kind"] == "end" and events[-1]["ended"] == "relay_died" and events[-1]["lost"] == 0


def test_a_proxy_whose_parent_goes_stops_and_finishes_its_recording(upstream: RawUpstream, tmp_path: Path) -> None:
    """The portable stand-in for a parent-death signal: a session's proxy stops when its stdin ends."""
    recording = tmp_path / "rec.jsonl"
    env = {**os.environ, "WIRETAP_EXIT_WITH_STDIN": "1"}
    proc, url = start_proxy(upstream.url, recording, stdin=subprocess.PIPE, env=env)
    conn = connect(url)
    conn.request("POST", "/raw", body=b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    assert conn.getresponse().read() == b'{"jsonrpc": "2.0", "id": 1, "result": {"received": 40}}'
    conn.close()
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(30) == 0
    _, events, _ = settled_read_all(recording)
    assert [e["msg"]["id"] for e in events if e["kind"] == "message"] == [1, 1]
    assert events[-1]["ended"] == "normal"


def test_sigterm_mid_sse_flood_stops_the_proxy_and_the_recording_says_what_it_missed(
    upstream: RawUpstream, tmp_path: Path
) -> None:
    recording = tmp_path / "rec.jsonl"
    proc, url = start_proxy(upstream.url, recording)
    conn = connect(url)
    conn.request("GET", "/flood?n=2000000", headers={"Accept": "text/event-stream"})
    got = read_sse_until_gone(conn.getresponse(), proc, kill_after=20_000, how=signal.SIGTERM)
    conn.close()
    assert proc.wait(30) == 0
    received = [json.loads(event[len(b"data: ") :])["params"]["n"] for event in got.split(b"\n\n")[:-1]]
    assert len(received) >= 20_000 and received == list(range(len(received)))
    _, events, _ = settled_read_all(recording)
    recorded = [e["msg"]["params"]["n"] for e in events if e["kind"] == "message" and "msg" in e]
    end = events[-1]
    assert end["kind"] == "end" and end["ended"] == "signal" and end["signals"] == ["SIGTERM"]
    # What a backlogged recorder could not take once the proxy was stopping is counted, never silent.
    assert recorded == sorted(set(recorded)) and set(recorded) <= set(received)
    missing = set(received) - set(recorded)
    if missing:
        gaps = [e for e in events if e.get("error") == "recording_gap"]
        assert gaps and sum(g["bytes"] for g in gaps) == end["dropped"]["bytes"] > 0 and end["lost"] > 0
        event_size = len(b'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"n":0}}\n\n')
        assert end["dropped"]["bytes"] >= len(missing) * (event_size - 1)  # every missing event is in a gap
