"""Real MCP peers over HTTP through ``wiretap proxy``: each scenario runs straight and through the proxy.

Three witnesses are compared for every HTTP exchange: what the client put on the wire and read back
(its httpx2 transport tees everything, peer_scripts/http_wire.py), what the proxy recorded, and what
the server saw (an ASGI wrapper, or a node preload for the reference server).

- MCP Python SDK 2.3.0 client and server over Streamable HTTP, in both eras on one endpoint:
  2026-07-28 (``mode="auto"``: stateless POSTs with ``Mcp-Method``/``Mcp-Name``/``Mcp-Param-*``
  headers, ``server/discover`` first) and 2025-11-25 (``mode="legacy"``: ``initialize``,
  ``Mcp-Session-Id``, a GET stream, DELETE at close).
- fastmcp 4.1.4 + fastmcp-tasks: a tool that must run as a 2026-07-28 task; the client's
  ``call_tool_task`` gets ``resultType: "task"`` and polls ``tasks/get`` to the inlined result.
- The reference "everything" server's old HTTP+SSE transport (2024-11-05) with the SDK's
  ``sse_client``: the server's ``endpoint`` event is a relative URL, which needs no rewrite.
- Real Claude Code (offline, fake Messages API) with an ``http`` MCP server behind the proxy.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import selectors
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from scenarios.fake_messages_api import FakeMessagesAPI, ToolUse
from support.claude import ClaudeRun, offline_env, run_claude, write_mcp_config
from support.mcp_http_peers import PEER_SCRIPTS, PRELOAD, serving
from support.proxyrun import ProxyRun, running_proxy

from wiretap.analysis.report import build_report
from wiretap.recording.events import Event
from wiretap.wire.mcp_headers import decode_header
from wiretap.wire.secrets import names_secret

pytestmark = pytest.mark.slow

TIMEOUT = 60
MODERN, LEGACY = "2026-07-28", "2025-11-25"
TASK_POLL_INTERVAL = 0.2  # fastmcp_tasks_http_server.POLL_INTERVAL_MS
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}
)

Json = Any
Item = tuple[str | None, str | None, str, Json]
"""One message of a response body: SSE event type and id (None outside SSE), "msg" or "raw", value."""


# Processes.


def first_line(proc: subprocess.Popen[str], stderr: Path, timeout: float = 30) -> str:
    """The first line a server prints (its URL), waiting at most ``timeout`` seconds."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline and proc.poll() is None:
            if selector.select(0.2):
                line = proc.stdout.readline().strip()
                if line:
                    return line
                break
    raise RuntimeError(f"the server printed no URL within {timeout}s: {stderr.read_text()[-4000:]}")


