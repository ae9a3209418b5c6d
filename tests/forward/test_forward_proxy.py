"""``wiretap proxy --forward``: the client keeps the real URLs; CONNECT is intercepted with the run's CA or
tunnelled blind; plain HTTP is forwarded; every intercepted request is recorded, bytes unchanged."""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import signal
import socket
import ssl
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
import trustme
from aiohttp import web
from support.forwardrun import ForwardRun, running_forward

from wiretap.forward.proxy import Origin, absolute_origin, split_authority

TOKEN_FORM = (
    "grant_type=authorization_code&code=Zq8vN3kXb2LmP7rT4wY6&code_verifier=dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    "&redirect_uri=http%3A%2F%2Flocalhost%3A8090%2Fcallback&client_id=c1&resource=https%3A%2F%2Flocalhost%2Fmcp"
)
SECRETS = (
    "Zq8vN3kXb2LmP7rT4wY6",
    "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    "at-9f8e7d6c5b4a3f2e1d0c",
    "rt-1a2b3c4d5e6f7a8b9c0d",
)


class Upstream:
    """An aiohttp app on 127.0.0.1 over TLS (a test CA) and over plain HTTP: it echoes what it got."""

    def __init__(self, folder: Path) -> None:
        self.ca = trustme.CA()
        self.ca_file = folder / "upstream-ca.pem"
        self.ca.cert_pem.write_to_path(str(self.ca_file))
        self.tls_port = self.plain_port = 0
        self.seen: list[tuple[str, str, bytes, str | None]] = []
        self.headers: list[dict[str, str]] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self._ready.wait(10)

    async def _echo(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.seen.append((request.method, request.path_qs, body, request.headers.get("Host")))
        self.headers.append({k.lower(): v for k, v in request.headers.items()})
        if request.path.startswith("/.well-known/oauth-protected-resource"):
            issuer = f"https://127.0.0.1:{self.tls_port}"
            return web.json_response(
                {"resource": f"https://localhost:{self.tls_port}/mcp", "authorization_servers": [issuer]}
            )
        if request.path == "/sse":
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            for n in range(3):
                await response.write(
                    f'data: {{"jsonrpc":"2.0","method":"notifications/progress","params":{{"n":{n}}}}}\n\n'.encode()
                )
            await response.write_eof()
            return response
        if request.path == "/token":
            return web.json_response(
                {"access_token": "at-9f8e7d6c5b4a3f2e1d0c", "refresh_token": "rt-1a2b3c4d5e6f7a8b9c0d"}
            )
        return web.Response(body=b"echo:" + body, content_type="application/octet-stream")

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._echo)
        runner = web.AppRunner(app)
        self._loop.run_until_complete(runner.setup())
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
        tls = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
        plain = web.TCPSite(runner, "127.0.0.1", 0)
        self._loop.run_until_complete(tls.start())
        self._loop.run_until_complete(plain.start())
        self.tls_port = tls._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.plain_port = plain._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        self._loop.run_forever()


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upstream]:
    yield Upstream(tmp_path_factory.mktemp("upstream"))


def _client_context(run: ForwardRun, upstream: Upstream) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=run.env["SSL_CERT_FILE"])
    return context


async def _fetch(run: ForwardRun, url: str, body: bytes, context: ssl.SSLContext | None = None) -> tuple[int, bytes]:
    async with aiohttp.ClientSession() as session:
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        async with session.post(url, data=body, proxy=run.url, ssl=context or True, headers=headers) as response:
            return response.status, await response.read()


def _bodies(events: list[dict], direction: str) -> bytes:
    parts = [e for e in events if e["kind"] == "message" and e.get("dir") == direction]
    return b"".join((p.get("raw") or "").encode() if "raw" in p else b"" for p in parts)


def test_an_https_request_through_connect_reaches_the_real_url_and_is_recorded(
    tmp_path: Path, upstream: Upstream
) -> None:
    body = os.urandom(8).hex().encode() * 100
    with running_forward(tmp_path / "rec", "--upstream-cafile", str(upstream.ca_file)) as run:
        url = f"https://127.0.0.1:{upstream.tls_port}/mcp?x=1"
        status, got = asyncio.run(_fetch(run, url, body, _client_context(run, upstream)))
    assert (status, got) == (200, b"echo:" + body)
    assert upstream.seen[-1] == ("POST", "/mcp?x=1", body, f"127.0.0.1:{upstream.tls_port}")
    events = run.events(f"https://127.0.0.1:{upstream.tls_port}")
    requests = [e for e in events if e["kind"] == "http_request"]
    assert [(r["method"], r["path"], r["query"]) for r in requests] == [("POST", "/mcp", "x=1")]
    assert "proxy-authorization" not in {k.lower() for k in requests[0]["headers"]} or all(
        "redacted" in str(v) for k, v in requests[0]["headers"].items() if k.lower() == "proxy-authorization"
    )
    ends = [e for e in events if e["kind"] == "http_end"]
    assert [(e["bytes_in"], e["bytes_out"], e["outcome"]) for e in ends] == [(len(body), len(body) + 5, "complete")]


