"""The forward proxy's record outlives it as the reverse proxy's does: killed with -9 mid-flood, every
event its client received is in the recording, in order, and the recording says how it ended."""

from __future__ import annotations

import base64
import http.client
import json
import signal
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from scenarios.raw_upstream import RawUpstream
from support.forwardrun import running_forward
from support.proxyrun import read_sse_until_gone
from support.taprun import settled_read_all


@pytest.fixture
def upstream() -> Iterator[RawUpstream]:
    with RawUpstream() as up:
        yield up


def test_a_forward_proxy_killed_mid_sse_flood_leaves_every_event_its_client_received_in_the_recording(
    upstream: RawUpstream, tmp_path: Path
) -> None:
    out = tmp_path / "rec"
    with running_forward(out) as run:
        proxy = urlsplit(run.env["HTTP_PROXY"])
        credential = base64.b64encode(f"{proxy.username}:{proxy.password}".encode()).decode()
        conn = http.client.HTTPConnection(proxy.hostname or "", proxy.port, timeout=60)
        headers = {"Accept": "text/event-stream", "Proxy-Authorization": f"Basic {credential}"}
        conn.request("GET", f"{upstream.url}/flood?n=2000000", headers=headers)
        response = conn.getresponse()
        assert response.status == 200
        got = read_sse_until_gone(response, run.proc, kill_after=20_000)
        conn.close()
        run.proc.wait(30)
    assert run.proc.returncode == -signal.SIGKILL
    received = [json.loads(event[len(b"data: ") :])["params"]["n"] for event in got.split(b"\n\n")[:-1]]
    assert len(received) >= 20_000 and received == list(range(len(received)))
    (recording,) = out.glob("*.jsonl")
    _, events, _ = settled_read_all(recording)
    recorded = [e["msg"]["params"]["n"] for e in events if e["kind"] == "message" and "msg" in e]
    assert recorded[: len(received)] == received
    assert events[-1]["kind"] == "end" and events[-1]["ended"] == "relay_died" and events[-1]["lost"] == 0
