"""``wiretap proxy`` against a scenario upstream with known behaviour: real sockets, real processes."""

from __future__ import annotations

import gzip
import http.client
import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from scenarios.http_upstream import Upstream
from support.proxyrun import running_proxy


@pytest.fixture
def upstream() -> Any:
    with Upstream() as up:
        yield up


def post(url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    data = json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method="POST", headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, dict(error.headers), error.read()


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.read()


def test_it_prints_a_loopback_url_that_keeps_the_upstream_path(upstream: Upstream, tmp_path: Path) -> None:
    with running_proxy(f"{upstream.url}/mcp", tmp_path / "rec.jsonl") as proxy:
        parts = urlsplit(proxy.url)
        assert parts.scheme == "http" and parts.hostname == "127.0.0.1" and parts.path == "/mcp"
        assert parts.port not in (None, urlsplit(upstream.url).port)


def test_the_printed_url_leaves_out_the_upstreams_query_and_the_proxy_adds_it(
    upstream: Upstream, tmp_path: Path
) -> None:
    with running_proxy(f"{upstream.url}/mcp?api_key=k3y-Opaque&region=eu", tmp_path / "rec.jsonl") as proxy:
        assert proxy.url == f"http://127.0.0.1:{urlsplit(proxy.url).port}/mcp"
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        for suffix in ("", "?", "?cursor=c2", "?api_key=k3y-Opaque&region=eu", "?api_key=k3y-Opaque&region=eu&n=1"):
            assert post(proxy.url + suffix, ping)[0] == 200
        assert get(f"{proxy.url.removesuffix('/mcp')}/.well-known/agent-card.json?v=1")[0] == 200
    assert [seen["target"] for seen in upstream.seen] == [
        "/mcp?api_key=k3y-Opaque&region=eu",
        "/mcp?api_key=k3y-Opaque&region=eu",
        "/mcp?api_key=k3y-Opaque&region=eu&cursor=c2",
        "/mcp?api_key=k3y-Opaque&region=eu",
        "/mcp?api_key=k3y-Opaque&region=eu&n=1",
        "/.well-known/agent-card.json?v=1",
    ]
    queries = [e["query"] for e in proxy.of_kind("http_request")]
    mark = queries[0].removeprefix("api_key=").removesuffix("&region=eu")
    assert re.fullmatch(r"\[redacted:[0-9a-f]{4}\]", mark)
    assert queries == [f"api_key={mark}&region=eu"] * 2 + [f"api_key={mark}&region=eu&cursor=c2"] + [
        f"api_key={mark}&region=eu",
        f"api_key={mark}&region=eu&n=1",
        "v=1",
    ]
    assert "k3y-Opaque" not in (tmp_path / "rec.jsonl").read_text() + proxy.stderr


def test_a_root_upstreams_query_is_added_to_requests_for_the_root(upstream: Upstream, tmp_path: Path) -> None:
    with running_proxy(f"{upstream.url}?token=t0ken-Opaque", tmp_path / "rec.jsonl") as proxy:
        assert urlsplit(proxy.url).path == "" and urlsplit(proxy.url).query == ""
        get(proxy.url)
        get(f"{proxy.url}/mcp")
    assert [seen["target"] for seen in upstream.seen] == ["/?token=t0ken-Opaque", "/mcp"]


def test_mcp_headers_and_status_codes_pass_both_ways(upstream: Upstream, tmp_path: Path) -> None:
    mcp_headers = {
        "Mcp-Session-Id": "sess-1",
        "MCP-Protocol-Version": "2025-11-25",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "build",
        "Last-Event-ID": "e7",
        "A2A-Version": "1.0",
        "A2A-Extensions": "urn:x",
    }
    with running_proxy(f"{upstream.url}/mcp", tmp_path / "rec.jsonl") as proxy:
        statuses = {}
        for status in (200, 202, 400, 404, 409):
            code, headers, _ = post(
                proxy.url,
                {"jsonrpc": "2.0", "id": status, "method": "tools/call"},
                {**mcp_headers, "X-Want-Status": str(status)},
            )
            statuses[status] = code
            assert headers["Mcp-Session-Id"] == "sess-1"
        assert get(proxy.url)[0] == 405
        delete = urllib.request.Request(proxy.url, method="DELETE", headers={"Mcp-Session-Id": "sess-1"})
        with urllib.request.urlopen(delete, timeout=10) as response:
            assert response.status == 204
    assert statuses == {200: 200, 202: 202, 400: 400, 404: 404, 409: 409}
    arrived = upstream.seen[0]["headers"]
    for name, value in mcp_headers.items():
        assert arrived[name] == value
    assert upstream.seen[-1]["method"] == "DELETE"
    assert [e["status"] for e in proxy.of_kind("http_response")] == [200, 202, 400, 404, 409, 405, 204]


def test_an_sse_event_reaches_the_client_before_the_next_is_sent(upstream: Upstream, tmp_path: Path) -> None:
    with running_proxy(upstream.url, tmp_path / "rec.jsonl") as proxy:
        parts = urlsplit(proxy.url)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        connection.request("GET", "/sse-two-events", headers={"Accept": "text/event-stream"})
        response = connection.getresponse()
        first_line = response.readline()
        first_seen = time.monotonic()
        rest = response.read()
        connection.close()
    assert first_line == b"event: message\r\n"
    assert first_seen < upstream.sent_at["second"] - 0.5, "the first event waited for the second"
    assert b'"second"' in rest
    sse = [e["sse"] for e in proxy.messages("s2c")]
    assert sse == [{"event": "message", "id": "e1"}, {"event": "message", "id": "e2"}]
    assert [e["msg"]["method"] for e in proxy.messages("s2c")] == ["first", "second"]


def test_a_client_leaving_mid_stream_is_passed_on_and_recorded(upstream: Upstream, tmp_path: Path) -> None:
    with running_proxy(upstream.url, tmp_path / "rec.jsonl") as proxy:
        parts = urlsplit(proxy.url)
        with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
            host = f"{parts.hostname}:{parts.port}".encode()
            sock.sendall(b"GET /sse-forever HTTP/1.1\r\nHost: " + host + b"\r\nAccept: text/event-stream\r\n\r\n")
            received = b""
            while b"tick" not in received:
                received += sock.recv(4096)
        assert upstream.disconnected.wait(10), "the upstream never learned that the client left"
    (end,) = proxy.of_kind("http_end")
    assert end["outcome"] == "client_disconnected"
    assert proxy.messages("s2c")[0]["msg"]["params"] == {"n": 0}


def test_an_upstream_closing_mid_body_breaks_the_clients_response_too(upstream: Upstream, tmp_path: Path) -> None:
    with running_proxy(upstream.url, tmp_path / "rec.jsonl") as proxy:
        parts = urlsplit(proxy.url)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        connection.request("GET", "/cut-short")
        response = connection.getresponse()
        with pytest.raises(http.client.IncompleteRead):
            response.read()
        connection.close()
    assert proxy.of_kind("http_end")[0]["outcome"] == "upstream_closed"
    assert [e["error"] for e in proxy.of_kind("error")] == ["upstream_closed"]


def test_an_upstream_that_is_down_gets_a_502_a_record_and_a_line(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    with running_proxy(dead, tmp_path / "rec.jsonl") as proxy:
        status, _, body = post(proxy.url, {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert status == 502
    assert body.decode().startswith(f"wiretap: cannot reach upstream {dead}: ")
    assert "cannot reach upstream" in proxy.stderr
    assert proxy.of_kind("http_response")[0]["generated"] is True
    assert proxy.of_kind("error")[0]["error"] == "upstream_unreachable"
    assert proxy.messages("c2s")[0]["msg"]["method"] == "ping"


def test_agent_cards_are_pointed_at_the_proxy_and_foreign_hosts_left_alone_with_a_warning(
    upstream: Upstream, tmp_path: Path
) -> None:
    with running_proxy(f"{upstream.url}/a2a", tmp_path / "rec.jsonl") as proxy:
        origin = proxy.url.removesuffix("/a2a")
        status, body = get(f"{origin}/.well-known/agent-card.json")
        _, old = get(f"{origin}/.well-known/agent.json")
    card = json.loads(body)
    assert status == 200
    assert card["supportedInterfaces"][0]["url"] == f"{origin}/a2a"
    assert card["supportedInterfaces"][1]["url"] == "http://other.example:9/a2a"
    assert card["url"] == f"{origin}/a2a"
    assert card["additionalInterfaces"][0]["url"] == f"{origin}/a2a/jsonrpc"
    assert json.loads(old)["url"] == f"{origin}/a2a"
    card_rewrite, old_rewrite = proxy.of_kind("rewrite")
    assert [c["field"] for c in card_rewrite["changed"]] == [
        "url",
        "supportedInterfaces[0].url",
        "additionalInterfaces[0].url",
    ]
    assert card_rewrite["left_alone"] == [{"field": "supportedInterfaces[1].url", "url": "http://other.example:9/a2a"}]
    assert old_rewrite["changed"][0]["from"] == f"{upstream.url}/a2a"
    assert "left alone" in proxy.stderr


class BigCardUpstream:
    """Serves one agent card of ``size`` bytes that names the upstream (so it would be rewritten), with a
    Content-Length or chunked (then the proxy only learns its size by reading it)."""

    def __init__(self, size: int, *, chunked: bool) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        head = json.dumps({"name": "big", "url": f"{self.url}/a2a", "padding": ""}).encode()
        self.card = head[:-2] + b"x" * (size - len(head)) + head[-2:]
        self.chunked = chunked
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        with self.server:
            conn, _ = self.server.accept()
        with conn:
            got = b""
            while b"\r\n\r\n" not in got:
                got += conn.recv(65536)
            framing = b"Transfer-Encoding: chunked" if self.chunked else b"Content-Length: %d" % len(self.card)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + framing + b"\r\n\r\n")
            if not self.chunked:
                conn.sendall(self.card)
                return
            for at in range(0, len(self.card), 100_000):
                piece = self.card[at : at + 100_000]
                conn.sendall(b"%x\r\n%b\r\n" % (len(piece), piece))
            conn.sendall(b"0\r\n\r\n")


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_an_agent_card_over_1_mib_passes_unrewritten_byte_for_byte_with_an_error_saying_why(
    tmp_path: Path, chunked: bool
) -> None:
    upstream = BigCardUpstream((1 << 20) + 300_000, chunked=chunked)
    with running_proxy(f"{upstream.url}/a2a", tmp_path / "rec.jsonl") as proxy:
        status, body = get(f"{proxy.url.removesuffix('/a2a')}/.well-known/agent-card.json")
    assert status == 200 and body == upstream.card
    (error,) = proxy.of_kind("error")
    assert error["error"] == "card_too_large" and "passed on unrewritten" in error["message"]
    assert proxy.of_kind("rewrite") == []
    (card,) = proxy.messages("s2c")
    assert card["size"] == len(upstream.card) and card["msg"]["url"] == f"{upstream.url}/a2a"
    assert "over 1 MiB" in proxy.stderr


def test_a_legacy_sse_endpoint_on_the_upstream_is_pointed_at_the_proxy(upstream: Upstream, tmp_path: Path) -> None:
    with running_proxy(upstream.url, tmp_path / "rec.jsonl") as proxy:
        _, absolute = get(f"{proxy.url}/legacy/sse", {"Accept": "text/event-stream"})
        _, relative = get(f"{proxy.url}/legacy/sse-relative", {"Accept": "text/event-stream"})
    assert absolute.startswith(f"event: endpoint\ndata: {proxy.url}/legacy/messages?sessionId=s1\n\n".encode())
    assert relative.startswith(b"event: endpoint\ndata: /legacy/messages?sessionId=s2\n\n")
    assert b'"hello"' in absolute and b'"hello"' in relative
    (rewrite,) = proxy.of_kind("rewrite")
    assert rewrite["what"] == "sse_endpoint" and rewrite["changed"][0]["to"].startswith(proxy.url)


def test_a2a_rest_calls_are_messages_with_their_operation(upstream: Upstream, tmp_path: Path) -> None:
    with running_proxy(f"{upstream.url}/a2a", tmp_path / "rec.jsonl") as proxy:
        message = {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}
        status, _, body = post(f"{proxy.url}/message:send", message, {"A2A-Version": "1.0"})
        assert status == 200 and json.loads(body)["task"]["id"] == "task-1"
        assert get(f"{proxy.url}/tasks/task-1")[0] == 200
    send, send_reply, poll, poll_reply = proxy.messages()
    assert send["rest"] == {"operation": "SendMessage", "method": "POST", "path": "/a2a/message:send"}
    assert send["msg"] == message and send_reply["msg"]["task"]["id"] == "task-1"
    assert poll["rest"]["operation"] == "GetTask" and poll["rest"]["taskId"] == "task-1" and "msg" not in poll
    assert poll_reply["msg"]["status"]["state"] == "TASK_STATE_WORKING"


def test_large_bodies_stream_through_byte_for_byte(upstream: Upstream, tmp_path: Path) -> None:
    blob = bytes(range(256)) * (40 * 1024)
    with running_proxy(upstream.url, tmp_path / "rec.jsonl") as proxy:
        request = urllib.request.Request(f"{proxy.url}/echo-body", data=blob, method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.read() == blob
    assert [e["bytes_in"] for e in proxy.of_kind("http_end")] == [len(blob)]


def test_concurrent_exchanges_are_told_apart(upstream: Upstream, tmp_path: Path) -> None:
    with running_proxy(f"{upstream.url}/mcp", tmp_path / "rec.jsonl") as proxy:
        results: list[bytes] = []

        def call(n: int) -> None:
            results.append(post(proxy.url, {"jsonrpc": "2.0", "id": n, "method": f"m{n}"})[2])

        threads = [threading.Thread(target=call, args=(n,)) for n in range(40)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert len(results) == 40
    by_exchange: dict[int, list[Any]] = {}
    for event in proxy.messages():
        by_exchange.setdefault(event["ex"], []).append(event["msg"])
    assert len(by_exchange) == 40
    for request, response in by_exchange.values():
        assert request["id"] == response["id"] and response["result"]["method"] == request["method"]


def test_credentials_in_headers_are_redacted_in_the_recording_only(upstream: Upstream, tmp_path: Path) -> None:
    secret = {"Authorization": "Bearer abcdefghijklmnop", "Cookie": "sid=42", "X-Api-Key": "k-123"}
    with running_proxy(f"{upstream.url}/mcp", tmp_path / "rec.jsonl") as proxy:
        post(proxy.url, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, secret)
    for name, value in secret.items():
        assert upstream.seen[0]["headers"][name] == value
    recorded = proxy.of_kind("http_request")[0]["headers"]
    marks = [recorded["authorization"], recorded["cookie"], recorded["x-api-key"]]
    assert all(re.fullmatch(r"\[redacted:[0-9a-f]{4}\]", mark) for mark in marks) and len(set(marks)) == 3
    assert "abcdefghijklmnop" not in (tmp_path / "rec.jsonl").read_text()


def test_an_https_upstream_works_with_a_trusted_ca(tmp_path: Path) -> None:
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    server_context = __import__("ssl").create_default_context(__import__("ssl").Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_context)
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    with Upstream(ssl_context=server_context) as secure:
        with running_proxy(f"{secure.url}/mcp", tmp_path / "a.jsonl", "--upstream-cafile", str(ca_file)) as proxy:
            status, _, body = post(proxy.url, {"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert proxy.url.startswith("http://127.0.0.1:")
        assert status == 200 and json.loads(body)["result"] == {"method": "ping"}
        with running_proxy(f"{secure.url}/mcp", tmp_path / "b.jsonl") as untrusting:
            status, _, body = post(untrusting.url, {"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert status == 502 and b"certificate" in body.lower()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--upstream", "ftp://x"], "must be an http:// or https:// URL"),
        (["--upstream", "http://127.0.0.1:1", "--listen", "nope"], "--listen must be HOST:PORT"),
        (["--bogus"], "No such option"),
    ],
)
def test_bad_arguments_get_one_clear_line_and_exit_2(args: list[str], message: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "wiretap", "proxy", *args], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_a_gzipped_response_passes_compressed_and_is_recorded_readable(upstream: Upstream, tmp_path: Path) -> None:
    with running_proxy(f"{upstream.url}/mcp", tmp_path / "rec.jsonl") as proxy:
        request = urllib.request.Request(
            proxy.url,
            data=b'{"jsonrpc":"2.0","id":7,"method":"ping"}',
            method="POST",
            headers={"Content-Type": "application/json", "Accept-Encoding": "gzip", "X-Want-Gzip": "1"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.headers["Content-Encoding"] == "gzip"
            assert json.loads(gzip.decompress(response.read()))["id"] == 7
    assert proxy.messages("s2c")[0]["msg"] == {"jsonrpc": "2.0", "id": 7, "result": {"method": "ping"}}