def test_plain_http_requests_to_two_origins_on_one_connection_each_reach_their_origin(
    tmp_path: Path, upstream: Upstream
) -> None:
    with running_forward(tmp_path / "rec") as run:
        host, port = run.url.rsplit("@", 1)[1].rsplit(":", 1)
        credential = base64.b64encode(run.url.split("//", 1)[1].split("@", 1)[0].encode()).decode()
        with socket.create_connection((host, int(port))) as sock:
            answers = []
            for name in ("127.0.0.1", "localhost"):
                body = f"to {name}".encode()
                sock.sendall(
                    f"POST http://{name}:{upstream.plain_port}/p HTTP/1.1\r\nHost: {name}:{upstream.plain_port}\r\n"
                    f"Proxy-Authorization: Basic {credential}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                answers.append(_read_response(sock))
    assert [a.endswith(b"echo:to " + n.encode()) for a, n in zip(answers, ("127.0.0.1", "localhost"), strict=True)] == [
        True,
        True,
    ]
    assert [s[3] for s in upstream.seen[-2:]] == [
        f"127.0.0.1:{upstream.plain_port}",
        f"localhost:{upstream.plain_port}",
    ]
    assert [s[1] for s in upstream.seen[-2:]] == ["/p", "/p"]
    for name in ("127.0.0.1", "localhost"):
        events = run.events(f"http://{name}:{upstream.plain_port}")
        assert [e["path"] for e in events if e["kind"] == "http_request"] == ["/p"]
        assert [e["bytes_in"] for e in events if e["kind"] == "http_end"] == [len(f"to {name}")]


def _read_response(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
    )
    while len(rest) < length:
        rest += sock.recv(65536)
    return head + b"\r\n\r\n" + rest


@pytest.mark.parametrize("credential", [None, "wiretap:wrong"])
def test_the_proxy_refuses_a_request_without_its_credential_and_records_nothing(
    tmp_path: Path, upstream: Upstream, credential: str | None
) -> None:
    with running_forward(tmp_path / "rec") as run:
        host, port = run.url.rsplit("@", 1)[1].rsplit(":", 1)
        for request in (
            f"CONNECT 127.0.0.1:{upstream.tls_port} HTTP/1.1\r\nHost: 127.0.0.1:{upstream.tls_port}\r\n",
            f"GET http://127.0.0.1:{upstream.plain_port}/ HTTP/1.1\r\nHost: 127.0.0.1:{upstream.plain_port}\r\n",
        ):
            auth = (
                f"Proxy-Authorization: Basic {base64.b64encode(credential.encode()).decode()}\r\n" if credential else ""
            )
            with socket.create_connection((host, int(port))) as sock:
                sock.sendall((request + auth + "\r\n").encode())
                answer = sock.recv(65536)
            assert answer.startswith(b"HTTP/1.1 407 ")
            assert b'Proxy-Authenticate: Basic realm="wiretap"' in answer
    assert run.recordings == {}


def test_the_run_ca_key_is_0600_in_a_0700_folder_inside_the_run_folder_and_gone_after_the_run(
    tmp_path: Path,
) -> None:
    with running_forward(tmp_path / "rec") as run:
        folder = Path(run.env["NODE_EXTRA_CA_CERTS"]).parent
        assert folder.parent == tmp_path / "rec" and folder.name.startswith("wiretap-ca-")
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert stat.S_IMODE((folder / "ca-key.pem").stat().st_mode) == 0o600
        assert sorted(p.name for p in folder.iterdir()) == [
            "ca-bundle.pem",
            "ca-key.pem",
            "ca.pem",
            "node-extra-ca.pem",
        ]
        assert b"PRIVATE KEY" not in Path(run.env["SSL_CERT_FILE"]).read_bytes()
        assert b"PRIVATE KEY" not in Path(run.env["NODE_EXTRA_CA_CERTS"]).read_bytes()
    assert not folder.exists()
    with running_forward(tmp_path / "rec2", "--keep-ca") as run:
        kept = Path(run.env["NODE_EXTRA_CA_CERTS"]).parent
    assert (kept / "ca-key.pem").exists() and stat.S_IMODE((kept / "ca-key.pem").stat().st_mode) == 0o600
    assert f"the run's CA is kept in {kept}" in run.stderr
    shutil.rmtree(kept)


def test_the_run_ca_is_gone_after_sigterm(tmp_path: Path) -> None:
    with running_forward(tmp_path / "rec") as run:
        folder = Path(run.env["NODE_EXTRA_CA_CERTS"]).parent
        assert (folder / "ca-key.pem").exists()
        run.proc.send_signal(signal.SIGTERM)
        run.proc.wait(20)
    assert run.proc.returncode == 0
    assert not folder.exists()
    assert sorted(p.name for p in (tmp_path / "rec").iterdir() if p.is_dir()) == []


def test_the_shell_lines_point_every_kind_of_client_at_the_proxy(tmp_path: Path) -> None:
    with running_forward(tmp_path / "rec") as run:
        env = dict(run.env)
    assert set(env) == {
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "https_proxy",
        "http_proxy",
        "NODE_EXTRA_CA_CERTS",
        "SSL_CERT_FILE",
        "REQUESTS_CA_BUNDLE",
        "NODE_USE_ENV_PROXY",
    }
    assert env["HTTPS_PROXY"].startswith("http://wiretap:") and "@127.0.0.1:" in env["HTTPS_PROXY"]
    assert len(env["HTTPS_PROXY"].split(":")[2].split("@")[0]) >= 20
    assert env["NODE_USE_ENV_PROXY"] == "1"


def test_a_host_not_intercepted_gets_a_blind_tunnel_and_no_recording(tmp_path: Path, upstream: Upstream) -> None:
    body = b"not for wiretap's eyes"
    with running_forward(tmp_path / "rec", "--intercept", "example.invalid") as run:
        context = ssl.create_default_context(cafile=str(upstream.ca_file))  # the upstream's own certificate
        status, got = asyncio.run(_fetch(run, f"https://127.0.0.1:{upstream.tls_port}/blind", body, context))
    assert (status, got) == (200, b"echo:" + body)
    assert run.recordings == {}


def test_oauth_codes_verifiers_and_tokens_are_redacted_in_the_recording(tmp_path: Path, upstream: Upstream) -> None:
    with running_forward(tmp_path / "rec", "--upstream-cafile", str(upstream.ca_file)) as run:
        url = f"https://localhost:{upstream.tls_port}/token"
        status, got = asyncio.run(_fetch(run, url, TOKEN_FORM.encode(), _client_context(run, upstream)))
    assert status == 200 and b"at-9f8e7d6c5b4a3f2e1d0c" in got
    assert upstream.seen[-1][2] == TOKEN_FORM.encode()  # forwarded as it was
    text = "".join(p.read_text() for p in (tmp_path / "rec").glob("*.jsonl"))
    assert "grant_type=authorization_code" in text
    assert [secret for secret in SECRETS if secret in text] == []
    assert text.count("[redacted:") >= 4


def test_forward_mode_refuses_to_listen_beyond_loopback(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "wiretap", "proxy", "--forward", "--listen", "0.0.0.0:0", "--out", f"{tmp_path}/"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert "loopback" in result.stderr and "Traceback" not in result.stderr


def test_plain_http_to_a_host_not_intercepted_passes_unrecorded_without_the_proxy_credential(
    tmp_path: Path, upstream: Upstream
) -> None:
    with running_forward(tmp_path / "rec", "--intercept", "example.invalid") as run:
        status, got = asyncio.run(_fetch(run, f"http://127.0.0.1:{upstream.plain_port}/plain", b"passing"))
    assert (status, got) == (200, b"echo:passing")
    assert upstream.seen[-1][:3] == ("POST", "/plain", b"passing")
    assert "proxy-authorization" not in upstream.headers[-1]
    assert run.recordings == {}


def test_the_authorization_server_a_resource_names_is_intercepted_from_then_on(
    tmp_path: Path, upstream: Upstream
) -> None:
    resource, issuer = f"https://localhost:{upstream.tls_port}", f"https://127.0.0.1:{upstream.tls_port}"
    with running_forward(
        tmp_path / "rec", "--intercept", f"localhost:{upstream.tls_port}", "--upstream-cafile", str(upstream.ca_file)
    ) as run:
        context = _client_context(run, upstream)
        asyncio.run(_fetch(run, f"{resource}/.well-known/oauth-protected-resource/mcp", b"", context))
        status, _ = asyncio.run(_fetch(run, f"{issuer}/token", TOKEN_FORM.encode(), context))
    assert status == 200
    assert set(run.recordings) == {resource, issuer}
    assert [e["path"] for e in run.events(issuer) if e["kind"] == "http_request"] == ["/token"]
    assert f"intercepting 127.0.0.1:{upstream.tls_port} too" in run.stderr


def test_a_client_that_does_not_trust_the_run_ca_fails_its_handshake_and_the_proxy_serves_on(
    tmp_path: Path, upstream: Upstream
) -> None:
    url = f"https://127.0.0.1:{upstream.tls_port}/after"
    with running_forward(tmp_path / "rec", "--upstream-cafile", str(upstream.ca_file)) as run:
        untrusting = ssl.create_default_context(cafile=str(upstream.ca_file))  # the upstream's CA, not the run's
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            asyncio.run(_fetch(run, url, b"refused", untrusting))
        status, got = asyncio.run(_fetch(run, url, b"then", _client_context(run, upstream)))
    assert (status, got) == (200, b"echo:then")
    assert "Traceback" not in run.stderr
    events = run.events(f"https://127.0.0.1:{upstream.tls_port}")
    assert [e["path"] for e in events if e["kind"] == "http_request"] == ["/after"]


def test_an_event_stream_through_tls_interception_is_recorded_event_by_event(
    tmp_path: Path, upstream: Upstream
) -> None:
    with running_forward(tmp_path / "rec", "--upstream-cafile", str(upstream.ca_file)) as run:
        status, got = asyncio.run(
            _fetch(run, f"https://localhost:{upstream.tls_port}/sse", b"{}", _client_context(run, upstream))
        )
    assert status == 200 and got.count(b"data: ") == 3
    events = run.events(f"https://localhost:{upstream.tls_port}")
    progress = [e["msg"]["params"]["n"] for e in events if e["kind"] == "message" and e.get("dir") == "s2c"]
    assert progress == [0, 1, 2]
    assert [e["bytes_out"] for e in events if e["kind"] == "http_end"] == [len(got)]


@pytest.mark.parametrize("target", ["no-port-here:", "[::1", "host:99999", "user@host:443"])
def test_a_connect_to_something_that_is_not_host_and_port_is_a_400(tmp_path: Path, target: str) -> None:
    with running_forward(tmp_path / "rec") as run:
        host, port = run.url.rsplit("@", 1)[1].rsplit(":", 1)
        credential = base64.b64encode(run.url.split("//", 1)[1].split("@", 1)[0].encode()).decode()
        with socket.create_connection((host, int(port))) as sock:
            head = f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\nProxy-Authorization: Basic {credential}\r\n\r\n"
            sock.sendall(head.encode())
            answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert run.recordings == {}


@pytest.mark.parametrize(
    ("authority", "expected"),
    [
        ("Example.COM:8443", ("example.com", 8443)),
        ("[::1]:443", ("::1", 443)),
        ("[::1]", ("::1", 0)),
        ("host", ("host", 0)),
        ("[::1", None),
        ("[::1]x", None),
        ("host:0", None),
        ("host:65536", None),
        ("host:8o", None),
        ("a/b:1", None),
        (":443", None),
    ],
)
def test_an_authority_is_split_into_host_and_port_or_refused(authority: str, expected: tuple | None) -> None:
    assert split_authority(authority, 0) == expected


def test_an_absolute_url_gives_its_origin_and_the_target_the_origin_gets() -> None:
    assert absolute_origin("http://LocalHost:8080/mcp?x=1") == (Origin("http", "localhost", 8080), "/mcp?x=1")
    assert absolute_origin("http://h?q") == (Origin("http", "h", 80), "/?q")
    assert absolute_origin("https://h/") == (Origin("https", "h", 443), "/")
    assert absolute_origin("/mcp") is None and absolute_origin("ftp://h/") is None
    assert Origin("https", "::1", 8443).url == "https://[::1]:8443" and Origin("http", "h", 80).url == "http://h"


def _proxy_address(run: ForwardRun) -> tuple[str, int]:
    host, port = run.url.rsplit("@", 1)[1].rsplit(":", 1)
    return host, int(port)


def test_connections_that_say_nothing_are_capped_and_the_longest_waiting_closed_first(tmp_path: Path) -> None:
    with running_forward(tmp_path / "rec", "--max-idle", "2") as run:
        silent = [socket.create_connection(_proxy_address(run)) for _ in range(4)]
        try:
            for sock in silent:
                sock.settimeout(15)
            assert [silent[0].recv(1), silent[1].recv(1)] == [b"", b""]  # closed by the proxy
            for sock in silent[2:]:  # still served
                sock.sendall(b"CONNECT h.example:443 HTTP/1.1\r\nHost: h.example:443\r\n\r\n")
                assert sock.recv(65536).startswith(b"HTTP/1.1 407 ")
        finally:
            for sock in silent:
                sock.close()


def test_a_connection_without_a_request_head_is_closed_after_the_client_timeout(tmp_path: Path) -> None:
    with (
        running_forward(tmp_path / "rec", "--client-timeout", "1") as run,
        socket.create_connection(_proxy_address(run)) as sock,
    ):
        sock.sendall(b"CONNECT h.example:443 HTTP/1.1\r\n")  # and never the rest
        sock.settimeout(30)
        assert sock.recv(1) == b""
