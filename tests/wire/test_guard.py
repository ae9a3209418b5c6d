"""The proxy protects its upstream: hostile Host and Origin, hanging peers, idle floods, odd targets."""

from __future__ import annotations

import http.client
import os
import pty
import resource
import select
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from support.proxyrun import ProxyRun, running_proxy
from support.socket_server import SocketServer

from wiretap.wire.http.guard import ConnectionWatch, Guard, Limits, check_request

GUARD = Guard("127.0.0.1", 8123)


class RawUpstream(SocketServer):
    """A socket server that keeps each request head it gets, byte for byte, and then does ``mode``:
    ``answer`` (200), ``hang`` (says nothing), ``half-head`` (part of a response head, then nothing)."""

    def __init__(self, mode: str = "answer") -> None:
        self.mode = mode
        self.heads: list[bytes] = []
        self._held: list[socket.socket] = []
        super().__init__()

    def handle(self, conn: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = conn.recv(65536)
            if not chunk:
                return
            head += chunk
        self.heads.append(head)
        if self.mode == "answer":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            conn.close()
        elif self.mode == "half-head":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: appl")
            self._held.append(conn)
        else:
            self._held.append(conn)

    def close(self) -> None:
        super().close()
        for conn in self._held:
            conn.close()


@pytest.fixture
def raw_upstream() -> Iterator[RawUpstream]:
    upstream = RawUpstream()
    yield upstream
    upstream.close()


def request(proxy_url: str, method: str, target: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    parts = urlsplit(proxy_url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=20)
    try:
        conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
        for name, value in {"Host": parts.netloc, **(headers or {})}.items():
            conn.putheader(name, value)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.mark.parametrize(
    "host",
    ["evil.example", "evil.example:8123", "127.0.0.1.evil.example:8123", "127.0.0.1:9999", "localhost", None, "[::1"],
)
def test_a_host_that_is_not_the_proxy_is_refused(host: str | None) -> None:
    refusal = check_request(GUARD, "POST", "/mcp", host, None)
    assert refusal is not None and refusal.status == 403


@pytest.mark.parametrize("host", ["127.0.0.1:8123", "localhost:8123", "LOCALHOST:8123", "[::1]:8123"])
def test_the_proxy_s_own_loopback_names_pass(host: str) -> None:
    assert check_request(GUARD, "POST", "/mcp", host, None) is None


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "https://127.0.0.1.evil.example", "file://"])
def test_an_origin_that_is_not_loopback_is_refused(origin: str) -> None:
    refusal = check_request(GUARD, "POST", "/mcp", "127.0.0.1:8123", origin)
    assert refusal is not None and refusal.status == 403 and "Origin" in refusal.why


def test_a_loopback_origin_on_another_port_passes() -> None:
    assert check_request(GUARD, "POST", "/mcp", "127.0.0.1:8123", "http://localhost:6274") is None


def test_allow_host_and_allow_origin_widen_the_check() -> None:
    guard = Guard("127.0.0.1", 8123, frozenset({"mcp.internal"}), frozenset({"https://app.example"}))
    assert check_request(guard, "POST", "/mcp", "mcp.internal:8123", "https://app.example") is None
    assert check_request(guard, "POST", "/mcp", "other.internal:8123", None) is not None


def test_connect_and_absolute_targets_are_not_forwarded() -> None:
    connect = check_request(GUARD, "CONNECT", "example.com:443", "example.com:443", None)
    absolute = check_request(GUARD, "GET", "http://example.com/", "127.0.0.1:8123", None)
    assert connect is not None and connect.status == 405
    assert absolute is not None and absolute.status == 400


def test_connections_without_a_request_head_expire_and_the_idle_ones_are_capped_at_once() -> None:
    watch = ConnectionWatch(Limits(client_head=10, max_idle=2))
    assert watch.opened("a", now=0) == [] and watch.opened("b", now=0) == []
    watch.request_started("a")
    assert watch.opened("c", now=1) == []  # a is busy: b and c wait
    assert watch.opened("d", now=1) == ["b"]  # the longest waiting goes at once, not at the next sweep
    assert watch.request_done("a", now=2) == ["c"]
    assert watch.expired(now=3) == []
    assert watch.expired(now=11) == ["d"]
    assert watch.expired(now=12.5) == ["a"]


