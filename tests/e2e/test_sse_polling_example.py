"""The MCP TypeScript SDK 1.32.2's own SEP-1699 example pair as real peers: ``ssePollingExample`` (a
server that primes its event stream with an id and ``retry``, then closes it mid-call) and
``ssePollingClient`` (which must resume with ``Last-Event-ID`` to get its answer), run unmodified
(tests/peer_scripts/sse_polling.mjs only moves their hard-coded port).

Recorded through ``wiretap proxy``; replayed as the server to the same client, which resumes as often
and gets the same answer; and replayed as the client against the real server: no difference."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.peer_servers import PEER_SCRIPTS, serving
from support.proxyrun import running_proxy
from support.taprun import settled_read_all

from wiretap.recording.events import Event

pytestmark = pytest.mark.slow

WIRETAP = [sys.executable, "-m", "wiretap"]
TIMEOUT = 120
SCRIPT = PEER_SCRIPTS / "sse_polling.mjs"


@dataclass
class ClientSaw:
    """What the example client printed."""

    tokens: list[str]
    """``[Event ID]``: every resumption token (event id) its tools/call stream gave it."""
    notifications: list[str]
    result: Any
    errors: list[str]


def example_client(modules: Path, url: str) -> ClientSaw:
    done = subprocess.run(
        ["node", str(SCRIPT), str(modules), "client", url], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = done.stdout
    result = re.search(r"^\[Result\] (.*?)\n\n", out, re.MULTILINE | re.DOTALL)
    assert result is not None, out + done.stderr
    return ClientSaw(
        tokens=re.findall(r"^\[Event ID\] (.*)$", out, re.MULTILINE),
        notifications=re.findall(r"^\[Notification\] (.*)$", out, re.MULTILINE),
        result=json.loads(result[1]),
        errors=re.findall(r"^\[(?:Transport\] Error|Error\]).*$", out + done.stderr, re.MULTILINE),
    )


@dataclass
class Wire:
    """The tools/call exchange as a recording shows it."""

    call_stream: list[Event]
    """What came on the POST's own event stream, its end included."""
    resumptions: list[Event]
    """GET requests carrying ``Last-Event-ID``."""
    answer: Event
    """The tools/call response."""


def wire(recording: Path) -> Wire:
    _, events, _ = settled_read_all(recording)
    [call] = [
        e for e in events if e["kind"] == "message" and e["dir"] == "c2s" and e["msg"].get("method") == "tools/call"
    ]
    ex = call["ex"]
    stream = [e for e in events if e.get("ex") == ex and e["kind"] in ("sse", "message", "http_end") and e is not call]
    resumptions = [
        e for e in events if e["kind"] == "http_request" and e["method"] == "GET" and "last-event-id" in e["headers"]
    ]
    [answer] = [
        e for e in events if e["kind"] == "message" and e["dir"] == "s2c" and e["msg"].get("id") == call["msg"]["id"]
    ]
    return Wire(stream, resumptions, answer)


def assert_closed_then_resumed(seen: Wire) -> None:
    """The server primed the call's stream (an id, ``retry``, no data) and closed it with no answer; the
    client resumed once after the priming id, and the answer came on that GET."""
    [priming, end] = seen.call_stream
    assert priming["kind"] == "sse" and priming["retry"] == 2000 and priming["id"]
    assert end["kind"] == "http_end" and end["outcome"] == "complete"
    [resumed] = seen.resumptions
    assert resumed["headers"]["last-event-id"] == priming["id"]
    assert seen.answer["ex"] == resumed["ex"]


@pytest.fixture(scope="module")
def recorded(ts_sdk: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ClientSaw]:
    root = tmp_path_factory.mktemp("sse-polling")
    path = root / "polling.jsonl"
    server = ["node", str(SCRIPT), str(ts_sdk), "server"]
    with serving(server, root) as upstream, running_proxy(upstream, path) as proxy:
        saw = example_client(ts_sdk, proxy.url)
    return path, saw


def test_the_recorded_example_server_closed_the_stream_and_the_client_resumed_it_with_last_event_id(
    recorded: tuple[Path, ClientSaw],
) -> None:
    path, saw = recorded
    assert saw.errors == []
    assert saw.result == [{"type": "text", "text": "Long task completed successfully!"}]
    assert len(saw.notifications) == 4
    seen = wire(path)
    assert_closed_then_resumed(seen)
    # Two resumption tokens: the priming event's id, then the answer's on the resumed stream.
    assert saw.tokens == [seen.call_stream[0]["id"], seen.answer["sse"]["id"]]


def test_the_example_client_resumes_a_replayed_server_as_often_and_gets_the_same_answer(
    recorded: tuple[Path, ClientSaw], ts_sdk: Path, tmp_path: Path
) -> None:
    path, saw = recorded
    summary = tmp_path / "summary.json"
    command = [*WIRETAP, "replay", str(path), "--strict", "--summary", str(summary), "--listen", "127.0.0.1:0"]
    again = tmp_path / "against-replay.jsonl"
    with serving(command, tmp_path) as replay, running_proxy(replay, again) as proxy:
        replayed = example_client(ts_sdk, proxy.url)
    assert replayed == saw  # the same tokens (the recorded event ids), notifications and result
    assert_closed_then_resumed(wire(again))
    answered = json.loads(summary.read_text())
    assert answered["misses"] == []
    assert answered["matched"] == answered["requests"] == 2  # initialize, tools/call


def test_the_recorded_example_client_replayed_against_the_real_server_resumes_and_finds_no_difference(
    recorded: tuple[Path, ClientSaw], ts_sdk: Path, tmp_path: Path
) -> None:
    path, _ = recorded
    again = tmp_path / "against-server.jsonl"
    with serving(["node", str(SCRIPT), str(ts_sdk), "server"], tmp_path) as upstream:
        command = [*WIRETAP, "replay", str(path), "--as", "client", "--upstream", upstream, "--out", str(again)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 response(s) compared, 0 differ" in done.stderr
    assert_closed_then_resumed(wire(again))
    # The session's GET stream opened where the recorded client opened it: after it said initialized.
    assert sent(again)[:3] == sent(path)[:3] == ["POST initialize", "POST notifications/initialized", "GET"]


def sent(recording: Path) -> list[str]:
    """The HTTP requests in the order the server got them, each with the JSON-RPC method it carried."""
    _, events, _ = settled_read_all(recording)
    carried = {e["ex"]: e["msg"].get("method") for e in events if e["kind"] == "message" and e["dir"] == "c2s"}
    requests = [e for e in events if e["kind"] == "http_request"]
    return [f"{e['method']} {carried[e['ex']]}" if e["ex"] in carried else e["method"] for e in requests]
