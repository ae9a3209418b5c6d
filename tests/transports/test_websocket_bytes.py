"""WebSocket through ``wiretap proxy``, byte for byte: a raw client and a raw upstream, masked and fragmented
frames, frames sent before the upgrade is granted, and a frame over the recorder's message limit."""

from __future__ import annotations

import json
import signal
import socket
import struct
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from support.floods import peak_rss
from support.proxyrun import running_proxy, start_proxy
from support.taprun import settled_read_all
from support.wspeers import frames, messages, reply, request

from wiretap.wire.websocket import BINARY, CLOSE, CONTINUATION, PING, PONG, TEXT, encode_frame

SWITCH = (
    b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nX-Other: kept\r\n\r\n"
)
MASK = b"\x37\xfa\x21\x3d"


def client_frames() -> bytes:
    """A JSON-RPC request in three masked fragments with a ping between them, a binary frame, a close."""
    text = request(7).encode()
    return b"".join(
        [
            encode_frame(TEXT, text[:10], fin=False, mask=MASK),
            encode_frame(PING, b"mid-message", mask=MASK),
            encode_frame(CONTINUATION, text[10:30], fin=False, mask=b"\x01\x02\x03\x04"),
            encode_frame(CONTINUATION, text[30:], mask=MASK),
            encode_frame(BINARY, b"\xff\x00" * 70000, mask=MASK),
            encode_frame(CLOSE, b"\x03\xe8done", mask=MASK),
        ]
    )


def server_frames() -> tuple[bytes, bytes]:
    """What the upstream sends with its 101, and after the client shut down its side."""
    first = encode_frame(TEXT, json.dumps({"jsonrpc": "2.0", "method": "notifications/ready"}).encode())
    later = encode_frame(TEXT, reply(request(7)).encode()) + encode_frame(PONG, b"mid-message")
    return first, later + encode_frame(CLOSE, b"\x03\xe8")


class RawUpstream:
    """Reads a request head, answers ``SWITCH`` with its first frames in the same write, keeps every byte
    after the head until the client's side ends, then sends the rest and closes."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.head = b""
        self.after = bytearray()
        self.done = threading.Event()
        threading.Thread(target=self._one, daemon=True).start()

    def _one(self) -> None:
        conn, _ = self.server.accept()
        self.server.close()
        got = bytearray()
        while b"\r\n\r\n" not in got:
            got += conn.recv(65536)
        end = got.index(b"\r\n\r\n") + 4
        self.head, self.after = bytes(got[:end]), got[end:]
        first, later = server_frames()
        conn.sendall(SWITCH + first)
        while chunk := conn.recv(65536):
            self.after += chunk
        conn.sendall(later)
        conn.close()
        self.done.set()


@pytest.mark.parametrize("early", [False, True], ids=["after the 101", "with the request"])
def test_the_bytes_after_the_101_pass_unchanged_both_ways_and_fragments_are_joined_for_the_recording(
    early: bool, tmp_path: Path
) -> None:
    upstream = RawUpstream()
    with running_proxy(upstream.url, tmp_path / "ws.jsonl") as run:
        where = urlsplit(run.url)
        sock = socket.create_connection((where.hostname, where.port))
        head = (
            b"GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n" % where.netloc.encode()
        )
        got = bytearray()
        first, later = server_frames()
        if early:  # frames and the end of the client's side before the upgrade is granted: held until it is
            sock.sendall(head + client_frames())
            sock.shutdown(socket.SHUT_WR)
        else:
            sock.sendall(head)
            while len(got) < len(SWITCH) + len(first):
                got += sock.recv(65536)
            sock.sendall(client_frames())
            sock.shutdown(socket.SHUT_WR)
        while chunk := sock.recv(65536):
            got += chunk
        sock.close()
        assert upstream.done.wait(10)
    assert bytes(got) == SWITCH + first + later
    assert bytes(upstream.after) == client_frames()
    assert b"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" in upstream.head
    assert messages(run, "c2s") == [json.loads(request(7))]
    assert run.messages("c2s")[0]["ws"] == {"fragments": 3}
    assert messages(run, "s2c") == [{"jsonrpc": "2.0", "method": "notifications/ready"}, json.loads(reply(request(7)))]
    assert frames(run, "c2s") == [("ping", 11), ("binary", 140000), ("close", 6)]
    assert frames(run, "s2c") == [("pong", 11), ("close", 2)]
    (end,) = run.of_kind("http_end")
    assert end["bytes_in"] == len(client_frames()) and end["bytes_out"] == len(first + later)


MiB = 1 << 20


class BigFrameUpstream(RawUpstream):
    """Answers the upgrade, then sends one text frame of ``size`` bytes holding JSON-RPC, streamed, and a
    small frame after it."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.small = encode_frame(TEXT, b'{"jsonrpc":"2.0","id":2,"result":{}}')
        super().__init__()

    def _one(self) -> None:
        conn, _ = self.server.accept()
        self.server.close()
        got = bytearray()
        while b"\r\n\r\n" not in got:
            got += conn.recv(65536)
        opening, closing = b'{"jsonrpc":"2.0","id":1,"result":"', b'"}'
        conn.sendall(SWITCH + bytes([0x81, 127]) + struct.pack("!Q", self.size))
        conn.sendall(opening)
        left, block = self.size - len(opening) - len(closing), b"x" * MiB
        while left:
            conn.sendall(block[: min(left, MiB)])
            left -= min(left, MiB)
        conn.sendall(closing + self.small)
        conn.close()
        self.done.set()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the proxy's peak memory from /proc")
def test_a_frame_over_the_message_limit_passes_whole_in_bounded_memory_and_is_recorded_truncated(
    tmp_path: Path,
) -> None:
    size = 160 * MiB
    upstream = BigFrameUpstream(size)
    recording = tmp_path / "ws.jsonl"
    proc, url = start_proxy(upstream.url, recording)
    where = urlsplit(url)
    with socket.create_connection((where.hostname, where.port)) as sock:
        sock.sendall(
            b"GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n" % where.netloc.encode()
        )
        total, tail = 0, b""
        while chunk := sock.recv(1 << 16):
            total += len(chunk)
            tail = (tail + chunk)[-len(upstream.small) :]
    assert total == len(SWITCH) + 10 + size + len(upstream.small) and tail == upstream.small
    proxy_peak = peak_rss(proc.pid)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    _, events, _ = settled_read_all(recording)
    big, small = [e for e in events if e["kind"] == "message"]
    assert big["truncated"] is True and big["size"] == size and big["dir"] == "s2c"
    assert small["msg"] == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert [e["error"] for e in events if e["kind"] == "error"] == ["truncated"]
    assert proxy_peak < 128 * MiB, "the proxy grew past 128 MiB"
    assert events[-1]["recorder_max_rss"] < 256 * MiB, "the recorder held more than its cap"