def test_a_rebinding_request_is_refused_before_the_upstream_sees_it(raw_upstream: RawUpstream, tmp_path: Path) -> None:
    with running_proxy(f"{raw_upstream.url}/mcp", tmp_path / "rec.jsonl") as proxy:
        assert request(proxy.url, "POST", "/mcp", {"Host": "evil.example"})[0] == 403
        assert request(proxy.url, "POST", "/mcp", {"Origin": "http://evil.example"})[0] == 403
        assert request(proxy.url, "POST", "/mcp") == (200, b"ok")
    assert len(raw_upstream.heads) == 1
    refused = [e for e in proxy.events if e["kind"] == "error" and e["error"] == "refused"]
    assert len(refused) == 2
    assert [e["status"] for e in proxy.of_kind("http_response")] == [403, 403, 200]


def test_allow_host_lets_a_named_host_through(raw_upstream: RawUpstream, tmp_path: Path) -> None:
    with running_proxy(raw_upstream.url, tmp_path / "rec.jsonl", "--allow-host", "mcp.test") as proxy:
        port = urlsplit(proxy.url).port
        assert request(proxy.url, "GET", "/x", {"Host": f"mcp.test:{port}"}) == (200, b"ok")


def test_the_request_target_reaches_the_upstream_byte_for_byte(raw_upstream: RawUpstream, tmp_path: Path) -> None:
    targets = ["/mcp/../../../etc/passwd", "/mcp/%2e%2e/x//y?a=%2F..&b=%41", "/./mcp"]
    with running_proxy(raw_upstream.url, tmp_path / "rec.jsonl") as proxy:
        for target in targets:
            assert request(proxy.url, "GET", target)[0] == 200
    assert [head.split(b" ")[1].decode() for head in raw_upstream.heads] == targets


def test_connect_gets_405_and_reaches_nothing(raw_upstream: RawUpstream, tmp_path: Path) -> None:
    with running_proxy(raw_upstream.url, tmp_path / "rec.jsonl") as proxy:
        parts = urlsplit(proxy.url)
        with socket.create_connection((parts.hostname, parts.port), timeout=20) as sock:
            sock.sendall(b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
            assert sock.recv(4096).startswith(b"HTTP/1.1 405")
    assert raw_upstream.heads == []


@pytest.mark.parametrize("mode", ["hang", "half-head"])
def test_an_upstream_that_hangs_gets_the_client_a_504_that_says_so(mode: str, tmp_path: Path) -> None:
    upstream = RawUpstream(mode)
    try:
        with running_proxy(upstream.url, tmp_path / "rec.jsonl", "--upstream-timeout", "0.5") as proxy:
            status, body = request(proxy.url, "POST", "/mcp")
    finally:
        upstream.close()
    assert status == 504 and b"sent no response head within 0.5 s" in body
    assert [e["error"] for e in proxy.of_kind("error")] == ["upstream_timeout"]


def _closed(sock: socket.socket) -> bool:
    readable, _, _ = select.select([sock], [], [], 0)
    return bool(readable) and sock.recv(1) == b""


def _wait_closed(socks: list[socket.socket], count: int) -> list[socket.socket]:
    """Wait (up to 20 s) until ``count`` of ``socks`` are closed by the other end; return those."""
    closed: list[socket.socket] = []
    while len(closed) < count:
        readable, _, _ = select.select([s for s in socks if s not in closed], [], [], 20)
        if not readable:
            break
        closed += [s for s in readable if _ended(s)]
    return closed


def _ended(sock: socket.socket) -> bool:
    """Closed by the other end: a FIN, or a reset (a close with bytes it had not read)."""
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def _connect(proxy: ProxyRun) -> socket.socket:
    parts = urlsplit(proxy.url)
    return socket.create_connection((parts.hostname, parts.port), timeout=20)


def test_a_half_sent_request_head_is_closed_after_the_client_timeout(raw_upstream: RawUpstream, tmp_path: Path) -> None:
    with running_proxy(raw_upstream.url, tmp_path / "rec.jsonl", "--client-timeout", "0.5") as proxy:
        sock = _connect(proxy)
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-")
        assert _wait_closed([sock], 1) == [sock]
        sock.close()
    assert raw_upstream.heads == []


def test_idle_connections_beyond_the_cap_are_closed_and_the_rest_still_work(
    raw_upstream: RawUpstream, tmp_path: Path
) -> None:
    with running_proxy(raw_upstream.url, tmp_path / "rec.jsonl", "--max-idle", "5") as proxy:
        socks = [_connect(proxy) for _ in range(40)]
        try:
            closed = _wait_closed(socks, 35)
            assert len(closed) == 35
            kept = [s for s in socks if s not in closed]
            host = urlsplit(proxy.url).netloc.encode()
            for sock in kept:
                sock.sendall(b"GET /x HTTP/1.1\r\nHost: " + host + b"\r\n\r\n")
                assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        finally:
            for sock in socks:
                sock.close()


def _peak_rss(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1]) * 1024


