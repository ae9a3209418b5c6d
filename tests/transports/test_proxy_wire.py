"""``wiretap proxy`` attacked byte by byte over real sockets: what the upstream received, byte for byte,
and what the recording holds, for malformed, ambiguous, pipelined, trickled and broken requests."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httptools
import pytest
from support.proxyrun import ProxyRun, running_proxy
from support.socket_server import SocketServer

REPLY = b'{"jsonrpc":"2.0","id":1,"result":{}}'


class CapturingUpstream(SocketServer):
    """Keeps every byte each connection sends (``received``), and answers each request it reads (found with
    llhttp, as a strict server would) with ``REPLY``; ``bodies`` holds each request's payload."""

    def __init__(self) -> None:
        self.received: list[bytearray] = []
        self.bodies: list[bytes] = []
        self.targets: list[bytes] = []
        self.closed = threading.Semaphore(0)
        """Released once per connection that ended."""
        self.lock = threading.Lock()
        super().__init__()

    def handle(self, conn: socket.socket) -> None:
        got = bytearray()
        with self.lock:
            self.received.append(got)
        upstream = self
        body: list[bytes] = []
        done: list[bool] = []

        class Reader:
            def on_url(self, url: bytes) -> None:
                upstream.targets.append(url)

            def on_body(self, data: bytes) -> None:
                body.append(data)

            def on_message_complete(self) -> None:
                done.append(True)

        parser = httptools.HttpRequestParser(Reader())
        try:
            with conn:
                while True:
                    try:
                        data = conn.recv(65536)
                    except OSError:
                        return
                    if not data:
                        return
                    got += data
                    try:
                        parser.feed_data(data)
                    except httptools.HttpParserError:
                        return
                    while done:
                        done.pop()
                        with self.lock:
                            self.bodies.append(b"".join(body))
                        body.clear()
                        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                        conn.sendall(head % len(REPLY) + REPLY)
        finally:
            self.closed.release()

    def all_received(self) -> bytes:
        with self.lock:
            return b"".join(bytes(r) for r in self.received)


@pytest.fixture
def upstream() -> Iterator[CapturingUpstream]:
    up = CapturingUpstream()
    yield up
    up.close()


def connect(proxy: ProxyRun) -> socket.socket:
    parts = urlsplit(proxy.url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=20)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def host(proxy: ProxyRun) -> bytes:
    return urlsplit(proxy.url).netloc.encode()


def read_until_closed(sock: socket.socket) -> bytes:
    got = b""
    while True:
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            return got
        if not data:
            return got
        got += data


def read_responses(sock: socket.socket, count: int) -> list[tuple[int, bytes]]:
    """``count`` responses (status, body), read with llhttp."""
    out: list[tuple[int, bytes]] = []
    body: list[bytes] = []

    class Reader:
        def on_body(self, data: bytes) -> None:
            body.append(data)

        def on_message_complete(self) -> None:
            out.append((parser.get_status_code(), b"".join(body)))
            body.clear()

    parser = httptools.HttpResponseParser(Reader())
    while len(out) < count:
        data = sock.recv(65536)
        assert data, f"the proxy closed after {len(out)} of {count} responses"
        parser.feed_data(data)
    return out


def post(target: bytes, hostname: bytes, body: bytes) -> bytes:
    return b"POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
        target,
        hostname,
        len(body),
        body,
    )


def upstream_post(target: bytes, upstream: CapturingUpstream, body: bytes) -> bytes:
    """What the upstream should receive for ``post(target, ...)``: the same bytes but Host."""
    return post(target, urlsplit(upstream.url).netloc.encode(), body)


def message(n: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"n": n}}).encode()


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET /a b HTTP/1.1\r\nHost: HOST\r\n\r\n",
        b"GET / HTTP/1.1\nHost: HOST\n\n",
        b"GET / HTTP/7.0\r\nHost: HOST\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",  # a TLS ClientHello
        b"POST / HTTP/1.1\r\nHost: HOST\r\nContent-Length: 3\r\n folded\r\n\r\nabc",
    ],
)
def test_a_malformed_request_gets_a_400_and_reaches_nothing(
    upstream: CapturingUpstream, tmp_path: Path, request_bytes: bytes
) -> None:
    with running_proxy(upstream.url, tmp_path / "rec.jsonl") as proxy, connect(proxy) as sock:
        sock.sendall(request_bytes.replace(b"HOST", host(proxy)))
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n") and b"Connection: close\r\n" in answer
    assert upstream.all_received() == b""
    [error] = proxy.of_kind("error")
    assert error["error"] == "bad_request" and error["conn"] == 1
    assert proxy.of_kind("http_request") == []
    assert [e["state"] for e in proxy.of_kind("connection")] == ["open", "closed"]