def run_peer(python: Path, script: str, *args: str) -> dict[str, Any]:
    """A peer client script: its one JSON report from stdout."""
    result = subprocess.run(
        [str(python), str(PEER_SCRIPTS / script), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, f"{script} exited {result.returncode}:\n{result.stderr[-4000:]}"
    report: dict[str, Any] = json.loads(result.stdout)
    return report


# What each witness saw.


def canonical(value: Json) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def parse_sse(text: str) -> list[dict[str, str]]:
    """Server-sent events, minimal and independent of wiretap's decoder: fields by event, comments dropped."""
    events, current = [], {}
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line:
            if current:
                events.append(current)
            current = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            current[name] = current[name] + "\n" + value if name == "data" and name in current else value
    return events


def body_item(text: str) -> tuple[str, Json]:
    try:
        return "msg", json.loads(text)
    except ValueError:
        return "raw", text


@dataclass
class Exchange:
    """One HTTP exchange as the client or the server saw it (a response still open has no body)."""

    method: str
    target: str
    headers: dict[str, str]
    """Lower-case names."""
    body: str | None
    status: int | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: str | None = None
    url: str = ""

    @property
    def request(self) -> Json:
        return json.loads(self.body) if self.body else None

    @property
    def key(self) -> tuple[str, str]:
        return self.method, canonical(self.request)

    @property
    def sse(self) -> bool:
        return is_event_stream(self.response_headers)

    def items(self) -> list[Item]:
        """The response's messages: one per SSE event with data, or the whole body."""
        if self.sse:
            events = parse_sse(self.response_body or "")
            return [(e.get("event"), e.get("id"), *body_item(e["data"])) for e in events if "data" in e]
        return [(None, None, *body_item(self.response_body))] if self.response_body else []

    def dataless_events(self) -> list[dict[str, str]]:
        return [e for e in parse_sse(self.response_body or "") if "data" not in e] if self.sse else []


def lower(pairs: list[list[str]]) -> dict[str, str]:
    return {name.lower(): value for name, value in pairs}


def client_log(path: Path) -> list[Exchange]:
    """The client's wire log (http_wire.TeeTransport), in the order it sent the requests."""
    entries = sorted((json.loads(line) for line in path.read_text().splitlines()), key=lambda e: e["n"])
    return [
        Exchange(
            e["method"],
            e["path"],
            lower(e["headers"]),
            e["body"],
            e["status"],
            lower(e["response_headers"]),
            e["response_body"],
            e["url"],
        )
        for e in entries
    ]


def server_log(text: str) -> list[Exchange]:
    """What an SDK or fastmcp server saw (http_wire.ExchangeLog), in the order the requests arrived."""
    found: dict[int, Exchange] = {}
    for line in text.splitlines():
        e = json.loads(line)
        if e["part"] == "request":
            target = e["path"] + (f"?{e['query']}" if e["query"] else "")
            found[e["n"]] = Exchange(e["method"], target, lower(e["headers"]), None)
        elif e["n"] not in found:
            continue  # the end of an exchange of an earlier run
        elif e["part"] == "body":
            found[e["n"]].body = e["body"]
        elif e["part"] == "response":
            found[e["n"]].status = e["status"]
            found[e["n"]].response_headers = lower(e["headers"])
        elif e["part"] == "response_body":
            found[e["n"]].response_body = e["body"]
    return [found[n] for n in sorted(found)]


def node_log(text: str) -> list[Exchange]:
    """What the node server saw (loopback_preload.cjs): requests without bodies, responses as written."""
    found: dict[int, Exchange] = {}
    for line in text.splitlines():
        e = json.loads(line)
        if e["part"] == "request":
            found[e["n"]] = Exchange(e["method"], e["url"], lower(e["headers"]), None)
        elif e["n"] not in found:
            continue
        elif e["part"] == "head":
            found[e["n"]].status = e["status"]
            found[e["n"]].response_headers = {k.lower(): str(v) for k, v in e["headers"].items()}
            found[e["n"]].response_body = ""
        elif e["part"] == "write":
            found[e["n"]].response_body = (found[e["n"]].response_body or "") + e["data"]
    return [found[n] for n in sorted(found)]


@dataclass
class Recorded:
    """One exchange as the proxy recorded it."""

    ex: int
    request: Event
    response: Event | None = None
    end: Event | None = None
    c2s: list[Event] = field(default_factory=list)
    s2c: list[Event] = field(default_factory=list)
    dataless: list[Event] = field(default_factory=list)

    @property
    def method(self) -> str:
        return str(self.request["method"])

    @property
    def headers(self) -> dict[str, str]:
        return dict(self.request["headers"])

    @property
    def target(self) -> str:
        query = self.request.get("query")
        return str(self.request["path"]) + (f"?{query}" if query else "")

    @property
    def message(self) -> Json:
        assert len(self.c2s) <= 1, self.c2s
        return self.c2s[0]["msg"] if self.c2s else None

    @property
    def key(self) -> tuple[str, str]:
        return self.method, canonical(self.message)

    def items(self) -> list[Item]:
        return [
            (
                e.get("sse", {}).get("event"),
                e.get("sse", {}).get("id"),
                *(("msg", e["msg"]) if "msg" in e else ("raw", e["raw"])),
            )
            for e in self.s2c
        ]


def recorded(proxy: ProxyRun) -> list[Recorded]:
    exchanges: dict[int, Recorded] = {}
    for event in proxy.events:
        kind = event["kind"]
        if kind == "http_request":
            exchanges[event["ex"]] = Recorded(event["ex"], event)
        elif kind == "http_response":
            exchanges[event["ex"]].response = event
        elif kind == "http_end":
            exchanges[event["ex"]].end = event
        elif kind == "message":
            (exchanges[event["ex"]].c2s if event["dir"] == "c2s" else exchanges[event["ex"]].s2c).append(event)
        elif kind == "sse":
            exchanges[event["ex"]].dataless.append(event)
    return [exchanges[ex] for ex in sorted(exchanges)]


def unique(exchanges: list[Any]) -> dict[tuple[str, str], Any]:
    keyed = {x.key: x for x in exchanges}
    assert len(keyed) == len(exchanges), "two exchanges with the same method and message"
    return keyed


def is_event_stream(headers: dict[str, str]) -> bool:
    return headers.get("content-type", "").split(";")[0].strip() == "text/event-stream"


def mcp_headers(headers: dict[str, str]) -> dict[str, str]:
    return {name: value for name, value in headers.items() if name.startswith("mcp-")}


# Runs: one scenario straight to the server and through the proxy.


@dataclass
class Run:
    report: dict[str, Any]
    client: list[Exchange]
    server: list[Exchange]
    proxy: ProxyRun | None = None

    @cached_property
    def recorded(self) -> list[Recorded]:
        assert self.proxy is not None
        return recorded(self.proxy)

    def index(self, event: Event) -> int:
        assert self.proxy is not None
        return next(i for i, e in enumerate(self.proxy.events) if e is event)


@dataclass
class Pair:
    direct: Run
    proxied: Run


@dataclass
class Server:
    url: str
    log: Path

    def offset(self) -> int:
        return self.log.stat().st_size

    def seen_since(self, offset: int, parse: Any = server_log) -> list[Exchange]:
        """What the server saw from ``offset`` on, once every exchange in it has ended (up to 5 s)."""
        deadline = time.monotonic() + 5
        while True:
            seen = parse(self.log.read_bytes()[offset:].decode())
            if all(x.response_body is not None for x in seen) or time.monotonic() > deadline:
                return seen
            time.sleep(0.05)


def proxied_run(server: Server, root: Path, client: Any, parse: Any = server_log) -> Run:
    """``client(url, wire_log)`` through a fresh ``wiretap proxy`` in front of ``server``."""
    offset = server.offset()
    wire_log = root / "proxied-client.jsonl"
    with running_proxy(server.url, root / "recording.jsonl") as proxy:
        report = client(proxy.url, wire_log)
    assert proxy.proc.returncode == 0, proxy.stderr
    return Run(report, client_log(wire_log), server.seen_since(offset, parse), proxy)


def direct_run(server: Server, root: Path, client: Any, parse: Any = server_log) -> Run:
    offset = server.offset()
    wire_log = root / "direct-client.jsonl"
    report = client(server.url, wire_log)
    return Run(report, client_log(wire_log), server.seen_since(offset, parse))


def pair(server: Server, root: Path, client: Any, parse: Any = server_log) -> Pair:
    root.mkdir(parents=True, exist_ok=True)
    return Pair(direct_run(server, root, client, parse), proxied_run(server, root, client, parse))


# Shared checks.


def assert_recording_matches_the_client(run: Run) -> None:
    """Every exchange the client made is recorded once, with the same request and the same response messages."""
    recorded_by_key, client_by_key = unique(run.recorded), unique(run.client)
    assert recorded_by_key.keys() == client_by_key.keys()
    for key, ours in recorded_by_key.items():
        theirs = client_by_key[key]
        assert ours.target == theirs.target
        assert ours.response is not None and ours.response["status"] == theirs.status
        assert ours.items() == theirs.items(), f"{key}: recorded {ours.items()}, client read {theirs.items()}"
        assert len(ours.dataless) == len(theirs.dataless_events())
        assert ours.end is not None and ours.end["bytes_in"] == len((theirs.body or "").encode())
        if ours.end["outcome"] == "complete" and ours.method != "GET":  # a GET stream is cut by the client
            assert ours.end["bytes_out"] == len((theirs.response_body or "").encode())


def assert_each_answer_is_recorded_before_the_clients_next_request(run: Run, requests: list[Exchange]) -> None:
    """For requests the client sent one after another: request, its answer, then the next request."""
    by_key = unique(run.recorded)
    positions = []
    for exchange in requests:
        ours = by_key[exchange.key]
        answer = next(e for e in ours.s2c if e.get("msg", {}).get("id") == exchange.request["id"])
        positions += [run.index(ours.c2s[0]), run.index(answer)]
    assert positions == sorted(positions)


def end_to_end(headers: dict[str, str], *, bodyless: bool = False) -> dict[str, str]:
    """The headers a proxy passes on as they are: all but Host and the hop-by-hop ones.

    On a request without a body Content-Length is left out too: wiretap adds one (see
    test_a_bodyless_delete_reaches_the_server_without_a_content_length_the_client_did_not_send).
    """
    dropped = HOP_BY_HOP | {"host"} | ({"content-length"} if bodyless else set())
    return {name: value for name, value in headers.items() if name not in dropped}


def seen_by_server(run: Run) -> list[Exchange]:
    """What the server saw of each recorded exchange: matched by method and message, or by order when the
    server's log has no request bodies (the node preload)."""
    assert len(run.server) == len(run.recorded)
    if all(x.body is not None for x in run.server):
        by_key = unique(run.server)
        return [by_key[e.key] for e in run.recorded]
    return run.server


def assert_recorded(recorded: dict[str, Any], actual: dict[str, Any]) -> None:
    """The recording holds these headers: as they were, or a secret's as its redaction mark."""
    assert recorded.keys() == actual.keys(), (recorded.keys(), actual.keys())
    for name, value in actual.items():
        if names_secret(name):
            marks = recorded[name] if isinstance(recorded[name], list) else [recorded[name]]
            assert all(re.fullmatch(r"\[redacted:[0-9a-f]{4}\]", mark) for mark in marks), (name, marks)
        else:
            assert recorded[name] == value, name


def assert_headers_arrive_unchanged(run: Run) -> None:
    """Request by request: the recording holds the headers the client sent; the server got all of them, but
    hop-by-hop ones, with the upstream's Host; MCP headers are the same for all three; and every header the
    server's app set on its response reached the recording and the client, but hop-by-hop ones."""
    assert run.proxy is not None
    upstream = urlsplit(run.proxy.of_kind("listen")[0]["upstream"]).netloc
    client_by_key = unique(run.client) if run.client else {}
    for ours, seen in zip(run.recorded, seen_by_server(run), strict=True):
        theirs = client_by_key[ours.key] if run.client else None
        sent = theirs.headers if theirs is not None else ours.headers
        assert_recorded(ours.headers, sent)
        assert (ours.method, ours.target) == (seen.method, seen.target)
        bodyless = "content-length" not in sent and "transfer-encoding" not in sent
        assert end_to_end(seen.headers, bodyless=bodyless) == end_to_end(sent, bodyless=bodyless), ours.key
        assert seen.headers["host"] == upstream
        assert mcp_headers(sent) == mcp_headers(seen.headers), ours.key
        assert_recorded(mcp_headers(ours.headers), mcp_headers(sent))
        assert ours.response is not None and ours.response["status"] == seen.status
        answered = end_to_end(seen.response_headers)
        assert_recorded({name: ours.response["headers"].get(name) for name in answered}, answered)
        if theirs is not None:
            assert theirs.status == seen.status
            assert answered.items() <= theirs.response_headers.items(), ours.key
            assert mcp_headers(theirs.response_headers) == mcp_headers(seen.response_headers)


# MCP Python SDK 2.3.0 over Streamable HTTP.


@pytest.fixture(scope="module")
def sdk_server(mcp_sdk_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("sdk-server")
    log = root / "server.jsonl"
    log.touch()
    argv = [str(mcp_sdk_python), str(PEER_SCRIPTS / "mcp_sdk_http_server.py"), "--log", str(log)]
    with serving(argv, root / "stderr.txt") as proc:
        yield Server(first_line(proc, root / "stderr.txt"), log)


def sdk_client(python: Path, mode: str) -> Any:
    def client(url: str, wire_log: Path) -> dict[str, Any]:
        return run_peer(python, "mcp_sdk_http_client.py", url, "--mode", mode, "--wire-log", str(wire_log))

    return client


@pytest.fixture(scope="module")
def sdk_modern(sdk_server: Server, mcp_sdk_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Pair:
    return pair(sdk_server, tmp_path_factory.mktemp("sdk-modern"), sdk_client(mcp_sdk_python, "auto"))


@pytest.fixture(scope="module")
def sdk_legacy(sdk_server: Server, mcp_sdk_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Pair:
    return pair(sdk_server, tmp_path_factory.mktemp("sdk-legacy"), sdk_client(mcp_sdk_python, "legacy"))


@pytest.fixture(params=["modern", "legacy"])
def sdk(request: pytest.FixtureRequest) -> tuple[str, Pair]:
    """Each era's pair of runs: (era, runs)."""
    return request.param, request.getfixturevalue(f"sdk_{request.param}")


def test_the_sdk_client_gets_the_same_results_through_the_proxy_as_straight_in_each_era(
    sdk: tuple[str, Pair],
) -> None:
    era, runs = sdk
    report = runs.proxied.report
    assert report == runs.direct.report
    assert report["protocol_version"] == (MODERN if era == "modern" else LEGACY)
    assert report["calls"]["add"]["structuredContent"] == {"result": 42}
    assert report["calls"]["echo"]["content"][0]["text"] == 'héllo ✓ "wire"\n\tend'
    assert report["calls"]["fail"]["isError"] is True
    assert report["progress"] == [[i, 3, f"step {i}"] for i in (1, 2, 3)]
    assert report["resource"]["contents"][0]["text"] == "croissant, café crème"


def test_every_message_the_sdk_client_sent_and_read_is_recorded_once_with_its_exchange(
    sdk: tuple[str, Pair],
) -> None:
    _, runs = sdk
    run = runs.proxied
    assert_recording_matches_the_client(run)
    sent = [m["msg"] for e in run.recorded for m in e.c2s]
    assert len(sent) == len([x for x in run.client if x.body])
    assert all(len(e.c2s) == (1 if e.method == "POST" else 0) for e in run.recorded)
    # The client awaits each request's answer before sending the next: so does the recording.
    requests = [x for x in run.client if x.method == "POST" and "id" in x.request]
    assert [x.request["id"] for x in requests] == list(range(1, len(requests) + 1))
    assert_each_answer_is_recorded_before_the_clients_next_request(run, requests)
    assert run.proxy is not None
    assert [e["t"] for e in run.proxy.events] == sorted(e["t"] for e in run.proxy.events)


def test_an_sse_response_is_recorded_as_one_message_per_event_in_each_era(sdk: tuple[str, Pair]) -> None:
    era, runs = sdk
    [count] = [e for e in runs.proxied.recorded if (e.message or {}).get("params", {}).get("name") == "count"]
    assert count.response is not None and count.response["headers"]["content-type"] == "text/event-stream"
    methods = [e["msg"].get("method", "result") for e in count.s2c]
    assert methods == ["notifications/progress"] * 3 + ["result"]
    assert all(e["sse"] == {"event": "message"} for e in count.s2c)
    streamed = [e for e in runs.proxied.recorded if e.response and is_event_stream(e.response["headers"])]
    if era == "modern":  # a 2026 server commits to SSE only for a request that gets a notification
        assert streamed == [count]
    else:  # the legacy session answers every request on an event stream, and holds the GET stream
        assert {e.method for e in streamed} == {"POST", "GET"}
        assert all(len(e.s2c) >= 1 for e in streamed if e.method == "POST")


def test_mcp_headers_reach_the_sdk_server_unchanged_in_each_era(sdk: tuple[str, Pair]) -> None:
    era, runs = sdk
    run = runs.proxied
    assert_headers_arrive_unchanged(run)
    posts = [e for e in run.recorded if e.method == "POST"]
    if era == "modern":
        for e in posts:
            assert e.headers["mcp-protocol-version"] == MODERN
            assert e.headers["mcp-method"] == e.message["method"]
        named = {e.message["method"]: e.headers["mcp-name"] for e in posts if "mcp-name" in e.headers}
        assert named["prompts/get"] == "greet"
        # A non-ASCII value travels base64-encoded: "notes://café/menu".
        assert named["resources/read"] == "=?base64?bm90ZXM6Ly9jYWbDqS9tZW51?="
        [forecast] = [e for e in posts if e.headers.get("mcp-name") == "forecast"]
        assert forecast.headers["mcp-param-region"] == "us-west1"
    else:
        assert not any(name in e.headers for e in posts for name in ("mcp-method", "mcp-name"))
        assert all(e.headers.get("mcp-protocol-version") == LEGACY for e in run.recorded[1:])


def test_a_clean_sdk_session_raises_no_header_or_version_finding_in_either_era(sdk: tuple[str, Pair]) -> None:
    era, runs = sdk
    proxy = runs.proxied.proxy
    assert proxy is not None
    findings = build_report(proxy.recording).to_dict()["findings"]
    assert [f for f in findings if f["code"] in ("header-body-mismatch", "unknown-protocol-version")] == []
    if era == "modern":  # the check ran: the base64 Mcp-Name of resources/read decodes to its URI
        [read] = [e for e in runs.proxied.recorded if e.message["method"] == "resources/read"]
        assert decode_header(read.headers["mcp-name"]).value == read.message["params"]["uri"] == "notes://café/menu"


def test_the_2026_era_is_stateless_posts_opened_by_server_discover(sdk_modern: Pair) -> None:
    run = sdk_modern.proxied
    assert {e.method for e in run.recorded} == {"POST"}
    assert run.recorded[0].message["method"] == "server/discover"
    assert "2026-07-28" in run.recorded[0].s2c[0]["msg"]["result"]["supportedVersions"]
    for e in run.recorded:
        assert e.response is not None and "mcp-session-id" not in e.response["headers"]
        assert "mcp-session-id" not in e.headers
    assert all(e.end is not None and e.end["outcome"] == "complete" for e in run.recorded)


def test_the_legacy_session_has_its_id_a_get_stream_and_a_delete_at_close(sdk_legacy: Pair) -> None:
    runs = sdk_legacy
    run = runs.proxied
    first, *rest = run.recorded
    assert first.message["method"] == "initialize" and "mcp-session-id" not in first.headers
    assert first.response is not None
    session = first.response["headers"]["mcp-session-id"]
    assert all(e.headers["mcp-session-id"] == session for e in rest)
    [stream] = [e for e in rest if e.method == "GET"]
    assert "text/event-stream" in stream.headers["accept"]
    assert stream.response is not None and stream.response["status"] == 200
    assert stream.end is not None
    assert rest[-1].method == "DELETE" and rest[-1].response is not None and rest[-1].response["status"] == 200
    assert [x.method for x in run.server].count("DELETE") == 1
    # Each run's session is its own: the straight run had another id.
    direct_ids = {x.headers.get("mcp-session-id") for x in runs.direct.client} - {None}
    assert len(direct_ids) == 1 and session not in direct_ids


def test_a_bodyless_delete_reaches_the_server_without_a_content_length_the_client_did_not_send(
    sdk_legacy: Pair,
) -> None:
    [sent] = [x for x in sdk_legacy.proxied.client if x.method == "DELETE"]
    [straight] = [x for x in sdk_legacy.direct.server if x.method == "DELETE"]
    assert "content-length" not in sent.headers and "content-length" not in straight.headers
    [seen] = [x for x in sdk_legacy.proxied.server if x.method == "DELETE"]
    assert "content-length" not in seen.headers


# fastmcp 4.1.4 + fastmcp-tasks: 2026-07-28 tasks over HTTP.


@pytest.fixture(scope="module")
def tasks(fastmcp_tasks_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    root = tmp_path_factory.mktemp("fastmcp-tasks")
    log = root / "server.jsonl"
    log.touch()
    argv = [str(fastmcp_tasks_python), str(PEER_SCRIPTS / "fastmcp_tasks_http_server.py"), "--log", str(log)]

    def client(url: str, wire_log: Path) -> dict[str, Any]:
        return run_peer(fastmcp_tasks_python, "fastmcp_tasks_http_client.py", url, "--wire-log", str(wire_log))

    with serving(argv, root / "stderr.txt") as proc:
        yield pair(Server(first_line(proc, root / "stderr.txt"), log), root, client)


def test_a_fastmcp_tasks_session_raises_no_header_or_version_finding(tasks: Pair) -> None:
    proxy = tasks.proxied.proxy
    assert proxy is not None
    findings = build_report(proxy.recording).to_dict()["findings"]
    assert [f for f in findings if f["code"] in ("header-body-mismatch", "unknown-protocol-version")] == []
    assert {e.message["method"] for e in tasks.proxied.recorded if "mcp-method" in e.headers} >= {"tasks/get"}


def task_calls(run: Run) -> dict[str, tuple[Recorded, str]]:
    """Each tool called as a task: its recorded ``tools/call`` and the task id the server gave it."""
    calls = {}
    for e in run.recorded:
        if e.message and e.message["method"] == "tools/call":
            result = e.s2c[0]["msg"]["result"]
            calls[e.message["params"]["name"]] = (e, result["taskId"])
    return calls


def polls(run: Run, task_id: str) -> list[Recorded]:
    return [
        e
        for e in run.recorded
        if e.message and e.message["method"] == "tasks/get" and e.message["params"]["taskId"] == task_id
    ]


def test_the_fastmcp_client_gets_the_same_task_results_through_the_proxy_as_straight(tasks: Pair) -> None:
    report = tasks.proxied.report
    assert report == tasks.direct.report
    for created in report["created"].values():
        assert created["resultType"] == "task" and created["status"] == "working"
        assert created["pollIntervalMs"] == TASK_POLL_INTERVAL * 1000
    assert report["results"]["slow_sum"]["structured_content"] == {"result": 42}
    # In the 2026 design a tool error completes the task, with isError in its result.
    assert report["results"]["slow_fail"]["is_error"] is True


def test_the_recording_holds_each_task_creation_every_tasks_get_poll_and_the_inlined_result(tasks: Pair) -> None:
    run = tasks.proxied
    assert_recording_matches_the_client(run)
    calls = task_calls(run)
    assert calls.keys() == {"slow_sum", "slow_fail"}
    for name, (call, task_id) in calls.items():
        created = call.s2c[0]["msg"]["result"]
        assert created["resultType"] == "task" and created["pollIntervalMs"] == TASK_POLL_INTERVAL * 1000
        polled = polls(run, task_id)
        sent = [x for x in run.client if x.request and x.request.get("method") == "tasks/get"]
        assert len(polled) == len([x for x in sent if x.request["params"]["taskId"] == task_id])
        assert polled and all(run.index(p.c2s[0]) > run.index(call.s2c[0]) for p in polled)
        statuses = [p.s2c[0]["msg"]["result"]["status"] for p in polled]
        assert statuses[-1] == "completed" and set(statuses[:-1]) <= {"working"}, statuses
        inlined = polled[-1].s2c[0]["msg"]["result"]["result"]
        final = run.report["results"][name]
        assert inlined["content"] == final["content"]
        assert inlined.get("structuredContent") == final["structured_content"]
        assert inlined.get("isError", False) == final["is_error"]
    # 0.8 s of work: the poller backs off from 20 ms to the server's 200 ms, and keeps to it.
    sum_polls = polls(run, calls["slow_sum"][1])
    assert len(sum_polls) >= 4
    times = [p.c2s[0]["t"] for p in sum_polls]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert max(gaps) < TASK_POLL_INTERVAL + 0.5, gaps
    assert max(gaps) > TASK_POLL_INTERVAL * 0.9, gaps


def test_task_polls_carry_their_mcp_headers_to_the_fastmcp_server_unchanged(tasks: Pair) -> None:
    run = tasks.proxied
    assert_headers_arrive_unchanged(run)
    assert {e.method for e in run.recorded} == {"POST"}
    for e in run.recorded:
        assert e.headers["mcp-protocol-version"] == MODERN and e.headers["mcp-method"] == e.message["method"]
        assert "mcp-session-id" not in e.headers
    for name, (call, task_id) in task_calls(run).items():
        assert call.headers["mcp-name"] == name
        # fastmcp 4.1.4 sends tasks/get without the Mcp-Name (= task id) that SEP-2663 asks for; the server
        # takes it all the same, and the proxy passes on what was sent (checked above), adding nothing.
        assert all("mcp-name" not in p.headers for p in polls(run, task_id))


# The reference "everything" server's old HTTP+SSE transport (2024-11-05).


@pytest.fixture(scope="module")
def everything_sse(
    server_everything_bin: Path, mcp_sdk_python: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Pair]:
    root = tmp_path_factory.mktemp("everything-sse")
    listen, log = root / "listen.jsonl", root / "requests.jsonl"
    log.touch()
    env = os.environ | {
        "NODE_OPTIONS": f"--require={PRELOAD}",
        "WIRETAP_PRELOAD_LISTEN": str(listen),
        "WIRETAP_PRELOAD_LOG": str(log),
        "PORT": "0",
    }

    def client(url: str, wire_log: Path) -> dict[str, Any]:
        return run_peer(mcp_sdk_python, "mcp_sdk_sse_client.py", url, "--wire-log", str(wire_log))

    with serving([str(server_everything_bin), "sse"], root / "stderr.txt", env) as proc:
        deadline = time.monotonic() + 30
        while not (listen.exists() and listen.read_text()) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert listen.exists() and listen.read_text(), (root / "stderr.txt").read_text()
        address = json.loads(listen.read_text().splitlines()[0])
        assert address["address"] == "127.0.0.1"
        server = Server(f"http://127.0.0.1:{address['port']}/sse", log)
        yield pair(server, root, client, node_log)


def test_the_sdk_client_gets_the_same_results_from_the_everything_sse_server_through_the_proxy(
    everything_sse: Pair,
) -> None:
    report = everything_sse.proxied.report
    assert report == everything_sse.direct.report
    assert report["server_info"]["name"] == "mcp-servers/everything"
    assert report["calls"]["get-sum"]["content"][0]["text"] == "The sum of 2 and 40 is 42."
    assert report["progress"] == [[i, 3, None] for i in (1, 2, 3)]


def test_the_everything_servers_relative_endpoint_is_passed_on_and_the_client_reaches_it_only_via_the_proxy(
    everything_sse: Pair,
) -> None:
    run = everything_sse.proxied
    assert run.proxy is not None
    stream, *posts = run.recorded
    # What the server actually sent first: a relative URL, so there is nothing to rewrite.
    [seen_stream] = [x for x in run.server if x.method == "GET"]
    endpoint = parse_sse(seen_stream.response_body or "")[0]
    assert endpoint["event"] == "endpoint" and endpoint["data"].startswith("/message?sessionId=")
    assert stream.method == "GET" and stream.s2c[0]["sse"] == {"event": "endpoint"}
    assert stream.s2c[0]["raw"] == endpoint["data"]
    assert run.proxy.of_kind("rewrite") == []
    [client_stream] = [x for x in run.client if x.method == "GET"]
    assert parse_sse(client_stream.response_body or "")[0] == endpoint
    # The client resolved it against the proxy's URL: every request it made went to the proxy.
    proxy_origin = urlsplit(run.proxy.url)[:2]
    assert all(urlsplit(x.url)[:2] == proxy_origin for x in run.client)
    assert {x.target for x in run.client if x.method == "POST"} == {endpoint["data"]}
    # ... and the server saw exactly what the proxy forwarded, in order, with the upstream's Host.
    assert [(x.method, x.target) for x in run.server] == [(e.method, e.target) for e in run.recorded]
    assert_headers_arrive_unchanged(run)
    assert all(p.method == "POST" and p.response is not None and p.response["status"] == 202 for p in posts)


def test_every_message_on_the_sse_stream_and_every_post_is_recorded_once_in_order(everything_sse: Pair) -> None:
    run = everything_sse.proxied
    stream = run.recorded[0]
    [client_stream] = [x for x in run.client if x.method == "GET"]
    assert stream.items() == client_stream.items()
    assert stream.end is not None and stream.end["outcome"] == "client_disconnected"
    posted = [e.message for e in run.recorded[1:]]
    assert posted == [x.request for x in run.client if x.method == "POST"]
    assert all(e.items() == [(None, None, "raw", "Accepted")] for e in run.recorded[1:])
    # Each request is recorded before its answer on the stream, and the answer before the next request.
    answers = {e["msg"]["id"]: e for e in stream.s2c if "msg" in e and "id" in e["msg"]}
    order = []
    for e in run.recorded[1:]:
        order.append(run.index(e.c2s[0]))
        if "id" in e.message:
            order.append(run.index(answers[e.message["id"]]))
    assert order == sorted(order)
    progress = [e["msg"] for e in stream.s2c if e.get("msg", {}).get("method") == "notifications/progress"]
    assert [p["params"]["progress"] for p in progress] == [1, 2, 3]


# Real Claude Code with an "http" MCP server behind the proxy.

CLAUDE_SERVER = "wire"
CLAUDE_TOOL = f"mcp__{CLAUDE_SERVER}__echo"
CLAUDE_TEXT = 'héllo ✓ wire — 1 < 2 & "quoted"\tand\\slash'


@dataclass
class ClaudeSession:
    claude: ClaudeRun
    tool_results: list[dict[str, Any]]
    run: Run
    """What the server saw, and the recording: Claude Code is no script of ours, so there is no client log."""


def claude_session(claude: Path, root: Path, server: Server, *, proxied: bool) -> ClaudeSession:
    root.mkdir(parents=True, exist_ok=True)
    offset = server.offset()
    with contextlib.ExitStack() as stack:
        proxy = stack.enter_context(running_proxy(server.url, root / "recording.jsonl")) if proxied else None
        url = proxy.url if proxy is not None else server.url
        config = write_mcp_config(root / "mcp.json", {CLAUDE_SERVER: {"type": "http", "url": url}})
        with FakeMessagesAPI([ToolUse(CLAUDE_TOOL, {"text": CLAUDE_TEXT})]) as api:
            claude_run = run_claude(
                claude,
                "Call the echo tool.",
                env=offline_env(root, api.url),
                cwd=root,
                mcp_config=config,
                allowed_tools=[CLAUDE_TOOL],
                timeout=120,
            )
            tool_results = api.tool_results()
    assert claude_run.returncode == 0, claude_run.describe()
    assert claude_run.mcp_status(CLAUDE_SERVER) == "connected", claude_run.describe()
    if proxy is not None:
        assert proxy.proc.returncode == 0, proxy.stderr
    return ClaudeSession(claude_run, tool_results, Run({}, [], server.seen_since(offset), proxy))


@pytest.fixture(scope="module")
def claude_http(
    claude_code_bin: Path, sdk_server: Server, tmp_path_factory: pytest.TempPathFactory
) -> tuple[ClaudeSession, ClaudeSession]:
    root = tmp_path_factory.mktemp("claude-http")
    direct = claude_session(claude_code_bin, root / "direct", sdk_server, proxied=False)
    proxied = claude_session(claude_code_bin, root / "proxied", sdk_server, proxied=True)
    return direct, proxied


def test_the_tool_result_reaches_claude_codes_model_unchanged_through_the_proxy(
    claude_http: tuple[ClaudeSession, ClaudeSession],
) -> None:
    direct, proxied = claude_http
    assert len(proxied.tool_results) == 1 and not proxied.tool_results[0].get("is_error")
    assert proxied.tool_results == direct.tool_results
    assert proxied.claude.result_text == direct.claude.result_text
    [call] = [e for e in proxied.run.recorded if e.message and e.message["method"] == "tools/call"]
    [answer] = call.s2c
    assert answer["msg"]["result"]["content"] == [{"type": "text", "text": CLAUDE_TEXT}]
    # Claude Code hands the model the structured content, as JSON text, when a result has one.
    assert answer["msg"]["result"]["structuredContent"] == {"result": CLAUDE_TEXT}
    assert json.loads(proxied.tool_results[0]["content"]) == {"result": CLAUDE_TEXT}


def test_the_recording_of_claude_code_has_discover_tools_list_and_tools_call_with_their_mcp_headers(
    claude_http: tuple[ClaudeSession, ClaudeSession],
) -> None:
    _, proxied = claude_http
    posts = [e for e in proxied.run.recorded if e.message is not None]
    assert len(posts) == len(proxied.run.recorded)
    methods = [e.message["method"] for e in posts]
    assert methods[0] == "server/discover"
    assert {"tools/list", "tools/call"} <= set(methods)
    for e in posts:
        assert e.headers["mcp-method"] == e.message["method"]
        assert e.headers["mcp-protocol-version"] == MODERN
        assert "mcp-session-id" not in e.headers
    [call] = [e for e in posts if e.message["method"] == "tools/call"]
    assert call.headers["mcp-name"] == "echo"
    assert call.message["params"]["arguments"] == {"text": CLAUDE_TEXT}
    [tools] = [e for e in posts if e.message["method"] == "tools/list"]
    assert "echo" in {tool["name"] for tool in tools.s2c[0]["msg"]["result"]["tools"]}
    # Every request was answered, but the subscription stream Claude Code holds open until it leaves; and
    # what was recorded of each answer is what the server wrote.
    [listen] = [e for e in posts if e.message["method"] == "subscriptions/listen"]
    assert [m["msg"].get("method") for m in listen.s2c] == ["notifications/subscriptions/acknowledged"]
    assert listen.end is not None and listen.end["outcome"] == "client_disconnected"
    for e, arrived in zip(proxied.run.recorded, seen_by_server(proxied.run), strict=True):
        answers = [m["msg"]["id"] for m in e.s2c if "id" in m["msg"]]
        assert answers == ([] if e is listen else [e.message["id"]])
        assert arrived.response_body is not None, e.key
        assert e.items() == arrived.items(), e.key


def test_claude_codes_http_session_raises_no_header_or_version_finding(
    claude_http: tuple[ClaudeSession, ClaudeSession],
) -> None:
    _, proxied = claude_http
    assert proxied.run.proxy is not None
    findings = build_report(proxied.run.proxy.recording).to_dict()["findings"]
    assert [f for f in findings if f["code"] in ("header-body-mismatch", "unknown-protocol-version")] == []


def test_claude_codes_headers_reach_the_server_unchanged_through_the_proxy(
    claude_http: tuple[ClaudeSession, ClaudeSession],
) -> None:
    _, proxied = claude_http
    assert_headers_arrive_unchanged(proxied.run)
