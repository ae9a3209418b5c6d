"""A blind tunnel on real sockets: the bytes a client sends reach the host unchanged and back, the tunnel
ends once both ways have ended, a host that cannot be reached is a 502 naming it, and the proxy is told
once when a tunnel opens and when it ends."""

from __future__ import annotations

import asyncio
import socket

from wiretap.forward.tunnel import Tunnel


class Door(asyncio.Protocol):
    """What the proxy's front does once a CONNECT says where to: hand the connection to a tunnel."""

    def __init__(self, port: int, first: bytes, log: list[str], over: asyncio.Event) -> None:
        self.port, self.first, self.log, self.over = port, first, log, over

    def closed(self, tunnel: Tunnel) -> None:
        self.log.append("closed")
        self.over.set()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.pause_reading()
        tunnel = Tunnel(transport, self.first, {}, 5.0, lambda: self.log.append("opened"), self.closed)
        asyncio.get_running_loop().create_task(tunnel.open("127.0.0.1", self.port))


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(65536):
        writer.write(data)
        await writer.drain()
    writer.close()


def unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def through_tunnel(port: int, first: bytes, then: bytes) -> tuple[bytes, list[str]]:
    log: list[str] = []
    over = asyncio.Event()
    loop = asyncio.get_running_loop()
    door = await loop.create_server(lambda: Door(port, first, log, over), "127.0.0.1", 0)
    reader, writer = await asyncio.open_connection(*door.sockets[0].getsockname()[:2])
    got = b""
    if then:
        head = await reader.readuntil(b"\r\n\r\n")
        assert head == b"HTTP/1.1 200 Connection Established\r\n\r\n"
        got += await reader.readexactly(len(first))
        writer.write(then)
        got += await reader.readexactly(len(then))
        writer.close()
    else:
        got = await reader.read()
        writer.close()
    await asyncio.wait_for(over.wait(), 30)
    door.close()
    return got, log


def test_bytes_pass_both_ways_unchanged_and_the_proxy_hears_of_the_tunnel_once() -> None:
    async def run() -> tuple[bytes, list[str]]:
        server = await asyncio.start_server(echo, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            return await through_tunnel(port, b"\x16\x03\x01 first flight", bytes(range(256)) * 512)
        finally:
            server.close()

    got, log = asyncio.run(run())
    assert got == b"\x16\x03\x01 first flight" + bytes(range(256)) * 512
    assert log == ["opened", "closed"]


def test_a_host_that_cannot_be_reached_is_a_502_naming_it_and_the_tunnel_never_opens() -> None:
    port = unused_port()
    got, log = asyncio.run(through_tunnel(port, b"", b""))
    assert got.startswith(b"HTTP/1.1 502 Bad Gateway\r\n")
    assert f"wiretap: cannot reach 127.0.0.1:{port}".encode() in got
    assert log == ["closed"]