@pytest.mark.parametrize(
    "framing",
    [
        b"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n",
        b"Transfer-Encoding: chunked\r\nContent-Length: 4\r\n",
        b"Content-Length: 4\r\nContent-Length: 40\r\n",
        b"Transfer-Encoding: gzip, chunked, identity\r\n",
        b"Transfer-Encoding: identity\r\n",
        b"Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n",
        b"Content-Length: -1\r\n",
        b"Content-Length: 0x4\r\n",
    ],
)
def test_ambiguous_framing_is_refused_with_a_400_and_never_forwarded(
    upstream: CapturingUpstream, tmp_path: Path, framing: bytes
) -> None:
    smuggled = b"GET /admin HTTP/1.1\r\nHost: HOST\r\n\r\n"
    body = b"4\r\nabcd\r\n0\r\n\r\n" + smuggled
    with running_proxy(upstream.url, tmp_path / "rec.jsonl") as proxy, connect(proxy) as sock:
        head = b"POST /mcp HTTP/1.1\r\nHost: " + host(proxy) + b"\r\n" + framing + b"\r\n"
        sock.sendall(head + body.replace(b"HOST", host(proxy)))
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert answer.count(b"HTTP/1.1") == 1, "more than one answer: something behind the body was read as a request"
    assert upstream.all_received() == b""
    assert [e["error"] for e in proxy.of_kind("error")] == ["bad_request"]
    assert proxy.of_kind("http_request") == []