@pytest.fixture
def many_descriptors() -> Iterator[int]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4096 if hard == resource.RLIM_INFINITY else min(4096, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    try:
        yield max(soft, wanted)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the proxy's peak memory in /proc (Linux)")
def test_a_flood_of_half_sent_heads_holds_no_more_than_max_idle_of_them(
    raw_upstream: RawUpstream, tmp_path: Path, many_descriptors: int
) -> None:
    """Each connection sends 60,000 bytes of a head (under the 64 KiB cap) and waits. The idle cap was kept
    by the once-a-second sweep alone, and a closed connection's half head waited for the cycle collector:
    800 connections grew the proxy by 47 MiB at the default cap (100), 3,200 by 92 MiB."""
    count, cap = min(800, many_descriptors // 2 - 50), 100
    half_head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * 60_000
    with running_proxy(raw_upstream.url, tmp_path / "rec.jsonl") as proxy:
        before = _peak_rss(proxy.proc.pid)
        socks: list[socket.socket] = []
        try:
            for _ in range(count):
                socks.append(_connect(proxy))
                socks[-1].sendall(half_head)
            closed = _wait_closed(socks, count - cap)
            grown = _peak_rss(proxy.proc.pid) - before
        finally:
            for sock in socks:
                sock.close()
    assert len(closed) == count - cap
    assert grown < 16 << 20, f"{count} connections' half heads grew the proxy by {grown >> 20} MiB"
    assert raw_upstream.heads == []


def test_listening_beyond_loopback_takes_expose_and_warns(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "wiretap", "proxy", "-u", "http://127.0.0.1:9/", "-o", str(tmp_path / "r.jsonl")]
    refused = subprocess.run([*command, "--listen", "0.0.0.0:0"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "--expose" in refused.stderr
    assert not (tmp_path / "r.jsonl").exists()
    proc = subprocess.Popen(
        [*command, "--listen", "0.0.0.0:0", "--expose"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    url = proc.stdout.readline()
    proc.terminate()
    _, stderr = proc.communicate(timeout=20)
    assert url.startswith("http://0.0.0.0:") and "warning: listening on 0.0.0.0" in stderr


def test_the_upstream_url_s_credentials_stay_out_of_the_recording_and_the_printed_url(
    raw_upstream: RawUpstream, tmp_path: Path
) -> None:
    secret_url = raw_upstream.url.replace("http://", "http://alice:s3cret-pass-123@") + "/mcp?api_key=k3y-abc-999"
    with running_proxy(secret_url, tmp_path / "rec.jsonl") as proxy:
        assert request(proxy.url, "GET", "/mcp?x=1")[0] == 200
    written = (tmp_path / "rec.jsonl").read_text() + proxy.stderr
    assert "s3cret-pass-123" not in written and "k3y-abc-999" not in written
    assert proxy.url.endswith("/mcp") and "k3y-abc-999" not in proxy.url  # the proxy adds the query itself
    assert raw_upstream.heads[0].startswith(b"GET /mcp?api_key=k3y-abc-999&x=1 ")


def test_a_terminal_is_shown_the_proxy_url_without_the_upstream_s_secrets(
    raw_upstream: RawUpstream, tmp_path: Path
) -> None:
    controller, terminal = pty.openpty()
    command = [sys.executable, "-m", "wiretap", "proxy", "-o", str(tmp_path / "r.jsonl")]
    proc = subprocess.Popen(
        [*command, "-u", f"{raw_upstream.url}/mcp?api_key=k3y-abc-999"], stdout=terminal, stderr=subprocess.PIPE
    )
    os.close(terminal)
    shown = b""
    while b"\n" not in shown:
        readable, _, _ = select.select([controller], [], [], 20)
        assert readable, "the proxy printed no URL"
        shown += os.read(controller, 4096)
    proc.terminate()
    proc.communicate(timeout=20)
    os.close(controller)
    assert shown.endswith(b"/mcp\r\n") and b"k3y-abc-999" not in shown
