"""The real a2a-sdk 1.3.0, agent and client, through ``wiretap proxy``.

The agent (peer_scripts/a2a_sdk_agent.py) serves its card, JSON-RPC (with the 0.3 compat layer)
and REST, and logs every request it receives: what it read and what it wrote. The client
(peer_scripts/a2a_sdk_client.py) is given one URL, resolves the card there and then talks to the
URLs inside the card, over JSON-RPC and REST, 1.0 and 0.3, blocking and streaming. It runs once
straight to an agent and once through the proxy to another, so the proxied run can be checked
against the direct one and against what the agent itself saw.

What a2a-sdk does on the wire (seen here): every request carries ``A2A-Version: 1.0`` (``0.3`` from
the compat transports); JSON-RPC methods ``SendMessage``, ``GetTask``, ``CancelTask``,
``SendStreamingMessage`` (0.3: ``message/send``, ``tasks/get``, ``tasks/cancel``,
``message/stream``); REST ``POST /message:send``, ``GET /tasks/{id}``, ``POST /tasks/{id}:cancel``,
``POST /message:stream`` (0.3: the same under ``/v1``); SSE events are bare ``data:`` lines with
CRLF separators and no ``event:`` or ``id:``.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from support.a2a_peers import BINDINGS, PEER_SCRIPTS, TIMEOUT, Agent, card_urls, normalized, origin, running_agent
from support.proxyrun import ProxyRun, running_proxy

from wiretap.recording.events import Event
from wiretap.wire.sse import SSEDecoder

pytestmark = pytest.mark.slow

BLOCKING_CALLS = ["send", "get", "send_ask", "cancel", "get_canceled", "get_missing"]
STREAMING_CALLS = ["stream", "stream_ask", "stream_answer"]
JSONRPC_METHODS = {
    "1.0": ["SendMessage", "GetTask", "SendMessage", "CancelTask", "GetTask", "GetTask"] + ["SendStreamingMessage"] * 3,
    "0.3": ["message/send", "tasks/get", "message/send", "tasks/cancel", "tasks/get", "tasks/get"]
    + ["message/stream"] * 3,
}
REST_OPERATIONS = ["SendMessage", "GetTask", "SendMessage", "CancelTask", "GetTask", "GetTask"] + [
    "SendStreamingMessage"
] * 3


@dataclass
class ClientRun:
    given_url: str
    agent: Agent
    client: subprocess.CompletedProcess[str]
    received: list[dict[str, Any]] = field(default_factory=list)
    """What the agent received, from its own log."""

    @property
    def report(self) -> dict[str, Any]:
        assert self.client.returncode == 0, f"client exited {self.client.returncode}:\n{self.client.stderr}"
        report: dict[str, Any] = json.loads(self.client.stdout)
        return report


def run_client(python: Path, root: Path, agent: Agent, url: str) -> ClientRun:
    client = subprocess.run(
        [str(python), str(PEER_SCRIPTS / "a2a_sdk_client.py"), url],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    return ClientRun(url, agent, client)


@dataclass
class Runs:
    direct: ClientRun
    proxied: ClientRun
    proxy: ProxyRun

    def exchanges(self) -> list[Exchange]:
        return exchanges(self.proxy)


@pytest.fixture(scope="module")
def runs(a2a_sdk_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """The client straight to one agent, then through the proxy to another."""
    root = tmp_path_factory.mktemp("a2a-sdk")
    with running_agent(a2a_sdk_python, root / "direct") as agent:
        direct = run_client(a2a_sdk_python, root / "direct", agent, agent.url)
    with (
        running_agent(a2a_sdk_python, root / "proxied") as agent,
        running_proxy(agent.url, root / "recording.jsonl") as proxy,
    ):
        proxied = run_client(a2a_sdk_python, root / "proxied", agent, proxy.url)
    for run in (direct, proxied):
        run.received = run.agent.requests()
    return Runs(direct, proxied, proxy)


@dataclass
class Exchange:
    """One recorded request and its response."""

    request: Event
    response: Event | None = None
    end: Event | None = None
    c2s: list[Event] = field(default_factory=list)
    s2c: list[Event] = field(default_factory=list)
    rewrites: list[Event] = field(default_factory=list)

    @property
    def path(self) -> str:
        return str(self.request["path"])


def exchanges(proxy: ProxyRun) -> list[Exchange]:
    by_ex: dict[int, Exchange] = {}
    for event in proxy.events:
        if event["kind"] == "http_request":
            by_ex[event["ex"]] = Exchange(event)
        elif event["kind"] == "http_response":
            by_ex[event["ex"]].response = event
        elif event["kind"] == "http_end":
            by_ex[event["ex"]].end = event
        elif event["kind"] == "rewrite":
            by_ex[event["ex"]].rewrites.append(event)
        elif event["kind"] == "message":
            getattr(by_ex[event["ex"]], event["dir"]).append(event)
    return [by_ex[ex] for ex in sorted(by_ex)]


def states(value: Any) -> list[str]:
    """Every task state in ``value``, in document order."""
    if isinstance(value, dict):
        found = []
        status = value.get("status")
        if isinstance(status, dict) and "state" in status:
            found.append(status["state"])
        for key, item in value.items():
            if key != "status":
                found += states(item)
        return found
    if isinstance(value, list):
        return [state for item in value for state in states(item)]
    return []


def sse_data(body: str) -> list[Any]:
    decoder = SSEDecoder()
    events = [*decoder.feed(body.encode()), *decoder.close()]
    return [json.loads(event.data) for event in events if event.data]


def binding_of(exchange: Exchange) -> str | None:
    if exchange.path == "/a2a/jsonrpc":
        return "jsonrpc-0.3" if "/" in exchange.c2s[0]["msg"]["method"] else "jsonrpc"
    if exchange.path.startswith("/a2a/rest/v1/"):
        return "rest-0.3"
    if exchange.path.startswith("/a2a/rest/"):
        return "rest"
    return None


def test_the_sdk_client_gets_the_same_results_through_the_proxy_as_straight_to_the_agent(runs: Runs) -> None:
    for run in (runs.direct, runs.proxied):
        assert "Traceback" not in run.client.stderr, run.client.stderr
    direct, proxied = runs.direct.report, runs.proxied.report
    for binding in BINDINGS:
        assert normalized(proxied[binding]) == normalized(direct[binding]), binding
    for binding in BINDINGS:
        got = proxied[binding]
        [sent] = got["send"]
        assert sent["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert sent["task"]["artifacts"][0]["parts"] == [{"text": "report on the quarter"}]
        assert got["get"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert got["send_ask"][0]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert got["send_ask"][0]["task"]["status"]["message"]["parts"] == [{"text": "Which city?"}]
        assert got["cancel"]["status"]["state"] == got["get_canceled"]["status"]["state"] == "TASK_STATE_CANCELED"
        assert [states(event) for event in got["stream"]] == [
            ["TASK_STATE_SUBMITTED"],
            ["TASK_STATE_WORKING"],
            [],
            ["TASK_STATE_COMPLETED"],
        ]
        assert got["stream"][2]["artifactUpdate"]["artifact"]["parts"] == [{"text": "report on the year"}]
        assert states(got["stream_ask"]) == ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED"]
        assert states(got["stream_answer"]) == ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
        assert got["stream_answer"][1]["artifactUpdate"]["artifact"]["parts"] == [{"text": "sunny in Paris"}]
        assert got["stream_answer"][0]["statusUpdate"]["taskId"] == got["stream_ask"][0]["task"]["id"]
    # a2a-sdk's 0.3 REST client turns a 404 into MethodNotFoundError; the others into TaskNotFoundError.
    assert {binding: proxied[binding]["get_missing"] for binding in BINDINGS} == {
        "jsonrpc": "TaskNotFoundError",
        "rest": "TaskNotFoundError",
        "jsonrpc-0.3": "TaskNotFoundError",
        "rest-0.3": "MethodNotFoundError",
    }


def test_the_client_reaches_the_agent_only_through_the_proxy(runs: Runs) -> None:
    proxy_origin = origin(runs.proxy.url)
    client_requests = runs.proxied.report["requests"]
    assert {origin(url) for _, url in client_requests} == {proxy_origin}
    received = [(r["method"], r["path"], r["query"]) for r in runs.proxied.received]
    recorded = [(e.request["method"], e.path, e.request["query"] or "") for e in runs.exchanges()]
    assert recorded == received
    assert len(received) == len(client_requests) == len(runs.direct.received)
    assert [(m, urlsplit(u).path) for m, u in client_requests] == [(m, p) for m, p, _ in received]
    # Everything the client did after fetching the card went to the URLs inside the card.
    assert {p for _, p, _ in received} >= {"/a2a/jsonrpc", "/a2a/rest/message:send", "/a2a/rest/v1/message:send"}
    assert all(e.end is not None and e.end["outcome"] == "complete" for e in runs.exchanges())


def test_the_card_the_client_got_points_at_the_proxy_and_the_recording_says_what_changed(runs: Runs) -> None:
    agent_origin, proxy_origin = origin(runs.proxied.agent.url), origin(runs.proxy.url)
    cards = runs.proxied.report["cards"]
    card_fetches = [e for e in runs.exchanges() if e.path == "/.well-known/agent-card.json"]
    assert len(cards) == len(card_fetches) == 2 * len(BINDINGS)
    served = [r for r in runs.proxied.received if r["path"] == "/.well-known/agent-card.json"]
    for card, exchange, agent_saw in zip(cards, card_fetches, served, strict=True):
        assert {origin(url) for url in card_urls(card)} == {proxy_origin}
        # Only the URLs changed: put the agent's origin back and it is the card the agent served.
        restored = json.loads(json.dumps(card).replace(proxy_origin, agent_origin))
        assert restored == json.loads(agent_saw["sent"])
        [rewrite] = exchange.rewrites
        assert rewrite["what"] == "agent_card" and rewrite["left_alone"] == []
        assert [change["field"] for change in rewrite["changed"]] == [
            "url",
            *(f"supportedInterfaces[{n}].url" for n in range(4)),
            "additionalInterfaces[0].url",
        ]
        for change in rewrite["changed"]:
            assert origin(change["from"]) == agent_origin and origin(change["to"]) == proxy_origin
            assert urlsplit(change["from"]).path == urlsplit(change["to"]).path
        [message] = exchange.s2c
        assert message["msg"] == card
    # Straight to the agent, the client was told the agent's own URLs.
    assert {origin(url) for card in runs.direct.report["cards"] for url in card_urls(card)} == {
        origin(runs.direct.agent.url)
    }


def test_every_json_rpc_call_is_recorded_with_its_method_and_every_sse_event_as_a_message(runs: Runs) -> None:
    for binding, version in (("jsonrpc", "1.0"), ("jsonrpc-0.3", "0.3")):
        calls = [e for e in runs.exchanges() if binding_of(e) == binding]
        assert [e.c2s[0]["msg"]["method"] for e in calls] == JSONRPC_METHODS[version]
        got = runs.proxied.report[binding]
        for exchange, name in zip(calls, BLOCKING_CALLS + STREAMING_CALLS, strict=True):
            [request] = exchange.c2s
            assert request["msg"]["jsonrpc"] == "2.0"
            assert all(m["msg"]["id"] == request["msg"]["id"] for m in exchange.s2c)
            content_type = exchange.response["headers"]["content-type"] if exchange.response else ""
            if name in STREAMING_CALLS:
                assert content_type.startswith("text/event-stream")
                # One message per SSE event, each one that the client received.
                assert len(exchange.s2c) == len(got[name]) >= 2
                assert all(m["sse"] == {} for m in exchange.s2c)
                assert all("result" in m["msg"] for m in exchange.s2c)
            else:
                assert content_type == "application/json"
                assert [("sse" in m) for m in exchange.s2c] == [False]
        missing = calls[BLOCKING_CALLS.index("get_missing")]
        assert missing.c2s[0]["msg"]["params"]["id"] == "no-such-task"
        assert missing.response is not None and missing.response["status"] == 200
        assert missing.s2c[0]["msg"]["error"]["code"] == -32001


def test_every_rest_call_is_recorded_with_its_operation_and_task_id(runs: Runs) -> None:
    for binding in ("rest", "rest-0.3"):
        calls = [e for e in runs.exchanges() if binding_of(e) == binding]
        assert [e.c2s[0]["rest"]["operation"] for e in calls] == REST_OPERATIONS
        for exchange in calls:
            # Requests and responses alike carry the operation, a GET without a body too.
            assert {json.dumps(m["rest"]) for m in exchange.c2s + exchange.s2c} == {json.dumps(exchange.c2s[0]["rest"])}
            assert exchange.c2s[0]["rest"]["path"] == exchange.path
        got = runs.proxied.report[binding]
        by_call = dict(zip(BLOCKING_CALLS + STREAMING_CALLS, calls, strict=True))
        assert by_call["get"].c2s[0]["rest"]["taskId"] == got["get"]["id"]
        assert by_call["cancel"].c2s[0]["rest"]["taskId"] == got["cancel"]["id"]
        assert by_call["get_missing"].c2s[0]["rest"]["taskId"] == "no-such-task"
        assert [m.get("size") for m in by_call["get"].c2s] == [0]
        assert by_call["get_missing"].response is not None
        assert by_call["get_missing"].response["status"] == 404
        assert by_call["get_missing"].s2c[0]["msg"]["error"]["status"] == "NOT_FOUND"
        for name in STREAMING_CALLS:
            assert len(by_call[name].s2c) == len(got[name])
            assert all(m["sse"] == {} for m in by_call[name].s2c)


def test_task_states_are_recorded_as_the_sdk_sends_them(runs: Runs) -> None:
    recorded: dict[str, list[list[str]]] = {}
    for exchange in runs.exchanges():
        binding = binding_of(exchange)
        if binding is not None:
            recorded.setdefault(binding, []).append(states([m["msg"] for m in exchange.s2c]))
    blocking = [["COMPLETED"], ["COMPLETED"], ["INPUT_REQUIRED"], ["CANCELED"], ["CANCELED"], []]
    streaming = [["SUBMITTED", "WORKING", "COMPLETED"], ["SUBMITTED", "WORKING", "INPUT_REQUIRED"]]
    streaming += [["WORKING", "COMPLETED"]]
    v1 = [[f"TASK_STATE_{state}" for state in call] for call in blocking + streaming]
    # 0.3 JSON-RPC spells states in lower case; 0.3 REST is the 0.3 gRPC proto's JSON: CANCELLED.
    v03_jsonrpc = [[state.lower().replace("_", "-") for state in call] for call in blocking + streaming]
    v03_rest = [[state.replace("CANCELED", "CANCELLED") for state in call] for call in v1]
    assert recorded == {"jsonrpc": v1, "rest": v1, "jsonrpc-0.3": v03_jsonrpc, "rest-0.3": v03_rest}
    # 0.3 JSON-RPC events carry ``kind`` and ``final``; the stream ends on the last one.
    stream = next(e for e in runs.exchanges() if binding_of(e) == "jsonrpc-0.3" and len(e.s2c) == 4)
    assert [m["msg"]["result"]["kind"] for m in stream.s2c] == [
        "task",
        "status-update",
        "artifact-update",
        "status-update",
    ]
    assert [m["msg"]["result"].get("final") for m in stream.s2c] == [None, False, None, True]


def test_a2a_headers_reach_the_agent_unchanged(runs: Runs) -> None:
    def header(pairs: list[list[str]], name: str) -> list[str]:
        return [value for key, value in pairs if key == name]

    received = runs.proxied.received
    recorded = runs.exchanges()
    assert len(received) == len(recorded)
    versions = []
    for agent_saw, exchange in zip(received, recorded, strict=True):
        [version] = header(agent_saw["headers"], "a2a-version")
        assert exchange.request["headers"]["a2a-version"] == version
        versions.append(version)
        # Every header the client sent arrived as sent, but Host, which names the upstream, and the
        # hop-by-hop Connection.
        arrived = {k: v for k, v in agent_saw["headers"] if k != "host"}
        sent = {k: v for k, v in exchange.request["headers"].items() if k not in ("host", "connection")}
        assert arrived == sent
        assert header(agent_saw["headers"], "host") == [urlsplit(runs.proxied.agent.url).netloc]
    assert versions == [header(r["headers"], "a2a-version")[0] for r in runs.direct.received]
    by_binding = {}
    for version, exchange in zip(versions, recorded, strict=True):
        by_binding.setdefault(binding_of(exchange), set()).add(version)
    assert by_binding == {
        None: {"1.0"},
        "jsonrpc": {"1.0"},
        "rest": {"1.0"},
        "jsonrpc-0.3": {"0.3"},
        "rest-0.3": {"0.3"},
    }


def test_the_recording_holds_exactly_what_the_agent_read_and_wrote(runs: Runs) -> None:
    for agent_saw, exchange in zip(runs.proxied.received, runs.exchanges(), strict=True):
        assert exchange.response is not None and exchange.end is not None
        assert exchange.response["status"] == agent_saw["status"]
        body = agent_saw.get("body", "")
        assert exchange.end["bytes_in"] == len(body.encode())
        assert [m["msg"] for m in exchange.c2s if "msg" in m] == ([json.loads(body)] if body else [])
        if exchange.path == "/.well-known/agent-card.json":
            continue  # rewritten: see the card test
        sent = agent_saw["sent"]
        assert exchange.end["bytes_out"] == agent_saw["sent_bytes"] == len(sent.encode())
        if exchange.response["headers"]["content-type"].startswith("text/event-stream"):
            # sse-starlette frames each event as one data line and a CRLF blank line.
            assert re.fullmatch(r"(data: [^\r\n]*\r\n\r\n)+", sent), sent[:500]
            assert [m["msg"] for m in exchange.s2c] == sse_data(sent)
        else:
            assert [m["msg"] for m in exchange.s2c] == [json.loads(sent)]


def test_no_agent_or_proxy_process_is_left_running(runs: Runs) -> None:
    for run in (runs.direct, runs.proxied):
        # uvicorn shuts down on SIGTERM, then raises the signal again to die of it.
        assert run.agent.returncode == -signal.SIGTERM
        assert "Traceback" not in run.agent.stderr, run.agent.stderr
    assert runs.proxy.proc.returncode == 0
    assert runs.proxy.events[-1]["kind"] == "end"
    connections = runs.proxy.of_kind("connection")
    opened = {e["conn"] for e in connections if e["state"] == "open"}
    closed = {e["conn"] for e in connections if e["state"] == "closed"}
    assert opened == closed != set()
    assert not runs.proxy.of_kind("error")


def test_a_gzip_compressed_agent_card_is_rewritten_too(a2a_sdk_python: Path, tmp_path: Path) -> None:
    with (
        running_agent(a2a_sdk_python, tmp_path, "--gzip") as agent,
        running_proxy(agent.url, tmp_path / "recording.jsonl") as proxy,
    ):
        run = run_client(a2a_sdk_python, tmp_path, agent, proxy.url)
    first = exchanges(proxy)[0]
    assert first.path == "/.well-known/agent-card.json" and first.response is not None
    assert first.response["headers"]["content-encoding"] == "gzip"
    assert {origin(url) for _, url in run.report["requests"]} == {origin(proxy.url)}
    assert len(exchanges(proxy)) == len(agent.requests())
    assert len(proxy.of_kind("rewrite")) == 2 * len(BINDINGS)
