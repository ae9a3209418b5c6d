"""The proxy the environment names carries the forward proxy's own upstream connections (CONNECT), except
for loopback and NO_PROXY hosts; a parent that refuses says so."""

from __future__ import annotations

import asyncio
import base64
import re
import ssl

import pytest
import trustme

from wiretap.forward.chain import Parent, open_via, parent_for


@pytest.mark.parametrize(
    ("env", "scheme", "host", "expected"),
    [
        ({"HTTPS_PROXY": "http://corp:3128"}, "https", "mcp.example.com", Parent("corp", 3128)),
        ({"https_proxy": "corp:8080"}, "https", "mcp.example.com", Parent("corp", 8080)),
        ({"HTTP_PROXY": "http://corp"}, "http", "mcp.example.com", Parent("corp", 80)),
        ({"HTTPS_PROXY": "http://corp:3128"}, "http", "mcp.example.com", None),
        ({"ALL_PROXY": "http://corp:1"}, "http", "h.example", Parent("corp", 1)),
        ({"HTTPS_PROXY": "http://corp:3128"}, "https", "localhost", None),
        ({"HTTPS_PROXY": "http://corp:3128"}, "https", "127.0.0.1", None),
        ({"HTTPS_PROXY": "http://corp:3128", "NO_PROXY": "example.com"}, "https", "mcp.example.com", None),
        ({"HTTPS_PROXY": "http://corp:3128", "no_proxy": ".example.com:443"}, "https", "mcp.example.com", None),
        ({"HTTPS_PROXY": "http://corp:3128", "NO_PROXY": "*"}, "https", "anything", None),
        ({"HTTPS_PROXY": "http://corp:3128", "NO_PROXY": "ample.com"}, "https", "example.com", Parent("corp", 3128)),
        ({"HTTPS_PROXY": "socks5://corp:1080"}, "https", "mcp.example.com", None),
        ({}, "https", "mcp.example.com", None),
    ],
)
def test_the_parent_proxy_is_the_one_the_environment_names_for_the_target(
    env: dict[str, str], scheme: str, host: str, expected: Parent | None
) -> None:
    assert parent_for(env, scheme, host) == expected


def test_the_parent_proxys_credential_comes_from_its_url() -> None:
    parent = parent_for({"HTTPS_PROXY": "http://me:p%40ss@corp:3128"}, "https", "h.example")
    assert parent is not None and parent.authorization == b"Basic " + base64.b64encode(b"me:p@ss")


class _Parent:
    """A CONNECT proxy of the simplest kind; it notes each request head and answers ``answer``."""

    def __init__(self, answer: bytes = b"HTTP/1.1 200 Connection Established\r\n\r\n") -> None:
        self.answer = answer
        self.heads: list[bytes] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        self.heads.append(head)
        if not self.answer.startswith(b"HTTP/1.1 200"):
            writer.write(self.answer)
            writer.close()
            return
        authority = head.split(b" ")[1].decode()
        host, _, port = authority.rpartition(":")
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        writer.write(self.answer)

        async def pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            while data := await source.read(65536):
                sink.write(data)
                await sink.drain()
            sink.close()

        await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))


async def _tls_echo(ca: trustme.CA) -> asyncio.Server:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost").configure_cert(context)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\nConnection: close\r\n\r\nchained")
        await writer.drain()
        writer.close()

    return await asyncio.start_server(answer, "127.0.0.1", 0, ssl=context)


class _Collect(asyncio.Protocol):
    def __init__(self) -> None:
        self.data = bytearray()
        self.closed = asyncio.get_running_loop().create_future()
        self.transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.data += data

    def connection_lost(self, exc: BaseException | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


def test_a_tls_connection_through_the_parent_reaches_the_target_with_the_parents_credential() -> None:
    async def run() -> tuple[bytes, list[bytes]]:
        ca = trustme.CA()
        target = await _tls_echo(ca)
        parent = _Parent()
        server = await asyncio.start_server(parent.handle, "127.0.0.1", 0)
        port = target.sockets[0].getsockname()[1]
        via = Parent("127.0.0.1", server.sockets[0].getsockname()[1], b"Basic bWU6cHc=")
        context = ssl.create_default_context()
        ca.configure_trust(context)
        # (the target's name is "localhost"; the fake parent reaches it on 127.0.0.1 via that name)
        transport, protocol = await open_via(via, "localhost", port, _Collect, context)
        assert isinstance(protocol, _Collect) and protocol.transport is transport
        transport.write(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")  # type: ignore[attr-defined]
        await asyncio.wait_for(protocol.closed, 10)
        server.close()
        target.close()
        return bytes(protocol.data), parent.heads

    data, heads = asyncio.run(run())
    assert data.endswith(b"\r\n\r\nchained")
    assert heads[0].startswith(b"CONNECT localhost:") and b"Proxy-Authorization: Basic bWU6cHc=\r\n" in heads[0]


def test_a_parent_that_refuses_the_tunnel_is_an_error_naming_its_answer() -> None:
    async def run() -> None:
        parent = _Parent(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
        server = await asyncio.start_server(parent.handle, "127.0.0.1", 0)
        via = Parent("127.0.0.1", server.sockets[0].getsockname()[1])
        try:
            with pytest.raises(OSError, match=re.escape("answered CONNECT h.example:443 with HTTP/1.1 407")):
                await open_via(via, "h.example", 443, _Collect)
        finally:
            server.close()

    asyncio.run(run())