def test_a_head_over_64_kib_gets_a_431_and_reaches_nothing(upstream: CapturingUpstream, tmp_path: Path) -> None:
    with running_proxy(upstream.url, tmp_path / "rec.jsonl") as proxy, connect(proxy) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: " + host(proxy) + b"\r\n")
        try:
            for _ in range(40):
                sock.sendall(b"X-Filler: " + b"f" * 4000 + b"\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed on us before we were done: what we want
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n")
    assert upstream.all_received() == b""


def test_pipelined_requests_are_answered_in_order_and_reach_the_upstream_byte_for_byte(
    upstream: CapturingUpstream, tmp_path: Path
) -> None:
    count = 30
    with running_proxy(f"{upstream.url}/mcp", tmp_path / "rec.jsonl") as proxy, connect(proxy) as sock:
        sock.sendall(b"".join(post(b"/mcp/%d" % n, host(proxy), message(n)) for n in range(count)))
        answers = read_responses(sock, count)
    assert answers == [(200, REPLY)] * count
    expected = b"".join(upstream_post(b"/mcp/%d" % n, upstream, message(n)) for n in range(count))
    assert upstream.all_received() == expected
    requests = [e["msg"]["id"] for e in proxy.messages("c2s")]
    assert requests == list(range(count))
    assert [e["path"] for e in proxy.of_kind("http_request")] == [f"/mcp/{n}" for n in range(count)]
    assert [e["outcome"] for e in proxy.of_kind("http_end")] == ["complete"] * count
    assert {e["conn"] for e in proxy.of_kind("http_request")} == {1}


def test_a_request_sent_byte_by_byte_reaches_the_upstream_byte_for_byte(
    upstream: CapturingUpstream, tmp_path: Path
) -> None:
    with running_proxy(upstream.url, tmp_path / "rec.jsonl") as proxy:
        data = post(b"/mcp", host(proxy), message(7))
        with connect(proxy) as sock:
            for n in range(len(data)):
                sock.sendall(data[n : n + 1])
            assert read_responses(sock, 1) == [(200, REPLY)]
    assert upstream.all_received() == upstream_post(b"/mcp", upstream, message(7))
    assert [e["msg"]["id"] for e in proxy.messages("c2s")] == [7]
    assert proxy.of_kind("http_end")[0]["bytes_in"] == len(message(7))


def chunked_request(hostname: bytes, payload: bytes, sizes: list[int]) -> bytes:
    chunks, at = [], 0
    for size in sizes:
        chunks.append(b"%x;name=value\r\n%s\r\n" % (size, payload[at : at + size]))
        at += size
    assert at == len(payload)
    head = b"POST /mcp HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\n\r\n" % hostname
    return head + b"".join(chunks) + b"0\r\nX-Trailer: t\r\n\r\n"


def test_a_chunked_body_split_at_every_byte_boundary_reaches_the_upstream_whole(
    upstream: CapturingUpstream, tmp_path: Path
) -> None:
    payload = message(3)
    with running_proxy(upstream.url, tmp_path / "rec.jsonl") as proxy:
        data = chunked_request(host(proxy), payload, [5, 1, len(payload) - 6])
        with connect(proxy) as sock:
            for cut in range(1, len(data)):
                sock.sendall(data[:cut])
                time.sleep(0.001)  # (not a timing assert: only to make separate reads likely)
                sock.sendall(data[cut:])
                assert read_responses(sock, 1) == [(200, REPLY)]
    runs = len(data) - 1
    assert upstream.bodies == [payload] * runs
    # One upstream connection, kept alive, and each request on it a well-formed chunked one: llhttp on the
    # upstream side found exactly ``runs`` messages, and nothing but requests for /mcp.
    assert upstream.targets == [b"/mcp"] * runs
    assert [e["msg"] for e in proxy.messages("c2s")] == [json.loads(payload)] * runs
    assert [e["bytes_in"] for e in proxy.of_kind("http_end")] == [len(payload)] * runs
    assert all(b"X-Trailer" not in r and b"name=value" not in r for r in upstream.received)


def test_a_slowloris_head_is_closed_after_the_client_timeout_and_reaches_nothing(
    upstream: CapturingUpstream, tmp_path: Path
) -> None:
    with running_proxy(upstream.url, tmp_path / "rec.jsonl", "--client-timeout", "0.5") as proxy:
        data = b"POST /mcp HTTP/1.1\r\nHost: " + host(proxy) + b"\r\n" + b"X-Slow: " + b"s" * 2000 + b"\r\n\r\n"
        closed = False
        with connect(proxy) as sock:
            for n in range(len(data)):
                try:
                    sock.sendall(data[n : n + 1])
                except (BrokenPipeError, ConnectionResetError):
                    closed = True
                    break
                time.sleep(0.01)
            if not closed:
                closed = read_until_closed(sock) == b""
    assert closed and n < len(data) - 1, "the whole trickled head was read"
    assert upstream.all_received() == b""
    assert proxy.of_kind("http_request") == []


def test_a_client_leaving_mid_body_is_recorded_with_what_it_sent(upstream: CapturingUpstream, tmp_path: Path) -> None:
    sent = b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"text":"' + b"x" * 1000
    with running_proxy(upstream.url, tmp_path / "rec.jsonl") as proxy:
        with connect(proxy) as sock:
            head = b"POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Length: 5000\r\n\r\n" % host(proxy)
            sock.sendall(head + sent)
            while not upstream.all_received().endswith(sent):
                time.sleep(0.01)  # (waiting for the upstream to have it all, not a timing assert)
        assert upstream.closed.acquire(timeout=20), "the upstream's connection stayed open"
    assert len(upstream.received) == 1 and upstream.bodies == []
    (end,) = proxy.of_kind("http_end")
    assert end["outcome"] == "client_disconnected" and end["bytes_in"] == len(sent)
    assert [e["state"] for e in proxy.of_kind("connection")] == ["open", "closed"]
    [part] = [e for e in proxy.events if e["kind"] == "message" and e["dir"] == "c2s"]
    assert part["size"] == len(sent) and part["raw"] == sent.decode()  # kept raw: it is not JSON


def test_a_request_body_that_stops_arriving_gets_a_408_and_is_closed_after_the_client_timeout(
    upstream: CapturingUpstream, tmp_path: Path
) -> None:
    sent = b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"text":"' + b"x" * 1000
    with running_proxy(upstream.url, tmp_path / "rec.jsonl", "--client-timeout", "0.5") as proxy:
        with connect(proxy) as sock:
            head = b"POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Length: 5000\r\n\r\n" % host(proxy)
            sock.sendall(head + sent)
            reply = read_until_closed(sock)  # (the proxy closes it; the socket's own timeout is a safety net)
        assert upstream.closed.acquire(timeout=20), "the upstream's connection stayed open"
    assert reply.startswith(b"HTTP/1.1 408 Request Timeout\r\n") and b"Connection: close\r\n" in reply
    assert upstream.all_received().endswith(sent) and upstream.bodies == []
    (error,) = proxy.of_kind("error")
    assert error["error"] == "client_timeout" and "no byte for 0.5 s" in error["message"]
    (response,) = proxy.of_kind("http_response")
    assert response["status"] == 408 and response["generated"] is True
    (end,) = proxy.of_kind("http_end")
    assert end["outcome"] == "client_timeout" and end["bytes_in"] == len(sent)
    [part] = proxy.messages("c2s")
    assert part["size"] == len(sent) and part["raw"] == sent.decode()


def test_expect_100_continue_gets_the_upstream_s_100_before_the_body(tmp_path: Path) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    got: list[bytes] = []

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                head += conn.recv(65536)
            got.append(head)
            conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            body = b""
            while len(body) < 5:
                body += conn.recv(65536)
            got.append(body)
            conn.sendall(b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok")
            conn.recv(1)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    upstream_url = f"http://127.0.0.1:{server.getsockname()[1]}"
    with running_proxy(upstream_url, tmp_path / "rec.jsonl") as proxy, connect(proxy) as sock:
        sock.sendall(b"PUT /x HTTP/1.1\r\nHost: %s\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n" % host(proxy))
        first = b""
        while b"\r\n\r\n" not in first:
            first += sock.recv(65536)
        assert first == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(b"hello")
        assert read_responses(sock, 1) == [(201, b"ok")]
    server.close()
    assert got[0].startswith(b"PUT /x HTTP/1.1\r\n") and b"Expect: 100-continue\r\n" in got[0] and got[1] == b"hello"
    assert [e["status"] for e in proxy.of_kind("http_response")] == [201]


def test_head_responses_and_responses_until_close_are_passed_on_framed(tmp_path: Path) -> None:
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        for answer in (
            b"HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close",
        ):
            conn, _ = server.accept()
            with conn:
                head = b""
                while b"\r\n\r\n" not in head:
                    head += conn.recv(65536)
                conn.sendall(answer)

    threading.Thread(target=serve, daemon=True).start()
    upstream_url = f"http://127.0.0.1:{server.getsockname()[1]}"
    with running_proxy(upstream_url, tmp_path / "rec.jsonl") as proxy, connect(proxy) as sock:
        sock.sendall(b"HEAD /h HTTP/1.1\r\nHost: %s\r\n\r\n" % host(proxy))
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(65536)
        assert head == b"HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n"
        sock.sendall(b"GET /u HTTP/1.1\r\nHost: %s\r\n\r\n" % host(proxy))
        assert read_responses(sock, 1) == [(200, b"until close")]
    server.close()
    assert [e["outcome"] for e in proxy.of_kind("http_end")] == ["complete", "complete"]
    assert [e["bytes_out"] for e in proxy.of_kind("http_end")] == [0, len(b"until close")]


def test_a_request_on_a_kept_alive_connection_the_upstream_just_closed_is_sent_again_once(tmp_path: Path) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    heads: list[list[bytes]] = []

    def read_head(conn: socket.socket) -> bytes:
        head = b""
        while b"\r\n\r\n" not in head:
            data = conn.recv(65536)
            if not data:
                return head
            head += data
        return head

    def serve() -> None:
        first, _ = server.accept()  # answers one request, then reads the next and closes without a word
        heads.append([read_head(first)])
        first.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none")
        heads[0].append(read_head(first))
        first.close()
        second, _ = server.accept()
        with second:
            heads.append([read_head(second)])
            second.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\ntwo")
            second.recv(1)

    threading.Thread(target=serve, daemon=True).start()
    upstream_url = f"http://127.0.0.1:{server.getsockname()[1]}"
    with running_proxy(upstream_url, tmp_path / "rec.jsonl") as proxy, connect(proxy) as sock:
        sock.sendall(b"GET /1 HTTP/1.1\r\nHost: %s\r\n\r\n" % host(proxy))
        assert read_responses(sock, 1) == [(200, b"one")]
        sock.sendall(b"GET /2 HTTP/1.1\r\nHost: %s\r\n\r\n" % host(proxy))
        assert read_responses(sock, 1) == [(200, b"two")]
    server.close()
    assert [[head.split(b" ")[1] for head in on_one] for on_one in heads] == [[b"/1", b"/2"], [b"/2"]]
    assert heads[0][1] == heads[1][0]
    assert [e["path"] for e in proxy.of_kind("http_request")] == ["/1", "/2"]
    assert [e["outcome"] for e in proxy.of_kind("http_end")] == ["complete", "complete"]
    assert proxy.of_kind("error") == []


def test_a_client_that_half_closes_after_its_request_still_gets_the_response(
    upstream: CapturingUpstream, tmp_path: Path
) -> None:
    with running_proxy(upstream.url, tmp_path / "rec.jsonl") as proxy, connect(proxy) as sock:
        sock.sendall(post(b"/mcp", host(proxy), message(4)))
        sock.shutdown(socket.SHUT_WR)
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and answer.endswith(REPLY)
    assert upstream.bodies == [message(4)]
    assert [e["outcome"] for e in proxy.of_kind("http_end")] == ["complete"]


def test_an_http_1_0_client_gets_an_http_1_0_answer_and_its_connection_closed(
    upstream: CapturingUpstream, tmp_path: Path
) -> None:
    with running_proxy(upstream.url, tmp_path / "rec.jsonl") as proxy, connect(proxy) as sock:
        body = message(5)
        sock.sendall(b"POST /mcp HTTP/1.0\r\nHost: %s\r\nContent-Length: %d\r\n\r\n%s" % (host(proxy), len(body), body))
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.0 200 OK\r\n") and b"Connection: close\r\n" in answer
    assert answer.endswith(REPLY)
    assert upstream.received[0].startswith(b"POST /mcp HTTP/1.1\r\n")  # the upstream is spoken to in 1.1
    assert proxy.of_kind("http_request")[0]["version"] == "1.0"
