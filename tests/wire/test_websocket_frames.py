import json
import struct
import tracemalloc

from hypothesis import given
from hypothesis import strategies as st

from wiretap.wire.websocket import (
    BINARY,
    CLOSE,
    CONTINUATION,
    PING,
    TEXT,
    BadFrame,
    Frame,
    FrameDecoder,
    Message,
    encode_frame,
)

MASK = b"\x37\xfa\x21\x3d"


def decode_bytewise(stream: bytes, limit: int = 1 << 20) -> list[object]:
    decoder = FrameDecoder(limit)
    events: list[object] = []
    for i in range(len(stream)):
        events += decoder.feed(stream[i : i + 1])
    return events + decoder.close()


def test_the_rfc_6455_examples_decode_masked_and_unmasked_fed_one_byte_at_a_time() -> None:
    unmasked = bytes.fromhex("810548656c6c6f")
    masked = bytes.fromhex("818537fa213d7f9f4d5158")
    for stream, was_masked in ((unmasked, False), (masked, True)):
        frame, message = decode_bytewise(stream)
        assert isinstance(frame, Frame) and isinstance(message, Message)
        assert (frame.opcode, frame.fin, frame.masked, frame.length) == (TEXT, True, was_masked, 5)
        assert message.data == b"Hello"


def test_7_16_and_64_bit_lengths_round_trip_at_their_boundaries() -> None:
    for n in (0, 125, 126, 65535, 65536, 70000):
        payload = bytes(range(256)) * (n // 256) + bytes(range(n % 256))
        frame, message = decode_bytewise(encode_frame(BINARY, payload, mask=MASK))
        assert isinstance(frame, Frame) and isinstance(message, Message)
        assert (frame.length, frame.payload, message.data) == (n, payload, payload)


def test_a_fragmented_message_is_joined_with_control_frames_interleaved() -> None:
    rpc = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    stream = (
        encode_frame(TEXT, rpc[:10], fin=False, mask=MASK)
        + encode_frame(PING, b"hi", mask=MASK)
        + encode_frame(CONTINUATION, rpc[10:20], fin=False, mask=MASK)
        + encode_frame(CONTINUATION, rpc[20:], mask=MASK)
    )
    events = decode_bytewise(stream)
    frames = [e for e in events if isinstance(e, Frame)]
    (message,) = [e for e in events if isinstance(e, Message)]
    assert [f.kind for f in frames] == ["text", "ping", "continuation", "continuation"]
    assert frames[1].payload == b"hi"
    assert (message.fragments, json.loads(message.data)["method"]) == (3, "tools/list")


def test_a_close_frame_gives_its_code_and_reason() -> None:
    (frame,) = decode_bytewise(encode_frame(CLOSE, struct.pack("!H", 1001) + "bye ✓".encode()))
    assert isinstance(frame, Frame) and frame.close_status() == (1001, "bye ✓")


def test_a_compressed_frame_is_marked_and_kept_opaque() -> None:
    frame, message = decode_bytewise(encode_frame(TEXT, b"\xf2\x48\xcd\xc9\xc9\x07\x00", rsv1=True))
    assert isinstance(frame, Frame) and isinstance(message, Message)
    assert frame.rsv1 and message.compressed and message.data == b"\xf2\x48\xcd\xc9\xc9\x07\x00"


def test_a_frame_over_the_limit_keeps_its_first_bytes_and_counts_the_rest() -> None:
    payload = b"x" * 5000
    frame, message = decode_bytewise(encode_frame(TEXT, payload, mask=MASK), limit=100)
    assert isinstance(frame, Frame) and isinstance(message, Message)
    assert (len(frame.payload), frame.dropped, frame.length) == (100, 4900, 5000)
    assert message.truncated and (len(message.data), message.size) == (100, 5000)


def test_a_claimed_1_gib_frame_is_not_buffered_and_ends_incomplete() -> None:
    decoder = FrameDecoder(limit=1024)
    head = bytes([0x82, 127]) + struct.pack("!Q", 1 << 30)
    tracemalloc.start()
    assert decoder.feed(head) == []
    for _ in range(64):
        assert decoder.feed(b"\0" * 65536) == []
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    (frame,) = decoder.close()
    assert isinstance(frame, Frame)
    assert (frame.complete, frame.length, len(frame.payload)) == (False, 1 << 30, 1024)
    assert frame.dropped == (1 << 30) - 1024
    assert peak < 1 << 20


def test_a_flood_of_100k_small_frames_is_decoded_in_bounded_memory() -> None:
    decoder = FrameDecoder(limit=1024)
    chunk = encode_frame(BINARY, b"ab", mask=MASK) * 1000
    tracemalloc.start()
    count = 0
    for _ in range(100):
        count += sum(isinstance(e, Frame) for e in decoder.feed(chunk))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert (count, decoder.frames, decoder.bytes) == (100_000, 100_000, 100 * len(chunk))
    assert peak < 2 << 20


def test_a_malformed_frame_is_reported_and_the_rest_is_counted_as_unparsed() -> None:
    good = encode_frame(TEXT, b"ok")
    bad = bytes([0x83, 0x00])
    after = encode_frame(TEXT, b"later") * 3
    decoder = FrameDecoder()
    events = decoder.feed(good + bad + after)
    assert [type(e) for e in events] == [Frame, Message, BadFrame]
    broken = events[-1]
    assert isinstance(broken, BadFrame) and "reserved opcode" in broken.why
    assert broken.offset == len(good)
    assert decoder.feed(b"more") == []
    assert decoder.unparsed == len(bad) + len(after) + 4


def test_protocol_violations_each_name_what_is_wrong() -> None:
    cases = {
        bytes([0x80, 0x00]): "continuation frame with no message",
        bytes([0x09, 0x00]): "control frame fragmented",
        bytes([0x89, 126, 0, 200]): "control frame fragmented or longer",
        bytes([0xA1, 0x00]): "RSV2 or RSV3",
        bytes([0x82, 127]) + b"\xff" * 8: "high bit",
        encode_frame(TEXT, b"a", fin=False) + encode_frame(TEXT, b"b"): "new message before",
    }
    for stream, why in cases.items():
        (broken,) = [e for e in decode_bytewise(stream) if isinstance(e, BadFrame)]
        assert why in broken.why, stream


def test_a_stream_cut_mid_frame_gives_an_incomplete_frame() -> None:
    stream = encode_frame(TEXT, b"hello world", mask=MASK)
    decoder = FrameDecoder()
    assert decoder.feed(stream[:9]) == []
    (frame,) = decoder.close()
    assert isinstance(frame, Frame)
    assert (frame.complete, frame.payload, frame.dropped) == (False, b"hel", 8)


@given(
    st.lists(st.tuples(st.binary(max_size=300), st.booleans()), min_size=1, max_size=8),
    st.lists(st.integers(min_value=1, max_value=64), min_size=1, max_size=20),
)
def test_any_chunking_of_any_frames_decodes_the_same(frames: list[tuple[bytes, bool]], cuts: list[int]) -> None:
    stream = b"".join(encode_frame(BINARY, p, mask=MASK if m else None) for p, m in frames)
    decoder = FrameDecoder()
    events: list[object] = []
    pos, i = 0, 0
    while pos < len(stream):
        step = cuts[i % len(cuts)]
        events += decoder.feed(stream[pos : pos + step])
        pos, i = pos + step, i + 1
    got = [e.payload for e in events if isinstance(e, Frame)]
    assert got == [p for p, _ in frames]
    assert decoder.close() == []
