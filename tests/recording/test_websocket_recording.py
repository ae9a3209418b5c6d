"""What the recorder makes of a WebSocket direction's bytes: JSON-RPC text as messages, the rest in brief,
bounded memory for big messages, permessage-deflate inflated while its window can be followed."""

from __future__ import annotations

import json
import zlib
from typing import Any

import pytest

from wiretap.recording import websocket_stream
from wiretap.recording.websocket_stream import WebSocketStream
from wiretap.wire.websocket import BINARY, CLOSE, CONTINUATION, PING, TEXT, encode_frame

BASE = {"dir": "c2s", "ex": 4}
MASK = b"\x0a\x0b\x0c\x0d"


def recorded(stream: WebSocketStream, *chunks: bytes, close: bool = True) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for chunk in chunks:
        out += [_event(e, m) for e, m in stream.feed(1.0, chunk)]
    if close:
        out += [_event(e, m) for e, m in stream.close(2.0)]
    return out


def _event(event: dict[str, Any], msg: bytes | bytearray | None) -> dict[str, Any]:
    return event | ({"msg": json.loads(msg)} if msg is not None else {})


def brief(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(e["kind"], e.get("opcode"), e.get("size"), e.get("msg")) for e in events]


def test_json_text_is_a_message_and_every_other_frame_a_websocket_event() -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    data = b"".join(
        [
            encode_frame(TEXT, json.dumps(call).encode(), mask=MASK),
            encode_frame(TEXT, b"plain words", mask=MASK),
            encode_frame(TEXT, b"42", mask=MASK),
            encode_frame(BINARY, b"\x00\x01", mask=MASK),
            encode_frame(PING, b"", mask=MASK),
            encode_frame(CLOSE, b"\x0f\xa0going", mask=MASK),
        ]
    )
    events = recorded(WebSocketStream(BASE, redact=True), *[data[i : i + 3] for i in range(0, len(data), 3)])
    assert brief(events) == [
        ("message", None, len(json.dumps(call)), call),
        ("websocket", "text", 11, None),
        ("websocket", "text", 2, None),
        ("websocket", "binary", 2, None),
        ("websocket", "ping", 0, None),
        ("websocket", "close", 7, None),
    ]
    assert events[0]["ex"] == 4 and events[0]["dir"] == "c2s" and events[0]["ws"] == {"fragments": 1}
    assert events[-1]["code"] == 4000 and events[-1]["reason"] == "going"


def test_credentials_in_a_json_rpc_text_frame_are_redacted_as_in_any_other_message() -> None:
    secret = {"jsonrpc": "2.0", "id": 2, "params": {"access_token": "ghp_" + "a" * 36}}
    (event,) = recorded(WebSocketStream(BASE, redact=True), encode_frame(TEXT, json.dumps(secret).encode()))
    assert "ghp_" not in json.dumps(event) and event["redacted"] >= 1


def test_a_message_over_the_limit_is_recorded_truncated_with_its_size_and_nothing_more_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(websocket_stream, "MESSAGE_LIMIT", 1000)
    big = json.dumps({"jsonrpc": "2.0", "id": 3, "result": "x" * 5000}).encode()
    stream = WebSocketStream(BASE, redact=False)
    frames = [
        encode_frame(TEXT, big[:2000], fin=False, mask=MASK),
        encode_frame(CONTINUATION, big[2000:], mask=MASK),
        encode_frame(BINARY, b"\x07" * 3000),
    ]
    events = recorded(stream, *frames)
    error, message, binary = events
    assert error["error"] == "truncated"
    assert message["truncated"] and message["size"] == len(big) and len(message["raw"]) <= 1000
    assert message["ws"] == {"fragments": 2}
    assert (binary["opcode"], binary["size"], binary["truncated"]) == ("binary", 3000, True)


def deflated(*messages: bytes, takeover: bool = True) -> list[bytes]:
    """Each message compressed as permessage-deflate sends it: one raw deflate stream, sync-flushed, its
    tail cut."""
    out, compress = [], zlib.compressobj(wbits=-zlib.MAX_WBITS)
    for text in messages:
        if not takeover:
            compress = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        data = compress.compress(text) + compress.flush(zlib.Z_SYNC_FLUSH)
        assert data.endswith(b"\x00\x00\xff\xff")
        out.append(data[:-4])
    return out


@pytest.mark.parametrize("takeover", [True, False])
def test_compressed_messages_are_inflated_with_the_window_carried_from_one_to_the_next(takeover: bool) -> None:
    calls = [json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/list"}).encode() for n in range(3)]
    stream = WebSocketStream(BASE, redact=False, encoding="permessage-deflate")
    frames = [encode_frame(TEXT, data, rsv1=True, mask=MASK) for data in deflated(*calls, takeover=takeover)]
    events = recorded(stream, *frames)
    assert [e["msg"] for e in events] == [json.loads(c) for c in calls]
    assert all(e["ws"]["compressed"] and e["size"] == len(c) for e, c in zip(events, calls, strict=True))


def test_a_compressed_message_that_inflates_past_the_limit_stops_inflating_for_good(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(websocket_stream, "MESSAGE_LIMIT", 1000)
    bomb, after = deflated(b"[" + b"0," * 100000 + b"0]", b'{"jsonrpc":"2.0","id":9}')
    stream = WebSocketStream(BASE, redact=False, encoding="permessage-deflate")
    events = recorded(stream, encode_frame(TEXT, bomb, rsv1=True), encode_frame(TEXT, after, rsv1=True))
    error, truncated, unread = events
    assert error["error"] == "truncated" and truncated["truncated"] and truncated["size"] > 1000
    assert (unread["kind"], unread["compressed"], unread["unread"]) == ("websocket", True, True)


def test_compressed_frames_without_an_agreed_extension_are_recorded_unread() -> None:
    (data,) = deflated(b'{"a":1}')
    (event,) = recorded(WebSocketStream(BASE, redact=False), encode_frame(TEXT, data, rsv1=True))
    assert (event["kind"], event["unread"], event["size"]) == ("websocket", True, len(data))


def test_a_protocol_violation_is_recorded_and_nothing_after_it_is_read() -> None:
    bad = bytes([0x83, 0x00])  # a reserved opcode
    events = recorded(WebSocketStream(BASE, redact=False), bad + encode_frame(TEXT, b'{"a":1}'))
    (error,) = events
    assert error["error"] == "websocket_protocol" and "reserved opcode" in error["message"]


def test_a_frame_cut_by_the_end_of_the_connection_is_recorded_as_incomplete() -> None:
    frame = encode_frame(BINARY, b"\x01" * 500)
    (event,) = recorded(WebSocketStream(BASE, redact=False), frame[:100])
    assert (event["opcode"], event["size"], event["incomplete"]) == ("binary", 500, True)


def test_after_a_gap_nothing_more_is_read_and_the_loss_is_counted() -> None:
    stream = WebSocketStream(BASE, redact=False)
    assert recorded(stream, encode_frame(TEXT, b'{"a":1}'), close=False)[0]["msg"] == {"a": 1}
    stream.gap(1.5, ends_mid_frame=True)
    assert recorded(stream, encode_frame(TEXT, b'{"b":2}')) == []
    assert stream.lost == 1
